"""The run directory: the files a run writes are the same as a known glotbench wrote them (field by
field, in order, of the same JSON type; tests/golden_runs.py), and are read back through the same
classes that write them."""

from __future__ import annotations

from pathlib import Path

import pytest

from golden_runs import FILES, differences, make_runs, read_run, scenarios

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "rundir_golden"


@pytest.fixture(scope="module")
def runs(server, tmp_path_factory):
    return make_runs(tmp_path_factory.mktemp("runs"), server.spec(), server.configure)


@pytest.mark.parametrize("name", sorted(scenarios("", lambda **kw: None)))
def test_run_files_as_before(runs, name):
    """run.json, results.json and samples.jsonl of each scenario, against the fixture written by the
    code before the run directory had one owner (apart from times, the port and versions)."""
    expected, got = read_run(GOLDEN / name), read_run(runs[name])
    assert differences(expected, got) == []
    for f in FILES:
        assert (runs[name] / f).read_bytes().endswith(b"\n" if f.endswith(".jsonl") else b"}")

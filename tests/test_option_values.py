"""Option values that would make a run meaningless are refused with one error line, before any call."""

from __future__ import annotations

import pytest

from conftest import cli
from glotbench.engine.evaluate import RunOptions
from glotbench.errors import GlotbenchError, SpecError
from glotbench.registry import load_model


@pytest.mark.parametrize("field,value", [
    ("concurrency", 0), ("concurrency", -3), ("timeout_s", 0.0), ("timeout_s", -1.0),
    ("timeout_s", float("nan")), ("max_retries", -1), ("limit", 0), ("repeats", 0),
    ("max_tokens", 0), ("temperature", -0.5), ("temperature", float("inf")),
    ("price_in_per_mtok", -1.0), ("bootstrap_resamples", -1), ("concurrency", True),
])
def test_run_options_refuse_bad_values(field, value):
    with pytest.raises(GlotbenchError, match=field):
        RunOptions(**{field: value})


def test_run_options_accept_edges():
    opts = RunOptions(concurrency=1, timeout_s=0.5, max_retries=0, limit=1, temperature=0.0,
                      price_in_per_mtok=0.0, bootstrap_resamples=0)
    assert (opts.concurrency, opts.max_retries, opts.temperature) == (1, 0, 0.0)


@pytest.mark.parametrize("args", [
    ["--concurrency", "0"], ["--timeout", "0"], ["--max-retries", "-1"], ["--timeout", "nan"],
])
def test_cli_refuses_bad_values_before_any_call(srv, tmp_path, args):
    r = cli("run", "vi-diacritics", "--model", srv.spec(), "--limit", "2", "--out", str(tmp_path / "r"),
            "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress", *args)
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in r.stderr
    assert srv.requests() == []


@pytest.mark.parametrize("spec", ["openai:x@ftp://h/v1", "openai:m@file:///etc/passwd", "openai:m@gopher://h:70/"])
def test_openai_spec_with_a_non_http_endpoint_is_an_error(spec):
    with pytest.raises(SpecError, match="http"):
        load_model(spec)


def test_openai_spec_keeps_at_signs_in_model_names():
    m = load_model("openai:claude-3@20240229")
    assert m.model == "claude-3@20240229" and m.base_url == "https://api.openai.com/v1"
    m = load_model("openai:org/model@HTTP://127.0.0.1:9/v1")
    assert m.model == "org/model" and m.base_url == "HTTP://127.0.0.1:9/v1"

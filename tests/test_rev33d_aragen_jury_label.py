"""rev33d (issue #33 review): the board labelled every AraGen headline "3C3H (mean of judges)",
also under the `average` and `vote` juries, whose 3C3H is per item over the judges (another number).
The label now names the jury the headline was combined by. Loopback AraGen runs."""

from __future__ import annotations

import pytest
from conftest import cli
from test_aragen import rubric_srv  # noqa: F401 - the fixture


@pytest.mark.parametrize(("strategy", "label"), [("vote", "3C3H (jury: vote)"), ("average", "3C3H (jury: average)"),
                                                 ("mean", "3C3H (mean of judges)")])
def test_the_board_names_the_jury_of_the_headline(rubric_srv, cache_path, tmp_path, strategy, label):  # noqa: F811
    from test_aragen import _run

    _run(tmp_path, cache_path, rubric_srv.spec("model"), [rubric_srv.spec("mid"), rubric_srv.spec("spotty")],
         strategy=strategy)
    (run,) = [p for p in tmp_path.glob("g*") if (p / "results.json").is_file()]
    assert cli("export", str(run), "--format", "eee", "--out", str(tmp_path / "eee")).returncode == 0
    for where in (run, tmp_path / "eee"):  # the run and its EEE record read back
        p = cli("board", str(where))
        assert p.returncode == 0, p.stderr
        head = p.stdout.splitlines()[0]
        assert f"aragen {label}" in head, head
        if strategy != "mean":
            assert "mean of judges" not in head, head

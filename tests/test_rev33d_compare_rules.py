"""rev33d (issue #33 review): compare pairs two judged runs on their declared rule; where it cannot
(rules, judges or clusters that differ) it pairs them on each item's mean over the judges and said
why as "a run written before results.json's judged.rule", whatever the reason. It now says the
reason that holds. Loopback AraGen runs (tests/test_aragen.py `rubric_srv`)."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import cli
from test_aragen import rubric_srv  # noqa: F401 - the fixture


@pytest.mark.parametrize(("edit", "says"), [
    ("jury", "the runs' judged rules differ: per item the judges' vote on Correct"),
    ("no rule", "a run written before results.json's judged.rule"),
    ("judges", "the runs' judges differ"),
])
def test_compare_says_why_it_does_not_pair_on_the_judged_rule(rubric_srv, cache_path, tmp_path, edit, says):  # noqa: F811
    from test_aragen import _run

    _run(tmp_path, cache_path, rubric_srv.spec("model"), [rubric_srv.spec("mid"), rubric_srv.spec("spotty")],
         strategy="vote")
    (a,) = [p for p in tmp_path.glob("g*") if (p / "results.json").is_file()]
    b = tmp_path / "b"
    shutil.copytree(a, b)
    rec = json.loads((b / "results.json").read_text(encoding="utf-8"))
    judged = rec["judged"]
    if edit == "jury":
        judged["rule"]["jury"] = "average"
    elif edit == "no rule":
        del judged["rule"]
    else:  # one judge left out of B's record: its values and components with it
        gone = judged["stats"]["judges"].pop()
        judged["stats"]["values"].pop(gone)
        for per in judged["stats"]["components"].values():
            per.pop(gone, None)
    (b / "results.json").write_text(json.dumps(rec), encoding="utf-8")
    p = cli("compare", str(a), str(b))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    text = " ".join(p.stdout.split())
    assert f"paired on each item's mean over the judges that judged it ({says}" in text, text
    assert "‡" in text, text
    if edit != "no rule":
        assert "a run written before" not in text, text

"""rev34d: Burmese data in the Zawgyi font encoding (not Unicode) given to a task is said, in `tasks
check` and next to the run's numbers; Unicode Burmese is never flagged. Measured on the project's
Zawgyi fixture (tests/fixtures/zawgyi/burmese.jsonl: 120 Zawgyi and 120 Unicode texts)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli

ZG = Path(__file__).parent / "fixtures" / "zawgyi" / "burmese.jsonl"


def _texts(encoding: str) -> list[str]:
    rows = [json.loads(x) for x in ZG.read_text(encoding="utf-8").splitlines() if x.strip()]
    return [r["text"] for r in rows if r["encoding"] == encoding]


def test_the_data_verdict_separates_the_fixtures_zawgyi_from_its_unicode():
    from glotbench.checks.language import zawgyi_data

    assert sum(zawgyi_data([t]) for t in _texts("zawgyi")) == 120
    assert sum(zawgyi_data([t]) for t in _texts("unicode")) == 0
    assert not zawgyi_data(["ภาษาไทย", "English text", ""])  # no Myanmar letter: never read


def _news(tmp_path: Path, encoding: str) -> Path:
    f = tmp_path / f"news-{encoding}.jsonl"
    f.write_text("".join(json.dumps({"text": t, "label": i % 4}, ensure_ascii=False) + "\n"
                         for i, t in enumerate(_texts(encoding)[:6])), encoding="utf-8")
    return f


def test_tasks_check_says_the_data_is_zawgyi(tmp_path):
    proc = cli("tasks", "check", "myanmar-news", "--data", str(_news(tmp_path, "zawgyi")))
    assert proc.returncode == 0, proc.stderr
    assert "note: Zawgyi-encoded data: 6 of 6 items (ids 0, 1, 2, 3, 4, ...) hold Burmese in the Zawgyi" in proc.stderr
    proc = cli("tasks", "check", "myanmar-news", "--data", str(_news(tmp_path, "unicode")))
    assert proc.returncode == 0 and "Zawgyi" not in proc.stderr + proc.stdout, proc.stderr


def test_a_run_on_zawgyi_data_says_so_next_to_its_numbers(tmp_path, srv):
    from glotbench.rundir.validity import notes

    srv.configure(answers={})
    for enc in ("zawgyi", "unicode"):
        out = tmp_path / enc
        proc = cli("run", "myanmar-news", "--data", str(_news(tmp_path, enc)), "--model", srv.spec(), "--out", str(out),
                   "--no-progress", "--cache-path", str(tmp_path / "c.sqlite"))
        assert proc.returncode == 0, proc.stderr
        res = json.loads((out / "results.json").read_text())
        said = [t for t in notes(res) if t.startswith("Zawgyi-encoded data")]
        if enc == "unicode":
            assert said == [] and "zawgyi_data" not in res
            continue
        assert res["zawgyi_data"]["items"] == 6 and len(said) == 1
        assert "Zawgyi-encoded data: 6 of 6 items" in proc.stdout, proc.stdout  # the run's own table
        report = cli("report", str(out))
        assert "Zawgyi-encoded data: 6 of 6 items" in report.stdout, report.stdout

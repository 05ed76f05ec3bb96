"""Review of #34: `tasks list --language` and `sweep --language` name each task file of the include
path they could not read (not YAML, not UTF-8, not valid), as plain `tasks list` does, instead of
leaving it out of the language's suite silently."""

from __future__ import annotations

from pathlib import Path

from conftest import cli

BELEBELE = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "tasks" / "library" / "belebele.yaml"


def _folder(tmp_path: Path) -> Path:
    d = tmp_path / "tasks"
    d.mkdir()
    (d / "broken.yaml").write_text("name: [unclosed\n", encoding="utf-8")
    (d / "bin.yaml").write_bytes(b"\xff\xfe")
    text = BELEBELE.read_text(encoding="utf-8").replace("name: belebele", "name: bb-bad", 1)
    (d / "bb-bad.yaml").write_text(text.replace("citation: |-", "citation: |-\n    not bibtex\n  oldcitation: |-", 1),
                                   encoding="utf-8")
    return d


def test_tasks_list_language_names_unreadable_task_files(tmp_path):
    d = _folder(tmp_path)
    proc = cli("tasks", "list", "--include-path", str(d), "--language", "lo")
    assert proc.returncode == 0, proc.stderr
    for f in ("broken.yaml", "bin.yaml", "bb-bad.yaml"):
        line = next(x for x in proc.stderr.splitlines() if f in x)
        assert line.startswith(f"skipped {d / f}: ") and "not known to cover lo" in line
    assert "Traceback" not in proc.stderr


def test_sweep_language_names_unreadable_task_files(tmp_path):
    d = _folder(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    (data / "belebele.jsonl").write_bytes((BELEBELE.parents[4] / "docs" / "examples" / "belebele-lao.jsonl").read_bytes())
    proc = cli("sweep", "--language", "lo", "--include-path", str(d), "--model", "openai:x@http://127.0.0.1:9/v1",
               "--data", str(data), "--out", str(tmp_path / "runs"), "--dry-run")
    for f in ("broken.yaml", "bin.yaml", "bb-bad.yaml"):
        assert any(x.startswith(f"skipped {d / f}: the task file does not validate") for x in proc.stdout.splitlines()
                   + proc.stderr.splitlines()), (f, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr

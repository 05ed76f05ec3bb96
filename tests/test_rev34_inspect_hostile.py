"""Review of #35's eval.yaml import: a wrong-typed tasks: key, duplicate task ids, and a malformed
--repo or --revision are each one error line naming the problem (not "missing", not a silent pick)."""

from __future__ import annotations

from pathlib import Path

import pytest

from glotbench.errors import DataError
from glotbench.tasks.inspect_yaml import task_text
from conftest import cli

SHA = "0123456789abcdef0123456789abcdef01234567"
TASK = "  - id: x\n    field_spec: {input: q, target: a}\n    solvers: [{name: generate}]\n    scorers: [{name: exact}]\n"


@pytest.mark.parametrize(("text", "message"), [
    ("tasks: 5\n", "tasks: a list of tasks, not int"),
    ("tasks: {id: x}\n", "tasks: a list of tasks, not dict"),
    ("tasks: []\n", "tasks: missing"),
    ("tasks:\n" + TASK + TASK, "tasks: task id given twice: x"),
])
def test_tasks_key_of_the_wrong_shape_is_named(text, message):
    with pytest.raises(DataError) as e:
        task_text(text, "eval.yaml", "o/d", SHA, "x" if "twice" in message else None)
    assert message in str(e.value)


@pytest.mark.parametrize(("args", "message"), [
    (["--repo", "o/d/../x"], "error: --repo 'o/d/../x': a hub dataset's ORG/NAME"),
    (["--repo", "o"], "error: --repo 'o': a hub dataset's ORG/NAME"),
    (["--repo", "o/d", "--revision", "main"], "error: --revision 'main': the dataset's commit, 40 hex digits"),
])
def test_import_inspect_refuses_a_malformed_repo_or_revision(tmp_path, args, message):
    f = tmp_path / "eval.yaml"
    f.write_text("tasks:\n" + TASK, encoding="utf-8")
    proc = cli("tasks", "import-inspect", str(f), *args)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1] == message
    assert "Traceback" not in proc.stderr


# -- datasheet languages: what a run with the datasheet's options would be in --------------------------

BELEBELE = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "tasks" / "library" / "belebele.yaml"


@pytest.mark.parametrize(("line", "message"), [
    ("    shn: {config: lao_Laoo}", "datasheet.languages.shn: with config=lao_Laoo the task runs in lo, not shn"),
    ("    lo: {config: lao_XXXX}", "datasheet.languages.lo: config='lao_XXXX' does not match [a-z]{3}_[A-Z][a-z]{3}"),
])
def test_a_datasheet_language_its_options_do_not_select_is_refused(tmp_path, line, message):
    text = BELEBELE.read_text(encoding="utf-8").replace("name: belebele", "name: bb", 1)
    text = text.replace("    lo: {config: lao_Laoo}\n", "").replace("  languages:\n", f"  languages:\n{line}\n", 1)
    f = tmp_path / "bb.yaml"
    f.write_text(text, encoding="utf-8")
    proc = cli("tasks", "check", str(f))
    assert proc.returncode != 0
    assert message in proc.stderr.strip().splitlines()[-1]
    assert "Traceback" not in proc.stderr


def test_a_large_document_without_aliases_is_not_called_an_alias_bomb():
    import yaml

    doc = {"tasks": [{"id": f"t{i}", "field_spec": {"input": "q", "target": "a"}, "solvers": [{"name": "generate"}],
                      "scorers": [{"name": "exact"}]} for i in range(12000)]}
    with pytest.raises(DataError) as e:
        task_text(yaml.safe_dump(doc), "eval.yaml", "o/d", SHA, "t0")
    assert "no aliases: the file itself is that large" in str(e.value) and "anchors" not in str(e.value)
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcde", "bcdef"))
    with pytest.raises(DataError) as e:
        task_text(bomb + "tasks: [*f]\n", "eval.yaml", "o/d", SHA)
    assert "YAML aliases repeating anchors" in str(e.value)

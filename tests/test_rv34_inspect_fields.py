"""eval.yaml field specs glotbench cannot read as Inspect does are refused by name, one line each,
instead of written into a task file that reads another column or does not load: a target, input or
split that is not text (`target: 5` became the literal 5 for every row; `split: null` the split
"None"; `input: [a, b]` the column "['a', 'b']"), a column with a dot or braces, and a target (with
choices) or metadata column a template cannot name (`gold answer`, `sub-ject` became a template
that does not parse, or `sub - ject`)."""

from __future__ import annotations

import pytest

from conftest import cli

SHA = "0123456789abcdef0123456789abcdef01234567"
GOOD = {"input": "question", "target": "answer", "choices": "choices"}


def _yaml(tmp_path, field_spec: str, extra: str = "", solvers: str = "      - name: multiple_choice\n"):
    p = tmp_path / "eval.yaml"
    p.write_text("tasks:\n  - id: a\n" + extra + "    field_spec:\n" + field_spec + "    solvers:\n" + solvers
                 + "    scorers:\n      - name: choice\n", encoding="utf-8")
    return p


def _spec(**over: str) -> str:
    return "".join(f"      {k}: {v}\n" for k, v in {**GOOD, **over}.items())


def _imp(path):
    return cli("tasks", "import-inspect", str(path), "--repo", "o/n", "--revision", SHA)


def test_a_plain_field_spec_still_imports(tmp_path):
    r = _imp(_yaml(tmp_path, _spec()))
    assert r.returncode == 0, r.stderr
    assert "answer: '{{ answer | letter if answer is integer else answer }}'" in r.stdout


@pytest.mark.parametrize("spec, extra, key, what", [
    (_spec(target="5"), "", "field_spec.target", "a column name (text), not int"),
    (_spec(target="[a, b]"), "", "field_spec.target", "not list"),
    (_spec(input="[a, b]"), "", "field_spec.input", "not list"),
    (_spec(input="null"), "", "field_spec.input", "not NoneType"),
    (_spec(), "    split: null\n", "split", "not NoneType"),
    (_spec(), "    config: [x]\n", "config", "not list"),
    (_spec(target="'gold answer'"), "", "field_spec.target", "cannot name"),
    (_spec(target="if"), "", "field_spec.target", "cannot name"),
    (_spec(target="a.b"), "", "field_spec.target", "nested column"),
    (_spec(input="q.text"), "", "field_spec.input", "nested column"),
    (_spec(choices="[A, 'opt.b']"), "", "field_spec.choices", "nested column"),
    (_spec(metadata="[sub-ject]"), "", "field_spec.metadata", "cannot name"),
    (_spec(metadata="['ชื่อ วิชา']"), "", "field_spec.metadata", "cannot name"),
])
def test_a_field_glotbench_would_read_otherwise_is_refused_by_name(tmp_path, spec, extra, key, what):
    r = _imp(_yaml(tmp_path, spec, extra))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stdout + r.stderr
    lines = [ln for ln in r.stderr.splitlines() if f"tasks.0.{key}" in ln]
    assert len(lines) == 1 and what in lines[0], r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: ")


def test_a_non_latin_identifier_column_is_read_as_written(tmp_path):
    # Thai column names are Jinja names (str.isidentifier): imported, and the template names them
    r = _imp(_yaml(tmp_path, _spec(target="คำตอบ", metadata="[วิชา]")))
    assert r.returncode == 0, r.stderr
    assert "คำตอบ | letter if คำตอบ is integer" in r.stdout and "วิชา: วิชา" in r.stdout


def test_a_commit_given_in_capitals_is_the_same_commit(tmp_path):
    r = cli("tasks", "import-inspect", str(_yaml(tmp_path, _spec())), "--repo", "o/n", "--revision", SHA.upper())
    assert r.returncode == 0, r.stderr
    assert f"revision: {SHA}" in r.stdout


def test_hf_spec_with_a_commit_in_capitals_is_pinned(tmp_path):
    r = cli("run", f"hf/o/n@{SHA.upper()}", "--model", "openai:m@http://127.0.0.1:9/v1", "--out", str(tmp_path / "r"),
            env={"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "hub")})
    assert r.returncode == 2 and "pin the dataset to a commit" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: ") and "not in the hub cache" in r.stderr

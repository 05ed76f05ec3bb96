"""Review rev33c: a sweep's run directory is the slug of its benchmark's label and its model's name,
and the slug keeps only A-Za-z0-9._- (and 80 characters). Two task files named in Lao (ກ.yaml and
ຂ.yaml) both became `..._.yaml`: both runs were written into one directory, the sweep printed both
"done" with the second one's score, and the first run was lost. Labels or names of one slug are
refused when the sweep is read, before anything runs."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import cli

TASK = """\
name: {name}
version: "1.0"
language: lo
data: {{file: qa.jsonl}}
fields: {{id: id, public: {{question: question}}, gold: {{answer: answer}}}}
prompt: {{user: "{{{{ question }}}}"}}
scorer: {{kind: exact_match}}
"""


def _sweep(tmp_path, benchmarks, models):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"out": str(tmp_path / "out"), "cache": str(tmp_path / "c.sqlite"),
                                    "models": models, "benchmarks": benchmarks}, allow_unicode=True), encoding="utf-8")
    return cli("sweep", str(path), "--no-progress")


@pytest.fixture
def tasks(tmp_path):
    (tmp_path / "qa.jsonl").write_text(json.dumps({"id": "q1", "question": "ລາວ?", "answer": "ວຽງຈັນ"},
                                                  ensure_ascii=False) + "\n", encoding="utf-8")
    for file, name in (("ກ.yaml", "caps-a"), ("ຂ.yaml", "caps-b")):
        (tmp_path / file).write_text(TASK.format(name=name), encoding="utf-8")
    return [str(tmp_path / "ກ.yaml"), str(tmp_path / "ຂ.yaml")]


def test_two_benchmarks_of_one_directory_name_are_refused(tmp_path, tasks):
    p = _sweep(tmp_path, [{"name": t} for t in tasks], [{"spec": "python:helpers:good_answer"}])
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("error:")]
    assert "would share one run directory" in line and "ກ.yaml" in line and "ຂ.yaml" in line, line
    assert not (tmp_path / "out").exists()


def test_two_models_of_one_directory_name_are_refused(tmp_path, tasks):
    p = _sweep(tmp_path, [{"name": tasks[0]}], [{"spec": "python:helpers:good_answer", "name": "ລາວ"},
                                                {"spec": "python:helpers:plain_answer", "name": "ໄທ"}])
    assert p.returncode == 2 and "model names 'ລາວ' and 'ໄທ' would share one run directory" in p.stderr, p.stderr


def test_labelled_apart_each_runs_in_its_own_directory(tmp_path, tasks):
    p = _sweep(tmp_path, [{"name": tasks[0], "label": "caps-a"}, {"name": tasks[1], "label": "caps-b"}],
               [{"spec": "python:helpers:good_answer"}])
    assert p.returncode == 0, p.stderr
    names = {json.loads(f.read_text(encoding="utf-8"))["benchmark"]["name"]
             for f in (tmp_path / "out").rglob("results.json")}
    assert names == {"caps-a", "caps-b"}


def test_a_finished_judged_cell_by_another_panel_is_not_skipped(tmp_path, srv):
    """The sweep's `judges:` changed after a judged cell finished: the cell was "skipped" with the old
    panel's score (its directory names no judge). Another panel is another number: refused before
    anything runs, as a finished run on other data is."""
    from test_judged_dispatch import configure, task_naming

    configure(srv)
    task = task_naming(tmp_path, srv.spec("judge1"))
    body = {"out": str(tmp_path / "out"), "cache": str(tmp_path / "c.sqlite"),
            "models": [{"spec": srv.spec("cand"), "name": "cand"}], "benchmarks": [{"name": task, "label": "qa"}]}
    path = tmp_path / "s.yaml"
    for judges, code in ((["judge1"], 0), (["judge1"], 0), (["judge2"], 2), (["judge1", "judge2"], 2)):
        path.write_text(yaml.safe_dump({**body, "judges": [srv.spec(j) for j in judges]}, allow_unicode=True),
                        encoding="utf-8")
        p = cli("sweep", str(path), "--no-progress")
        assert p.returncode == code, p.stdout + p.stderr
        if code:
            (line,) = [x for x in p.stderr.splitlines() if x.startswith("error:")]
            assert f"holds a finished run judged by {srv.spec('judge1')}, not by the sweep's" in line, line
    # the task's own judges (no `judges:` in the sweep): its scorer.judges, judge1, the finished panel
    path.write_text(yaml.safe_dump(body, allow_unicode=True), encoding="utf-8")
    p = cli("sweep", str(path), "--no-progress")
    assert p.returncode == 0 and " skipped " in p.stdout, p.stdout + p.stderr


def test_a_finished_cell_with_other_settings_is_not_skipped(tmp_path):
    """A labelled entry whose `options:` changed, a named model whose spec or temperature changed, kept
    the cell's directory, and the sweep printed the old run as "skipped", its number under the new
    settings (bleu_tokenize none shown for 13a). Refused before anything runs, as other data is."""
    def sweep(options=None, spec="python:helpers:good_answer", temperature=None, repeats=None):
        bench = {"name": "laobench-translation", "label": "tr", "limit": 2, **({"options": options} if options else {}),
                 **({"repeats": repeats} if repeats else {})}
        model = {"spec": spec, "name": "m", **({"temperature": temperature} if temperature is not None else {})}
        return _sweep(tmp_path, [bench], [model])

    assert sweep().returncode == 0
    again = sweep()
    assert again.returncode == 0 and " skipped " in again.stdout, again.stdout + again.stderr
    for p, said in ((sweep(options={"bleu_tokenize": "13a"}), "options {} ≠ {'bleu_tokenize': '13a'}"),
                    (sweep(spec="python:helpers:plain_answer"), "model python:helpers:good_answer ≠ python:helpers:plain_answer"),
                    (sweep(temperature=0.7), "temperature 0.0 ≠ 0.7"), (sweep(repeats=2), "repeats 1 ≠ 2")):
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        (line,) = [x for x in p.stderr.splitlines() if x.startswith("error:")]
        assert "holds a finished run with other settings (" in line and said in line, line


def test_a_finished_cell_of_an_edited_task_file_is_not_skipped(tmp_path, tasks):
    """A task file's prompt edited after its cell finished: the sweep printed the old run "skipped" as
    the edited task's number (the run's signature has the old task hash)."""
    body = ([{"name": tasks[0], "label": "caps"}], [{"spec": "python:helpers:good_answer", "name": "m"}])
    assert _sweep(tmp_path, *body).returncode == 0
    assert " skipped " in _sweep(tmp_path, *body).stdout
    task = tmp_path / "ກ.yaml"
    task.write_text(task.read_text(encoding="utf-8").replace('user: "{{ question }}"', 'user: "Briefly: {{ question }}"'),
                    encoding="utf-8")
    p = _sweep(tmp_path, *body)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert f"task file {task} edited since" in p.stderr, p.stderr


def test_a_finished_cell_with_its_own_settings_is_skipped(tmp_path):
    """The other side of the check: a cell whose model sets stop sequences, a temperature and a reply
    cap, run again unchanged, is skipped (the run records the benchmark's stops beside the sweep's)."""
    body = ([{"name": "laobench-translation", "label": "tr", "limit": 2, "options": {"bleu_tokenize": "13a"}}],
            [{"spec": "python:helpers:good_answer", "name": "m", "stop": ["###"], "temperature": 0.3, "max_tokens": 32}])
    assert _sweep(tmp_path, *body).returncode == 0
    again = _sweep(tmp_path, *body)
    assert again.returncode == 0 and " skipped " in again.stdout, again.stdout + again.stderr
    body[1][0]["stop"] = ["###", "END"]
    p = _sweep(tmp_path, *body)
    assert p.returncode == 2 and "without ['###', 'END']" in p.stderr, p.stderr

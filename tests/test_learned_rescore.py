"""`glotbench rescore --metric-checkpoint DIR`: a learned metric added to finished runs with the
endpoint gone (no model call); its figures equal the metric's own segment scores averaged by hand;
a failed sample scores 0; a benchmark with no source field is left out; a bad DIR is one error line."""

from __future__ import annotations

import json

import pytest

from conftest import cli, importorskip_lazily, start_server
from glotbench.engine.evaluate import RunOptions, evaluate

importorskip_lazily("torch")


@pytest.fixture(scope="module")
def translation_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list, str]:
    """A laobench-translation run (answers: each reference less its last two characters) and a tiny
    checkpoint whose vocabulary covers the run's texts."""
    from glotbench.benchmarks.laobench import LaoBenchTranslation
    from glotbench.testing.learned_checkpoint import TinyComet, build

    tmp = tmp_path_factory.mktemp("learned")
    items = LaoBenchTranslation().load()
    server = start_server()
    try:
        server.configure(answers={it.public["question"]: it.gold["reference"][:-2] for it in items})
        evaluate("laobench-translation", server.spec(), RunOptions(out=str(tmp / "run"), cache_path=str(tmp / "c.sqlite"),
                                                                   progress=False))
    finally:
        server.proc.terminate()
        server.proc.wait(10)
    text = " ".join(" ".join([it.public["source"], it.gold["reference"]]) for it in items)
    return str(tmp / "run"), items, str(build(tmp / "ckpt", TinyComet(), text))


def test_rescore_adds_the_learned_metric(translation_run) -> None:
    from glotbench.metrics.learned import load

    run, items, ckpt = translation_run
    r = cli("rescore", run, "--metric-checkpoint", ckpt, "--variant", "norm=nfkc", "--format", "json", timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    m = load(ckpt)
    assert got["learned"] == {"comet22": m.signature()} and m.checkpoint.sha256 in m.signature()
    run0 = got["runs"][0]
    assert all(v is None for v in run0["stored"]["comet22"]["groups"].values())  # not in the run as stored
    seg = m.score([it.public["source"] for it in items], [it.gold["reference"][:-2] for it in items],
                  [it.gold["reference"] for it in items])
    by: dict[str, list[float]] = {}
    for it, x in zip(items, seg):
        by.setdefault(it.meta["direction"], []).append(x)
    want = {g: sum(v) / len(v) for g, v in by.items()}
    assert run0["scores"]["as_run"]["comet22"]["groups"] == pytest.approx(want, abs=1e-6)
    assert set(run0["scores"]["norm=nfkc"]["comet22"]["groups"]) == set(want)
    md = cli("rescore", run, "--metric-checkpoint", ckpt, timeout=300)
    assert md.returncode == 0 and f"`comet22` = {m.signature()}" in md.stdout and "| as_run | comet22 |" in md.stdout


@pytest.mark.parametrize(("higher", "want"), [(True, 0.25), (False, 12.75)])
def test_a_failed_sample_gets_the_worst_score(higher: bool, want: float) -> None:
    """COMET: a failed or zeroed reply scores 0; MetricX-24 (an error score): 25."""
    from pathlib import Path

    from glotbench.checks.rescore import Plan, learned_scores
    from glotbench.metrics.learned import Checkpoint

    class Bench:
        name, input_answer, wrong_language = "t", "source", "zero"

    class Metric:
        checkpoint = Checkpoint(Path("d"), "m", Path("w"), Path("e"), "0", "0", higher_is_better=higher,
                                worst=0.0 if higher else 25.0)

        def score(self, s, h, r):
            return [0.5 for _ in s]

    rows = [{"id": "a", "input": {"source": "x"}, "answer": "y"},
            {"id": "b", "input": {"source": "x"}, "answer": None, "failure": "timeout"},
            {"id": "c", "input": {"source": "x"}, "answer": "z", "flags": ["wrong_language"]},
            {"id": "d", "input": {"source": "x"}, "answer": "w"}]
    plan = Plan(("chrf",), lambda f, m: None, lambda g: [g.get("reference", "")], None)
    got = learned_scores(Metric(), plan, Bench(), rows, {k: {"reference": "r"} for k in "abcd"}, None)
    assert got == {"overall": want, "groups": {}}


def test_bad_checkpoint_is_one_error_line(translation_run, tmp_path) -> None:
    run, _, _ = translation_run
    (tmp_path / "empty").mkdir()
    for d in (tmp_path / "absent", tmp_path / "empty"):
        r = cli("rescore", run, "--metric-checkpoint", str(d))
        assert r.returncode == 2 and r.stderr.startswith("error:") and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_an_error_score_is_ranked_lowest_first() -> None:
    """MetricX-24's lower is better: the model with the lower error ranks first, and a flip is a
    pair whose errors swap order."""
    from glotbench.checks.rescore import RunRescore, rankings

    def run(model, as_run, variant):
        return RunRescore("p", model, "b", "sig", None, {"as_run": {"metricx24": {"overall": as_run, "groups": {}}},
                                                          "v": {"metricx24": {"overall": variant, "groups": {}}}},
                          {}, lower_is_better=("metricx24",))
    r = rankings([run("a", 2.0, 5.0), run("b", 3.0, 4.0), run("c", 3.0, 1.0)])[0]
    assert r["lower_is_better"] is True
    assert r["variants"]["as_run"]["order"] == ["a", "b", "c"] and r["variants"]["as_run"]["tiers"] == [["a"], ["b", "c"]]
    assert r["variants"]["v"]["order"] == ["c", "b", "a"]
    assert r["variants"]["v"]["flips"] == [["a", "b"], ["a", "c"]]
    assert r["variants"]["v"]["values"] == {"a": 5.0, "b": 4.0, "c": 1.0}


def test_rescore_adds_metricx(translation_run, tmp_path) -> None:
    from glotbench.metrics.learned import load
    from glotbench.testing.learned_checkpoint import TinyMetricX, build_metricx

    run, items, _ = translation_run
    text = " ".join(" ".join([it.public["source"], it.gold["reference"]]) for it in items)
    ckpt = build_metricx(tmp_path / "mx", TinyMetricX(), text)
    r = cli("rescore", run, "--metric-checkpoint", str(ckpt), "--format", "json", timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    m = load(ckpt)
    assert got["learned"] == {"metricx24": m.signature()} and got["learned_lower_is_better"] is True
    seg = m.score([it.public["source"] for it in items], [it.gold["reference"][:-2] for it in items],
                  [it.gold["reference"] for it in items])
    by: dict[str, list[float]] = {}
    for it, x in zip(items, seg):
        by.setdefault(it.meta["direction"], []).append(x)
    assert got["runs"][0]["scores"]["as_run"]["metricx24"]["groups"] == \
        pytest.approx({g: sum(v) / len(v) for g, v in by.items()}, abs=1e-5)
    assert got["runs"][0]["scales"]["metricx24"] == "points"


def test_agreement_ranks_the_learned_metric_per_segment_too(tmp_path) -> None:
    """`rescore --agreement --metric-checkpoint DIR`: the learned metric is a column of the segment-level
    table as of the system-level one (it was '–' there: its segment scores were not kept), and its τ
    against chrF++ is scipy's over the two metrics' segment scores, pooled in the runs' order; each
    run's learned figure is the mean of its segment scores."""
    import sys
    from pathlib import Path

    from scipy.stats import kendalltau

    from glotbench.checks.rescore import rescore
    from glotbench.testing.learned_checkpoint import build

    sys.path.insert(0, str(Path(__file__).parent))
    from learned_oracle import CASES, TEXT

    fx = Path(__file__).parent / "fixtures"
    ckpt = build(tmp_path / "ckpt", CASES["comet22"], TEXT)
    for s in ("sys-a", "sys-b", "sys-d", "source"):
        evaluate("flores-plus", f"replay:{fx / 'agreement' / 'khm_Khmr' / f'{s}.jsonl'}",
                 RunOptions(data=str(fx / "tasks" / "flores_plus_devtest.jsonl"), bench_options=(("target", "khm_Khmr"),),
                            out=str(tmp_path / "runs" / s), cache_path=str(tmp_path / "c.sqlite"), progress=False))
    out = rescore([str(tmp_path / "runs")], [], agree=True, metric_checkpoint=str(ckpt))
    seg = next(a for a in out["agreement"] if a["level"] == "segment")
    assert seg["columns"] == ["chrf++", "bleu", "comet22"] and seg["n"] == 12
    runs = out["runs"]  # in the table's pooling order
    chrf = [x for r in runs for x in r["scores"]["as_run"]["chrf++"]["segments"]["all"]]
    learned = [x for r in runs for x in r["scores"]["as_run"]["comet22"]["segments"]["all"]]
    assert len(learned) == len(chrf) == 12 and len({round(x, 6) for x in learned}) > 1
    tau = seg["tau"][0][2]
    assert tau is not None and abs(tau - kendalltau(chrf, learned).statistic) < 1e-12
    for r in runs:
        got = r["scores"]["as_run"]["comet22"]
        assert got["overall"] == pytest.approx(sum(got["segments"]["all"]) / 3, abs=1e-12)

"""Log-likelihood with a named normalisation: hand-computed cases where each normalisation picks
differently (Thai against Latin), and the library tasks run by log-likelihood through the vllm:
backend on a fake engine whose log-probabilities are known (each character one token, log P = -code/1000)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import GlotbenchError, SpecError
from glotbench.registry import get_benchmark
from glotbench.tasks.loglik import choose, length, reply_text
from test_vllm_backend import model as fake_vllm

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"


def test_each_normalisation_by_hand():
    # "ก่า": three code points (ก, the tone mark ่, า), nine UTF-8 bytes, two grapheme clusters (ก่ | า)
    assert [length("ก่า", n) for n in ("char", "byte", "grapheme")] == [3, 9, 2]
    assert [length("ab", n) for n in ("char", "byte", "grapheme")] == [2, 2, 2]
    reply = reply_text([" ก่า", " ab"], [-3.0, -2.5], [3, 1])
    picks = {n: choose(reply, ["ก่า", "ab"], n)[0] for n in ("sum", "token", "char", "byte", "grapheme")}
    # sum -3 vs -2.5; token -1 vs -2.5; char -1 vs -1.25; byte -0.33 vs -1.25; grapheme -1.5 vs -1.25
    assert picks == {"sum": 1, "token": 0, "char": 0, "byte": 0, "grapheme": 1}


def test_ties_go_to_the_first_choice_and_bad_replies_are_failures():
    assert choose(reply_text(["A", "B"], [-1.0, -1.0], [1, 1]), ["A", "B"], "sum") == (0, None)
    assert choose(reply_text(["A", "B"], [-1.0, -2.0], None), ["A", "B"], "token") == (None, "no_token_counts")
    assert choose("not json", ["A"], "sum") == (None, "not_loglik")
    assert choose(reply_text(["A"], [-1.0], [1]), ["A", "B"], "sum") == (None, "not_loglik")


def _run(tmp_path, task, data, **opts):
    m, eng = fake_vllm()
    res = evaluate(task, m, RunOptions(data=str(FX / data), bench_options=tuple(opts.items()), progress=False,
                                       out=str(tmp_path / "r"), cache_path=str(tmp_path / "c.sqlite")))
    samples = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    return res.results, samples, eng


def test_belebele_by_loglik_scores_every_normalisation_side_by_side(tmp_path):
    r, samples, eng = _run(tmp_path, "belebele", "belebele_lao_Laoo.jsonl", config="lao_Laoo", method="loglik")
    # " A" has the lowest code points: the fake engine's likeliest letter, whatever the normalisation
    overall = r["scores"]["overall"]
    assert overall["accuracy"]["value"] == pytest.approx(1 / 3)  # gold A, B, C
    assert {k for k in overall if k.startswith("accuracy[")} == {
        f"accuracy[loglik_{n}]" for n in ("token", "char", "byte", "grapheme")}
    assert "method:loglik" in r["signature"] and "norm:sum" in r["signature"]
    out = json.loads(samples[0]["output"])
    assert out["continuations"] == [" A", " B", " C", " D"] and out["tokens"] == [2, 2, 2, 2]
    assert out["logprob"][0] == pytest.approx(-(32 + 65) / 1000)
    assert r["counts"]["model_calls"] == 3 and all(c[0] == "generate" for c in eng.calls)
    assert r["config"]["prompt_form"] and r["config"]["method"] == "loglik"


def test_sib200_by_loglik_over_the_topic_texts(tmp_path):
    topics = ["science/technology", "travel", "politics", "sports", "health", "entertainment", "geography"]
    r, samples, _ = _run(tmp_path, "sib200", "sib200_tha_Thai.jsonl", config="tha_Thai", method="loglik", norm="char")
    lp = [-sum(ord(c) for c in " " + t) / 1000 for t in topics]  # each character a token, log P = -code/1000
    want = {"sum": max(range(7), key=lambda i: lp[i]),
            "char": max(range(7), key=lambda i: lp[i] / len(topics[i])),
            "token": max(range(7), key=lambda i: lp[i] / len(" " + topics[i]))}
    answer = samples[0]["answer"]
    for norm, i in want.items():
        assert answer[f"loglik_{norm}"] == "ABCDEFG"[i], norm
    assert "norm:char" in r["signature"] and "continuations:texts" in r["signature"]
    gold = {"politics": "C", "science/technology": "A", "entertainment": "F"}
    correct = sum("ABCDEFG"[want["char"]] == g for g in gold.values())
    assert r["scores"]["overall"]["accuracy"]["value"] == pytest.approx(correct / 3)


@pytest.mark.parametrize("task,data,opts", [("xnli", "xnli_ar.jsonl", {"config": "ar"}),
                                             ("xcopa", "xcopa_vi.jsonl", {"config": "vi"}),
                                             ("global-mmlu", "global_mmlu_vi.jsonl", {"config": "vi"})])
def test_multiple_choice_library_tasks_run_by_loglik(tmp_path, task, data, opts):
    r, samples, _ = _run(tmp_path, task, data, method="loglik", **opts)
    assert r["counts"]["failed"] == 0 and all(s["answer"]["loglik_sum"] == "A" for s in samples)


def test_loglik_settings_are_checked(srv, tmp_path):
    with pytest.raises(SpecError, match="norm must be one of sum, token, char, byte, grapheme"):
        get_benchmark("belebele", method="loglik", norm="word")
    with pytest.raises(SpecError, match="norm is a setting of method=loglik"):
        get_benchmark("belebele", norm="char")
    with pytest.raises(SpecError, match="method=loglik needs choices"):
        get_benchmark("flores-plus", method="loglik")
    with pytest.raises(GlotbenchError, match="log-likelihood method needs a local model"):
        evaluate("belebele", srv.spec(), RunOptions(data=str(FX / "belebele_lao_Laoo.jsonl"), progress=False,
                                                   bench_options=(("method", "loglik"),), out=str(tmp_path / "r"),
                                                   cache_path=str(tmp_path / "c.sqlite")))


def test_a_backend_without_token_counts_fails_only_the_per_token_normalisation(tmp_path):
    class SumsOnly:
        """A loglik backend that reports sums only (no loglikelihood_tokens)."""

        spec = cache_id = "python:sums-only"
        default_concurrency = 4

        def prompt_form(self):
            return "text"

        def description(self):
            return {"backend": "test"}

        async def check(self):
            pass

        async def loglikelihood(self, context, continuations):
            return [-float(i) for i in range(len(continuations))]

        async def aclose(self):
            pass

    res = evaluate("belebele", SumsOnly(), RunOptions(data=str(FX / "belebele_lao_Laoo.jsonl"), progress=False,
                                                      bench_options=(("method", "loglik"),), out=str(tmp_path / "r"),
                                                      cache_path=str(tmp_path / "c.sqlite")))
    overall = res.results["scores"]["overall"]
    assert overall["accuracy"]["value"] == pytest.approx(1 / 3)
    assert overall["no_answer_rate[loglik_token]"]["value"] == 1.0

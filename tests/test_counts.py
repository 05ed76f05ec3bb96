"""Counts and timings that agree with each other (issue #30): log-likelihood latencies and tokens,
the speed of a cached re-run, the reply cap a base model was sent, the position check of a
log-likelihood run, a failed call never "no answer", where an endpoint run's requests went, and the
messages of `compare`, `plan` and `--max-cost`. Endpoint runs go to the loopback server; the
log-likelihood backends are small objects here whose scores are known."""

from __future__ import annotations

import asyncio
import json

import pytest

from conftest import cli
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import GlotbenchError
from glotbench.models.base import LOGLIK_LATENCY, GenerateConfig, Prompt, Response, Usage


class SerialLoglik:
    """A log-likelihood backend that scores one request at a time (as a local engine does), the first
    choice always likeliest (so a letter run picks A every time); `words`: it counts tokens as words."""

    spec = cache_id = "python:serial-loglik"
    default_concurrency = 8

    def __init__(self, words: bool = True, step_s: float = 0.02):
        self.step_s = step_s
        self.lock: asyncio.Lock | None = None
        if words:
            self.count_prompt_tokens = lambda prompt, config, loglik=False: sum(
                len(((prompt.text or "") + c).split()) for c in prompt.choices or ())

    def prompt_form(self):
        return "text"

    def description(self):  # as hf: describes its batched generation, not the log-likelihood method
        return {"backend": "test", "latency": "per item: its batch's wall time divided by the number of items"}

    async def check(self):
        pass

    async def loglikelihood(self, context, continuations):
        self.lock = self.lock or asyncio.Lock()
        async with self.lock:
            await asyncio.sleep(self.step_s)
        return [-float(i) for i in range(len(continuations))]

    async def aclose(self):
        pass


def _loglik_run(tmp_path, model, name="r"):
    res = evaluate("laobench-mcq", model, RunOptions(limit=12, bench_options=(("method", "loglik"),), progress=False,
                                                     out=str(tmp_path / name), cache_path=str(tmp_path / "c.sqlite")))
    samples = [json.loads(x) for x in (tmp_path / name / "samples.jsonl").read_text().splitlines()]
    return res, samples


def test_loglik_latency_is_each_items_own_time_and_tokens_are_counted(tmp_path):
    from glotbench.report.terminal import tokens_text

    model = SerialLoglik()
    res, samples = _loglik_run(tmp_path, model)
    t = res.results["timing"]
    # The caption is the log-likelihood method's, not the backend's batched-generation one.
    assert t["latency"] == LOGLIK_LATENCY == res.results["model"]["latency"]
    # Each item's time is its own: together they make the request phase, where the time from the
    # request alone counted the wait behind the other 7 in flight (the sum was several phases).
    lat = [s["latency_s"] for s in samples]
    assert sum(lat) <= t["request_phase_s"] * 1.05 + 0.05, (sum(lat), t["request_phase_s"])
    # Tokens: context + each choice through the model, by the backend's tokenizer; nothing generated.
    from glotbench.registry import get_benchmark

    bench = get_benchmark("laobench-mcq", method="loglik")
    want = sum(model.count_prompt_tokens(bench.render(it.to_public()), None) for it in res.dataset)
    assert res.results["tokens"]["prompt"] == want > 0 and res.results["tokens"]["completion"] == 0
    assert "not_counted" not in res.results["tokens"]
    assert all(s["tokens"]["prompt"] > 0 for s in samples)
    assert "log-likelihood generates none" in tokens_text(res.results)
    # A log-likelihood run generates nothing: run.json has no reply cap, the setting kept beside it.
    cfg = json.loads((tmp_path / "r" / "run.json").read_text())["config"]
    assert cfg["max_tokens"] is None and cfg["max_tokens_setting"] == 1024


def test_a_backend_that_cannot_count_says_so(tmp_path):
    from glotbench.report.terminal import tokens_text

    res, _ = _loglik_run(tmp_path, SerialLoglik(words=False, step_s=0.0))
    assert res.results["tokens"]["not_counted"] == 12 and res.results["tokens"]["prompt"] == 0
    assert "tokens of 12 replies not counted" in tokens_text(res.results)


def test_a_loglik_letter_run_gets_the_position_check(tmp_path):
    """A on 12 of 12: the error types name A as over-chosen and count the wrong answers as position
    errors, as for generated letters."""
    res, samples = _loglik_run(tmp_path, SerialLoglik(step_s=0.0))
    assert {s["answer"] for s in samples} == {"A"}
    errors = res.results["checks"]["errors"]
    assert errors["kind"] == "letter" and errors["letters"]["chosen"] == {"A": 12}
    assert errors["letters"]["over_chosen"] == "A"
    wrong = sum(1 for s in samples if s["score"]["correct"] == 0)
    assert wrong > 0 and errors["overall"]["errors"]["position"] == wrong
    assert errors["overall"]["errors"]["distractor"] == 0


class TextModel:
    """A base model: plain-text prompts (each capped by the prompt itself), a fixed reply."""

    spec = cache_id = "python:text-model"
    default_concurrency = 4

    def __init__(self, reply: str):
        self.reply = reply
        self.caps: list[int] = []

    def prompt_form(self):
        return "text"

    def description(self):
        return {"backend": "test"}

    async def check(self):
        pass

    async def generate(self, prompt: Prompt, config: GenerateConfig, **_):
        self.caps.append(config.max_tokens)
        return Response(text=self.reply, finish_reason="stop", usage=Usage(3, 1))

    async def aclose(self):
        pass


def test_run_json_has_the_reply_cap_that_was_sent(tmp_path):
    model = TextModel("A")
    evaluate("laobench-mcq", model, RunOptions(limit=5, progress=False, out=str(tmp_path / "mcq"), use_cache=False))
    cfg = json.loads((tmp_path / "mcq" / "run.json").read_text())["config"]
    assert set(model.caps) == {8}  # the prompt's own cap, below the benchmark's 1024
    assert cfg["max_tokens"] == 8 and cfg["max_tokens_setting"] == 1024 and "max_tokens_min" not in cfg
    res = json.loads((tmp_path / "mcq" / "results.json").read_text())
    assert res["config"]["max_tokens"] == 8
    # vi-diacritics caps each reply by its input's length: the range sent, exactly
    model = TextModel("x")
    evaluate("vi-diacritics", model, RunOptions(limit=20, progress=False, out=str(tmp_path / "vi"), use_cache=False))
    cfg = json.loads((tmp_path / "vi" / "run.json").read_text())["config"]
    assert len(set(model.caps)) > 1
    assert (cfg["max_tokens"], cfg["max_tokens_min"]) == (max(model.caps), min(model.caps))
    # a chat model is sent the setting: nothing added
    from glotbench.engine.evaluate import reply_cap
    from collections import Counter

    assert reply_cap(1024, Counter({1024: 5}), False) == {}


def test_a_cached_rerun_reports_no_model_speed(srv, tmp_path):
    from glotbench.report.html import usage_section

    opts = dict(limit=6, progress=False, cache_path=str(tmp_path / "c.sqlite"))
    first = evaluate("vi-diacritics", srv.spec(), RunOptions(out=str(tmp_path / "a"), **opts)).results
    assert first["timing"]["samples_sent"] == 6 and first["timing"]["samples_per_s"] > 0
    again = evaluate("vi-diacritics", srv.spec(), RunOptions(out=str(tmp_path / "b"), **opts)).results
    assert again["counts"]["cache_hits"] == 6
    assert again["timing"]["samples_sent"] == 0 and again["timing"]["samples_per_s"] is None
    html = usage_section(again, [])
    assert "no model speed was measured" in html and "per second" not in html
    # a results.json written before `samples_sent`, all from the cache: its read-back speed is not shown
    old = {**again, "timing": {"run_s": 0.01, "samples_per_s": 4786.0, "request_phase_s": None}}
    assert "4786" not in usage_section(old, []) and "no model speed" in usage_section(old, [])


def test_a_timed_out_item_is_a_failed_call_in_every_check(srv, tmp_path):
    """The language check counted a timed-out item as `no_answer` while the error types counted it
    as `call_failed`: one word for it now."""
    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics

    items = list(VietnameseDiacritics().load())[:5]
    srv.configure(faults=[{"match": items[2].public["text"], "delay": 5, "times": 10}])
    res = evaluate("vi-diacritics", srv.spec(), RunOptions(limit=5, progress=False, out=str(tmp_path / "r"),
                                                           use_cache=False, timeout_s=0.5, max_retries=0,
                                                           max_failure_rate=1.0)).results
    assert res["counts"]["failures"] == {"timeout": 1}
    lang, errors = res["checks"]["language"], res["checks"]["errors"]
    assert lang["verdicts"].get("call_failed") == 1 and "no_answer" not in lang["verdicts"]
    assert errors["overall"]["errors"]["call_failed"] == 1 and errors["overall"]["errors"]["no_answer"] == 0


def test_the_run_prints_where_its_requests_went(srv, tmp_path):
    srv.configure()
    base = ["run", "vi-diacritics", "--model", "openai:test", "--limit", "2", "--no-cache", "--no-progress"]
    r = cli(*base, "--out", str(tmp_path / "a"), env={"OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": "sk-test"})
    assert r.returncode == 0, r.stderr
    assert f"endpoint: {srv.url} (from $OPENAI_BASE_URL) · API key from $OPENAI_API_KEY" in r.stdout
    assert "sk-test" not in r.stdout
    r = cli("run", "vi-diacritics", "--model", srv.spec(), "--limit", "2", "--no-cache", "--no-progress",
            "--out", str(tmp_path / "b"), env={"OPENAI_API_KEY": ""})
    assert r.returncode == 0, r.stderr
    assert f"endpoint: {srv.url} (from the model spec) · no API key sent ($OPENAI_API_KEY not set)" in r.stdout
    # `report` shows it too, from results.json
    r = cli("report", str(tmp_path / "b"))
    assert "(from the model spec) · no API key sent ($OPENAI_API_KEY not set)" in r.stdout


def test_compare_names_only_the_signature_parts_that_differ(tmp_path):
    from glotbench.report.compare import compare_runs

    runs = {}
    for mode in (True, False):
        runs[mode] = evaluate("deepsea-mgsm", "python:helpers:mgsm_twelve",
                              RunOptions(thinking=mode, out=str(tmp_path / f"t{mode}"), progress=False,
                                         use_cache=False)).results
    with pytest.raises(GlotbenchError) as e:
        compare_runs(str(tmp_path / "tTrue"), str(tmp_path / "tFalse"))
    msg = str(e.value)
    assert "thinking on ≠ off" in msg and runs[True]["signature"] not in msg and "prompt" not in msg
    from glotbench.report.plan import plan  # plan --runs says the same

    with pytest.raises(GlotbenchError, match="thinking on ≠ off"):
        plan(runs=[str(tmp_path / "tTrue"), str(tmp_path / "tFalse")])


def test_plan_says_why_the_correlation_was_assumed(tmp_path):
    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
    from glotbench.report.plan import plan

    items = list(VietnameseDiacritics().load())
    runs = []
    for name, right in (("a", lambda i: True), ("b", lambda i: i % 3 != 0)):
        f = tmp_path / f"{name}.jsonl"
        f.write_text("".join(json.dumps({"id": it.id, "output": json.dumps(
            {"restored_text": it.gold["references"][0] if right(i) else it.public["text"]}, ensure_ascii=False)},
            ensure_ascii=False) + "\n" for i, it in enumerate(items)), encoding="utf-8")
        evaluate("vi-diacritics", f"replay:{f}", RunOptions(out=str(tmp_path / name), progress=False, use_cache=False))
        runs.append(str(tmp_path / name))
    p = plan(runs=runs)
    assert p["correlation"] == 0.5
    assert p["correlation_from"].startswith("assumed: the runs' correlation (phi) is undefined because run A got "
                                            f"every item right of the {len(items)} shared")
    assert "--correlation" in p["correlation_from"]
    assert plan(items=100, base_rate=0.6)["correlation_from"] == "assumed; measure it with --runs"


def test_max_cost_says_to_raise_the_cap_when_one_request_is_above_it():
    from glotbench.engine.cost import CostCap
    from glotbench.engine.estimate import TokenCount

    class Exact:
        def count(self, prompt, form, config, loglik=False):
            return TokenCount(1000, 1000, 1000)

    p = Prompt(messages=({"role": "user", "content": "x"},))
    cap = CostCap(cap_usd=0.001, price_in=1.0, price_out=1.0, counter=Exact(), form="chat")
    assert cap.reserve(p, GenerateConfig(max_tokens=500)) is None  # $0.0015 > $0.001: nothing is sent
    msg = cap.stopped["message"]
    assert "the same command stops here again" in msg and "raise --max-cost to at least $0.0015" in msg
    # one that fits is sent; the next that does not leaves the ordinary resume advice, with the raise
    cap = CostCap(cap_usd=0.002, price_in=1.0, price_out=1.0, counter=Exact(), form="chat")
    assert cap.reserve(p, GenerateConfig(max_tokens=500)) is not None
    assert cap.reserve(p, GenerateConfig(max_tokens=500)) is None
    assert "raise --max-cost" in cap.stopped["message"] and "run the same command again" in cap.stopped["message"]



def test_aragen_names_why_entries_have_no_answer(srv, cache_path, tmp_path):
    """AraGen counts an entry whose candidate call failed as "without an answer" (upstream's policy
    needs that); the table now says which were failed calls (a timeout) rather than empty replies."""
    from glotbench.engine.aragen import run_aragen
    from test_aragen_parity import ALL5, _table

    srv.configure(judges={"j": {"mode": "rubric", "scores": ALL5}}, faults=[{"match": "*", "delay": 5, "times": 99}])
    opts = RunOptions(progress=False, cache_path=cache_path, limit=2, timeout_s=0.5, max_retries=0,
                      max_failure_rate=1.0, bootstrap_resamples=50, out=str(tmp_path / "a"))
    res = asyncio.run(run_aragen(srv.spec("cand"), [srv.spec("j")], opts))
    assert res["generation_failures"] == {"timeout": 2}, res["generation_failures"]
    assert "2 without an answer (timeout 2)" in " ".join(_table(res).split())

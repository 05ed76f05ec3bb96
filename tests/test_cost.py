"""What a run costs: the dry run's estimate (no model call, the endpoint may be down), the
per-script estimate, observed completion lengths, and `--max-cost` against the loopback server
(which reports usage: one token per word)."""

from __future__ import annotations

import json
import math
import socket
from pathlib import Path

import pytest

from conftest import cli
from glotbench.engine.cost import CostCap
from glotbench.engine.estimate import SCRIPT_BANDS, BundledTokenizer, dominant_script, estimate_run
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import GlotbenchError
from glotbench.models.base import GenerateConfig, Prompt, Usage


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return port


@pytest.mark.parametrize("text, script", [
    ("ສະບາຍດີ ທ່ານ ສະບາຍດີບໍ່", "lao"), ("សួស្តី​ពិភពលោក", "khmer"), ("မင်္ဂလာပါ ကမ္ဘာ", "myanmar"),
    ("สวัสดีชาวโลก", "thai"), ("Xin chào thế giới, hôm nay trời đẹp", "vietnamese"),
    ("Xin chao the gioi", "latin"), ("مرحبا بالعالم", "arabic"), ("Answer with the letter. ສະບາຍດີ ທ່ານ ບໍ່ ເປັນ ຫຍັງ", "lao"),
    ("12, 34.", "latin"), ("Привет мир", "other"),
])
def test_dominant_script(text, script):
    assert dominant_script(text) == script


def test_bundled_estimate_counts_chat_framing_and_band():
    tok = BundledTokenizer()
    text = "ສະບາຍດີ ທ່ານ ສະບາຍດີບໍ່"
    chat = tok.count(Prompt(messages=({"role": "user", "content": text},)), "chat", GenerateConfig())
    assert chat.point == tok.tokens(text) + 3 + 3  # OpenAI's framing: 3 per message, 3 for the reply
    lo, hi = SCRIPT_BANDS["lao"]
    assert chat.script == "lao" and chat.low <= chat.point * lo + 1 and chat.high >= chat.point * hi - 1
    plain = tok.count(Prompt(messages=(), text="Hello world"), "text", GenerateConfig())
    assert plain.point == tok.tokens("Hello world") == 2


INSTRUCTION = ("You are a professional translator. Translate the following text from {} into English. Keep names "
               "as they are and answer with the translation only, nothing else. Text: ")


@pytest.mark.parametrize("language, source", [
    ("Burmese", "မြန်မာနိုင်ငံသည် အရှေ့တောင်အာရှတွင် တည်ရှိသည်။"), ("Khmer", "ព្រះរាជាណាចក្រកម្ពុជាស្ថិតនៅអាស៊ីអាគ្នេយ៍"),
    ("Thai", "สวัสดีครับ ผมชื่อสมชาย"), ("Lao", "ສະບາຍດີ ຂ້ອຍຊື່ສົມຊາຍ"),
])
def test_a_prompt_mostly_in_english_with_a_source_in_another_script_gets_that_scripts_band(language, source):
    """A translation prompt from Burmese: English instructions (most letters: dominant `latin`) and
    a Burmese sentence. The range was o200k x the Latin band, 31-90 tokens, while GPT-4's cl100k
    (a real tokenizer, bundled by quicktok) counts 132: the Burmese words cost up to 3.45x. The high
    end now weighs each script's tokens by its own band; a text in one script keeps its band."""
    import quicktok

    tok = BundledTokenizer()
    cl100k = quicktok.get_encoding("cl100k_base")
    text = INSTRUCTION.format(language) + source
    c = tok.count(Prompt(messages=({"role": "user", "content": text},)), "chat", GenerateConfig())
    real = len(cl100k.encode_ordinary(text)) + 3 + 3
    assert c.script == "latin" and c.low <= real <= c.high, (c, real)
    alone = tok.count(Prompt(messages=({"role": "user", "content": source},)), "chat", GenerateConfig())
    lo, hi = SCRIPT_BANDS[alone.script]
    assert (alone.low, alone.high) == (math.floor(alone.point * lo), math.ceil(alone.point * hi))


def test_dry_run_calls_nothing_with_the_endpoint_down(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    r = cli("run", "laobench-mcq", "--model", f"openai:gpt-4o@{url}", "--dry-run", "--limit", "5",
            "--price-in", "2.5", "--price-out", "10", "--out", str(tmp_path / "run"),
            env={"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    assert "5 requests, 0 cached (free), 5 to send" in r.stdout
    assert "prompt tokens (estimated, o200k_base" in r.stdout and "scripts: lao 5" in r.stdout
    assert "cost: $" in r.stdout and "nothing observed yet" in r.stdout
    assert not (tmp_path / "run").exists()  # a dry run writes nothing


def test_dry_run_estimate_uses_the_cache_and_observed_lengths(tmp_path, srv):
    """After a partial run, the dry run counts the cached requests as free and takes the completion
    length from their observed usage; the cost range brackets what the rest really costs."""
    opts = dict(cache_path=str(tmp_path / "c.sqlite"), progress=False, price_in_per_mtok=1.0, price_out_per_mtok=2.0)
    evaluate("vi-diacritics", srv.spec(), RunOptions(limit=4, out=str(tmp_path / "a"), **opts))
    est = estimate_run("vi-diacritics", srv.spec(), RunOptions(limit=10, **opts))
    assert est.requests == 10 and est.cached == 4 and est.to_send == 6
    assert est.observed_completion is not None and "cached" in est.observed_from
    assert est.completion[1] == est.completion[0] < est.completion[2] == 6 * 1024
    assert est.prompt[1] <= est.prompt[0] <= est.prompt[2]
    real = evaluate("vi-diacritics", srv.spec(), RunOptions(limit=10, out=str(tmp_path / "b"), **opts)).results
    billed = real["cost"]["billed_now"]
    assert real["counts"]["model_calls"] == 6
    assert est.cost["min"] <= billed <= est.cost["max"], (est.cost, billed)
    # An earlier run in --out is read when the cache has nothing (--no-cache).
    est2 = estimate_run("vi-diacritics", srv.spec(), RunOptions(limit=10, out=str(tmp_path / "b"), use_cache=False))
    assert est2.cached == 0 and "earlier run" in est2.observed_from


def test_max_cost_needs_prices_and_refuses_batch():
    with pytest.raises(GlotbenchError, match="--max-cost needs --price-in and --price-out"):
        RunOptions(max_cost_usd=1.0, price_in_per_mtok=1.0)
    with pytest.raises(GlotbenchError, match="cannot be combined"):
        RunOptions(max_cost_usd=1.0, price_in_per_mtok=1.0, price_out_per_mtok=1.0, batch=True)
    with pytest.raises(GlotbenchError, match="--max-cost must be"):
        RunOptions(max_cost_usd=-1.0, price_in_per_mtok=1.0, price_out_per_mtok=1.0)


class _Exact:
    """A counter that knows the prompt's real size (as a local tokenizer does)."""

    exact = True
    name = "test"

    def __init__(self, n: int):
        self.n = n

    def count(self, prompt, form, config, loglik=False):
        from glotbench.engine.estimate import TokenCount

        return TokenCount(self.n, self.n, self.n)


def test_cost_cap_reserves_the_worst_case_of_requests_in_flight():
    cfg = GenerateConfig(max_tokens=100)
    cap = CostCap(cap_usd=1.0, price_in=1e6 / 1000, price_out=1e6 / 1000, counter=_Exact(50), form="chat")
    # each request's worst case: (50 + 100) tokens at $0.001 = $0.15; six fit in $1, the seventh does not
    p = [Prompt(messages=({"role": "user", "content": str(i)},)) for i in range(8)]
    held = [cap.reserve(x, cfg) for x in p[:6]]
    assert all(h == pytest.approx(0.15) for h in held)
    assert cap.reserve(p[6], cfg) is None and cap.stopped["reason"] == "max_cost"
    assert cap.reserve(p[7], GenerateConfig(max_tokens=1)) is None  # once stopped, nothing more is sent
    for x, h in zip(p, held):
        cap.spend(x, cfg, Usage(50, 10))
        cap.settle(x, h)
    assert cap.spent == pytest.approx(6 * 0.06) and cap.reserved == 0 and cap.spent <= cap.cap_usd


def test_cost_cap_learns_a_tokenizer_worse_than_the_estimate():
    cfg = GenerateConfig(max_tokens=10)
    cap = CostCap(cap_usd=100.0, price_in=1.0, price_out=1.0, counter=_Exact(20), form="chat")
    p = Prompt(messages=({"role": "user", "content": "x"},))
    h = cap.reserve(p, cfg)
    cap.spend(p, cfg, Usage(60, 5))  # billed 3x the estimate
    cap.settle(p, h)
    assert cap.correction == pytest.approx(3.0)
    assert cap.reserve(Prompt(messages=({"role": "user", "content": "y"},)), cfg) == pytest.approx((60 + 10) / 1e6)


def test_max_cost_stops_records_why_and_the_same_command_resumes(tmp_path, srv):
    """12 items; each request's worst case at these prices is well under a cent, so a cap of a few
    of them stops the run part-way: results.json says stopped and why, the spent cost is within the
    cap, the command exits 3; run again with a higher cap, it sends only what was not sent."""
    out = tmp_path / "run"
    common = ["run", "vi-diacritics", "--model", srv.spec(), "--limit", "12", "--out", str(out),
              "--cache-path", str(tmp_path / "c.sqlite"), "--price-in", "1000", "--price-out", "1000",
              "--max-tokens", "40", "--concurrency", "4", "--no-progress"]
    r = cli(*common, "--max-cost", "0.5")
    assert r.returncode == 3, r.stderr
    assert "stopped: the next request's worst case" in r.stderr and "run the same command again" in r.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["status"] == "stopped" and res["stopped"]["reason"] == "max_cost"
    sent = res["counts"]["model_calls"]
    assert 0 < sent < 12 and res["counts"]["not_sent"] == 12 - res["counts"]["samples"]
    assert res["cost"]["spent_usd"] == pytest.approx(res["cost"]["billed_now"]) and res["cost"]["billed_now"] <= 0.5
    assert json.loads((out / "run.json").read_text())["status"] == "stopped"
    assert len(srv.requests()) == sent
    # Resume: the cached replies cost nothing; only the rest is sent.
    r = cli(*common, "--max-cost", "100")
    assert r.returncode == 0, r.stderr
    res2 = json.loads((out / "results.json").read_text())
    assert res2["status"] == "complete" and "stopped" not in res2
    assert res2["counts"]["cache_hits"] == sent and res2["counts"]["model_calls"] == 12 - sent
    assert len(srv.requests()) == 12
    r = cli(*common, "--max-cost", "100")  # finished now: the directory is refused as before
    assert r.returncode == 2 and "already holds a finished run" in r.stderr


def test_concurrency_option_values(tmp_path):
    r = cli("run", "vi-diacritics", "--model", "openai:x@http://127.0.0.1:9/v1", "--concurrency", "lots", "--dry-run")
    assert r.returncode == 2 and "--concurrency must be a whole number >= 1 or auto" in r.stderr
    with pytest.raises(GlotbenchError, match="--max-concurrency"):
        RunOptions(concurrency="auto", max_concurrency=0)
    assert RunOptions(concurrency="auto").max_concurrency == 64


def test_performance_doc_records_the_estimate_error(repo_root):
    doc = (repo_root / "docs" / "performance.md").read_text(encoding="utf-8")
    assert "python bench/token_estimate.py" in doc
    for script, (lo, hi) in SCRIPT_BANDS.items():
        if script != "other":
            assert f"{lo:.2f}–{hi:.2f}" in doc, script


def test_sweep_dry_run_estimates_each_run_without_calling(tmp_path):
    import yaml

    url = f"http://127.0.0.1:{closed_port()}/v1"
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "out": str(tmp_path / "out"), "cache": str(tmp_path / "c.sqlite"),
        "models": [{"spec": f"openai:a@{url}", "price_in": 2.5, "price_out": 10.0}, {"spec": f"openai:b@{url}"}],
        "benchmarks": [{"name": "laobench-mcq", "limit": 3}, {"name": "vi-diacritics", "limit": 2}]}), encoding="utf-8")
    r = cli("sweep", str(path), "--dry-run")
    assert r.returncode == 0, r.stderr
    rows = [ln for ln in r.stdout.splitlines() if ln.endswith("  to run")]
    assert len(rows) == 4 and all("~" in ln for ln in rows)  # estimated prompt tokens, marked
    priced = [ln for ln in rows if "openai_a" in ln]
    assert all("–" in ln for ln in priced) and all(ln.split()[-3] == "-" for ln in rows if "openai_b" in ln)
    assert "4 runs (4 to run), at most 10 model calls" in r.stdout and "0 cached now, 10 to send" in r.stdout
    assert "cost $" in r.stdout and "(2 runs without prices not counted)" in r.stdout
    assert not (tmp_path / "out").exists()


def test_dry_run_names_the_requests_it_does_not_count(tmp_path):
    """A dry run with --pivot printed the native run's 3 requests as if they were the whole run (the
    pivot model's translations and the English run's requests left out without a word), and a task
    scored by a rubric left out its judges the same way. Both now say what is not counted; a plain
    dry run has no such line."""
    pivot = cli("run", "laobench-mcq", "--model", "python:helpers:good_answer", "--pivot", "en", "--pivot-model",
                "python:helpers:good_answer", "--limit", "3", "--dry-run")
    assert pivot.returncode == 0, pivot.stderr
    assert "3 requests" in pivot.stdout and "not counted: --pivot: python:helpers:good_answer's translations" in pivot.stdout
    from test_tasks_rubric import files

    task = files(tmp_path)
    judged = cli("run", task, "--model", "python:helpers:good_answer", "--judge", "python:helpers:good_answer",
                 "--dry-run")
    assert judged.returncode == 0, judged.stderr
    assert "not counted: the judges' requests" in judged.stdout and judged.stdout.count("not counted") == 1
    plain = cli("run", "laobench-mcq", "--model", "python:helpers:good_answer", "--limit", "3", "--dry-run")
    assert plain.returncode == 0 and "not counted" not in plain.stdout
    sweep = tmp_path / "s.yaml"
    sweep.write_text(f"out: {tmp_path / 'sw'}\nstore: false\nmodels:\n  - spec: python:helpers:good_answer\n"
                     f"judges: [python:helpers:good_answer]\nbenchmarks:\n  - name: {task}\n", encoding="utf-8")
    s = cli("sweep", str(sweep), "--dry-run")
    assert s.returncode == 0, s.stderr
    assert "not counted in " in s.stdout and "the judges' requests" in s.stdout

"""The embedded default model (Gemma 3 270M GGUF) really loads and generates, batched, offline.

The model is converted (into an isolated cache folder) and loaded once for the session (conftest
`embedded_store`, shared with test_converted_model); every test uses that one instance. Slow (about a
minute for the conversion), and run in CI.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from conftest import importorskip_lazily

# the [local] extra is part of the test extra; imported when a test uses it, not while the suite is collected
importorskip_lazily("transformers")

from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics  # noqa: E402
from glotbench.engine.evaluate import RunOptions, evaluate  # noqa: E402
from glotbench.models.base import GenerateConfig  # noqa: E402
from glotbench.models.hf import BLOCKS_FILE, _converted_root  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedded(embedded_store):
    """The embedded model, converted from its GGUF into an isolated cache and loaded once for the session
    (conftest `embedded_store`, which checks that the conversion really ran)."""
    folder, model = embedded_store
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")  # no network at run time
    mp.setenv("GLOTBENCH_CACHE_DIR", str(folder))
    yield model
    mp.undo()


def test_embedded_model_generates_in_batches(embedded):
    model = embedded
    bench = VietnameseDiacritics()
    items = bench.load()[:4]

    async def go():
        await model.check()
        prompts = [bench.render(it.to_public()) for it in items]
        cfg = GenerateConfig(max_tokens=48, stop=("\n",))
        try:
            return await asyncio.gather(*(model.generate(p, cfg) for p in prompts))
        finally:
            await model.aclose()

    responses = asyncio.run(go())
    assert model.prompt_form() == "text"  # a base model: no chat template
    assert all(r.raw["batch"] == 4 for r in responses)  # one generate() call for all four
    # each reply's latency is its share of the batch's time, not the whole batch's (issue 21)
    assert all(abs(4 * r.latency_s - r.raw["batch_latency_s"]) < 1e-3 for r in responses)
    assert all(r.usage.completion_tokens > 0 and "\n" not in r.text for r in responses)
    assert any("restored_text" in r.text for r in responses)  # it follows the few-shot format
    converted = [p for p in _converted_root().iterdir() if p.name.startswith("gemma-3-270m-q4_k_m-")]
    assert converted and (converted[0] / BLOCKS_FILE).is_file()


def test_embedded_model_full_run(tmp_path, embedded):
    res = evaluate("vi-diacritics", embedded, RunOptions(limit=6, progress=False, out=str(tmp_path / "run"),
                                                        cache_path=str(tmp_path / "c.sqlite")))
    r = res.results
    assert r["model"]["backend"] == "hf" and r["model"]["gguf_sha256"]
    assert r["config"]["prompt_form"] == "text" and r["counts"]["samples"] == 6
    samples = [json.loads(x) for x in (res.out_dir / "samples.jsonl").read_text().splitlines()]
    assert all(s["output"] is not None and s["error"] is None for s in samples)
    assert 0.0 <= r["scores"]["overall"]["word_accuracy"]["value"] <= 1.0
    assert "torch" in r["versions"] and "transformers" in r["versions"]


def test_embedded_model_progress_has_an_eta_after_the_first_batch(tmp_path, embedded, monkeypatch):
    """The real `local` model, 3 batches of 2 on an 80-column terminal: the live line gives an ETA
    once the first batch is back, and each reply's latency is its share of its batch."""
    import io
    import re

    from glotbench.models.batching import BATCH_LATENCY

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setenv("COLUMNS", "80")
    res = evaluate("vi-diacritics", embedded, RunOptions(limit=6, concurrency=2, max_tokens=24, use_cache=False,
                                                        out=str(tmp_path / "run")))
    frames = [f.strip() for f in re.split(r"[\r\n]", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "\n", err.getvalue()))
              if f.strip()]
    after_first = [f for f in frames if re.search(r"\b[24]/6\b", f)]
    assert after_first and all("ETA -:--:--" not in f and len(f) <= 80 for f in after_first), frames
    assert res.results["timing"]["latency"] == BATCH_LATENCY == res.results["model"]["latency"]
    samples = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    batches = sorted({round(s["latency_s"], 3) for s in samples})
    assert len(samples) == 6 and len(batches) <= 3 and all(x > 0 for x in batches)


def test_hf_backend_on_a_local_folder(tmp_path, embedded):
    """`hf:PATH` on the converted embedded model: the same code path any transformers model takes."""
    folder = next(p for p in _converted_root().iterdir() if p.name.startswith("gemma-3-270m-q4_k_m-"))
    res = evaluate("vi-diacritics", f"hf:{folder}", RunOptions(limit=2, progress=False, out=str(tmp_path / "r"),
                                                              cache_path=str(tmp_path / "c.sqlite")))
    assert res.results["model"]["backend"] == "hf" and res.results["config"]["prompt_form"] == "text"
    assert res.results["counts"]["samples"] == 2 and res.results["counts"]["model_calls"] == 2


def test_dry_run_counts_a_local_models_prompt_tokens_exactly(tmp_path, embedded):
    """The dry run's count for `hf:PATH` (its own tokenizer, its own rendering) equals the prompt
    tokens the backend reports when the run is made."""
    from glotbench.engine.estimate import estimate_run

    folder = next(p for p in _converted_root().iterdir() if p.name.startswith("gemma-3-270m-q4_k_m-")
                  and (p / "config.json").is_file())
    opts = RunOptions(limit=3, progress=False, out=str(tmp_path / "r"), cache_path=str(tmp_path / "c.sqlite"),
                      max_tokens=8)
    est = estimate_run("vi-diacritics", f"hf:{folder}", opts)
    assert est.exact and est.prompt[0] == est.prompt[1] == est.prompt[2] and est.cached == 0
    res = evaluate("vi-diacritics", f"hf:{folder}", opts).results
    assert est.prompt[0] == res["tokens"]["prompt"] > 0
    assert res["tokens"]["completion"] <= est.completion[2] == 3 * 8


def test_loglikelihood_prefers_the_likely_continuation(embedded):
    scores = asyncio.run(embedded.loglikelihood("The capital of France is", (" Paris", " banana")))
    assert scores[0] > scores[1] and all(s < 0 for s in scores)


def test_laobench_mcq_loglik_method(tmp_path, embedded):
    res = evaluate("laobench-mcq", embedded, RunOptions(limit=4, progress=False, out=str(tmp_path / "r"),
                                                       cache_path=str(tmp_path / "c.sqlite"),
                                                       bench_options=(("method", "loglik"),))).results
    assert "accuracy_loglik" in res["scores"]["overall"] and "method:loglik" in res["signature"]
    samples = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    assert [s["answer"] in ("A", "B", "C", "D") for s in samples] == [True] * 4
    assert res["counts"]["failures"] == {} and res["counts"]["model_calls"] == 4


def test_loglik_needs_a_local_model(tmp_path, srv):
    from glotbench.errors import GlotbenchError

    with pytest.raises(GlotbenchError, match="log-likelihood method needs a local model"):
        evaluate("laobench-mcq", srv.spec(), RunOptions(limit=2, progress=False, out=str(tmp_path / "r"),
                                                         cache_path=str(tmp_path / "c.sqlite"),
                                                         bench_options=(("method", "loglik"),)))


def test_library_task_by_loglik_on_the_embedded_model(tmp_path, embedded):
    """Belebele (Lao) by log-likelihood on the real embedded model: one call per item gives every
    choice's log-probability and token count, and the five normalisations are scored from them."""
    from pathlib import Path

    data = Path(__file__).resolve().parent / "fixtures" / "tasks" / "belebele_lao_Laoo.jsonl"
    res = evaluate("belebele", embedded, RunOptions(data=str(data), progress=False, out=str(tmp_path / "r"),
                                                   cache_path=str(tmp_path / "c.sqlite"),
                                                   bench_options=(("method", "loglik"), ("norm", "byte"))))
    r = res.results
    assert r["counts"]["model_calls"] == 3 and r["counts"]["failed"] == 0 and "norm:byte" in r["signature"]
    assert {f"accuracy[loglik_{n}]" for n in ("sum", "token", "char", "grapheme")} <= set(r["scores"]["overall"])
    for line in (tmp_path / "r" / "samples.jsonl").read_text().splitlines():
        out = json.loads(json.loads(line)["output"])
        assert len(out["logprob"]) == 4 and all(x < 0 for x in out["logprob"]) and all(t >= 1 for t in out["tokens"])


def test_token_premium_from_the_models_own_tokenizer(tmp_path, embedded):
    """glotbench.checks.tokens: a local model counts each item's reference with its own tokenizer."""
    from glotbench.benchmarks.deepsea import DeepSEATask

    res = evaluate("deepsea-wmt24pp", embedded, RunOptions(limit=1, max_tokens=4, out=str(tmp_path / "w"),
                                                           use_cache=False, progress=False)).results
    item = DeepSEATask("wmt24pp").load()[0]
    lang = item.meta["lang"]
    got = res["checks"]["tokens"]["tokenizer"][lang]
    assert got["tokens"] == embedded.count_text_tokens(item.gold["target"]) > 0
    assert got["premium_vs_en"] == got["tokens"] / embedded.count_text_tokens(item.public["source"])
    assert res["checks"]["tokens"]["tokenizer_of"] == embedded.spec

"""The embedded model's converted store (issue 32): the GGUF's own quantized blocks, not float32.

Loading it must give what transformers' float32 conversion of the GGUF gives: the same weights bit
for bit, so the same greedy replies and the same log-likelihoods. The reference here is transformers
loading the GGUF directly (the way the model was converted before). Slow: one conversion and one
reference load of the real model (about 3 minutes on a quiet 2-core machine).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from conftest import importorskip_lazily

torch = importorskip_lazily("torch")
importorskip_lazily("transformers")

from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics  # noqa: E402
from glotbench.models.base import GenerateConfig  # noqa: E402
from glotbench.models.hf import BLOCKS_FILE, HFModel, _converted_root  # noqa: E402
from glotbench.rundir.selection import quick  # noqa: E402

pytestmark = pytest.mark.slow

BELEBELE_LAO = Path(__file__).resolve().parents[1] / "docs" / "examples" / "belebele-lao.jsonl"


@pytest.fixture(scope="module")
def models(embedded_store):
    """(the embedded model loaded from its converted store, the same model with transformers' float32
    conversion of the GGUF in place of its weights)."""
    from transformers import AutoModelForCausalLM

    folder, stored = embedded_store  # converted into the session's empty cache, then loaded from the blocks
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("GLOTBENCH_CACHE_DIR", str(folder))
    gguf = stored._resolve_gguf()
    reference = HFModel.embedded_default()
    reference._load_sync()  # the converted store exists now: nothing is converted twice
    reference._model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                            dtype=torch.float32).eval()
    yield stored, reference
    mp.undo()


def test_the_store_is_the_ggufs_blocks(models):
    """Every matrix is kept as its GGUF blocks (only the float32 norms as floats), and the folder
    holds one copy of the model: a quarter of float32's bytes."""
    from safetensors import safe_open

    stored, _ = models
    folder = next(p for p in _converted_root().iterdir() if (p / BLOCKS_FILE).is_file())
    with safe_open(str(folder / BLOCKS_FILE), "pt") as f:
        blocks = f.metadata()
        names = list(f.keys())
    matrices = [n for n, t in stored._model.state_dict().items() if t.ndim == 2 and n in names]
    assert matrices and all(n in blocks for n in matrices)
    float32_bytes = 4 * sum(p.numel() for p in stored._model.parameters())
    assert (folder / BLOCKS_FILE).stat().st_size < float32_bytes / 4
    assert [p.name for p in _converted_root().iterdir()] == [folder.name]  # no tokenizer copy beside it


def test_weights_equal_the_float32_conversion_bit_for_bit(models):
    stored, reference = models
    mine, theirs = stored._model.state_dict(), reference._model.state_dict()
    assert mine.keys() == theirs.keys()
    assert [k for k in theirs if mine[k].dtype != theirs[k].dtype or not torch.equal(mine[k], theirs[k])] == []


def test_greedy_replies_equal_float32s(models):
    """The first 6 items of the quick start's subset, one batch each way (float16 storage changed
    the sixth: docs/performance.md)."""
    stored, reference = models
    bench = VietnameseDiacritics()
    items = quick(bench.load(), bench.group_by).items[:6]
    prompts = [bench.render(it.to_public()) for it in items]

    def replies(model: HFModel) -> list[str]:
        async def go():
            try:
                cfg = [GenerateConfig(temperature=0.0, max_tokens=p.text_max_tokens or 48, stop=p.text_stop)
                       for p in prompts]
                return await asyncio.gather(*(model.generate(p, c) for p, c in zip(prompts, cfg)))
            finally:
                await model.aclose()
        return [r.text for r in asyncio.run(go())]

    got = replies(stored)
    assert got == replies(reference) and any(got)


def test_loglikelihood_choices_equal_float32s(models):
    """Belebele in Lao (the three example rows): each option's log-likelihood, both ways."""
    stored, reference = models
    rows = [json.loads(x) for x in BELEBELE_LAO.read_text(encoding="utf-8").splitlines() if x.strip()]
    assert rows
    for row in rows:
        context = f"{row['flores_passage']}\n{row['question']}\n"
        options = tuple(" " + row[f"mc_answer{i}"] for i in range(1, 5))
        mine = asyncio.run(stored.loglikelihood(context, options))
        theirs = asyncio.run(reference.loglikelihood(context, options))
        assert mine == theirs and all(x < 0 for x in mine)

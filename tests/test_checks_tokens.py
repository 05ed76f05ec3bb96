"""Token premium per language and truncation (glotbench.checks.tokens), counted by hand: the test
server reports one completion token per whitespace word of its reply and one prompt token per word
of the prompt; a tokenizer is any text -> count function."""

from __future__ import annotations

import pytest

from glotbench.checks.tokens import tokenizer_premium
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.items import Item


def test_usage_premium_and_truncation_per_language(srv, tmp_path, cache_path):
    """LaoBench translation, first 5 items (lo-en x3, en-lo x2), max_tokens 3: every reply is cut at
    three words (finish_reason length). lo-en replies: "I go to" (3 tokens, 5 non-space characters,
    3 words); en-lo: the echoed prompt's first three words."""
    srv.configure(answers={"ແປເປັນພາສາອັງກິດ": "I go to school every day ."})
    res = evaluate("laobench-translation", srv.spec(),
                   RunOptions(limit=5, max_tokens=3, out=str(tmp_path / "r"), cache_path=cache_path,
                              progress=False)).results
    u = res["checks"]["tokens"]["usage"]
    assert u["en"]["completion_tokens"] == 9 and u["en"]["chars"] == 15 and u["en"]["words"] == 9
    assert u["en"]["tokens_per_char"] == pytest.approx(0.6) and u["en"]["tokens_per_word"] == 1.0
    assert u["en"]["truncated"] == 3 and u["en"]["truncation_rate"] == 1.0
    assert u["lo"]["samples"] == 2 and u["lo"]["truncated"] == 2
    assert "tokenizer" not in res["checks"]["tokens"]  # an API model: usage counts only


def test_tokenizer_premium_on_translation_pairs_and_parallel_items():
    from glotbench.registry import get_benchmark

    count = lambda text: len(text)  # noqa: E731 - a character tokenizer: counts by hand
    wmt = get_benchmark("deepsea-wmt24pp")
    items = [Item.create("th/00000", {"source": "Hello there", "lp": "en-th_TH", "lang": "th"},
                         {"target": "สวัสดีครับ"}, {"lang": "th", "lp": "en-th_TH"}),
             Item.create("th/00001", {"source": "Good", "lp": "en-th_TH", "lang": "th"},
                         {"target": "ดีมาก"}, {"lang": "th", "lp": "en-th_TH"})]
    got = tokenizer_premium(wmt, items, count)["th"]
    # Targets: 10 + 5 characters = 15 tokens; sources 11 + 4 = 15 tokens: premium 1.0.
    assert got["tokens"] == 15 and got["chars"] == 15 and got["premium_vs_en"] == 1.0
    assert got["premium_from"] == "2 translation pairs from English"
    mgsm = get_benchmark("deepsea-mgsm")
    par = [Item.create("en/00000", {"question": "one two", "lang": "en"}, {"answer_number": 1}, {"lang": "en"}),
           Item.create("th/00000", {"question": "หนึ่งสองสาม", "lang": "th"}, {"answer_number": 1}, {"lang": "th"})]
    got = tokenizer_premium(mgsm, par, lambda t: len(t.split()) * 2 if t.isascii() else len(t))
    assert got["th"]["premium_vs_en"] == pytest.approx(11 / 4)  # 11 characters against 2 words x 2
    assert got["th"]["premium_from"] == "1 items parallel to English items"


def test_a_backend_without_usage_counts_gives_no_token_ratio_not_zero(tmp_path, cache_path):
    """A python: model reports no usage (0 prompt, 0 completion tokens): tokens per character was
    0.000 per language, on the run page and the board's token view, as if its replies cost nothing.
    Now the ratios are null and the replies are counted as without usage."""
    res = evaluate("vi-diacritics", "python:helpers:async_echo",
                   RunOptions(limit=5, out=str(tmp_path / "run"), cache_path=cache_path, progress=False)).results
    u = res["checks"]["tokens"]["usage"]["vi"]
    assert u["samples"] == 5 and u["replies"] == 0 and u["replies_without_usage"] == 5
    assert u["tokens_per_char"] is None and u["tokens_per_word"] is None

"""glotbench's corpus BLEU/chrF/chrF++ equal sacrebleu's corpus_score exactly (==), edge cases included."""

from __future__ import annotations

import unicodedata

import pytest
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF

from glotbench.metrics.corpus import SacreMetric


def sacre(name, hyps, ref_streams, **kw):
    m = BLEU(**kw) if name == "bleu" else CHRF(word_order=2 if name == "chrf++" else 0, **kw)
    return m.corpus_score(hyps, ref_streams).score


def ours(name, hyps, ref_streams, lang=None):
    refs = [[s[i] for s in ref_streams if s[i] is not None] for i in range(len(hyps))]
    return SacreMetric(name, lang).corpus_score(hyps, refs, resamples=10).estimate.value


CASES = {
    "plain": (["the cat sat on the mat", "a quick brown fox"], [["the cat sat on a mat", "the quick brown fox"]]),
    "multi_ref": (["the cat is on the mat", "hello world"],
                  [["the cat sat on the mat", "hello there"], ["there is a cat on the mat", "hello world !"]]),
    "variable_refs": (["the cat is on the mat", "hello world"],
                      [["the cat sat on the mat", "hello there"], ["there is a cat on the mat", None]]),
    "empty_hyp": (["", "hello world"], [["the cat sat", "hello world"]]),
    "all_empty_hyps": (["", ""], [["the cat sat", "hello world"]]),
    "empty_ref": (["the cat", "hello"], [["", "hello"]]),
    "very_short": (["a", "b c"], [["a", "b"]]),
    "whitespace_only_diff": (["the  cat sat\ton the mat ", "hello   world"], [["the cat sat on the mat", "hello world"]]),
    "punct_split": (["(hello) world, again!", "end."], [["hello world again", "end ."]]),
    "thai_raw": (["ภาษาไทยง่ายนิดเดียว", "สวัสดีครับ"], [["ภาษาไทย ง่าย นิดเดียว", "สวัสดีค่ะ"]]),
    "lao_raw": (["ພາສາລາວໃນປັດຈຸບັນ", "ນ້ຳໃສ"], [["ພາສາລາວ ໃນ ປັດຈຸບັນ", "ນ\u0ecd\u0ec9\u0eb2ໃສ"]]),
    "combining": (["Tiếng Việt có dấu", "cafe\u0301"], [["Tiếng Việt có dấu", "café"]]),
    "zero_width_space": (["hello\u200bworld", "a\u200b b"], [["hello world", "a b"]]),
    "nbsp": (["hello\u00a0world", "a b"], [["hello world", "a\u00a0b"]]),
}


@pytest.mark.parametrize("metric", ["bleu", "chrf", "chrf++"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_corpus_score_equals_sacrebleu(metric, case):
    hyps, refs = CASES[case]
    assert ours(metric, hyps, refs) == sacre(metric, hyps, refs)


@pytest.mark.parametrize("metric", ["bleu", "chrf", "chrf++"])
def test_no_hidden_normalisation(metric):
    nfc = ["Tiếng Việt rất hay", "Hòa bình"]
    nfd = [unicodedata.normalize("NFD", h) for h in nfc]
    refs = [["Tiếng Việt rất hay nhé", "Hòa bình thế giới"]]
    assert ours(metric, nfd, refs) == sacre(metric, nfd, refs)
    assert ours(metric, nfd, refs) != ours(metric, nfc, refs)  # NFD input is scored as NFD


def test_signature_holds_sacrebleus():
    m = SacreMetric("chrf++")
    m.stats(["a"], [["a"]])
    sig = m.signature(resamples=1000, seed=1)
    assert f"version:{sacrebleu.__version__}" in sig and "nc:6|nw:2" in sig and "boot:1000,seed:1" in sig
    lao = SacreMetric("bleu", "lo")
    lao.stats(["ພາສາລາວ"], [["ພາສາລາວ"]])
    assert lao.signature().endswith("seg:laonlp-1.3.0|lang:lo") and "tok:none" in lao.signature()


def test_lao_segmentation_then_sacrebleu():
    """With --lang lo the text is segmented by LaoNLP (AM repaired) before sacrebleu sees it."""
    from glotbench.text.segment import segment

    hyps = ["ພາສາລາວໃນປັດຈຸບັນມີຄວາມສ\u0ecd\u0eb2ຄັນຫຼາຍ", "ນັກຮຽນໄປໂຮງຮຽນທຸກມື້"]  # decomposed AM
    refs = ["ພາສາລາວໃນປັດຈຸບັນມີຄວາມສຳຄັນຫຼາຍແທ້", "ນັກຮຽນໄປໂຮງຮຽນທຸກໆມື້"]
    seg = lambda t: " ".join(segment(t, "lo"))  # noqa: E731
    got = SacreMetric("bleu", "lo").corpus_score(hyps, [[r] for r in refs], resamples=10).estimate.value
    assert got == BLEU(tokenize="none").corpus_score([seg(h) for h in hyps], [[seg(r) for r in refs]]).score
    assert got > BLEU().corpus_score(hyps, [refs]).score  # unsegmented Lao is one "word" per line


def test_chinese_bleu_uses_sacrebleus_zh_tokenizer():
    hyps, refs = ["我喜欢学习中文。"], ["我很喜欢学习中文。"]
    assert SacreMetric("bleu", "zh").corpus_score(hyps, [refs], resamples=10).estimate.value == \
        BLEU(tokenize="zh").corpus_score(hyps, [refs]).score


def test_japanese_bleu_uses_sacrebleus_mecab_tokenizer():
    hyps, refs = ["私は東京の大学で日本語を勉強しています。"], ["私は東京の大学で日本語を学んでいます。"]
    assert SacreMetric("bleu", "ja").corpus_score(hyps, [refs], resamples=10).estimate.value == \
        BLEU(tokenize="ja-mecab").corpus_score(hyps, [refs]).score


def test_score_from_stored_stats_equals_score_from_text():
    hyps, refs = CASES["multi_ref"]
    m = SacreMetric("chrf++")
    per_item = [[refs[0][i], refs[1][i]] for i in range(2)]
    stats = m.stats(hyps, per_item)
    assert m.score_stats(stats, resamples=10).estimate.value == sacre("chrf++", hyps, refs)


def test_bootstrap_ci_close_to_sacrebleus():
    import random

    rng = random.Random(3)
    words = "one two three four five six seven eight nine ten".split()
    refs = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(300)]
    hyps = [" ".join(w for w in r.split() if rng.random() > 0.2) for r in refs]
    sb = CHRF(word_order=2).corpus_score(hyps, [refs], n_bootstrap=1000)
    est = SacreMetric("chrf++").corpus_score(hyps, [[r] for r in refs], resamples=1000).estimate
    assert est.value == sb.score
    assert abs(est.ci_low - (sb._mean - sb._ci)) < 0.3 and abs(est.ci_high - (sb._mean + sb._ci)) < 0.3


def test_unknown_metric():
    with pytest.raises(ValueError, match="unknown metric"):
        SacreMetric("rouge")

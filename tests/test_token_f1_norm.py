"""Token F1 normalisations: the default (Unicode punctuation deleted, language-aware) and SQuAD v1.1's
own, by name; punctuation inside tokens ("$100", "U.S.") in several languages."""

from __future__ import annotations

import pytest

import ref_squad
from conftest import cli
from glotbench.benchmarks.deepsea import DeepSEATask
from glotbench.errors import DataError
from glotbench.items import Item
from glotbench.metrics.token_f1 import exact_match, normalize_answer, token_f1, token_f1_signature


def _official_squad_f1(prediction: str, ground_truth: str) -> float:
    """SQuAD v1.1's f1_score (tests/ref_squad.py): the reference for norm="squad"."""
    return float(ref_squad.v11_f1_score(prediction, ground_truth))


@pytest.mark.parametrize("pred, gold, lang", [
    ("$100", "100", "en"),
    ("U.S.", "US", "en"),
    ("the U.S. dollar", "US dollar", "en"),
    ("Jl. Sudirman", "Jl Sudirman", "id"),
    ("Rp.100", "Rp100", "id"),
    ("T.P. Hồ Chí Minh", "TP Hồ Chí Minh", "vi"),
    ("Mr. O'Neil", "mr oneil", "en"),
])
def test_punctuation_inside_tokens_is_deleted_as_in_squad(pred, gold, lang):
    assert token_f1(pred, [gold], lang) == 1.0
    assert token_f1(pred, [gold], lang, norm="squad") == 1.0 == _official_squad_f1(pred, gold)


@pytest.mark.parametrize("pred, gold, lang, unicode_f1, squad_f1", [
    # Non-ASCII punctuation: deleted by default, kept (glued to the word) by SQuAD.
    ("«Hà Nội»", "Hà Nội", "vi", 1.0, 0.0),
    ("“北京”", "北京", "zh", 1.0, 0.0),
    ("「東京」", "東京", "ja", 1.0, 0.0),
    # Articles: English only by default; SQuAD removes them in every language.
    ("the Beatles", "Beatles", "id", pytest.approx(2 / 3), 1.0),
    ("The Beatles", "Beatles", "en", 1.0, 1.0),
    # Segmentation: the default segments Thai and Lao; SQuAD splits on whitespace only.
    ("ประเทศไทย", "กรุงเทพมหานคร ประเทศไทย", "th", pytest.approx(0.8), pytest.approx(2 / 3)),
    ("ພາສາລາວ", "ພາສາລາວໃນປັດຈຸບັນ", "lo", pytest.approx(0.5), 0.0),
])
def test_the_two_normalisations_differ_where_documented(pred, gold, lang, unicode_f1, squad_f1):
    assert token_f1(pred, [gold], lang) == unicode_f1
    assert token_f1(pred, [gold], lang, norm="squad") == squad_f1 == _official_squad_f1(pred, gold)


def test_squad_norm_matches_the_official_script_on_mixed_cases():
    cases = [("The cat, the hat!", "a cat hat"), ("$1,000.50", "1000.50"), ("well-known", "well known"),
             ("An apple a day", "apple day"), ("ĐẠI HỌC", "đại học"), ("x" * 3, "y")]
    for pred, gold in cases:
        assert token_f1(pred, [gold], "en", norm="squad") == _official_squad_f1(pred, gold)
    assert normalize_answer("The U.S.-led $5", "th", norm="squad") == ["usled", "5"]  # lang ignored


def test_signatures_name_the_normalisation_and_the_empty_rule():
    assert token_f1_signature("en") == "token_f1|norm:del_format+lower+del_punct_P*+ascii+articles_en|seg:none|refs:max|empty:v1.1"
    assert token_f1_signature("vi", "first") == "token_f1|norm:del_format+lower+del_punct_P*+ascii|seg:none|refs:first|empty:v1.1"
    assert token_f1_signature("lo", norm="squad") == "token_f1|norm:squad_v1.1|seg:none|refs:max|empty:v1.1"
    assert token_f1_signature(None, norm="squad", empty="v2.0", metric="exact_match") == \
        "exact_match|norm:squad_v1.1|seg:none|refs:max|empty:v2.0"
    with pytest.raises(ValueError, match="unknown token F1 normalisation 'nfkc'"):
        token_f1("a", ["a"], norm="nfkc")
    with pytest.raises(ValueError, match="unknown empty-answer rule 'v3'"):
        token_f1("a", ["a"], empty="v3")


# Edge cases for the two official scripts: empty answers, punctuation only, articles only, whitespace
# only, Unicode letters, marks and punctuation the scripts do not know, several references with empty ones.
SQUAD_EDGE_CASES = [
    ("", [""]), ("", ["Paris"]), ("Paris", [""]), ("...", ["!!!"]), ("", ["."]), (".", ["the"]),
    ("a", ["an"]), ("the", [""]), ("A an THE", ["the"]), ("  \t\n ", [""]), ("the the", ["the cat"]),
    ("The Beatles", ["beatles"]), ("Mr. T", ["mr t"]), ("U.S.", ["US"]), ("$1,000.50", ["1000.50"]),
    ("«»", ["«»"]), ("«Hà Nội»", ["Hà Nội"]), ("“北京”", ["北京"]), ("北京 上海", ["上海"]),
    ("Ünïcödé", ["ünïcödé"]), ("théâtre", ["theatre"]), ("ΑΘΗΝΑ", ["αθηνα"]), ("İstanbul", ["istanbul"]),
    ("e\u0301", ["é"]), ("ß", ["SS"]), ("x\u200by", ["xy"]), ("a\u00a0b", ["a b"]),
    ("cat cat dog", ["cat dog dog"]), ("the cat", ["cat", "the"]), ("", ["", "x"]), (".", [".", "the", "y"]),
    ("x", ["", "x"]), ("x", ["a", "an"]), ("", ["a", "the"]), ("theatre", ["the atre"]), ("anthem", ["an them"]),
    ("don't", ["dont"]), ("well-known", ["well known"]), ("Ａ", ["a"]), ("C++", ["c"]),
]


@pytest.mark.parametrize("pred, golds", SQUAD_EDGE_CASES)
def test_squad_norm_agrees_with_both_official_scripts(pred, golds):
    em11, f111 = ref_squad.v11(pred, golds)
    em20, f120 = ref_squad.v20(pred, golds)
    assert token_f1(pred, golds, norm="squad") == f111
    assert exact_match(pred, golds, norm="squad") == em11
    assert token_f1(pred, golds, norm="squad", empty="v2.0") == f120
    assert exact_match(pred, golds, norm="squad", empty="v2.0") == em20


@pytest.mark.parametrize("pred, golds", [c for c in SQUAD_EDGE_CASES if all(s.isascii() for s in (c[0], *c[1]))])
def test_unicode_norm_is_squad_on_english_ascii(pred, golds):
    """On ASCII English the default normalisation deletes the same characters and articles."""
    for empty, ref in (("v1.1", ref_squad.v11), ("v2.0", ref_squad.v20)):
        em, f1 = ref(pred, golds)
        assert (exact_match(pred, golds, "en", empty=empty), token_f1(pred, golds, "en", empty=empty)) == (em, f1)


def test_both_sides_empty_follow_v11_unless_v20_is_named():
    # v1.1: F1 0 (no shared token) but exact match 1; v2.0: both 1.
    assert (token_f1("...", ["—"], "vi"), exact_match("...", ["—"], "vi")) == (0.0, 1.0)
    assert (token_f1("...", ["—"], "vi", empty="v2.0"), exact_match("...", ["—"], "vi", empty="v2.0")) == (1.0, 1.0)
    # Segmented scripts: punctuation only on both sides is empty after segmentation too.
    assert token_f1("๚", ["「」"], "th") == 0.0 and token_f1("๚", ["「」"], "th", empty="v2.0") == 1.0
    # v2.0 drops empty references while a non-empty one is left.
    assert exact_match("", ["", "Vientiane"], "lo") == 1.0
    assert exact_match("", ["", "Vientiane"], "lo", empty="v2.0") == 0.0


def test_deepsea_xquad_option_switches_score_and_signature():
    item = Item.create("vi/00000", {"context": "c", "question": "q", "lang": "vi"}, {"answers": ["Hà Nội"]},
                       {"lang": "vi"})
    default, squad = DeepSEATask("xquad"), DeepSEATask("xquad", f1_norm="squad")
    span = default.extract("<answer>«Hà Nội»</answer>", item.to_public()).answer
    assert span == "«Hà Nội»"
    assert default.score(span, item).stats["f1"] == 1.0
    assert squad.score(span, item).stats["f1"] == 0.0
    data = default.dataset([item])
    assert "f1_norm:unicode|f1_empty:v1.1" in default.signature(data) and "f1_norm:squad|f1_empty:v1.1" in squad.signature(data)
    with pytest.raises(DataError, match="f1_norm must be one of unicode, squad"):
        DeepSEATask("xquad", f1_norm="ascii")
    # DeepSEA's XQuAD follows SQuAD v1.1's script: a reply and a reference with no token score 0.
    dash = Item.create("vi/00001", {"context": "c", "question": "q", "lang": "vi"}, {"answers": ["—"]},
                       {"lang": "vi"})
    for bench in (default, squad):
        span = bench.extract("<answer>...</answer>", dash.to_public()).answer
        assert span == "..." and bench.score(span, dash).stats["f1"] == 0.0 == ref_squad.v11(span, ["—"])[1]


def test_score_command_takes_the_normalisation(tmp_path):
    h, r = tmp_path / "h.txt", tmp_path / "r.txt"
    h.write_text("«Hà Nội»\nU.S.\n", encoding="utf-8")
    r.write_text("Hà Nội\nUS\n", encoding="utf-8")
    out = cli("score", "--metric", "token_f1", "--lang", "vi", str(h), str(r))
    assert out.returncode == 0 and out.stdout.startswith("token_f1 = 100.00") and "norm:del_format+lower+del_punct" in out.stdout
    out = cli("score", "--metric", "token_f1", "--f1-norm", "squad", str(h), str(r))
    assert out.returncode == 0 and out.stdout.startswith("token_f1 = 50.00") and "norm:squad_v1.1" in out.stdout
    out = cli("score", "--metric", "chrf", "--f1-norm", "squad", str(h), str(r))
    assert out.returncode == 2 and out.stderr.strip() == "error: --f1-norm applies to token_f1 and exact_match only, not chrf"
    out = cli("score", "--metric", "token_f1", "--f1-norm", "nfkc", str(h), str(r))
    assert out.returncode == 2 and "unknown token F1 normalisation 'nfkc'" in out.stderr


@pytest.mark.parametrize("answer,reference,lang", [
    ("แม่น้ำ\u200bเจ้าพระยา\u200b", "แม่น้ำเจ้าพระยา", "th"),
    ("Hà Nội\u200b", "Hà Nội", "vi"),
    ("sông\u00a0Hồng\u200e", "sông Hồng", "vi"),
    ("ភ្នំ\u200cពេញ", "ភ្នំពេញ", "km"),
    ("ວຽງ\u2060ຈັນ\ufeff", "ວຽງຈັນ", "lo"),
    ("\u200fالرياض\u200f", "الرياض", "ar"),
    ("Yan\u00adgon", "Yangon", "en"),
])
def test_format_characters_are_no_part_of_a_compared_answer(answer, reference, lang):
    """A right span carrying a ZWSP, LRM, WJ, BOM or soft hyphen scored 50-67 F1 (DeepSEA XQuAD)."""
    assert token_f1(answer, [reference], lang) == 1.0
    assert exact_match(answer, [reference], lang) == 1.0

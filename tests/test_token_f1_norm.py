"""Token F1 normalisations: the default (Unicode punctuation deleted, language-aware) and SQuAD v1.1's
own, by name; punctuation inside tokens ("$100", "U.S.") in several languages."""

from __future__ import annotations

import re
import string
from collections import Counter

import pytest

from glotbench.benchmarks.deepsea import DeepSEATask
from glotbench.errors import DataError
from glotbench.items import Item
from glotbench.metrics.token_f1 import normalize_answer, token_f1, token_f1_signature
from conftest import cli


def _official_squad_f1(prediction: str, ground_truth: str) -> float:
    """SQuAD v1.1 evaluate-v1.1.py, transcribed: the reference for norm="squad"."""
    def normalize(s):
        s = s.lower()
        s = "".join(ch for ch in s if ch not in set(string.punctuation))
        s = re.sub(r"\b(a|an|the)\b", " ", s)
        return " ".join(s.split())
    p, g = normalize(prediction).split(), normalize(ground_truth).split()
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0.0
    prec, rec = same / len(p), same / len(g)
    return 2 * prec * rec / (prec + rec)


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


def test_signatures_name_the_normalisation():
    assert token_f1_signature("en") == "token_f1|norm:lower+del_punct_P*+ascii+articles_en|seg:none|refs:max"
    assert token_f1_signature("vi", "first") == "token_f1|norm:lower+del_punct_P*+ascii|seg:none|refs:first"
    assert token_f1_signature("lo", norm="squad") == "token_f1|norm:squad_v1.1|seg:none|refs:max"
    with pytest.raises(ValueError, match="unknown token F1 normalisation 'nfkc'"):
        token_f1("a", ["a"], norm="nfkc")


def test_deepsea_xquad_option_switches_score_and_signature():
    item = Item.create("vi/00000", {"context": "c", "question": "q", "lang": "vi"}, {"answers": ["Hà Nội"]},
                       {"lang": "vi"})
    default, squad = DeepSEATask("xquad"), DeepSEATask("xquad", f1_norm="squad")
    span = default.extract("<answer>«Hà Nội»</answer>", item.to_public()).answer
    assert span == "«Hà Nội»"
    assert default.score(span, item).stats["f1"] == 1.0
    assert squad.score(span, item).stats["f1"] == 0.0
    data = default.dataset([item])
    assert "f1_norm:unicode" in default.signature(data) and "f1_norm:squad" in squad.signature(data)
    with pytest.raises(DataError, match="f1_norm must be one of unicode, squad"):
        DeepSEATask("xquad", f1_norm="ascii")


def test_score_command_takes_the_normalisation(tmp_path):
    h, r = tmp_path / "h.txt", tmp_path / "r.txt"
    h.write_text("«Hà Nội»\nU.S.\n", encoding="utf-8")
    r.write_text("Hà Nội\nUS\n", encoding="utf-8")
    out = cli("score", "--metric", "token_f1", "--lang", "vi", str(h), str(r))
    assert out.returncode == 0 and out.stdout.startswith("token_f1 = 100.00") and "norm:lower+del_punct" in out.stdout
    out = cli("score", "--metric", "token_f1", "--f1-norm", "squad", str(h), str(r))
    assert out.returncode == 0 and out.stdout.startswith("token_f1 = 50.00") and "norm:squad_v1.1" in out.stdout
    out = cli("score", "--metric", "chrf", "--f1-norm", "squad", str(h), str(r))
    assert out.returncode == 2 and out.stderr.strip() == "error: --f1-norm applies to token_f1 only, not chrf"
    out = cli("score", "--metric", "token_f1", "--f1-norm", "nfkc", str(h), str(r))
    assert out.returncode == 2 and "unknown token F1 normalisation 'nfkc'" in out.stderr

"""Segmentation, token F1, numeric exact match and multiple-choice letter extraction."""

from __future__ import annotations

from decimal import Decimal

import pytest

from glotbench.extract import mc_letter
from glotbench.metrics.numeric import extract_number, numeric_match, to_ascii_digits
from glotbench.metrics.token_f1 import normalize_answer, token_f1
from glotbench.text.segment import char_clusters, repair_lao_am, segment, segmenter_signature


# -- segmentation ------------------------------------------------------------------------------

@pytest.mark.parametrize("decomposed", ["ນ\u0ecd\u0ec9\u0eb2", "ນ\u0ecd\u0eb2\u0ec9"])
def test_lao_am_repair(decomposed):
    import unicodedata

    assert unicodedata.normalize("NFC", decomposed) != "ນ້ຳ"  # NFC does not fix it
    assert repair_lao_am(decomposed) == "ນ້ຳ"
    assert repair_lao_am("ຄ\u0ecd\u0eb2ຕອບ") == "ຄຳຕອບ"


def test_lao_segmentation_uses_laonlp_after_repair():
    assert segment("ພາສາລາວໃນປັດຈຸບັນ.", "lo") == ["ພາສາລາວ", "ໃນ", "ປັດຈຸບັນ", "."]
    assert segment("ນ\u0ecd\u0ec9\u0eb2ໃສ ແລະ ເຢັນ", "lo") == segment("ນ້ຳໃສ ແລະ ເຢັນ", "lo")
    assert segmenter_signature("lo").startswith("laonlp-")


def test_thai_and_fallbacks():
    assert segment("ภาษาไทย ง่ายนิดเดียว", "th") == ["ภาษาไทย", "ง่าย", "นิดเดียว"]
    assert segmenter_signature("th").startswith("pythainlp-") and segmenter_signature("th").endswith("-newmm")
    assert char_clusters("ខ្មែរ") == ["ខ្មែ", "រ"]  # the coeng keeps the subscript consonant
    assert char_clusters("မြန်မာ") == ["မြ", "န်", "မာ"]
    assert segment("中文 字", "zh") == ["中", "文", "字"]
    assert segment("two words", None) == ["two", "words"]


# -- token F1 ----------------------------------------------------------------------------------

def test_token_f1_squad_rules():
    assert token_f1("The Eiffel Tower", ["Eiffel tower"], "en") == 1.0  # article and case
    assert token_f1("the answer", ["answer"], "vi") == pytest.approx(2 / 3)  # articles only for English
    assert token_f1("«Hà Nội»。", ["Hà Nội"], "vi") == 1.0  # Unicode punctuation, not only ASCII
    assert token_f1("a b b", ["b b c"]) == pytest.approx(2 / 3)  # multiset overlap
    # Two empty answers: 0 under SQuAD v1.1's rule (the default), 1 under v2.0's (named).
    assert token_f1("", [""]) == 0.0 and token_f1("", [""], empty="v2.0") == 1.0 and token_f1("x", [""]) == 0.0


def test_token_f1_reference_choice():
    assert token_f1("Vientiane", ["Luang Prabang", "Vientiane"]) == 1.0
    assert token_f1("Vientiane", ["Luang Prabang", "Vientiane"], refs="first") == 0.0


def test_token_f1_segments_thai_and_lao():
    assert normalize_answer("กรุงเทพมหานคร ประเทศไทย", "th") == ["กรุงเทพมหานคร", "ประเทศ", "ไทย"]
    # 2 predicted words, 3 gold words, 2 shared: P = 1, R = 2/3, F1 = 0.8. Unsegmented it would be 0.
    assert token_f1("ประเทศไทย", ["กรุงเทพมหานคร ประเทศไทย"], "th") == pytest.approx(0.8)
    assert token_f1("ประเทศไทย", ["กรุงเทพมหานครประเทศไทย"], None) == 0.0
    assert token_f1("ນະຄອນຫຼວງວຽງຈັນ", ["ນະຄອນຫຼວງວຽງຈັນ"], "lo") == 1.0
    assert token_f1("ພາສາລາວ", ["ພາສາລາວໃນປັດຈຸບັນ"], "lo") == pytest.approx(0.5)  # 1 of 3 words


# -- numeric -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, gold, expected", [
    ("The answer is 1,234.", "1234", True),
    ("So x = 1.50", "1.5", True),
    ("It drops to -3 degrees", -3, True),
    ("It drops to \u22123 degrees", "-3", True),
    ("first 5, then 7", 7, True),
    ("first 5, then 7", 5, False),
    ("คำตอบคือ ๔๒", 42, True),
    ("ຄຳຕອບແມ່ນ ໔໒", 42, True),
    ("ចម្លើយ ៤២", 42, True),
    ("အဖြေ ၄၂", 42, True),
    ("الجواب ٤٢٫٥", "42.5", True),
    ("جواب ۴۲", 42, True),
    ("no number here", 1, None),
])
def test_numeric_match(text, gold, expected):
    assert numeric_match(text, gold) is expected


def test_numeric_marker():
    assert extract_number("steps 3 + 4 = 7 #### 12 apples", "####") == Decimal("12")
    assert extract_number("I think 3; answer is 4, or 9", "answer is") == Decimal("9")
    assert extract_number("no marker 5", "####") == Decimal("5")  # marker absent: whole text
    assert to_ascii_digits("๑๒๓") == "123"


# -- multiple choice ---------------------------------------------------------------------------

@pytest.mark.parametrize("reply, letter", [
    ("The answer is (B).", "B"),
    ("Final answer: **C**", "C"),
    ("Đáp án đúng là D", "D"),
    ("Câu trả lời: A", "A"),
    ("คำตอบคือ D", "D"),
    ("ຄຳຕອບແມ່ນ A", "A"),
    ("ຄ\u0ecd\u0eb2ຕອບແມ່ນ B", "B"),  # decomposed AM in the phrase
    ("Jawabannya adalah E", "E"),
    ("الإجابة الصحيحة هي C", "C"),
    ("答案是B", "B"),
    ("答案：A", "A"),
    ("B", "B"),
    ("(C)", "C"),
    ("**D.**", "D"),
    ("Answer: A... no wait, the answer is D", "D"),  # the last match wins
    ("<think>the answer is A</think>Answer: B", "B"),
])
def test_mc_letter(reply, letter):
    assert mc_letter(reply).answer == letter


@pytest.mark.parametrize("reply, failure", [
    ("I think a", "no_letter"),  # letters are upper-case only
    ("answer is Apple", "no_letter"),
    ("<think>the answer is A", "think_unclosed"),
    ("", "no_letter"),
])
def test_mc_letter_failures(reply, failure):
    ext = mc_letter(reply)
    assert ext.answer is None and ext.failure == failure


def test_mc_option_text_fallback():
    opts = {"A": "Bangkok", "B": "Vientiane", "C": "Hanoi"}
    assert mc_letter("It must be vientiane.", opts).answer == "B"
    assert mc_letter("Bangkok or Hanoi?", opts).answer is None  # ambiguous: no guess

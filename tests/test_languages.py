"""Language profiles and the one option-letter extractor that reads them (issue 12, issue 10)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from glotbench import languages
from glotbench.benchmarks.deepsea import mcq_letter, mgsm_number, xquad_answer
from glotbench.contamination import check
from glotbench.extract import mc_letter
from glotbench.items import Item
from glotbench.languages import PROFILES, LanguageProfile, to_ascii_digits
from glotbench.metrics.numeric import numeric_match
from glotbench.text.segment import segmented_languages


@pytest.mark.parametrize("reply, letter", [
    ("Câu trả lời là B", "B"),
    ("Dựa vào đoạn văn, đáp án là A", "A"),
    ("Đáp án đúng là D.", "D"),
    ("Tôi chọn đáp án C", "C"),
    ("Ở đây, Bình nói đúng: đáp án B", "B"),
])
def test_vietnamese_capitals_are_not_option_letters(reply: str, letter: str) -> None:
    assert mc_letter(reply).answer == letter
    assert mcq_letter(reply) == letter  # DeepSEA's release rule, now Unicode-aware


def test_deepsea_rule_letter_boundaries_in_other_scripts() -> None:
    assert mcq_letter("Ðáp án: C") == "C"  # Ð (U+00D0) is a letter
    assert mcq_letter("Ce\u0301dric dit B") == "B"  # a letter with a combining mark is a word
    assert mcq_letter("<answer>B</answer> A") == "B"
    assert mcq_letter("Bạn nên chọn b", case="upper_only") is None
    assert mcq_letter("Bạn nên chọn b") == "B"


@pytest.mark.parametrize("reply", ["The answer is: B", "Answer: B", "The correct answer is B", "answer = B",
                                   "Final answer: **B**", "I choose B", "**Answer**: B", "**Answer:** (B)",
                                   "Answer - B", "The answer is option B."])
def test_english_phrases_accept_the_colon(reply: str) -> None:
    assert mc_letter(reply).answer == "B"


@pytest.mark.parametrize("reply", ["Đáp án: B", "Câu trả lời là: B", "คำตอบ: B", "คำตอบคือ: B", "ຄຳຕອບ: B",
                                   "ຄຳຕອບແມ່ນ: B", "Jawaban: B", "Jawabannya adalah: B", "答案：B", "الإجابة: B"])
def test_colon_accepted_in_every_language(reply: str) -> None:
    assert mc_letter(reply).answer == "B"


@pytest.mark.parametrize("reply", [
    "Answer: C. Answer A and answer B are wrong because they ignore the date.",
    "Đáp án: C. Đáp án A và đáp án B sai vì không đúng ngày.",
    "คำตอบ: C เพราะคำตอบ A และคำตอบ B ไม่ถูกต้อง",
    "ຄຳຕອບ: C\nເພາະວ່າ ຄຳຕອບ A ແລະ ຄຳຕອບ B ບໍ່ຖືກຕ້ອງ",
    "Jawaban: C. Jawaban A dan jawaban B salah karena tanggalnya keliru.",
    "Đáp án: đáp án C. Đáp án A sai",
    "Answer: option C. Answer A is wrong",
    "คำตอบคือข้อ ค เพราะข้อ ก ผิด",
    "ຄຳຕອບ: ຂໍ້ C ແລະ ຂໍ້ A ບໍ່ຖືກ",
])
def test_the_answer_after_the_phrase_wins_over_later_letters(reply: str) -> None:
    assert mc_letter(reply).answer == "C"


def test_no_letter_is_invented() -> None:
    for reply in ("The answer is not obvious.", "answer-based: A", "The answer isn't B", "Bạn nên đọc kỹ",
                  "A", "Ả"):
        got = mc_letter(reply).answer
        assert got == ("A" if reply == "A" else None), reply


@pytest.mark.parametrize("reply, letter", [
    ("Jawaban yang benar adalah B", "B"), ("Pilihan yang tepat adalah C", "C"), ("The correct option is D", "D"),
    ("Lựa chọn đúng là A", "A"), ("ตัวเลือกที่ถูกต้องคือ ข", "B"), ("ຕົວເລືອກທີ່ຖືກຕ້ອງແມ່ນ C", "C"),
    ("Option A is wrong", None), ("Pilihan A salah", None),
])
def test_correct_option_phrases(reply: str, letter: str | None) -> None:
    assert mc_letter(reply).answer == letter


def test_decomposed_sara_am_in_the_phrase() -> None:
    assert mc_letter("ຄ\u0ecd\u0eb2ຕອບ: B").answer == "B"  # Lao AM typed as NIGGAHITA + AA
    assert mc_letter("ค\u0e4d\u0e32ตอบคือ B").answer == "B"  # Thai SARA AM typed as NIKHAHIT + AA


def test_native_option_labels() -> None:
    assert mc_letter("คำตอบคือ ข").answer == "B"
    assert mc_letter("ຄຳຕອບ: ຄ").answer == "C"
    assert mc_letter("الإجابة هي ب").answer == "B"
    assert mc_letter("คำตอบคือข้อ ค").answer == "C"  # ข in ข้อ carries a mark: not a label


def test_option_text_fallback_and_failures() -> None:
    opts = {"A": "Vientiane", "B": "Pakse", "C": "Luang Prabang", "D": "Savannakhet"}
    assert mc_letter("I think it's Pakse", opts).answer == "B"
    assert mc_letter("I think it's Pakse").failure == "no_letter"
    lao = {"A": "ວຽງຈັນ", "B": "ປາກເຊ", "C": "ຫຼວງພະບາງ", "D": "ສະຫວັນນະເຂດ"}
    assert mc_letter("ຂ້ອຍຄິດວ່າແມ່ນປາກເຊ", lao).answer == "B"
    assert mc_letter("Vientiane or Pakse", opts).failure == "no_letter"  # two options named: no guess
    numbers = {"A": "2", "B": "12", "C": "20", "D": "22"}
    assert mc_letter("It makes 12 in all", numbers).answer == "B"  # "2" inside "12" is not the option "2"
    assert mc_letter("Hà Nội là thủ đô", {"A": "Hà Nội", "B": "Huế", "C": "Nội Bài"}).answer == "A"
    assert mc_letter("the answer is a good question").failure == "no_letter"
    with pytest.raises(ValueError, match="unknown letter rule"):
        mc_letter("B", rule="last")


def test_xquad_answer_phrase_follows_the_profile_rule() -> None:
    assert xquad_answer("Jawaban: Jakarta", "id") == "Jakarta"
    assert xquad_answer("The answer is: Paris", "vi") == "Paris"  # English as the fallback language
    assert xquad_answer("Câu trả lời là Hà Nội", "vi") == "Hà Nội"
    assert xquad_answer("Hà Nội", "vi") is None


def test_every_unicode_decimal_digit_is_read() -> None:
    for p in PROFILES.values():
        assert to_ascii_digits(p.digits) == "0123456789", p.code
    assert to_ascii_digits("४२") == "42"  # Devanagari: no profile, Python still reads it
    assert to_ascii_digits("１２") == "12"  # fullwidth
    assert to_ascii_digits("٣٫٥") == "3.5"
    assert numeric_match("ຄຳຕອບແມ່ນ ໔໒", "42") is True
    assert mgsm_number("<answer>௪௨</answer>") == Decimal(42)  # Tamil digits
    assert mgsm_number("<answer>๔๒</answer>", native_digits=False) is None


def test_profiles_drive_segmentation_and_contamination() -> None:
    assert segmented_languages() == {"lo", "th", "km", "my"}
    assert {c for c, p in PROFILES.items() if not p.spaces} == {"lo", "th", "km", "my", "zh", "ja"}


def test_adding_a_language_is_one_entry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    hindi = LanguageProfile("hi", "Hindi", (r"(?:सही\s+)?उत्तर",), (r"है",), (), (),
                            {"क": "A", "ख": "B", "ग": "C", "घ": "D"}, digit_zero="०")
    before = mc_letter("उत्तर: ख")
    monkeypatch.setitem(PROFILES, "hi", hindi)
    assert before.answer is None
    assert mc_letter("उत्तर: ख").answer == "B"
    assert mc_letter("सही उत्तर है C, क्योंकि A गलत है").answer == "C"
    assert xquad_answer("उत्तर है दिल्ली", "hi") == "दिल्ली"
    assert hindi.digits == "०१२३४५६७८९"
    # a spaceless script joins the contamination check's character n-grams through its entry alone
    tib = LanguageProfile("bo", "Tibetan", (r"ལན",), (), (), (), segmenter="charcluster", spaces=False,
                          script="\u0f00-\u0fff")
    item = Item.create("1", {"question": "བོད་ཡིག" * 3}, {}, {})
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("xx བོད་ཡིགབོད་ཡིག yy", encoding="utf-8")
    assert _contaminated(item, corpus) is False  # as words (no profile): the item's one word is absent
    monkeypatch.setitem(PROFILES, "bo", tib)
    assert _contaminated(item, corpus) is True


def _contaminated(item: Item, corpus: Path) -> bool:
    return bool(check([item], [str(corpus)], char_n=10)["overlapping_ids"])


@pytest.mark.parametrize("bad", [
    dict(native_letters={"x": "Z"}), dict(digit_zero="1"), dict(spaces=False), dict(segmenter="icu"),
    dict(spaces=False, script="\u0f00-\u0fff"),  # no spaces, yet split at spaces
])
def test_profile_rejects_inconsistent_entries(bad: dict) -> None:
    with pytest.raises(ValueError):
        LanguageProfile("xx", "X", **bad)


def test_module_has_one_profile_per_code() -> None:
    assert all(code == p.code for code, p in languages.PROFILES.items())


def test_khmer_and_burmese_native_option_labels() -> None:
    """Khmer ក ខ គ ឃ ង and Burmese က ခ ဂ ဃ င are A-E, read after the answer phrase and alone, through
    word breaks; a letter that starts a word (ខ្ញុំ "I", ကျွန်တော် "I") is no label."""
    assert mc_letter("ចម្លើយត្រឹមត្រូវគឺ ខ").answer == "B"
    assert mc_letter("ចម្លើយ\u200bត្រឹមត្រូវ\u200bគឺ គ").answer == "C"
    assert mc_letter("ខ.").answer == "B"
    assert mc_letter("ខ្ញុំគិតថា").failure == "no_letter"
    assert mc_letter("အဖြေမှန်မှာ (ခ)").answer == "B"
    assert mc_letter("အဖြေက ဂ").answer == "C"  # က is also the copula: the label after it is read
    assert mc_letter("ကျွန်တော်").failure == "no_letter"

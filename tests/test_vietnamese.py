import unicodedata

import pytest

from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.text.vietnamese import aligned_word_matches, comparison_key, same_letters, strip


@pytest.mark.parametrize("text, stripped", [
    ("Đường về nhà", "Duong ve nha"),
    ("đĐ", "dD"),
    ("Tiếng Việt có dấu: ả ạ ã ẩ ậ ằ ặ ơ ư ỡ ự", "Tieng Viet co dau: a a a a a a a o u o u"),
    ("push code lên GitHub lúc 10:30, ok?", "push code len GitHub luc 10:30, ok?"),
    ("  hai  dấu\tcách ", "  hai  dau\tcach "),  # spacing is untouched
])
def test_strip(text, stripped):
    assert strip(text) == stripped


def test_strip_handles_nfd_input_and_is_idempotent():
    nfd = unicodedata.normalize("NFD", "Hà Nội đẹp")
    assert strip(nfd) == "Ha Noi dep"
    assert strip(strip(nfd)) == strip(nfd)


def test_strip_keeps_non_vietnamese_text():
    assert strip("naïve café") == "naive cafe"  # Latin marks go too: documented
    assert strip("GPU 4090 & CUDA 12.4!") == "GPU 4090 & CUDA 12.4!"


@pytest.mark.parametrize("a, b", [("hòa", "hoà"), ("thủy", "thuỷ"), ("Hòa bình", "Hoà bình"),
                                  ("khỏe", "khoẻ"), ("quý", "qúy")])
def test_tone_placement_styles_compare_equal(a, b):
    assert comparison_key(a) == comparison_key(b)


@pytest.mark.parametrize("a, b", [("hòa", "hóa"), ("bàn", "bán"), ("thủy", "thùy"), ("Bạn", "bạn"),
                                  ("ôm", "ốm"), ("đi", "di")])
def test_different_words_compare_different(a, b):
    assert comparison_key(a) != comparison_key(b)


def test_comparison_is_nfc_and_whitespace_insensitive():
    assert comparison_key(unicodedata.normalize("NFD", "Tôi  đi học. ")) == comparison_key("Tôi đi học.")
    assert comparison_key("Tôi đi học.") != comparison_key("Tôi đi học")  # punctuation counts


def test_alignment_survives_a_dropped_word():
    ref = "Hôm nay trời đẹp quá"
    # Positional comparison would score 1/5 here; aligned, the four kept words are all right.
    assert aligned_word_matches("Hôm trời đẹp quá", ref) == (4, 5)
    assert aligned_word_matches("nay trời đẹp quá", ref) == (4, 5)
    assert aligned_word_matches("Hôm nay nay trời đẹp quá", ref) == (5, 5)


def test_alignment_counts_wrong_marks_on_aligned_words():
    assert aligned_word_matches("bàn ấy bận lắm", "Bạn ấy bận lắm") == (3, 4)
    assert aligned_word_matches("", "Bạn ấy") == (0, 2)


def test_same_letters_detects_rewrites():
    assert same_letters("Tôi đi học.", "Toi di hoc.")
    assert same_letters("tôi đi học", "Toi di hoc.")  # case and punctuation are not rewrites
    assert not same_letters("Tôi đến trường.", "Toi di hoc.")
    assert not same_letters("Tôi đi học rồi.", "Toi di hoc.")


def test_bundled_data_is_consistent():
    bench = VietnameseDiacritics()
    items = bench.load()
    assert len(items) >= 150
    cats = {it.meta["category"] for it in items}
    assert cats == {"everyday", "ambiguous", "idiom", "code_mixed", "proper_noun", "teen_slang",
                    "dialect", "paragraph"}
    multi = [it for it in items if len(it.gold["references"]) > 1]
    assert len(multi) >= 5
    for it in items:
        # The input is derived by code from the first reference, and every reference restores it.
        for ref in it.gold["references"]:
            assert " ".join(strip(ref).split()) == it.public["text"]
        assert it.public["text"] == strip(it.public["text"])


def test_rapidfuzz_alignment_pairs():
    from rapidfuzz.distance import Indel

    from glotbench.text.vietnamese import align, letter_keys

    assert align(["a", "b", "c"], ["a", "b", "c"]) == [(0, 0), (1, 1), (2, 2)]
    assert align(["a", "b", "c"], ["a", "c"]) == [(0, 0), (2, 1)]  # a dropped word
    assert align(["a", "c"], ["a", "x", "c"]) == [(0, 0), (1, 2)]  # an added word
    assert align([], ["a"]) == [] and align(["a"], []) == []
    a = letter_keys("Hôm nay trời đẹp quá, đi chơi thôi")
    b = letter_keys("Hom nay troi dep, di choi thoi nhe")
    pairs = align(a, b)
    assert all(a[i] == b[j] for i, j in pairs) and pairs == sorted(pairs)
    assert len(pairs) == (len(a) + len(b) - Indel.distance(a, b)) // 2  # a longest common subsequence


def test_alignment_kept_on_insertions_deletions_and_unmarked_words():
    """Hand-counted: the rapidfuzz alignment scores what the former hand-written LCS scored."""
    ref = "Cuối tuần này cả nhà mình về quê thăm ông bà."
    assert aligned_word_matches("Cuối tuần này cả nhà về quê thăm ông bà.", ref) == (10, 11)
    assert aligned_word_matches("Cuối tuần này cả nhà mình lại về quê thăm ông bà.", ref) == (11, 11)
    assert aligned_word_matches("Cuoi tuần này cả nhà mình về quê thăm ông bà.", ref) == (10, 11)
    assert aligned_word_matches("ĐI", "đi") == (0, 1)  # case counts
    assert aligned_word_matches("ﬁ đi", "fi đi") == (1, 2)  # aligned by letters, but ﬁ is not the word fi

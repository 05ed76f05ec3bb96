"""Every language profile through the four text tools that read it: the near-duplicate search
(build/dedupe.py), the contamination check, token F1 and BLEU; and a profile registered at run time
is honoured by all four (none of them fixes its language list at import)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sacrebleu.metrics import BLEU

from glotbench.build.common import Candidate
from glotbench.build.dedupe import DedupeOptions, find_duplicates, shingles
from glotbench.contamination import check
from glotbench.items import Item
from glotbench.languages import PROFILES, LanguageProfile, profiles_changed, register_language, written_without_spaces
from glotbench.metrics.corpus import SacreMetric
from glotbench.metrics.token_f1 import normalize_answer, token_f1
from glotbench.text.segment import needs_segmentation, segment, segmented_languages, segmenter_signature

# Two unrelated sentences per profile (a river at dawn; children and books).
SAMPLES = {
    "en": ("The river flows slowly past the old stone bridge every morning.",
           "Children learn to read quickly when there are books everywhere at home."),
    "vi": ("Dòng sông chảy chậm qua cây cầu đá cũ mỗi buổi sáng.", "Trẻ em học đọc nhanh khi có nhiều sách ở nhà."),
    "th": ("แม่น้ำไหลผ่านสะพานหินเก่าอย่างช้าๆทุกเช้า", "เด็กๆเรียนรู้การอ่านได้เร็วเมื่อมีหนังสือมากมายที่บ้าน"),
    "lo": ("ແມ່ນ້ຳໄຫຼຜ່ານຂົວຫີນເກົ່າຢ່າງຊ້າໆທຸກເຊົ້າ", "ເດັກນ້ອຍຮຽນອ່ານໄດ້ໄວເມື່ອມີປຶ້ມຫຼາຍຢູ່ເຮືອນ"),
    "id": ("Sungai mengalir pelan melewati jembatan batu tua setiap pagi.",
           "Anak-anak belajar membaca dengan cepat jika ada banyak buku di rumah."),
    "ms": ("Sungai mengalir perlahan melalui jambatan batu lama setiap pagi.",
           "Kanak-kanak belajar membaca dengan cepat apabila banyak buku di rumah."),
    "tl": ("Ang ilog ay dahan-dahang dumadaloy sa lumang tulay na bato tuwing umaga.",
           "Mabilis matutong magbasa ang mga bata kapag maraming aklat sa bahay."),
    "ceb": ("Ang suba hinay nga nagdagayday ubos sa daang tulay nga bato matag buntag.",
            "Dali makakat-on mobasa ang mga bata kung daghang libro sa balay."),
    "jv": ("Kali mili alon-alon liwat kreteg watu lawas saben esuk.",
           "Bocah-bocah sinau maca kanthi cepet yen akeh buku ing omah."),
    "su": ("Walungan ngocor lalaunan ngaliwatan sasak batu kolot unggal isuk.",
           "Barudak diajar maca gancang lamun loba buku di imah."),
    "km": ("ទន្លេហូរយឺតៗកាត់ស្ពានថ្មចាស់រៀងរាល់ព្រឹក", "កុមាររៀនអានបានលឿននៅពេលមានសៀវភៅច្រើននៅផ្ទះ"),
    "my": ("မြစ်သည်နံနက်တိုင်းကျောက်တံတားဟောင်းကိုဖြတ်၍ဖြည်းဖြည်းစီးဆင်းသည်",
           "အိမ်တွင်စာအုပ်များများရှိလျှင်ကလေးများစာဖတ်ခြင်းကိုလျင်မြန်စွာသင်ယူကြသည်"),
    "ta": ("ஆறு ஒவ்வொரு காலையும் பழைய கல் பாலத்தைக் கடந்து மெதுவாக ஓடுகிறது.",
           "வீட்டில் நிறைய புத்தகங்கள் இருந்தால் குழந்தைகள் விரைவாக படிக்கக் கற்றுக்கொள்கிறார்கள்."),
    "ar": ("يجري النهر ببطء تحت الجسر الحجري القديم كل صباح.", "يتعلم الأطفال القراءة بسرعة عندما تكون الكتب كثيرة في البيت."),
    "zh": ("河水每天早上慢慢地流过古老的石桥。", "家里书多的时候孩子们学习阅读很快。"),
    "ja": ("川は毎朝ゆっくりと古い石の橋の下を流れている。", "家に本がたくさんあると子供たちは早く読むことを覚える。"),
}
# A profile glotbench does not ship, registered in the test: Tibetan, written without spaces.
TIBETAN = LanguageProfile("bo", "Tibetan", (r"ལན",), (), (), (), digit_zero="༠", segmenter="charcluster",
                          spaces=False, script="\u0f00-\u0fff")
SAMPLES_BO = ("ཆུ་བོ་ཞོགས་པ་རེ་རེར་རྡོ་ཟམ་རྙིང་པའི་འོག་ནས་དལ་བུས་འབབ", "བྱིས་པ་ཚོས་ཁྱིམ་དུ་དཔེ་ཆ་མང་ན་ཀློག་པ་མྱུར་དུ་སློབ")


def test_every_profile_has_samples():
    assert set(SAMPLES) == set(PROFILES)  # a new profile needs its two sentences here


def _prefix(text: str, lang: str, share: float) -> str:
    """The first `share` of the text's words (the profile's segmenter), written as the script writes
    them; Tibetan (registered or not): the first syllables, cut at the tsheg."""
    if lang == "bo":
        syllables = text.split("་")
        return "་".join(syllables[:int(len(syllables) * share)])
    words = segment(text, lang)
    return ("" if needs_segmentation(lang) or PROFILES[lang].segmenter == "char" else " ").join(
        words[:max(1, int(len(words) * share))])


def _dedupe(lang: str, texts: list[str]) -> list[list[int]]:
    cands = [Candidate("f.jsonl", i + 1, str(i), t, {"text": t}) for i, t in enumerate(texts)]
    return find_duplicates(cands, DedupeOptions(threshold=0.9)).clusters


def _contaminated(tmp_path: Path, text: str, corpus: str) -> bool:
    path = tmp_path / "corpus.txt"
    path.write_text(f"something else first\n{corpus}\nand after it\n", encoding="utf-8")
    return bool(check([Item.create("1", {"question": text}, {}, {})], [str(path)], char_n=10, word_n=5)["overlapping_ids"])


def _tools(tmp_path: Path, lang: str, one: str, two: str) -> dict[str, object]:
    """What each of the four tools does with the profile's text."""
    spaced_out = " ".join(one)  # every character apart: the same text for a script compared by characters
    f1_half = token_f1(_prefix(one, lang, 0.5), [one], lang)
    hyp = _prefix(one, lang, 0.75)
    bleu = SacreMetric("bleu", lang).corpus_score([hyp], [[one]], resamples=0)
    return {
        "by_chars": written_without_spaces(one),
        "dedupe_spacing": _dedupe(lang, [one, spaced_out, two]) == [[0, 1]],
        "dedupe_case_and_blanks": _dedupe(lang, [one, "  " + one.upper().replace(" ", "\t ") + " !", two]) == [[0, 1]],
        "shingles_ignore_spaces": np.array_equal(shingles(one), shingles(spaced_out)),
        "contamination_spacing": _contaminated(tmp_path, one, spaced_out),
        "contamination_lines": _contaminated(tmp_path, one, one.replace(" ", "\n")),
        "contamination_other": _contaminated(tmp_path, one, two),
        "f1_half": f1_half, "bleu": bleu,
    }


@pytest.mark.parametrize("lang", sorted(SAMPLES))
def test_each_profile_through_dedupe_contamination_token_f1_and_bleu(tmp_path, lang):
    p = PROFILES[lang]
    one, two = SAMPLES[lang]
    got = _tools(tmp_path, lang, one, two)
    # Dedupe and contamination: one rule, from the profile: character n-grams for a script without spaces.
    assert got["by_chars"] is (not p.spaces)
    assert got["shingles_ignore_spaces"] is got["dedupe_spacing"] is got["contamination_spacing"] is (not p.spaces)
    assert got["dedupe_case_and_blanks"] and got["contamination_lines"] and not got["contamination_other"]
    # Token F1 with the profile's segmenter: half the words score between 0 and 1, the text itself 1.
    assert 0 < got["f1_half"] < 1 and token_f1(one, [one], lang) == 1.0 and token_f1(two, [one], lang) < 0.5
    if not p.spaces:
        assert len(normalize_answer(one, lang)) > 3 and token_f1(_prefix(one, lang, 0.5), [one]) == 0.0  # no segmenter: one token
    # BLEU: sacrebleu itself on what the profile says to feed it.
    bleu = got["bleu"]
    hyp = _prefix(one, lang, 0.75)
    if needs_segmentation(lang):
        want = BLEU(tokenize="none").corpus_score([" ".join(segment(hyp, lang))], [[" ".join(segment(one, lang))]])
        assert f"|seg:{segmenter_signature(lang)}|" in bleu.signature and "tok:none" in bleu.signature
    else:
        tok = {"zh": "zh", "ja": "ja-mecab"}.get(lang, "13a")
        want = BLEU(tokenize=tok).corpus_score([hyp], [[one]])
        assert "|seg:none|" in bleu.signature and f"tok:{tok}" in bleu.signature
    assert bleu.estimate.value == want.score > 0


@pytest.fixture()
def restore_profiles():
    saved = dict(PROFILES)
    yield
    PROFILES.clear()
    PROFILES.update(saved)
    profiles_changed()


def test_a_profile_registered_at_run_time_is_honoured_by_all_four(tmp_path, restore_profiles):
    one, two = SAMPLES_BO
    before = _tools(tmp_path, "bo", one, two)
    assert "bo" not in segmented_languages() and not needs_segmentation("bo")
    # Unknown to glotbench: one long "word", compared as words, not segmented, no BLEU.
    assert before["by_chars"] is before["dedupe_spacing"] is before["contamination_spacing"] is False
    assert before["f1_half"] == 0.0 and before["bleu"].estimate.value == 0.0 and "|seg:none|" in before["bleu"].signature
    register_language(TIBETAN)
    after = _tools(tmp_path, "bo", one, two)
    assert "bo" in segmented_languages() and needs_segmentation("bo")
    assert after["by_chars"] is after["dedupe_spacing"] is after["contamination_spacing"] is True
    assert not after["contamination_other"] and after["dedupe_case_and_blanks"]
    assert 0 < after["f1_half"] < 1
    hyp = _prefix(one, "bo", 0.75)
    want = BLEU(tokenize="none").corpus_score([" ".join(segment(hyp, "bo"))], [[" ".join(segment(one, "bo"))]])
    assert after["bleu"].estimate.value == want.score > 0 and "|seg:charcluster|" in after["bleu"].signature


def test_a_registered_character_script_gets_character_bleu(restore_profiles):
    """A profile segmented into single characters (as zh, ja) gets sacrebleu's `char` tokenizer for
    BLEU (zh and ja keep sacrebleu's own), and characters for token F1."""
    register_language(LanguageProfile("yue", "Cantonese", (r"答案",), (r"係",), (), (), segmenter="char",
                                      spaces=False, script="\u3400-\u4dbf\u4e00-\u9fff"))
    m = SacreMetric("bleu", "yue")
    assert "tok:char" in m.corpus_score(["河水流过石桥"], [["河水慢慢流过石桥"]], resamples=0).signature
    assert normalize_answer("河水流过", "yue") == ["河", "水", "流", "过"]


def test_register_language_refuses_a_silent_change(restore_profiles):
    register_language(TIBETAN)
    register_language(TIBETAN)  # the same profile again: fine
    with pytest.raises(ValueError, match="'bo' already has a profile; pass replace=True"):
        register_language(LanguageProfile("bo", "Tibetan", segmenter="charcluster", spaces=False, script="\u0f00-\u0f7f"))
    with pytest.raises(TypeError):
        register_language("bo")  # type: ignore[arg-type]


def test_a_registered_script_is_counted_by_the_language_check(restore_profiles):
    """The scripts the language check names are made once per change to the profiles: a script a
    registered profile brings is counted from then on (Tibetan: `Other` before, its own after), and
    not once the profiles are back as they were."""
    from glotbench.checks.language import script_shares

    import dataclasses

    text = "བོད་ཡིག་ནི་"
    assert set(script_shares(text)[1]) == {"Other"}
    register_language(dataclasses.replace(TIBETAN, scripts=("Tibetan",)))
    assert set(script_shares(text)[1]) == {"Tibetan"}
    PROFILES.pop("bo")
    profiles_changed()
    assert set(script_shares(text)[1]) == {"Other"}

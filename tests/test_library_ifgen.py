"""SEA-IFEval (and the other families of issue #34's `ifgen` part) on fixtures in the hub's schema,
run against the loopback OpenAI-compatible server with scripted replies, each with the score it must
give computed by hand; SEA-HELM's checkers re-derived on fixed inputs in several scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli
from test_tasks_hub import serve_hub
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.items import Item
from glotbench.registry import get_benchmark
from glotbench.tasks import ifeval as IF

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"


def run(tmp_path, srv, task: str, data: str, answers: dict[str, str], **opts: str):
    srv.configure(answers=answers)
    res = evaluate(task, srv.spec(), RunOptions(data=str(FX / data), bench_options=tuple(opts.items()), progress=False,
                                                out=str(tmp_path / "r"), cache_path=str(tmp_path / "c.sqlite")))
    return res.results, [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]


# -- SEA-IFEval: replies keyed by a piece of their prompt -------------------------------------------
REPLIES = {
    "lo": {"ບົດກະວີສັ້ນໆ": "<<ແມ່ນ້ຳຂອງ>>\nແມ່ນ້ຳຂອງໄຫຼຜ່ານຫຼາຍປະເທດ ແລະ ເປັນແຫຼ່ງຊີວິດຂອງປະຊາຊົນ.",  # title: yes
           "ເຂົ້າໜຽວ. ຄຳຕອບ": "ຄົນລາວມັກກິນເຂົ້າໜຽວເພາະມັນແຊບຫຼາຍ",  # < 10 words: LaoNLP gives 8
           # the postscript is there, but the letter is English: the language gate fails it
           "ຈົດໝາຍ": "Dear friend, I hope you are well in Luang Prabang. See you soon.\nປ.ລ. ຄິດຮອດເດີ",
           # ends with the phrase in bold: strict no (the ** follow it), loose yes (stars removed)
           "ອາຫານລາວສາມຢ່າງ": "ລາບ, ຕຳໝາກຫຸ່ງ ແລະ ເຂົ້າໜຽວ ແມ່ນອາຫານລາວທີ່ແຊບ. **ມີຄຳຖາມອື່ນອີກບໍ່?**"},
    "km": {"ការអានសៀវភៅ": "ខ្ញុំយល់ស្រប។ ការអានសៀវភៅជួយឱ្យយើងចេះដឹងច្រើន។",  # a constrained answer: yes
           "ទន្លេមេគង្គ": "ទន្លេមេគង្គហូរកាត់ប្រទេសកម្ពុជា។",  # a word count: no Khmer word segmenter, left out
           "ខេត្តសៀមរាប": "ខេត្តសៀមរាបមានប្រាសាទបុរាណជាច្រើន ហើយភ្ញៀវទេសចរចូលចិត្តមកលេង។",  # the keyword missing
           "នំបញ្ចុក": "ขนมจีนทำจากแป้งข้าวเจ้าหมักแล้วกดเป็นเส้น"},  # asked for Thai, in Thai: yes
    "my": {"ရန်ကုန်မြို့တွင်": "* ရွှေတိဂုံစေတီ\n* ကန်တော်ကြီး\n* ဗိုလ်ချုပ်အောင်ဆန်းဈေး",  # 3 bullets: yes
           "မုန့်ဟင်းခါး": "ပထမနည်း - ငါးနှင့် ပဲမှုန့်ကို အရင်ချက်ပါ။\n******\nဒုတိယနည်း - ငါးကို ကင်ပြီးမှ ဟင်းရည်ထဲ ထည့်ပါ။",
           "မန္တလေးမြို့": "```json\n{\"မြို့\": \"မန္တလေး\", \"တိုင်း\": \"မန္တလေးတိုင်းဒေသကြီး\"}\n```",  # fenced JSON: yes
           "ပုဂံ": "ပုဂံသည် မြန်မာနိုင်ငံ၏ ရှေးဟောင်းမြို့တော်ဖြစ်သည်။"},  # 1 paragraph of 2: no
    "th": {"เมืองหลวงของประเทศไทย": "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย",  # >= 5 words: PyThaiNLP gives 6
           "อีเมลเชิญเพื่อน": "สวัสดีเพื่อน ไปเที่ยวเชียงใหม่ด้วยกันนะ\nป.ล. อย่าลืมเอากล้องมาด้วย",  # ป.ล.: yes
           "แนะนำตัวเอง": "\"สวัสดีครับ ผมชื่อสมชาย มาจากขอนแก่น\"",  # quoted: yes
           "อากาศของกรุงเทพ": "เดือนเมษายนกรุงเทพอากาศร้อนมาก"},  # the forbidden word: no
    "vi": {"phở bò": "Phở bò là món ăn truyền thống nổi tiếng của Việt Nam.",  # 12 \w+ words >= 8: yes
           "thủ đô của Việt Nam": "Hà Nội là thủ đô của Việt Nam. Mùa thu ở Hà Nội rất đẹp.",  # 2 x Hà Nội: yes
           "mùa thu ở Hà Nội không": "vâng, tôi rất thích mùa thu ở Hà Nội vì trời mát và có hoa sữa.",  # case ignored
           "vịnh Hạ Long": "Vịnh Hạ Long nằm ở Quảng Ninh. *** Vịnh có hàng nghìn hòn đảo đá vôi."},  # 2 of 3 sentences
    "id": {"rendang": "Rendang dibuat dari daging sapi. *Bumbu halus* dimasak bersama *santan kelapa* selama berjam-jam.",
           "surat lamaran": "Kepada Yth. [nama perusahaan], saya ingin melamar pekerjaan. Hormat saya, []",  # [] is no placeholder
           "Ulangi permintaan": "Apa makanan khas Yogyakarta? Makanan khas Yogyakarta adalah gudeg, yang dibuat dari nangka muda.",
           "Jakarta adalah kota": "Jawaban saya adalah ya. Jakarta ialah bandar terbesar di Indonesia dengan penduduk yang ramai."},
    "tl": {"adobo": "Seksyon 1\nIhanda ang manok, suka, toyo at bawang.\nSeksyon 2\nLutuin ang lahat sa kawali hanggang lumambot ang karne.",
           "Maynila": "Noong 1950, ang Maynila ay abala at masigla. Ang mga tao noong 1950 ay sumasakay sa tranvia at kalesa.",
           # the constrained answer, then English: the checker passes, the language gate does not
           "halo-halo": "Ang sagot ko ay oo. Halo-halo is the best dessert during the hot summer months, and everyone I know loves it."},
    "ms": {"nasi lemak": "Nasi lemak ialah hidangan kebangsaan Malaysia yang dimasak dengan santan.",
           "cuaca di Kuala Lumpur": "Cuaca di Kuala Lumpur biasanya lembap dan hujan turun pada waktu petang."},
}

# (lang, prompt strict, prompt loose, in language, strict in any language, left out) by hand, per item
# in fixture order (1 = followed / in the language), default rule (word counts by the segmenter):
EXPECTED = {
    "lo": ([1, 1, 0, 0], [1, 1, 0, 1], [1, 1, 0, 1], [1, 1, 1, 0], [0, 0, 0, 0]),
    "km": ([1, None, 0, 1], [1, None, 0, 1], [1, None, 1, 1], [1, None, 0, 1], [0, 1, 0, 0]),
    "my": ([1, 1, 1, 0], [1, 1, 1, 0], [1, 1, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0]),
    "th": ([1, 1, 1, 0], [1, 1, 1, 0], [1, 1, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0]),
    "vi": ([1, 1, 1, 0], [1, 1, 1, 0], [1, 1, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0]),
    "id": ([1, 0, 1, 1], [1, 0, 1, 1], [1, 1, 1, 1], [1, 0, 1, 1], [0, 0, 0, 0]),
    "tl": ([1, 1, 0], [1, 1, 0], [1, 1, 0], [1, 1, 1], [0, 0, 0]),
    "ms": ([1, 1], [1, 1], [1, 1], [1, 1], [0, 0]),
}


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs)


@pytest.mark.parametrize("lang", list(EXPECTED))
def test_sea_ifeval_scores_each_language_as_computed_by_hand(tmp_path, srv, lang):
    strict, loose, in_lang, anylang, left = EXPECTED[lang]
    r, samples = run(tmp_path, srv, "sea-ifeval", f"sea_ifeval_{lang}.jsonl", REPLIES[lang], config=lang)
    o = r["scores"]["overall"]
    # one instruction per prompt: the prompt level and the instruction level agree
    assert o["prompt_strict_acc"]["value"] == pytest.approx(mean(strict)) == o["inst_strict_acc"]["value"]
    assert o["prompt_loose_acc"]["value"] == pytest.approx(mean(loose)) == o["inst_loose_acc"]["value"]
    assert o["in_language_rate"]["value"] == pytest.approx(mean(in_lang))
    assert o["prompt_strict_acc_any_language"]["value"] == pytest.approx(mean(anylang))
    assert o["left_out_rate"]["value"] == pytest.approx(mean(left))
    assert r["headline"] == "prompt_strict_acc" and r["counts"]["failures"] == {}
    assert f"opt.config:{lang}" in r["signature"] and "ifeval(seahelm" in r["signature"]
    for req in srv.requests():  # the gold (the instruction's arguments) never reaches the server
        assert "subcategory" not in json.dumps(req, ensure_ascii=False)


def test_lao_by_hand_numbers_and_seahelms_rule_leaving_word_counts_out(tmp_path, srv):
    """Lao: 4 items. Default: strict 2/4 (title, word count), loose 3/4 (+ the bold end phrase),
    in Lao 3/4 (the English letter), strict in any language 3/4. SEA-HELM's rule leaves the word
    count out: 3 items, strict 1/3, loose 2/3, left out 1/4."""
    r, _ = run(tmp_path, srv, "sea-ifeval", "sea_ifeval_lo.jsonl", REPLIES["lo"], config="lo")
    o = r["scores"]["overall"]
    assert (o["prompt_strict_acc"]["value"], o["prompt_loose_acc"]["value"]) == (0.5, 0.75)
    assert "words=laonlp-" in r["signature"]
    r2, _ = run(tmp_path / "s", srv, "sea-ifeval", "sea_ifeval_lo.jsonl", REPLIES["lo"], config="lo", prompt="seahelm")
    o2 = r2["scores"]["overall"]
    assert o2["prompt_strict_acc"]["value"] == pytest.approx(1 / 3) and o2["prompt_loose_acc"]["value"] == pytest.approx(2 / 3)
    assert o2["left_out_rate"]["value"] == 0.25 and "words=seahelm" in r2["signature"]
    # by instruction (the groups): the title is followed, the postscript is not (wrong language)
    g = r["scores"]["groups"]["instruction"]
    assert g["detectable_format:title"]["prompt_strict_acc"]["value"] == 1.0
    assert g["detectable_content:postscript"]["prompt_strict_acc"]["value"] == 0.0


def test_thai_word_count_uses_pythainlp_not_whitespace():
    """`กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย` has no space: one `\\w+`-ish run by whitespace,
    6 words by PyThaiNLP newmm (กรุงเทพมหานคร|เป็น|เมืองหลวง|ของ|ประเทศ|ไทย)."""
    text = "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย"
    assert len(text.split()) == 1 and IF.count_words(text, "th") == 6
    assert IF.follows("length_constraints:number_words", {"relation": "at least", "num_words": 6}, text, "th")
    assert not IF.follows("length_constraints:number_words", {"relation": "at least", "num_words": 7}, text, "th")
    # Lao by LaoNLP; Khmer and Burmese have no word segmenter: not scored, under either rule
    assert IF.count_words("ຄົນລາວມັກກິນເຂົ້າໜຽວເພາະມັນແຊບຫຼາຍ", "lo") == 8
    for lang in ("km", "my"):
        with pytest.raises(IF.NotScored):
            IF.count_words("ខ្ញុំ", lang)
    with pytest.raises(IF.NotScored):
        IF.count_words("กรุงเทพ", "th", rule="seahelm")
    # spaced languages: \w+ runs (IFEval's RegexpTokenizer), a hyphenated word counts twice
    assert IF.count_words("Halo-halo ay masarap, talaga!", "tl") == 5


# -- each checker, positive and negative, in several scripts -----------------------------------------
CASES = [
    # (instruction, kwargs, lang, reply, followed)
    ("length_constraints:number_sentences", {"relation": "exactly", "num_sentences": 2}, "km", "ប្រយោគទីមួយ។ *** ប្រយោគទីពីរ។", True),
    ("length_constraints:number_sentences", {"relation": "less than", "num_sentences": 2}, "km", "ប្រយោគទីមួយ។ *** ប្រយោគទីពីរ។", False),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "lo", "ວັກທີໜຶ່ງ\n***\nວັກທີສອງ", True),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "lo", "***\nວັກດຽວ\n***", False),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "vi", "Chào bạn.\np. s. Hẹn gặp lại", True),
    ("detectable_content:postscript", {"postscript_marker": "ป.ป.ล."}, "th", "สวัสดี\nป.ล. ไม่ใช่สองชั้น", False),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "my", "[အမည်] နှင့် [လိပ်စာ]", True),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "my", "[အမည်] နှင့် [ ]", False),
    ("detectable_format:title", {}, "th", "<<ชื่อเรื่อง>>\nเนื้อหา", True),
    ("detectable_format:title", {}, "th", "<< >>\nเนื้อหา", False),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "km", "* ទីមួយ\n- **ទីពីរ**", True),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "km", "*ទីមួយ\n* ទីពីរ", False),  # no space after *
    ("detectable_format:multiple_sections", {"section_title": "ส่วนที่", "num_sections": 2}, "th", "ส่วนที่ 1 ก\nส่วนที่ 2 ข", True),
    ("detectable_format:multiple_sections", {"section_title": "SECTION", "num_sections": 2}, "id", "SECTION 1 saja", False),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "lo", "**ສຳຄັນ** ແລະ *ຈຳເປັນ*", True),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "lo", "**ສຳຄັນ** ເທົ່ານັ້ນ", False),  # bold: once
    ("detectable_format:json_format", {}, "vi", "```JSON\n{\"thành_phố\": \"Huế\"}\n```", True),
    ("detectable_format:json_format", {}, "vi", "Đây là JSON: {\"thành_phố\": \"Huế\"}", False),
    ("detectable_format:constrained_response", {}, "my", "ကျွန်ုပ်၏အဖြေသည် မဟုတ်ပါ။", True),
    ("detectable_format:constrained_response", {}, "lo", "ຄໍາຕອບຂອງຂ້ອຍແມ່ນຈິງ", False),  # the full stop is part of the answer
    ("startend:first_word", {"first_word": "ສະບາຍດີ"}, "lo", "  ສະບາຍດີ ທຸກຄົນ", True),
    ("startend:first_word", {"first_word": "Kumusta"}, "tl", "Magandang araw, kumusta", False),
    ("startend:end_checker", {"end_phrase": "Cảm ơn bạn."}, "vi", "Tạm biệt. CẢM ƠN BẠN.", True),
    ("startend:end_checker", {"end_phrase": "ขอบคุณ"}, "th", "ขอบคุณครับ", False),
    ("startend:quotation", {}, "km", "\"សួស្តី\"", True),
    ("startend:quotation", {}, "km", "“សួស្តី”", False),  # curly quotes are not the straight quotation mark
    ("keywords:existence", {"keywords": ["Hà Nội"]}, "vi", "Tôi yêu hà nội.", True),  # whole words, case ignored
    ("keywords:existence", {"keywords": ["Nội"]}, "vi", "Nộii", False),
    ("keywords:existence", {"keywords": ["ນ້ຳ"]}, "lo", "ແມ່ນ້ຳຂອງ", True),  # spaceless: anywhere in the text
    ("keywords:forbidden_words", {"forbidden_words": ["panas"]}, "ms", "Cuaca sangat PANAS hari ini.", False),
    ("keywords:forbidden_words", {"forbidden_words": ["panas"]}, "ms", "Cuaca memanaskan badan.", True),
    ("keywords:forbidden_words", {"forbidden_words": ["ပူ"]}, "my", "ရာသီဥတု ပူပြင်းသည်", False),
    ("keywords:frequency", {"keyword": "ខ្មែរ", "relation": "exactly", "frequency": 2}, "km", "ខ្មែរ និង ខ្មែរ", True),
    ("keywords:frequency", {"keyword": "C++", "relation": "at least", "frequency": 1}, "id", "Saya belajar C++ hari ini.", True),  # escaped
    ("keywords:number_frequency", {"number": "2024", "relation": "less than", "frequency": 2}, "th", "ปี 2024 และ 2024", False),
    ("keywords:number_frequency", {"number": "1975", "relation": "exactly", "frequency": 1}, "lo", "ປີ 1975 ເປັນປີສຳຄັນ", True),
    ("keywords:frequency", {"keyword": "Hà Nội", "relation": "at least", "frequency": 2}, "vi", "Hà Nội và Hà Nộii", False),
    ("combination:repeat_prompt", {"prompt_to_repeat": "ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ?"}, "lo", "ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ? ວຽງຈັນ.", True),
    ("combination:repeat_prompt", {"prompt_to_repeat": "ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ?"}, "lo", "ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ?", False),  # no answer after it
    ("combination:two_responses", {}, "th", "คำตอบแรก\n******\nคำตอบที่สอง", True),
    ("combination:two_responses", {}, "th", "คำตอบแรก\n******\n...", False),  # punctuation alone is no response
    ("language:response_language", {"response_language": "km"}, "th", "ខ្ញុំចូលចិត្តញ៉ាំបាយជាមួយគ្រួសារ", True),
    ("language:response_language", {"response_language": "km"}, "th", "ฉันชอบกินข้าวกับครอบครัว", False),
]


@pytest.mark.parametrize("inst,kw,lang,reply,want", CASES, ids=[f"{c[0].split(':')[1]}-{c[2]}-{c[4]}" for c in CASES])
def test_each_checker_on_positive_and_negative_replies(inst, kw, lang, reply, want):
    assert IF.problem(inst, kw, lang) is None
    assert IF.follows(inst, kw, reply, lang) is want
    assert IF.follows(inst, kw, "   ", lang) is False  # an empty reply follows nothing


def test_every_instruction_of_seahelms_registry_is_implemented():
    """The 21 instruction ids SEA-HELM's if_eval.py maps to checkers (CATEGORY_MAP at the datasheet's
    commit), the ids SEA-IFEval's rows use; each has a positive and a negative case above."""
    seahelm = {
        "length_constraints:number_words", "length_constraints:number_sentences", "length_constraints:number_paragraphs",
        "detectable_content:postscript", "detectable_content:number_placeholders", "detectable_format:title",
        "detectable_format:number_bullet_lists", "detectable_format:multiple_sections",
        "detectable_format:number_highlighted_sections", "detectable_format:json_format",
        "detectable_format:constrained_response", "startend:first_word", "startend:end_checker", "startend:quotation",
        "keywords:existence", "keywords:forbidden_words", "keywords:frequency", "keywords:number_frequency",
        "combination:repeat_prompt", "combination:two_responses", "language:response_language"}
    assert set(IF.INSTRUCTIONS) == seahelm
    cased = {c[0] for c in CASES} | {"length_constraints:number_words"}
    assert cased == seahelm
    assert {c[0] for c in CASES if c[4]} | {"length_constraints:number_words"} == seahelm
    assert {c[0] for c in CASES if not c[4]} | {"length_constraints:number_words"} == seahelm


def test_reference_rules_re_derived_on_fixed_inputs():
    """SEA-HELM's own rules, written out from its checkers on fixed replies (not calling this module's
    helpers): sentences are non-empty pieces of `text.strip('*').split('***')`; paragraphs non-empty
    pieces of `re.split(r'\\s?\\*\\*\\*\\s?', text)`; highlights `\\*[^\\n\\*]*\\*` plus `\\*\\*[^\\n\\*]*\\*\\*`."""
    import re

    reply = "**a** *b*\n* c\n*** d *** e"
    sentences = [s for s in reply.strip("*").split("***") if s.strip()]
    paragraphs = [p for p in re.split(r"\s?\*\*\*\s?", reply) if p.strip()]
    highlights = ([h for h in re.findall(r"\*[^\n\*]*\*", reply) if h.strip("*").strip()]
                  + [h for h in re.findall(r"\*\*[^\n\*]*\*\*", reply) if h.strip("*").strip()])
    # highlights: *b* and '* d *' (the *** divider's stars pair up), **a** and '** d **'
    assert (len(sentences), len(paragraphs), len(highlights)) == (3, 3, 4)
    for n in (2, 3, 4, 5):
        assert IF.follows("length_constraints:number_sentences", {"relation": "exactly", "num_sentences": n}, reply, "en") is (n == 3)
        assert IF.follows("length_constraints:number_paragraphs", {"num_paragraphs": n}, reply, "en") is (n == 3)
        assert IF.follows("detectable_format:number_highlighted_sections", {"num_highlights": n}, reply, "en") is (n <= 4)
    # IFEval's loose readings: 8 of them, first/last lines dropped and '*' removed
    v = IF.loose_variants("Sure!\n*ans*\nBye")
    assert v == ["Sure!\n*ans*\nBye", "Sure!\nans\nBye", "*ans*\nBye", "Sure!\n*ans*", "*ans*", "ans\nBye", "Sure!\nans", "ans"]


def test_prompt_and_instruction_levels_differ_with_several_instructions():
    """An IFEval-style item of three instructions: two followed strictly, all three loosely.
    Prompt strict 0, prompt loose 1; instruction strict 2 of 3, loose 3 of 3."""
    bench = get_benchmark("sea-ifeval", config="vi")
    item = Item.create("x", {"prompt": "p"}, {
        "instructions": ["startend:first_word", "keywords:existence", "startend:end_checker"],
        "kwargs": [{"first_word": "Vâng"}, {"keywords": ["phở"], "relation": None}, {"end_phrase": "Hết."}]}, {"lang": "vi"})
    assert bench.scorer.check_gold(item) is None
    reply = "Vâng, phở là món ăn sáng phổ biến nhất ở Hà Nội và cả nước.\n*Hết.*"
    st = bench.scorer.stats(reply, item, "response")
    assert (st["response:prompt_strict"], st["response:prompt_loose"]) == (0.0, 1.0)
    assert (st["response:inst_strict"], st["response:inst_loose"], st["response:instructions"]) == (2.0, 3.0, 3.0)
    none = bench.scorer.stats(None, item, "response")  # a model failure: nothing followed, counted
    assert none["response:items"] == 1.0 and none["response:inst_strict"] == 0.0 and none["response:no_answer"] == 1.0


@pytest.mark.parametrize("gold,problem", [
    ({"instructions": ["keywords:nonsense"], "kwargs": [{}]}, "unknown instruction 'keywords:nonsense'"),
    ({"instructions": ["keywords:frequency"], "kwargs": [{"keyword": "a", "relation": "about", "frequency": 2}]}, "relation 'about'"),
    ({"instructions": ["detectable_content:number_placeholders"], "kwargs": [{"num_placeholders": "two"}]}, "not a whole number"),
    ({"instructions": ["startend:first_word", "startend:quotation"], "kwargs": [{"first_word": "a"}]}, "one entry per instruction"),
    ({"instructions": ["startend:end_checker"], "kwargs": [{"end_phrase": None}]}, "'end_phrase' missing"),
])
def test_a_gold_the_checkers_cannot_read_is_refused_when_loaded(gold, problem):
    bench = get_benchmark("sea-ifeval", config="id")
    assert problem in bench.scorer.check_gold(Item.create("x", {"prompt": "p"}, gold, {"lang": "id"}))


def test_a_bad_row_is_one_error_line(tmp_path):
    row = {"id": "b-1", "prompts": [{"text": "Tulis puisi tentang laut."}], "kwargs": [{"num_highlights": None}],
           "metadata": {"category": "detectable_format", "subcategory": "detectable_format:number_highlighted_sections"}}
    f = tmp_path / "bad.jsonl"
    f.write_text(json.dumps(row) + "\n", encoding="utf-8")
    proc = cli("tasks", "check", "sea-ifeval", "--bench-opt", "config=id", "--data", str(f))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "error:" in proc.stderr and "num_highlights" in proc.stderr


def test_sea_ifeval_is_listed_for_each_sea_language():
    from glotbench.registry import families

    for code in ("lo", "km", "my", "th", "vi", "id", "tl", "ms"):
        assert "sea-ifeval" in [f.name for f in families(code)], code


def test_sea_ifeval_without_a_pinned_revision_asks_for_one(monkeypatch):
    """No commit of the dataset was found to pin: loading from the hub is one error asking for one,
    before any request (the rows given with --data need none)."""
    from glotbench.errors import DataError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataError, match=r"not a commit hash .*--bench-opt revision=SHA"):
        get_benchmark("sea-ifeval", config="lo").load()


# -- NTREX-128: one table, a column per language ------------------------------------------------------
NTREX = [json.loads(x) for x in (FX / "ntrex_test.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("target,lang,seg", [("lao_Laoo", "lo", "seg:laonlp"), ("khm_Khmr", "km", "seg:charcluster"),
                                             ("mya_Mymr", "my", "seg:charcluster"), ("tha_Thai", "th", "seg:pythainlp"),
                                             ("vie_Latn", "vi", "seg:none")])
def test_ntrex_scores_as_sacrebleu_with_the_target_segmenter(tmp_path, srv, target, lang, seg):
    """Replies: the first sentence's reference exactly, the second with its last word dropped, the third
    empty. Expected: sacrebleu's corpus chrF++ and BLEU of those three against the references, the
    text segmented for the target (glotbench.metrics.corpus.SacreMetric, the same code flores-plus uses)."""
    from glotbench.metrics.corpus import SacreMetric

    refs = [r[target] for r in NTREX]
    second = refs[1].rsplit(" ", 1)[0] if " " in refs[1] else refs[1][: len(refs[1]) // 2]
    hyps = [refs[0], second, ""]
    answers = {NTREX[0]["eng_Latn"]: hyps[0], NTREX[1]["eng_Latn"]: hyps[1], NTREX[2]["eng_Latn"]: ""}
    r, samples = run(tmp_path, srv, "ntrex-128", "ntrex_test.jsonl", answers, target=target)
    for kind in ("chrf++", "bleu"):
        want = SacreMetric(kind, lang).corpus_score(hyps, [[x] for x in refs], resamples=0).estimate.value
        assert r["scores"]["overall"][kind]["value"] == pytest.approx(want)
    assert seg in r["signature"] and r["counts"]["failures"] == {"empty": 1}
    # the input-unchanged floor: the English sources copied, scored the same way, below the replies
    copied = SacreMetric("chrf++", lang).corpus_score([x["eng_Latn"] for x in NTREX], [[x] for x in refs],
                                                      resamples=0).estimate.value
    assert r["input_floor"]["overall"]["chrf++"] == pytest.approx(copied)
    assert copied < r["scores"]["overall"]["chrf++"]["value"]
    assert srv.requests()[0]["messages"][1]["content"].startswith("Translate this text from English into ")


def test_ntrex_sacrebleu_variant_scores_the_text_as_written(tmp_path, srv):
    """prompt=sacrebleu: sacrebleu's own BLEU (13a) and chrF on the unsegmented Thai, as the paper scores."""
    import sacrebleu

    refs = [r["tha_Thai"] for r in NTREX]
    hyps = [refs[0], "เกษตรกรขายผัก", "สะพานใหม่"]
    answers = {NTREX[0]["eng_Latn"]: hyps[0], NTREX[1]["eng_Latn"]: hyps[2], NTREX[2]["eng_Latn"]: hyps[1]}
    hyps = [hyps[0], hyps[2], hyps[1]]
    r, _ = run(tmp_path, srv, "ntrex-128", "ntrex_test.jsonl", answers, target="tha_Thai", prompt="sacrebleu")
    assert r["scores"]["overall"]["bleu"]["value"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)
    assert r["scores"]["overall"]["chrf"]["value"] == pytest.approx(sacrebleu.corpus_chrf(hyps, [refs]).score)


def test_ntrex_rows_are_checked_by_their_reference_and_a_missing_column_is_one_line(tmp_path):
    # Khmer text in the Lao column: refused, naming the script, before any call
    bad = dict(NTREX[0], lao_Laoo=NTREX[0]["khm_Khmr"])
    f = tmp_path / "bad.jsonl"
    f.write_text(json.dumps(bad, ensure_ascii=False) + "\n", encoding="utf-8")
    proc = cli("tasks", "check", "ntrex-128", "--bench-opt", "target=lao_Laoo", "--data", str(f))
    assert proc.returncode != 0 and "Khmer script" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("tasks", "check", "ntrex-128", "--bench-opt", "target=zul_Latn", "--data", str(FX / "ntrex_test.jsonl"))
    assert proc.returncode != 0 and "no column 'zul_Latn'" in proc.stderr and "Traceback" not in proc.stderr


# -- MKQA: open questions, MKQA's own F1 and exact match ----------------------------------------------
MKQA_REPLIES = {
    # 101 the answer; 102 in Khmer digits (MKQA maps no digits: no shared character); 103 nothing (No Answer)
    "km": ({"រាជធានីនៃប្រទេសកម្ពុជា": "ភ្នំពេញ", "ខេត្តប៉ុន្មាន": "៧៧", "ពានរង្វាន់ពិភពលោក": ""}, 2 / 3, 2 / 3),
    # 101 กรุงพนมเปญ: 10 characters, 6 shared with พนมเปญ: P 6/10, R 1, F1 0.75; 102 the alias ๗๗; 103 a reply
    # to an unanswerable question: 0
    "th": ({"กัมพูชา": "กรุงพนมเปญ", "กี่จังหวัด": "๗๗", "ฟุตบอลโลก": "ไม่ทราบ"}, (0.75 + 1 + 0) / 3, 1 / 3),
    # 101 "Đó là Phnôm Pênh": MKQA's Vietnamese articles drop "là": [đó, phnôm, pênh] vs [phnôm, pênh], F1 0.8;
    # 102 "77 tỉnh": F1 2/3; 103 "": 1
    "vi": ({"campuchia": "Đó là Phnôm Pênh", "bao nhiêu tỉnh": "77 tỉnh", "world cup": ""}, (0.8 + 2 / 3 + 1) / 3, 1 / 3),
}


@pytest.mark.parametrize("lang", list(MKQA_REPLIES))
def test_mkqa_scores_by_mkqas_rule_as_computed_by_hand(tmp_path, srv, lang):
    answers, f1, em = MKQA_REPLIES[lang]
    r, samples = run(tmp_path, srv, "mkqa", "mkqa.jsonl", answers, config=lang)
    o = r["scores"]["overall"]
    assert o["token_f1"]["value"] == pytest.approx(f1) and o["exact_match"]["value"] == pytest.approx(em)
    assert f"norm:mkqa({lang})" in r["signature"]
    g = r["scores"]["groups"]["type"]
    assert g["unanswerable"]["token_f1"]["n"] == 1


def test_mkqa_segmented_variant_reads_thai_words():
    """prompt=segmented: glotbench's rule, Thai in PyThaiNLP words: กรุงพนมเปญ is [กรุง, พนมเปญ] against
    [พนมเปญ]: P 1/2, R 1, F1 2/3 (MKQA's characters: 0.75)."""
    bench = get_benchmark("mkqa", config="th", prompt="segmented")
    item = bench.load(str(FX / "mkqa.jsonl"))[0]
    assert bench.scorer.stats("กรุงพนมเปญ", item, "answer")["answer:f1"] == pytest.approx(2 / 3)
    assert get_benchmark("mkqa", config="th").scorer.stats("กรุงพนมเปญ", item, "answer")["answer:f1"] == pytest.approx(0.75)


def test_mkqa_normalisation_re_derived_from_its_rule():
    """mkqa_eval_util.normalize_answer_by_language on fixed inputs: lower, ASCII punctuation deleted,
    the language's articles replaced by a space, whitespace split; th/km/zh/ja one token per character;
    an empty prediction against MKQA's No Answer ("") scores F1 1 and EM 1."""
    from glotbench.metrics.token_f1 import exact_match, normalize_answer, token_f1

    assert normalize_answer("The U.S. Army!", "en", "mkqa") == ["us", "army"]
    assert normalize_answer("Những chiếc xe của tôi", "vi", "mkqa") == ["xe", "tôi"]
    assert normalize_answer("ភ្នំ ពេញ.", "km", "mkqa") == list("ភ្នំពេញ")
    assert normalize_answer("Jawapan: Kuala Lumpur", "ms", "mkqa") == ["jawapan", "kuala", "lumpur"]  # no Malay articles
    assert token_f1("", [""], "th", norm="mkqa", empty="mkqa") == 1.0 == exact_match("", [""], "th", norm="mkqa", empty="mkqa")
    assert token_f1("x", [""], "th", norm="mkqa", empty="mkqa") == 0.0
    assert token_f1("", ["", "พนมเปญ"], "th", norm="mkqa", empty="mkqa") == 1.0  # no reference dropped (SQuAD v2 would)


def test_a_gold_template_giving_a_list_keeps_the_list():
    """MKQA's gold: the answers' texts (null -> "") and every alias, from one expression."""
    bench = get_benchmark("mkqa", config="km")
    items = bench.load(str(FX / "mkqa.jsonl"))
    assert [list(it.gold["answers"]) for it in items] == [["ភ្នំពេញ", "រាជធានីភ្នំពេញ"], ["77"], [""]]


# -- XQuAD: a span from the passage -----------------------------------------------------------------
XQUAD = {
    # th: q1 exact; q2 "ประมาณ372กิโลเมตร" written without spaces: PyThaiNLP gives [ประมาณ, 372, กิโลเมตร]
    # = the answer (F1 1, EM 1), SQuAD's whitespace split one token (F1 0); q3 "ปี พ.ศ. 2507" vs "พ.ศ. 2507":
    # [ปี, พศ, 2507] vs [พศ, 2507], P 2/3 R 1, F1 0.8 under both rules
    "th": ({"ไหลลงสู่ที่ใด": "อ่าวไทย", "ยาวเท่าใด": "ประมาณ372กิโลเมตร", "ก่อตั้งในปีใด": "ปี พ.ศ. 2507"},
           ((1 + 1 + 0.8) / 3, 2 / 3), ((1 + 0 + 0.8) / 3, 1 / 3)),
    # vi: q1 "Vịnh Bắc Bộ." (case and the full stop go); q2 "Vân Nam" vs 5 tokens: P 1 R 2/5, F1 4/7;
    # q3 "1993\nGiải thích thêm": glotbench reads the whole reply (4 tokens, F1 0.4), lm-eval the first line (1)
    "vi": ({"đổ ra đâu": "Vịnh Bắc Bộ.", "bắt nguồn từ đâu": "Vân Nam", "thành lập năm nào": "1993\nGiải thích thêm"},
           ((1 + 4 / 7 + 0.4) / 3, 1 / 3), ((1 + 4 / 7 + 1) / 3, 2 / 3)),
}


@pytest.mark.parametrize("lang", list(XQUAD))
def test_xquad_default_and_lm_eval_rules_by_hand(tmp_path, srv, lang):
    answers, (f1, em), (f1_lm, em_lm) = XQUAD[lang]
    r, _ = run(tmp_path, srv, "xquad", f"xquad_{lang}.jsonl", answers, config=lang)
    o = r["scores"]["overall"]
    assert (o["token_f1"]["value"], o["exact_match"]["value"]) == (pytest.approx(f1), pytest.approx(em))
    assert r["scores"]["clusters"]["clusters"] == 2  # two questions share a passage
    r2, _ = run(tmp_path / "lm", srv, "xquad", f"xquad_{lang}.jsonl", answers, config=lang, prompt="lm-eval")
    o2 = r2["scores"]["overall"]
    assert (o2["token_f1"]["value"], o2["exact_match"]["value"]) == (pytest.approx(f1_lm), pytest.approx(em_lm))
    assert "norm:squad_v1.1" in r2["signature"] and "refs:first" in r2["signature"]


def test_xquad_lm_eval_prompt_is_its_doc_to_text():
    """lm-eval's xquad_th doc_to_text: "บริบท: {{context}}\\n\\nคำถาม: {{question}}\\n\\nคำตอบ:" (tasks/xquad)."""
    bench = get_benchmark("xquad", config="th", prompt="lm-eval", method="generate")
    item = bench.load(str(FX / "xquad_th.jsonl"))[0]
    text = bench.render(item.to_public()).text
    assert text == f"บริบท: {item.public['context']}\n\nคำถาม: {item.public['question']}\n\nคำตอบ:"


# -- TyDi QA GoldP: one split of nine languages, rows kept by their id's prefix ----------------------
def test_tydiqa_goldp_keeps_its_languages_rows_and_scores_by_hand(tmp_path, srv):
    """Indonesian: 3 of the fixture's 6 rows (data.where). Replies: "Provinsi Sumatera Utara." against
    "Sumatera Utara": P 2/3 R 1, F1 0.8; "“abad ke-9”" in curly quotes: glotbench deletes every Unicode
    punctuation (F1 1, EM 1), SQuAD v1.1 only ASCII (“abad and ke9” share nothing: 0); "Toba" against
    ["Danau Toba", "Toba"]: the best, 1. Default F1 (0.8+1+1)/3, EM 2/3; squad (0.8+0+1)/3, EM 1/3."""
    answers = {"Di provinsi mana": "Provinsi Sumatera Utara.", "Kapan Candi": "“abad ke-9”", "Apa danau": "Toba"}
    r, samples = run(tmp_path, srv, "tydiqa-goldp", "tydiqa_goldp_validation.jsonl", answers, lang="id")
    o = r["scores"]["overall"]
    assert o["token_f1"]["n"] == 3 and sorted(s["id"] for s in samples) == [
        "indonesian-0937715220-0", "indonesian-2214409981-0", "indonesian-5518270163-0"]
    assert (o["token_f1"]["value"], o["exact_match"]["value"]) == (pytest.approx(2.8 / 3), pytest.approx(2 / 3))
    r2, _ = run(tmp_path / "sq", srv, "tydiqa-goldp", "tydiqa_goldp_validation.jsonl", answers, lang="id", prompt="squad")
    o2 = r2["scores"]["overall"]
    assert (o2["token_f1"]["value"], o2["exact_match"]["value"]) == (pytest.approx(1.8 / 3), pytest.approx(1 / 3))


def test_data_where_keeps_rows_and_says_when_it_keeps_none(tmp_path):
    assert len(get_benchmark("tydiqa-goldp", lang="en").load(str(FX / "tydiqa_goldp_validation.jsonl"))) == 1
    f = tmp_path / "no_arabic.jsonl"
    f.write_text("".join(ln + "\n" for ln in (FX / "tydiqa_goldp_validation.jsonl").read_text(encoding="utf-8").splitlines()
                         if not ln.startswith('{"id": "arabic')), encoding="utf-8")
    proc = cli("tasks", "check", "tydiqa-goldp", "--bench-opt", "lang=ar", "--data", str(f))
    assert proc.returncode != 0 and "no row is kept by data.where" in proc.stderr and "Traceback" not in proc.stderr
    from glotbench.errors import DataError
    from glotbench.tasks import Task

    spec = Task(name="w", version="1", data={"file": str(FX / "tydiqa_goldp_validation.jsonl"), "where": "{{ id }}"},
                fields={"public": {"q": "question"}, "gold": {"answers": "answers.text"}}, prompt={"user": "{{ q }}"},
                scorer="token_f1")
    from glotbench.tasks.benchmark import TaskBenchmark

    with pytest.raises(DataError, match="data.where: gave the text 'indonesian-5518270163-0', not True or False"):
        TaskBenchmark(spec).load()


# -- through the real hub-loading code: a loopback server laid out as the hub (glotbench.testing.hub) --
NTREX_SHA = "ed9a4403ed4adbfaf4aab56d5b2709e9f6c3ba33"
MKQA_SHA = "325131889721ae0ed885b76ecb8011369d75abad"
XQUAD_SHA = "51adfef1c1287aab1d2d91b5bead9bcfb9c68583"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    import gzip

    import pyarrow as pa
    import pyarrow.parquet as pq

    root = tmp_path_factory.mktemp("hub")

    def repo(name: str, sha: str, files: dict) -> None:
        for path, content in files.items():
            p = root / name / sha / path
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                p.write_bytes(content)
            elif isinstance(content, str):
                p.write_text(content, encoding="utf-8")
            else:
                pq.write_table(pa.Table.from_pylist(content), p)
        (root / name / "repo.json").write_text(json.dumps({"refs": {"main": sha}}))

    card = "---\nconfigs:\n- config_name: {c}\n  data_files:\n  - split: {s}\n    path: {p}\n---\n"
    repo("mteb/NTREX", NTREX_SHA, {"README.md": card.format(c="default", s="test", p="data/test-*.parquet"),
                                   "data/test-00000-of-00001.parquet": NTREX})
    repo("apple/mkqa", MKQA_SHA, {"mkqa.jsonl.gz": gzip.compress((FX / "mkqa.jsonl").read_bytes())})
    xq = [json.loads(x) for x in (FX / "xquad_th.jsonl").read_text(encoding="utf-8").splitlines()]
    repo("google/xquad", XQUAD_SHA, {"README.md": card.format(c="xquad.th", s="validation", p="xquad.th/validation-*.parquet"),
                                     "xquad.th/validation-00000-of-00001.parquet": xq})
    yield from serve_hub(root)


@pytest.mark.parametrize("task,opts,answers,metric,value,source", [
    # NTREX: parquet by the card; the Khmer reference copied for row 1: chrF++ of 1 perfect of 3 > 0
    ("ntrex-128", ["target=khm_Khmr"], {NTREX[0]["eng_Latn"]: NTREX[0]["khm_Khmr"]}, "chrf++", None,
     f"hub:mteb/NTREX@{NTREX_SHA} default/test"),
    # MKQA: the gzipped file as pinned; Khmer as in test_mkqa_scores_by_mkqas_rule_as_computed_by_hand
    ("mkqa", ["config=km"], MKQA_REPLIES["km"][0], "token_f1", 2 / 3, f"hub:apple/mkqa@{MKQA_SHA}"),
    ("xquad", ["config=th"], XQUAD["th"][0], "token_f1", (1 + 1 + 0.8) / 3, f"hub:google/xquad@{XQUAD_SHA} xquad.th/validation"),
])
def test_library_families_load_from_a_hub_laid_out_as_the_hub(tmp_path, hub, srv, task, opts, answers, metric, value, source):
    srv.configure(answers=answers)
    env = {"HF_ENDPOINT": hub, "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
           "HF_HUB_OFFLINE": "0", "HF_TOKEN": ""}
    args = [a for o in opts for a in ("--bench-opt", o)]
    proc = cli("run", task, *args, "--model", srv.spec(), "--out", str(tmp_path / "r"), "--no-progress", "--no-cache", env=env)
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["benchmark"]["data"].startswith(source) and res["counts"]["items"] == 3
    got = res["scores"]["overall"][metric]["value"]
    assert got == pytest.approx(value) if value is not None else got > 0


def test_token_f1_settings_at_their_defaults_keep_a_tasks_hash():
    """`empty` and `exact_match` (added for MKQA) at their defaults leave the task hash as it was: runs
    made before them still share a column with runs made after."""
    from glotbench.tasks import Task
    from glotbench.tasks.benchmark import spec_hash

    keys = dict(name="w", version="1", data={"file": "x.jsonl"}, fields={"public": {"q": "q"}, "gold": {"answers": "a"}},
                prompt={"user": "{{ q }}"})
    plain = spec_hash(Task(**keys, scorer="token_f1"), {})
    assert spec_hash(Task(**keys, scorer={"kind": "token_f1", "empty": "v1.1", "exact_match": False}), {}) == plain
    assert plain == "b4b6b9de1cd4"  # the hash of this task before the settings existed (computed on main before this branch)
    assert spec_hash(Task(**keys, scorer={"kind": "token_f1", "exact_match": True}), {}) != plain

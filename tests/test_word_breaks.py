"""Answer phrases split by word breaks (issue #30): whitespace runs, tabs, newlines, U+00A0 NBSP and the
invisible U+200B ZWSP, U+200C ZWNJ, U+2060 WJ and U+FEFF BOM between and inside the parts of every
language profile's answer phrase are read as word breaks, once, in glotbench.languages — so Belebele's
headline pipeline, laobench-mcq, DeepSEA's XQuAD phrase, the number reader's marker and the extraction
check's lenient reading all read them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glotbench.extract import last_number, mc_letter
from glotbench.languages import PROFILES, answer_is_pattern, breakable

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"
KINDS = ("\u200b", "\u200c", "\u2060", "\u00a0", "\ufeff", " ", "\t", "\n")
BREAKS = st.text(alphabet=KINDS, min_size=1, max_size=4)


# -- the issue's examples, through the benchmarks that read them ----------------------------------

# (config, {question: reply}): every reply is the right letter after a phrase split by breaks
ISSUE = [
    ("khm_Khmr", {"តើរាជធានីនៃកម្ពុជាគឺជាអ្វី": "ចម្លើយ\u200bត្រឹមត្រូវ\u200bគឺ B",
                  "តើទន្លេណាហូរកាត់កម្ពុជា": "ចម្លើយ\u200c\u200bត្រឹម\u2060ត្រូវ\ufeffគឺ\u00a0A",
                  "តើអង្គរវត្តស្ថិតនៅខេត្តណា": "ចម្លើយ \t\nគឺ D"}),
    ("lao_Laoo", {"ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ": "ຄຳຕອບ\u200bທີ່ຖືກຕ້ອງ\u200bແມ່ນ A",
                  "ວຽງຈັນຕັ້ງຢູ່ແຄມແມ່ນ້ຳໃດ": "ຄຳຕອບ ທີ່ຖືກຕ້ອງ ແມ່ນ B",  # plain spaces between the words
                  "ລາວຢູ່ໃນທະວີບໃດ": "ຄຳຕອບ\u200bທີ່\u200bຖືກ\u200bຕ້ອງ\u200bແມ່ນ\u200bC"}),
    ("tha_Thai", {"เมืองหลวงของประเทศไทยคือเมืองใด": "คำตอบ\u200bที่ถูกต้อง\u200bคือ B",
                  "แม่น้ำใดไหลผ่าน": "คำตอบ\ufeffที่ถูก\u00a0ต้อง\u2060คือ\u200cC",
                  "ประเทศไทยมีกี่จังหวัด": "คำตอบ ที่ ถูกต้อง คือ A"}),
    ("mya_Mymr", {"မြန်မာနိုင်ငံ၏ အကြီးဆုံးမြို့ကား": "အဖြေ\u200bမှန်\u200bမှာ B",
                  "ဖြတ်စီးသော မြစ်ကား": "အဖြေ\u00a0\u00a0မှန်\u200cမှာ\tA",
                  "ရွှေတိဂုံစေတီ မည်သည့်မြို့": "အဖြေ\u200bမှာ\u200bC"}),
]


@pytest.mark.parametrize("config,answers", ISSUE, ids=[c for c, _ in ISSUE])
def test_belebele_headline_reads_a_phrase_split_by_breaks(tmp_path, srv, config, answers):
    """Scored `no_letter` (accuracy 0.0) before; the headline pipeline and first_letter agree now."""
    from test_tasks_library import run

    r, samples = run(tmp_path, srv, "belebele", f"belebele_{config}.jsonl", answers, config=config)
    assert r["counts"]["failures"] == {}
    assert r["scores"]["overall"]["accuracy"]["value"] == 1.0
    assert [s["answer"]["letter"] for s in samples] == [s["answer"]["first_letter"] for s in samples]


def test_laobench_mcq_reads_a_lao_phrase_split_by_zwsp():
    from glotbench.benchmarks.laobench import LaoBenchMCQ

    bench = LaoBenchMCQ()
    item = next(iter(bench.load()))
    for reply in ("ຄຳຕອບ\u200bແມ່ນ\u200bB", "ຄຳຕອບ\u2060ແມ່ນ\ufeffB", "ຄຳ\u200bຕອບ \n ແມ່ນ\u00a0B"):
        assert bench.extract(reply, item.public).answer == "B"


def test_the_extraction_check_reads_them_too():
    from glotbench.checks.extraction import lenient_read

    assert lenient_read("letter", "ចម្លើយ\u200bត្រឹមត្រូវ\u200bគឺ C", {}) == "C"
    assert lenient_read("number", "ຄຳຕອບ\u200bແມ່ນ\u200b໔໒", {}) == "42"


def test_xquad_phrase_reads_breaks():
    from glotbench.benchmarks.deepsea import xquad_answer

    assert xquad_answer("ចម្លើយ\u200bត្រឹមត្រូវ\u200bគឺ\u200bភ្នំពេញ", "km") == "ភ្នំពេញ"
    assert xquad_answer("คำตอบ\u00a0ที่ถูกต้อง\tคือ: กรุงเทพ", "th") == "กรุงเทพ"


# -- numbers after a phrase -----------------------------------------------------------------------

@pytest.mark.parametrize("reply,marker,number", [
    ("ຄຳຕອບ\u200bແມ່ນ\u200b໔໒", None, "42"),  # Lao digits after a Lao phrase
    ("ចម្លើយ\u200bគឺ\u2060១២", None, "12"),  # Khmer digits
    ("คำตอบ\u200bคือ\ufeff๗๗", None, "77"),  # Thai digits
    ("အဖြေ\u200bမှာ\u00a0၅", None, "5"),  # Burmese digits
    ("ຄຳຕອບ 3 ... ຄຳ\u200bຕອບ\u200b: ໙", "ຄຳຕອບ:", "9"),  # the marker with a ZWSP inside and before its colon
    ("The answer is 3. So the\u00a0answer\u200b\tis 8, not...", "answer is", "8"),  # after the last marker
    ("ຄຳຕອບ: 7", "ຄຳ ຕອບ:", "7"),  # a marker written with a space matches the text without it
])
def test_the_number_pipeline_reads_numbers_after_a_phrase_with_breaks(reply, marker, number):
    from glotbench.metrics.numeric import extract_number
    from glotbench.tasks.pipelines import build_pipeline

    steps = ["number"] if marker is None else [{"number": {"marker": marker}}]
    pipe = build_pipeline("n", steps, lambda *a: "t")
    assert pipe(reply, {}).answer == number
    assert str(extract_number(reply, marker)) == number
    assert str(last_number(reply, marker=marker)) == number


def test_a_marker_that_does_not_occur_leaves_the_whole_text():
    assert str(last_number("12 then 5", marker="####")) == "5"
    assert str(last_number("## ## 4", marker="####")) == "4"  # a space inside '####' is not the marker


# -- every profile, every kind of break: a property test ---------------------------------------------

def _sample(fragment: str) -> st.SearchStrategy[str]:
    """Strings of a profile's fragment, with its `\\s` as one space (placed by the test)."""
    return st.from_regex(regex.sub(r"\\s([+*]?)", r" \1", fragment), fullmatch=True).map(lambda s: " ".join(s.split()))


def _split(text: str, spaces: bool, draw) -> str:
    """The fragment's words joined by runs of breaks; in a script without spaces, runs between any
    two characters too."""
    words = text.split(" ")
    if not spaces:
        words = [w[:i] + draw(BREAKS) + w[i:] if len(w) > 1 and draw(st.booleans()) else w
                 for w in words for i in [draw(st.integers(1, max(1, len(w) - 1)))]]
    out = words[0]
    for w in words[1:]:
        out += draw(BREAKS) + w
    return out


CASES = [(code, kind) for code in sorted(PROFILES) for kind in ("copula", "colon", "choose")
         if PROFILES[code].answer_nouns and (kind != "copula" or PROFILES[code].copulas)
         and (kind != "choose" or PROFILES[code].choose)]


@pytest.mark.parametrize("code,kind", CASES, ids=[f"{c}-{k}" for c, k in CASES])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data(), letter=st.sampled_from("ABCDE"))
def test_every_profile_reads_its_phrase_with_every_kind_of_break(code, kind, data, letter):
    p = PROFILES[code]
    draw = data.draw
    if kind == "choose":
        phrase = _split(draw(_sample(draw(st.sampled_from(p.choose)))), p.spaces, draw)
    else:
        noun = _split(draw(_sample(draw(st.sampled_from(p.answer_nouns)))), p.spaces, draw)
        tail = (_split(draw(_sample(draw(st.sampled_from(p.copulas)))), p.spaces, draw)
                if kind == "copula" else ":")
        phrase = noun + draw(BREAKS) + tail
        # the "answer is" phrase alone (DeepSEA's XQuAD span rule): found, and ending where the phrase ends
        found = list(answer_is_pattern(code).finditer(phrase + (":" if kind == "copula" else "")))
        assert found, ascii(phrase)
    reply = "Reasoning first. " + phrase + draw(BREAKS) + letter + draw(st.sampled_from(["", ".", "\u200b", " ok"]))
    assert mc_letter(reply).answer == letter, ascii(reply)


@pytest.mark.parametrize("fragment,spaces,text,matches", [
    (r"[ab]\p{L}x{2}\.(?i:q)", False, "a\u200bz xx\u200b.Q", True),  # classes, \p{}, counted repeats, escapes, flags
    (r"[ab]\p{L}x{2}\.(?i:q)", False, "azxx.q", True),  # and what the fragment matched before
    (r"(?:ok)(?=!)", False, "o\u200bk", False),  # a lookahead stays one
    (r"i\s+(?:would\s+)?choose", True, "i\u200b\u00a0would\tchoose", True),  # \s reads every break
    (r"i\s+(?:would\s+)?choose", True, "i choose", True),
    (r"answer", True, "ans\u200bwer", False),  # a script with spaces: a break inside a word is not the word
    (r"ຄຳຕອບ", False, "ຄຳ\u200b \u2060ຕອບ", True),  # one without: a break may stand anywhere
])
def test_breakable_keeps_the_regex_meaning(fragment, spaces, text, matches):
    assert (regex.compile(breakable(fragment, spaces)).fullmatch(text) is not None) == matches


def test_plain_replies_read_as_before():
    """Breaks add readings, they do not take any away or join a letter to the words around it."""
    assert mc_letter("The answer is B, not C").answer == "B"
    assert mc_letter("ຄຳຕອບແມ່ນ ກ ໄກ່").answer == "A"
    assert mc_letter("ຄຳຕອບ\u200bແມ່ນ\u200bBangkok").failure == "no_letter"


def test_task_file_data_with_breaks_scores_as_written(tmp_path, srv):
    """Options carrying ZWSP are named by a reply without them (and the other way round)."""
    from test_tasks_library import run

    rows = [json.loads(x) for x in (FX / "belebele_lao_Laoo.jsonl").read_text(encoding="utf-8").splitlines() if x]
    rows[0]["mc_answer1"] = "ວຽງ\u200bຈັນ"
    data = tmp_path / "belebele_lao_Laoo.jsonl"
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    _, samples = run(tmp_path, srv, "belebele", str(data), {"ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ": "ວຽງຈັນ"})
    assert samples[0]["answer"]["letter"] == "A"


@pytest.mark.parametrize("reply,letter", [
    ("Answer: A\u200bpple", None),  # a Latin word goes on after the break: no letter
    ("I think the answer is B\u200because of x", None),
    ("the answer is B\u00adecause", None),  # a soft hyphen stands only inside a word
    ("ຄຳຕອບແມ່ນ C\u200bເພາະວ່າ", "C"),  # a Lao word after the break: the letter stands alone
    ("Answer: B\u200b", "B"),
    ("ចម្លើយ\u200bត្រឹមត្រូវ\u200bគឺ\u200bជម្រើស B", "B"),  # Khmer "option B"
    ("ចម្លើយ គឺ ជម្រើស A", "A"),
])
def test_a_letter_a_word_goes_on_after_is_no_answer_and_khmer_options_read(reply, letter):
    assert mc_letter(reply).answer == letter

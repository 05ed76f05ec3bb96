"""Format characters inside options and numbers (issue #30, reading item 1): ZWSP, ZWNJ, ZWJ, WJ, soft
hyphen, BOM and the bidirectional marks are ignored where option texts are matched and where numbers
are read, in every script; a Latin letter that a word goes on after invisible breaks is still no
option letter."""

from __future__ import annotations

import json

import pytest
from conftest import cli

from glotbench.extract import last_number, mc_letter, named_option, parse_number
from glotbench.languages import FORMAT_CHARS, remove_zero_width

# the ones the issue names, and the bidirectional marks Arabic text carries
CHARS = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff", "\u200e", "\u200f", "\u061c"]

# (script, options, the option quoted): an option's text that may carry a format character
OPTIONS = [
    ("Lao", {"A": "ມື້ນີ້", "B": "ມື້ອື່ນ", "C": "ບໍ່ມີ"}, "B"),
    ("Khmer", {"A": "ភ្នំពេញ", "B": "សៀមរាប", "C": "បាត់ដំបង"}, "C"),
    ("Thai", {"A": "กรุงเทพ", "B": "เชียงใหม่", "C": "ภูเก็ต"}, "B"),
    ("Burmese", {"A": "ရန်ကုန်", "B": "မန္တလေး", "C": "နေပြည်တော်"}, "A"),
    ("Arabic", {"A": "القاهرة", "B": "الرياض", "C": "بغداد"}, "B"),
    ("Latin", {"A": "Hanoi", "B": "Saigon", "C": "Hue"}, "B"),
]


def _split(text: str, ch: str) -> str:
    """`text` with `ch` after its second character (inside the word)."""
    return text[:2] + ch + text[2:]


@pytest.mark.parametrize("ch", CHARS, ids=[f"U+{ord(c):04X}" for c in CHARS])
@pytest.mark.parametrize("script,options,key", OPTIONS, ids=[o[0] for o in OPTIONS])
def test_a_format_character_in_an_option_or_the_reply_does_not_stop_the_match(script, options, key, ch):
    inside_option = {k: _split(v, ch) if k == key else v for k, v in options.items()}
    assert named_option(options[key], inside_option) == key  # the reply quotes it without the character
    assert named_option(_split(options[key], ch), options) == key  # the reply carries it
    assert mc_letter(options[key], inside_option).answer == key  # the letter pipeline's last resort


DIGITS = {"ASCII": "0", "Thai": "\u0e50", "Lao": "\u0ed0", "Khmer": "\u17e0", "Burmese": "\u1040",
          "Arabic-Indic": "\u0660", "Extended Arabic-Indic": "\u06f0"}


@pytest.mark.parametrize("ch", CHARS, ids=[f"U+{ord(c):04X}" for c in CHARS])
@pytest.mark.parametrize("script", DIGITS)
def test_a_format_character_inside_a_number_does_not_split_it(script, ch):
    zero = ord(DIGITS[script])
    four_two = chr(zero + 4) + ch + chr(zero + 2)
    assert str(last_number(f"= {four_two}")) == "42"
    assert str(last_number(f"{chr(zero + 1)}{ch},{chr(zero)}{chr(zero)}{ch}{chr(zero)}")) == "1000"
    assert str(parse_number(four_two)) == "42"


@pytest.mark.parametrize("ch", CHARS, ids=[f"U+{ord(c):04X}" for c in CHARS])
def test_a_latin_letter_a_word_goes_on_after_is_still_no_option_letter(ch):
    assert mc_letter(f"Answer: A{ch}pple").answer is None
    assert mc_letter(f"The answer is B{ch}anana").answer is None
    assert mc_letter(f"Answer:{ch} C").answer == "C"  # a break before the letter is a break


def test_every_format_character_is_removed_and_nothing_else():
    text = "a" + FORMAT_CHARS + "b\u00a0c ງ"
    assert remove_zero_width(text) == "ab\u00a0c ງ"


def test_a_run_reads_an_option_quoted_without_its_zwnj(tmp_path, srv):
    """Through the console script and the loopback server: Khmer Belebele rows whose options carry
    ZWNJ/ZWJ/soft hyphen, replies that quote the options without them (and one with a ZWSP'd letter
    phrase): all read, all right."""
    rows = [{"link": f"https://x/{i}", "question_number": 1, "flores_passage": p, "question": q,
             "mc_answer1": a1, "mc_answer2": a2, "mc_answer3": "បាត់ដំបង", "mc_answer4": "កំពត",
             "correct_answer_num": gold, "dialect": "khm_Khmr", "ds": "2023-05-03"}
            for i, (p, q, a1, a2, gold) in enumerate([
                ("ភ្នំពេញជារាជធានីនៃប្រទេសកម្ពុជា។", "តើរាជធានីនៃកម្ពុជាគឺជាអ្វី?", "សៀម\u200cរាប", "ភ្នំ\u200cពេញ", "2"),
                ("ទន្លេមេគង្គហូរកាត់ប្រទេសកម្ពុជា។", "តើទន្លេណាហូរកាត់កម្ពុជា?", "ទន្លេ\u200dមេគង្គ", "ទន្លេនីល", "1"),
                ("អង្គរវត្តស្ថិតនៅខេត្តសៀមរាប។", "តើអង្គរវត្តស្ថិតនៅខេត្តណា?", "សៀម\u00adរាប", "តាកែវ", "1")])]
    data = tmp_path / "khm.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    srv.configure(answers={"តើរាជធានីនៃកម្ពុជាគឺជាអ្វី": "ភ្នំពេញ", "តើទន្លេណាហូរកាត់កម្ពុជា": "ទន្លេមេគង្គ",
                           "តើអង្គរវត្តស្ថិតនៅខេត្តណា": "ចម្លើយ\u200bគឺ\u200bA"})
    r = cli("run", "belebele", "--data", str(data), "--bench-opt", "config=khm_Khmr", "--model", srv.spec(),
            "--out", str(tmp_path / "run"), "--cache-path", str(tmp_path / "c.sqlite"),
            env={"GLOTBENCH_CACHE_DIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["scores"]["overall"]["accuracy"]["value"] == 1.0
    assert res["counts"]["failures"] == {}

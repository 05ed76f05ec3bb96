"""python: models and small data files for the checks tests (tests/test_checks_*.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

# Four LaoBench-format multiple-choice rows (gold B, A, D, C) and the texts of their options.
MCQ_ROWS = [
    {"id": "q1", "data_type": "Knowledge Application", "question": "Capital of Laos?", "A": "Luang Prabang",
     "B": "Vientiane", "C": "Pakse", "D": "Savannakhet", "answer": "B", "lang": "en"},
    {"id": "q2", "data_type": "Knowledge Application", "question": "River through Vientiane?", "A": "Mekong",
     "B": "Ou", "C": "Ngum", "D": "Xe Bang Fai", "answer": "A", "lang": "en"},
    {"id": "q3", "data_type": "K12 Foundational Education", "question": "7 + 8 = ?", "A": "13", "B": "14",
     "C": "16", "D": "15", "answer": "D", "lang": "en"},
    {"id": "q4", "data_type": "K12 Foundational Education", "question": "Days in a week?", "A": "5", "B": "6",
     "C": "7", "D": "8", "answer": "C", "lang": "en"},
]
RIGHT = {"Capital of Laos?": "Vientiane", "River through Vientiane?": "Mekong", "7 + 8 = ?": "15",
         "Days in a week?": "7"}


def write_mcq(path: Path) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in MCQ_ROWS), encoding="utf-8")
    return str(path)


def _options(content: str) -> dict[str, str]:
    return dict(re.findall(r"^([A-D])\. (.*)$", content, re.M))


def always_a(messages):
    return "Answer: A"


def knows_content(messages):
    """Picks the right option by its text, wherever it stands."""
    content = messages[-1]["content"]
    opts = _options(content)
    q = next(k for k in RIGHT if k in content)
    return "Answer: " + next(letter for letter, text in opts.items() if text == RIGHT[q])


def knows_content_but_one_unreadable(messages):
    """Right by content in every rotation, except q3 asked with its options in their original order
    (rotation 0), where the reply has no letter."""
    opts = _options(messages[-1]["content"])
    if "7 + 8" in messages[-1]["content"] and opts.get("A") == "13":
        return "I am not sure about this one."
    return knows_content(messages)


def mixed_replies(messages):
    """q1 right, q2 wrong, q3 unreadable, q4 a lower-case letter the strict rule does not read."""
    content = messages[-1]["content"]
    if "Capital of Laos?" in content:
        return "Answer: B"
    if "River through" in content:
        return "Answer: C"
    if "7 + 8" in content:
        return "I am not sure about this one."
    return "c"


MGSM = {"task": "mgsm", "languages": {"en": [
    {"question": "Tom has 3 boxes with 6 apples in each. How many apples?", "answer_number": 18},
    {"question": "A class has 12 girls and 8 boys. How many children?", "answer_number": 20},
    {"question": "Ana reads 1000 pages in a year. How many pages?", "answer_number": 1000},
    {"question": "A farmer has 7 cows and buys 2. How many cows?", "answer_number": 9}]}}


def write_mgsm(path: Path) -> str:
    path.write_text(json.dumps(MGSM), encoding="utf-8")
    return str(path)


def mgsm_replies(messages):
    """Right (18), format (20 in the text, 8 in the tag), value (1001), no number at all."""
    content = messages[-1]["content"]
    if "3 boxes" in content:
        return "3 x 6 = 18. <answer>18</answer>"
    if "12 girls" in content:
        return "12 + 8 = 20 children. <answer>8 boys</answer>"
    if "1000 pages" in content:
        return "About <answer>1001</answer>"
    return "I cannot count cows. The answer is 9"


VI_ROWS = [
    {"id": "v1", "category": "a", "references": ["Hôm nay trời đẹp quá."]},
    {"id": "v2", "category": "a", "references": ["Tôi đi học ở trường."]},
    {"id": "v3", "category": "b", "references": ["Mẹ nấu cơm rất ngon."]},
]
VI_ANSWERS = {  # the stripped text -> the reply
    "Hom nay troi dep qua.": "Hôm nay trời đẹp quà.",  # tone: quá -> quà
    "Toi di hoc o truong.": "Tôi di học ở trương.",  # d: đi -> di; tone: trường -> trương
    "Me nau com rat ngon.": "Mẹ nau cơm rất rất ngon.",  # vowel mark: nấu -> nau; a word added
}


def write_vi(path: Path) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in VI_ROWS), encoding="utf-8")
    return str(path)


def vi_replies(messages):
    content = messages[-1]["content"]
    text = content.rsplit("Text: ", 1)[-1].strip()
    return json.dumps({"restored_text": VI_ANSWERS.get(text, text)}, ensure_ascii=False)


# vi-diacritics items whose words have two accepted tone placements (hoà/hòa, thuỷ/thủy, khoẻ/khỏe):
# the references use the new placement.
VI_TONE_ROWS = [
    {"id": "t1", "category": "a", "references": ["Hoà bình là mong ước."]},
    {"id": "t2", "category": "a", "references": ["Thuỷ thủ ra khơi."]},
    {"id": "t3", "category": "a", "references": ["Chúc bạn khoẻ mạnh."]},
]
_OLD = {"Hoa binh la mong uoc.": "Hòa bình là mong ước.", "Thuy thu ra khoi.": "Thủy thủ ra khơi.",
        "Chuc ban khoe manh.": "Chúc bạn khỏe mạnh."}
_NEW = {"Hoa binh la mong uoc.": "Hoà bình là mong ước.", "Thuy thu ra khoi.": "Thuỷ thủ ra khơi.",
        "Chuc ban khoe manh.": "Chúc bạn khoé mạnh."}  # the last one: a wrong tone


def write_vi_tone(path: Path) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in VI_TONE_ROWS), encoding="utf-8")
    return str(path)


def _restore(messages, table):
    text = messages[-1]["content"].rsplit("Text: ", 1)[-1].strip()
    return json.dumps({"restored_text": table.get(text, text)}, ensure_ascii=False)


def old_tone_placement(messages):
    return _restore(messages, _OLD)


def new_tone_placement(messages):
    return _restore(messages, _NEW)


# English pivot: a Thai MGSM file, a translator that knows three of its four questions, and an
# answerer that solves English questions only.
MGSM_TH = {"task": "mgsm", "languages": {"th": [
    {"question": "ทอมมีแอปเปิ้ล 3 กล่อง กล่องละ 6 ผล มีแอปเปิ้ลกี่ผล", "answer_number": 18},
    {"question": "ห้องเรียนมีนักเรียนหญิง 12 คน และชาย 8 คน มีนักเรียนกี่คน", "answer_number": 20},
    {"question": "ชาวนามีวัว 7 ตัว ซื้อเพิ่ม 2 ตัว มีวัวกี่ตัว", "answer_number": 9},
    {"question": "อนาอ่านหนังสือวันละ 10 หน้า 3 วัน อ่านกี่หน้า", "answer_number": 30}]}}
TH_EN = {"ทอมมีแอปเปิ้ล 3 กล่อง กล่องละ 6 ผล มีแอปเปิ้ลกี่ผล": "Tom has 3 boxes of 6 apples. How many apples?",
         "ห้องเรียนมีนักเรียนหญิง 12 คน และชาย 8 คน มีนักเรียนกี่คน": "A class has 12 girls and 8 boys. How many pupils?",
         "ชาวนามีวัว 7 ตัว ซื้อเพิ่ม 2 ตัว มีวัวกี่ตัว": "A farmer has 7 cows and buys 2. How many cows?",
         "ประเทศไทยมีเมืองหลวงชื่อกรุงเทพ": "The capital of Thailand is Bangkok.",
         "เมืองหลวงของประเทศไทยคืออะไร": "What is the capital of Thailand?"}
EN_TH = {"Bangkok": "กรุงเทพ"}
SOLVED = {"3 boxes of 6": "18", "12 girls and 8 boys": "20", "7 cows and buys 2": "9"}

XQUAD_TH = {"task": "xquad", "languages": {"th": [
    {"context": "ประเทศไทยมีเมืองหลวงชื่อกรุงเทพ", "question": "เมืองหลวงของประเทศไทยคืออะไร", "answers": ["กรุงเทพ"]}]}}


def write_json(path: Path, doc: dict) -> str:
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return str(path)


def translator(messages):
    """Translates what it knows (the last paragraph of the prompt); says it cannot otherwise."""
    content = messages[-1]["content"]
    text = content.rsplit("\n\n", 1)[-1]
    table = EN_TH if "into Thai" in content else TH_EN
    return table.get(text, "")  # an empty reply: a failed translation


def english_solver(messages):
    content = messages[-1]["content"]
    for key, value in SOLVED.items():
        if key in content:
            return f"<answer>{value}</answer>"
    if "capital of Thailand" in content:
        return "<answer>Bangkok</answer>"
    return "<answer>0</answer>"


def half_right(messages):
    """q1 and q2 right, q3 and q4 wrong: 2 of 4."""
    content = messages[-1]["content"]
    if "Capital of Laos?" in content:
        return "Answer: B"
    if "River through" in content:
        return "Answer: A"
    return "Answer: B"


def english_sentence(messages):
    return "I go to school every day with my friends."


def passage_words(messages):
    """A span answer: the first three words of the passage."""
    content = messages[-1]["content"]
    passage = content.split("Passage: ", 1)[-1].split("\n", 1)[0]
    return "<answer>" + " ".join(passage.split()[:3]) + "</answer>"

"""python: models for tests/test_words_segmenters.py: two Khmer and two Burmese translators whose
order under chrF++ flips between character clusters and khmercut's / pyidaungsu's words."""

from __future__ import annotations

KHMER_REFS = ["ខ្ញុំចូលចិត្តរៀនភាសាខ្មែរណាស់", "ថ្ងៃនេះអាកាសធាតុល្អណាស់", "គាត់ទៅផ្សារដើម្បីទិញត្រី"]
# Replies to q0, q1, q2. As clusters A's chrF++ is higher (73.9 against 72.7); as words B's is (73.1 against 72.0).
_A = ["ខ្ញុំចូលចិត្តរៀនភាសាខ្មែរណាស់", "ថ្ងៃនេះអាកាសល្អ", "គាត់ទៅទិញត្រីនៅផ្សារ"]
_B = ["ខ្ញុំស្រឡាញ់ភាសាខ្មែរណាស់", "អាកាសធាតុល្អថ្ងៃនេះ", "គាត់ទៅផ្សារដើម្បីទិញត្រី"]


BURMESE_REFS = ["ကျွန်တော် မြန်မာစာကို လေ့လာနေပါတယ်", "ဒီနေ့ ရာသီဥတု အရမ်းကောင်းတယ်", "သူ ဈေးကို ငါး သွားဝယ်တယ်"]
# As clusters A's chrF++ is higher (85.8 against 84.4); as words B's is (84.1 against 82.8).
_MY_A = ["ကျွန်တော် မြန်မာစာကို လေ့လာနေပါတယ်", "ဒီနေ့ ရာသီဥတု အရမ်းကောင်းတယ်", "သူ ငါး ဝယ်တယ်"]
_MY_B = ["ကျွန်တော် မြန်မာစာကို လေ့လာနေပါတယ်", "ရာသီဥတု ဒီနေ့ ကောင်းတယ်", "ငါး သွားဝယ်တယ် သူ ဈေးကို"]


def _reply(messages, replies):
    text = messages[-1]["content"]
    return next(r for i, r in enumerate(replies) if f"q{i}" in text)


def khmer_a(messages):
    return _reply(messages, _A)


def khmer_b(messages):
    return _reply(messages, _B)


def burmese_a(messages):
    return _reply(messages, _MY_A)


def burmese_b(messages):
    return _reply(messages, _MY_B)


def from_file(messages):
    """The reply to qN read from the JSON file named by $ZAWGYI_REPLIES (tests/test_zawgyi.py)."""
    import json
    import os
    import re

    replies = json.loads(open(os.environ["ZAWGYI_REPLIES"], encoding="utf-8").read())
    return replies[re.search(r"q\d+", messages[-1]["content"]).group(0)]

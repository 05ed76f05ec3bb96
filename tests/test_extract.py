import pytest

from glotbench.extract import json_field, strip_think


@pytest.mark.parametrize("reply, answer", [
    ('{"restored_text": "Tôi đi học."}', "Tôi đi học."),
    ('```json\n{"restored_text": "Tôi đi học."}\n```', "Tôi đi học."),
    ('Here you go:\n```\n{"restored_text": "a"}\n```\nHope this helps!', "a"),
    ('Sure! {"restored_text": "a"} is the answer.', "a"),
    ('<think>maybe {"restored_text": "x"}</think>\n{"restored_text": "y"}', "y"),
    ('{"restored_text": "first"} then {"restored_text": "second"}', "second"),
    ('{"restored_text": "dòng 1\\ndòng 2"}', "dòng 1\ndòng 2"),
    ('{"other": 1, "restored_text": "b"} {', "b"),
])
def test_json_field_extracts(reply, answer):
    ext = json_field(reply, "restored_text")
    assert ext.answer == answer and ext.failure is None


@pytest.mark.parametrize("reply, failure", [
    ("Tôi đi học.", "format"),
    ('{"restored_text": 3}', "format"),
    ('{"text": "a"}', "format"),
    ('{"restored_text": "a"', "format"),
    ("<think>still thinking {\"restored_text\": \"a\"}", "think_unclosed"),
    ("", "format"),
])
def test_json_field_failures(reply, failure):
    ext = json_field(reply, "restored_text")
    assert ext.answer is None and ext.failure == failure


def test_strip_think():
    assert strip_think("<think>a</think>b") == ("b", True)
    assert strip_think("<think>a") == ("", False)
    assert strip_think("reasoning</think> final") == ("final", True)
    assert strip_think("<THINK>x</THINK><think>y</think>z") == ("z", True)

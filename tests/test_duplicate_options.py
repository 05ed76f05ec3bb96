"""Options of one text (issue #30, reading item 4), after the normalisation replies are matched to
options with (case, format characters, spacing): the item is kept (published sets have such items,
and one must not stop a whole run), a letter still reads, a reply naming the shared text reads as no
answer; `tasks check` and every view of the run note them; a gold given as that text is an error."""

from __future__ import annotations

import json

import pytest
from conftest import cli
from test_tasks_files import SMALL

TASK = (SMALL.replace("name: lao-sums", "name: mc").replace("  gold: {answer: a}", "  choices: [c1, c2, c3, c4]\n  gold: {answer: ans}")
        .replace('"{{ question }}"', '"{{ question }}\\n{{ options }}"').replace("number: [number]", "letter: [option_letter]")
        .replace("  first_line: [first_line, number]\n", "").replace("numeric_match", "option_accuracy"))

# (script, the task's language, options, gold as the row gives it, the labels sharing one text)
CASES = [
    ("Lao label", "lo", ["ວຽງຈັນ", "ຫຼວງພະບາງ", "ວຽງຈັນ", "ປາກເຊ"], "A", "A=C"),
    ("Khmer ZWSP", "km", ["ភ្នំពេញ", "សៀមរាប", "កំពត", "ភ្នំ\u200bពេញ"], "B", "A=D"),
    ("Burmese ZWNJ", "my", ["ရန်ကုန်", "မန္တလေး\u200c", "မန္တလေး", "ပုဂံ"], "D", "B=C"),
    ("Thai spacing", "th", ["กรุงเทพ มหานคร", "เชียงใหม่", "กรุงเทพ  มหานคร ", "ภูเก็ต"], "C", "A=C"),
    ("Arabic RLM", "ar", ["القاهرة", "الرياض\u200f", "بغداد", "الرياض"], "A", "B=D"),
    ("Latin case", "en", ["Hanoi", "Hue", "HANOI", "Da Nang"], "B", "A=C"),
    ("text gold of one", "lo", ["ວຽງຈັນ", "ປາກເຊ", "ວຽງຈັນ", "ຫຼວງພະບາງ"], "ປາກເຊ", "A=C"),
]
QUESTION = {"lo": "ນະຄອນຫຼວງ", "km": "រាជធានី", "my": "မြို့တော်", "th": "เมืองหลวง", "ar": "العاصمة", "en": "capital"}


def _write(tmp_path, options, gold, lang="lo"):
    (tmp_path / "t.yaml").write_text(TASK.replace("language: lo", f"language: {lang}"), encoding="utf-8")
    q = QUESTION[lang]
    rows = [{"id": "ok", "q": q, **{f"c{i + 1}": f"{o} {i}" for i, o in enumerate(options)}, "ans": "A"},
            {"id": "dup", "q": q + "?", **{f"c{i + 1}": o for i, o in enumerate(options)}, "ans": gold}]
    (tmp_path / "sums.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return tmp_path / "t.yaml"


@pytest.mark.parametrize("name,lang,options,gold,labels", CASES, ids=[c[0] for c in CASES])
def test_duplicate_options_are_kept_and_noted_whatever_the_gold(tmp_path, srv, name, lang, options, gold, labels):
    path = _write(tmp_path, options, gold, lang)
    r = cli("tasks", "check", str(path))
    assert r.returncode == 0, r.stderr
    assert "note: options of one text: 1 of 2 items (ids dup)" in r.stderr
    # the shared text named in a reply reads as no answer; a letter reads
    text = options["ABCD".index(labels[0])]
    q = QUESTION[lang]
    srv.configure(answers={q + "?": f"It is {text}", q: "Answer: A"})
    r = cli("run", str(path), "--model", srv.spec(), "--out", str(tmp_path / "r"), "--no-cache", "--no-progress")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    assert res["duplicate_options"] == {"items": 1, "of": 2, "ids": ["dup"]}
    assert "options of one text: 1 of 2 items (ids dup)" in r.stdout
    samples = {s["id"]: s for s in map(json.loads, (tmp_path / "r" / "samples.jsonl").read_text(encoding="utf-8").splitlines())}
    assert samples["dup"]["answer"] is None  # "It is <the shared text>" names two options: no answer


def test_a_gold_given_as_the_shared_text_is_an_error(tmp_path):
    path = _write(tmp_path, ["ວຽງຈັນ", "ປາກເຊ", "ວຽງ\u200bຈັນ", "ຫຼວງພະບາງ"], "ວຽງຈັນ")
    r = cli("tasks", "check", str(path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "sums.jsonl:2: fields.gold.answer: 'ວຽງຈັນ' is the text of options A, C: give the gold's label" in r.stderr


def test_distinct_options_pass(tmp_path):
    path = _write(tmp_path, ["ວຽງຈັນ", "ວຽງ", "ຈັນ", "ວຽງຈັນໃໝ່"], "A")
    r = cli("tasks", "check", str(path))
    assert r.returncode == 0, r.stderr
    assert "options of one text" not in r.stderr

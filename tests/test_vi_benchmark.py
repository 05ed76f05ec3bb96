import json

import pytest

from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.errors import DataError
from glotbench.items import Item


def _item(*refs, cat="ambiguous"):
    from glotbench.text.vietnamese import strip

    return Item.create("x", {"text": " ".join(strip(refs[0]).split())}, {"references": list(refs)},
                       {"category": cat})


@pytest.fixture
def bench():
    return VietnameseDiacritics()


def test_any_reference_counts(bench):
    item = _item("Sếp bảo họp lúc ba giờ.", "Sếp báo họp lúc ba giờ.")
    for answer in ("Sếp bảo họp lúc ba giờ.", "Sếp báo họp lúc ba giờ."):
        s = bench.score(answer, item)
        assert s.stats["exact"] == 1.0 and s.stats["words_correct"] == 6
    wrong = bench.score("Sếp bạo họp lúc ba giờ.", item)
    assert wrong.stats["exact"] == 0.0 and wrong.stats["words_correct"] == 5


def test_tone_style_and_nfd_answers_are_exact(bench):
    import unicodedata

    item = _item("Hòa bình và thủy lợi.")
    assert bench.score("Hoà bình và thuỷ lợi.", item).stats["exact"] == 1.0
    assert bench.score(unicodedata.normalize("NFD", "Hòa bình và thủy lợi."), item).stats["exact"] == 1.0


def test_rewritten_answer_is_flagged_and_scores_zero(bench):
    item = _item("Tôi đi học.")
    s = bench.score("Tôi đến trường.", item)
    assert s.flags == ("rewritten",) and s.stats["exact"] == 0.0 and s.stats["rewritten"] == 1.0
    # An extra word is a rewrite too, even though every original word is right.
    s = bench.score("Tôi đi học rồi.", item)
    assert s.stats["exact"] == 0.0 and s.stats["words_correct"] == 3


def test_failure_score_counts_words(bench):
    item = _item("Tôi đi học.")
    s = bench.failure_score("format", item)
    assert s.stats == {"exact": 0.0, "texts": 1.0, "words_correct": 0.0, "words": 3.0, "rewritten": 0.0,
                       "format_failure": 1.0}
    assert bench.failure_score("timeout", item).stats["format_failure"] == 0.0


def test_prompt_holds_the_stripped_input_only(bench):
    item = _item("Bạn ấy bận lắm.")
    prompt = bench.render(item.to_public())
    assert "Ban ay ban lam." in prompt.messages[0]["content"]
    assert "Bạn ấy bận lắm" not in json.dumps([prompt.messages, prompt.text], ensure_ascii=False)
    assert not hasattr(item.to_public(), "gold")
    assert prompt.text.endswith("Input: Ban ay ban lam.\nOutput:") and prompt.text_stop == ("\n",)


def _write(tmp_path, lines):
    p = tmp_path / "data.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(p)


def test_user_data_file(tmp_path, bench):
    path = _write(tmp_path, [json.dumps({"id": 1, "category": "c", "references": ["Xin chào"]})])
    items = bench.load(path)
    assert items[0].id == "1" and items[0].public["text"] == "Xin chao"
    assert len(items.sha256) == 64 and items.source == path
    assert not hasattr(bench, "data_sha256")  # the dataset, not the benchmark, holds the data's facts


@pytest.mark.parametrize("lines, message", [
    (['{"id": "a", "references": ["Xin chào"]}', "{not json"], ":2: not valid JSON"),
    (['{"references": ["Xin chào"]}'], ":1: id: missing$"),
    (['{"id": "a", "references": "Xin chào"}'], ":1: references: must be a list, got a string$"),
    (['{"id": "a", "references": []}'], ":1: references: must not be empty$"),
    (['{"id": "a", "references": ["ok", " "]}'], ":1: references.1: must not be empty$"),
    (['{"id": true, "references": ["a"]}'], ":1: id: must be a string or a whole number, got bool$"),
    (['{"id": "a", "references": ["a"], "category": 3}'], ":1: category: must be a string, got a number$"),
    (['{"id": "a", "references": ["Xin chào", "Xin chao ban"]}'], ":1: references: they differ once stripped"),
    (['{"id": "a", "references": ["a"]}', '{"id": "a", "references": ["b"]}'], ":2: id: duplicate 'a'"),
    (["[1, 2]"], ":1: row: expected a JSON object, got list"),
    (['{"id": "a"}', '{"id": "b", "references": ["x"]}', '{"id": 1.5}'],
     ":1: references: missing \\(and 1 more bad row\\)$"),
    ([""], "no items"),
])
def test_bad_data_names_line_and_field(tmp_path, bench, lines, message):
    with pytest.raises(DataError, match=message.replace("[", r"\[")):
        bench.load(_write(tmp_path, lines))


def test_missing_and_non_utf8_files(tmp_path, bench):
    with pytest.raises(DataError, match="not found"):
        bench.load(str(tmp_path / "nope.jsonl"))
    p = tmp_path / "latin1.jsonl"
    p.write_bytes('{"id": "a", "references": ["Xin chào"]}'.encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8"):
        bench.load(str(p))

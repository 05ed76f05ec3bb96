"""Word segmenters for Khmer (khmercut) and Burmese (pyidaungsu) beside character clusters (issue
36): words on real sentences, versions in the signatures, and `glotbench rescore --variant
segmenter=...` on two runs, where the order of two models flips."""

from __future__ import annotations

import json
from importlib import metadata

import pytest
from conftest import cli
from words_models import KHMER_REFS

from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.languages import SEGMENTER_LANGUAGE, SEGMENTERS
from glotbench.text.segment import char_clusters, segment_as, signature_of

TASK = """\
name: km-words
version: "1.0"
language: km
data:
  file: km.jsonl
fields:
  id: id
  public: {question: q}
  gold: {reference: a}
prompt:
  user: "Translate {{ question }}"
scorer: {kind: corpus, metrics: [chrf++, bleu]}
"""


def test_khmer_and_burmese_words():
    assert segment_as("ខ្ញុំចូលចិត្តរៀនភាសាខ្មែរណាស់", "km", "khmercut") == ["ខ្ញុំ", "ចូលចិត្ត", "រៀន", "ភាសា", "ខ្មែរ", "ណាស់"]
    assert segment_as("ကျွန်တော်က မြန်မာစာကို လေ့လာနေပါတယ်", "my", "pyidaungsu") == \
        ["ကျွန်တော်", "က", "မြန်မာ", "စာ", "ကို", "လေ့လာ", "နေ", "ပါ", "တယ်"]
    # clusters of the same text: every syllable piece apart
    assert len(char_clusters("ខ្ញុំចូលចិត្តរៀនភាសាខ្មែរណាស់")) > 6
    # a language's segmenter is for its language only: Burmese text asked with khmercut keeps its own
    assert segment_as("မြန်မာစာ", "my", "khmercut") == char_clusters("မြန်မာစာ")


def test_the_segmenters_are_named_with_their_versions():
    assert {"khmercut", "pyidaungsu"} <= set(SEGMENTERS)
    assert SEGMENTER_LANGUAGE["khmercut"] == "km" and SEGMENTER_LANGUAGE["pyidaungsu"] == "my"
    assert signature_of("khmercut") == f"khmercut-{metadata.version('khmercut')}"
    assert signature_of("pyidaungsu") == f"pyidaungsu-{metadata.version('pyidaungsu')}"


def test_rescore_shows_the_flip_between_clusters_and_words(tmp_path, cache_path):
    task = tmp_path / "km.yaml"
    task.write_text(TASK, encoding="utf-8")
    (tmp_path / "km.jsonl").write_text("".join(json.dumps({"id": f"i{i}", "q": f"q{i}", "a": a}, ensure_ascii=False) + "\n"
                                               for i, a in enumerate(KHMER_REFS)), encoding="utf-8")
    for name in ("khmer_a", "khmer_b"):
        evaluate(str(task), f"python:words_models:{name}",
                 RunOptions(out=str(tmp_path / "runs" / name), cache_path=cache_path, progress=False))
    r = cli("rescore", str(tmp_path / "runs"), "--variant", "segmenter=khmercut", "--variant", "segmenter=pyidaungsu",
            "--format", "json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["segmenters"] == {"segmenter=khmercut": f"khmercut-{metadata.version('khmercut')}",
                                 "segmenter=pyidaungsu": f"pyidaungsu-{metadata.version('pyidaungsu')}"}
    rank = next(x for x in got["rankings"] if x["metric"] == "chrf++")
    a, b = "python:words_models:khmer_a", "python:words_models:khmer_b"
    assert rank["variants"]["as_run"]["order"] == [a, b]  # as run: character clusters
    assert rank["variants"]["segmenter=khmercut"]["flips"] == [[a, b]]
    # pyidaungsu is Burmese's: Khmer text keeps its clusters, so nothing moves
    assert rank["variants"]["segmenter=pyidaungsu"]["values"] == rank["variants"]["as_run"]["values"]
    vals = rank["variants"]["segmenter=khmercut"]["values"]
    assert vals[a] == pytest.approx(72.04, abs=0.01) and vals[b] == pytest.approx(73.11, abs=0.01)
    md = cli("rescore", str(tmp_path / "runs"), "--variant", "segmenter=khmercut")
    assert f"`segmenter=khmercut` = khmercut-{metadata.version('khmercut')}" in md.stdout and "order flips" in md.stdout


def test_a_missing_segmenter_is_one_error_line(monkeypatch):
    import builtins

    from glotbench.errors import GlotbenchError
    from glotbench.text import segment as S

    real = builtins.__import__

    def no_khmercut(name, *a, **k):
        if name == "khmercut":
            raise ImportError("No module named 'khmercut'")
        return real(name, *a, **k)

    S.crf_words.cache_clear()
    monkeypatch.setattr(builtins, "__import__", no_khmercut)
    with pytest.raises(GlotbenchError, match=r'pip install "glotbench\[words\]"'):
        S.segment_as("ខ្ញុំ", "km", "khmercut")
    S.crf_words.cache_clear()

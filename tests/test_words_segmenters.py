"""Word segmenters for Khmer (khmercut) and Burmese (pyidaungsu) beside character clusters (issue
36): words on real sentences, versions in the signatures, and `glotbench rescore --variant
segmenter=...` on two runs, where the order of two models flips."""

from __future__ import annotations

import json
from importlib import metadata

import pytest
from conftest import cli
from words_models import BURMESE_REFS, KHMER_REFS

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


@pytest.mark.parametrize("lang, refs, models, segmenter, other, want", [
    ("km", KHMER_REFS, ("khmer_a", "khmer_b"), "khmercut", "pyidaungsu", (72.04, 73.11)),
    ("my", BURMESE_REFS, ("burmese_a", "burmese_b"), "pyidaungsu", "khmercut", (82.78, 84.12)),
])
def test_rescore_shows_the_flip_between_clusters_and_words(tmp_path, cache_path, lang, refs, models, segmenter, other,
                                                           want):
    task = tmp_path / "t.yaml"
    task.write_text(TASK.replace("language: km", f"language: {lang}"), encoding="utf-8")
    (tmp_path / "km.jsonl").write_text("".join(json.dumps({"id": f"i{i}", "q": f"q{i}", "a": a}, ensure_ascii=False) + "\n"
                                               for i, a in enumerate(refs)), encoding="utf-8")
    for name in models:
        evaluate(str(task), f"python:words_models:{name}",
                 RunOptions(out=str(tmp_path / "runs" / name), cache_path=cache_path, progress=False))
    r = cli("rescore", str(tmp_path / "runs"), "--variant", f"segmenter={segmenter}", "--variant", f"segmenter={other}",
            "--format", "json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["segmenters"] == {f"segmenter={k}": f"{k}-{metadata.version(k)}" for k in (segmenter, other)}
    rank = next(x for x in got["rankings"] if x["metric"] == "chrf++")
    a, b = (f"python:words_models:{m}" for m in models)
    assert rank["variants"]["as_run"]["order"] == [a, b]  # as run: character clusters
    assert rank["variants"][f"segmenter={segmenter}"]["flips"] == [[a, b]]
    # the other language's segmenter leaves this language's clusters alone: nothing moves
    assert rank["variants"][f"segmenter={other}"]["values"] == rank["variants"]["as_run"]["values"]
    vals = rank["variants"][f"segmenter={segmenter}"]["values"]
    assert (vals[a], vals[b]) == pytest.approx(want, abs=0.01)
    md = cli("rescore", str(tmp_path / "runs"), "--variant", f"segmenter={segmenter}")
    assert f"`segmenter={segmenter}` = {segmenter}-{metadata.version(segmenter)}" in md.stdout and "order flips" in md.stdout


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

"""Issue 32: the runner's CPU and memory. The shortcuts taken for it give exactly what the long way gives."""

from __future__ import annotations

import pytest

from glotbench.checks.errors import vietnamese_errors
from glotbench.text import vietnamese as V

TEXTS = [
    "Hôm nay trời đẹp quá.",
    "Tôi  đi học\tlúc 7 giờ, còn   em thì không.",
    "  ",
    "",
    "HOÀ bình và hòa bình",
    "Đường phố Hà Nội — 36 phố phường!",
    "ŉ ǰ ﬃ ß straße ĐẠI",  # casefold changes or splits these letters: letter_keys' fallback
    "\u0065\u0301 é e\u0301",  # decomposed and composed marks
    "chữ 123 ١٢٣ αβγ 日本",
]


def long_way_matches(prediction: str, reference: str) -> tuple[int, int]:
    p, r = V.words(prediction), V.words(reference)
    pairs = V.align(V.letter_keys(prediction), V.letter_keys(reference))
    return sum(1 for i, j in pairs if V.same_word(p[i], r[j])), len(r)


def long_way_diff(prediction: str, reference: str) -> list[tuple[str, str]]:
    p, r = V.words(prediction), V.words(reference)
    out: list[tuple[str, str]] = []
    i = j = 0
    for pi, rj in V.align(V.letter_keys(prediction), V.letter_keys(reference)) + [(len(p), len(r))]:
        out.extend((w, "extra") for w in p[i:pi])
        out.extend((w, "missing") for w in r[j:rj])
        if pi < len(p) and rj < len(r):
            out.append(V._diff_kind(p[pi], r[rj]))
        i, j = pi + 1, rj + 1
    return out


@pytest.mark.parametrize("text", TEXTS)
def test_a_text_against_itself_is_scored_as_the_alignment_scores_it(text):
    assert V.aligned_word_matches(text, text) == long_way_matches(text, text)
    assert V.word_diff(text, text) == long_way_diff(text, text)
    counts, n = vietnamese_errors(text, [text])
    assert not counts and n == len(V.words(text))


@pytest.mark.parametrize("pred,ref", [("Hom nay troi dep qua.", "Hôm nay trời đẹp quá."),
                                      ("Hôm nay trời đẹp", "Hôm nay trời đẹp quá."),
                                      ("hoà bình", "hòa bình"), ("Hôm nay trời đẹp quá. ", "Hôm nay trời đẹp quá.")])
def test_other_texts_still_take_the_alignment(pred, ref):
    assert V.aligned_word_matches(pred, ref) == long_way_matches(pred, ref)
    assert V.word_diff(pred, ref) == long_way_diff(pred, ref)


def test_a_run_forgets_the_bootstrap_draws_once_its_aggregate_is_made(tmp_path, monkeypatch, srv):
    """The draws are not held through the checks (where a run's memory peaks), and the scores are
    those of a run that keeps them."""
    import glotbench.engine.evaluate as E
    import glotbench.stats as st

    def run(name: str):  # chrF and BLEU: corpus metrics, bootstrapped over the items
        return E.evaluate("laobench-translation", srv.spec(), E.RunOptions(progress=False, use_cache=False,
                                                                         out=str(tmp_path / name)))

    st._COUNTS_CACHE.clear()
    forgetting = run("a")
    assert st._COUNTS_CACHE == {}
    held: list[int] = []
    monkeypatch.setattr(E, "forget_draws", lambda: held.append(len(st._COUNTS_CACHE)))
    keeping = run("b")
    # this run's draws (the items', and each group's), kept to the end
    assert len(held) == 1 and held[0] >= 1 and len(st._COUNTS_CACHE) == held[0]
    assert (keeping.results["counts"]["items"], 1000, st.DEFAULT_SEED) in st._COUNTS_CACHE
    assert keeping.results["scores"] == forgetting.results["scores"]
    assert keeping.results["scores"]["groups"]["direction"]["en-lo"]["chrf++"]["ci_method"] == "bootstrap"
    st._COUNTS_CACHE.clear()


def test_a_run_whose_intervals_resample_nothing_draws_nothing(tmp_path, monkeypatch, srv):
    """vi-diacritics' metrics are ratios (Wilson, Wilson on the effective n): no draws are made ahead
    (2 million at 2,000 items: CPU no interval read), and the scores are those of a run that draws."""
    import glotbench.engine.evaluate as E
    import glotbench.stats as st

    drawn: list[int] = []
    real = st._count_blocks
    monkeypatch.setattr(st, "_count_blocks", lambda n, r, seed: drawn.append(n) or real(n, r, seed))

    def run(name: str):
        return E.evaluate("vi-diacritics", srv.spec(), E.RunOptions(limit=60, progress=False, use_cache=False,
                                                                  out=str(tmp_path / name)))

    plain = run("a")
    assert drawn == []
    assert {m["ci_method"] for m in plain.results["scores"]["overall"].values()} <= {"wilson", "wilson_effective"}
    monkeypatch.setattr(E, "_draws_ahead", lambda *a: True)
    drawing = run("b")
    assert drawn == [60]
    assert drawing.results["scores"] == plain.results["scores"]


def test_the_sample_sink_puts_lines_of_any_length_in_item_and_repeat_order(tmp_path):
    """SampleSink keeps where each line ends (arrays), not a tuple per line: lines of other lengths,
    repeats finished out of order and an item written twice come back sorted, each with its checks."""
    import json

    from glotbench.rundir.files import SampleSink

    recs = [{"id": "c", "repeat": 1, "output": "ຂ" * 300}, {"id": "a", "repeat": 0, "output": ""},
            {"id": "c", "repeat": 0, "output": "\u200b"}, {"id": "b", "repeat": 0, "output": "x\ny"},
            {"id": "a", "repeat": 1, "output": None}]
    path = tmp_path / "samples.jsonl"
    with SampleSink(path) as sink:
        for r in recs:
            sink.add(r)
    sink.in_order({"a": 0, "b": 1, "c": 2}, lambda sid, rep: {"n": f"{sid}{rep}"} if sid != "b" else None)
    got = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(g["id"], g["repeat"]) for g in got] == [("a", 0), ("a", 1), ("b", 0), ("c", 0), ("c", 1)]
    assert [g.get("checks") for g in got] == [{"n": "a0"}, {"n": "a1"}, None, {"n": "c0"}, {"n": "c1"}]
    assert {g["id"] + str(g["repeat"]): g["output"] for g in got} == {
        r["id"] + str(r["repeat"]): r["output"] for r in recs}

"""Issue 32, lean end of a run: what a run holds to its end is smaller, with the same numbers.

- `keys.storable` stores a record of JSON's own types without parsing it back, and still refuses
  (or round-trips) anything else;
- items with the same scalar meta share one read-only mapping; other metas keep their own;
- the language verdicts of a run are shared where equal, and the checks memo is stored packed
  (each distinct verdict once) and read back to the same verdicts;
- the error table is summed as it goes: the same tables as each sample's errors summed per group;
- the input floor made in a worker thread while requests are in flight is the floor computed after.
"""

from __future__ import annotations

import json
from collections import Counter
from types import MappingProxyType

import pytest

from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.checks import RunChecks, _packed, _unpacked
from glotbench.checks.errors import error_table, vietnamese_errors
from glotbench.checks.language import verdict
from glotbench.core import Sample
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.items import Item
from glotbench.keys import storable
from glotbench.metrics import ItemScore


# -- storable ---------------------------------------------------------------------------------------

def test_a_plain_record_is_stored_as_json_dumps_writes_it():
    rec = {"a": [1, 2.5, -0.0, None, True, "việt"], "b": {"c": {"d": 1e-300}}}
    assert storable(rec) == json.dumps(rec, ensure_ascii=False, allow_nan=False)


def test_a_record_of_other_types_takes_the_round_trip():
    np = pytest.importorskip("numpy")
    kept = {"v": np.float64(0.25), "c": Counter(a=1)}  # subclasses that come back equal: stored
    assert json.loads(storable(kept)) == kept
    for bad in ({"t": (1, 2)}, {"k": {1: "x"}}, {"n": float("nan")}, {"o": object()}, {"p": [[(1,)]]}):
        assert storable(bad) is None
    loop: list = []
    loop.append(loop)
    assert storable({"loop": loop}) is None  # a circular record is refused, never a crash


# -- shared metas -----------------------------------------------------------------------------------

def test_items_with_the_same_scalar_meta_share_it_and_others_do_not():
    a = Item.create("a", {"x": "1"}, {}, {"lang": "vi", "n": 1, "flag": True, "none": None})
    b = Item.create("b", {"x": "2"}, {}, {"lang": "vi", "n": 1, "flag": True, "none": None})
    assert a.meta is b.meta and isinstance(a.meta, MappingProxyType)
    with pytest.raises(TypeError):
        a.meta["lang"] = "th"  # type: ignore[index]
    # equal values of another type are not the same meta (1 == True == 1.0 in Python)
    c = Item.create("c", {}, {}, {"lang": "vi", "n": True, "flag": True, "none": None})
    assert c.meta is not a.meta and type(c.meta["n"]) is bool and type(a.meta["n"]) is int
    # a float or a list: the item's own copy, as before
    f1, f2 = (Item.create(i, {}, {}, {"w": 0.0}) for i in "12")
    assert f1.meta is not f2.meta and f1.meta == f2.meta
    l1 = Item.create("l", {}, {}, {"tags": ["a"]})
    assert l1.meta == {"tags": ["a"]}
    assert Item.create("e", {}, {}).meta == {} and Item.create("p", {}, {}, [("k", "v")]).meta == {"k": "v"}


# -- language verdicts ------------------------------------------------------------------------------

def _samples(bench, items, answers):
    out = []
    for it, text in zip(items, answers):
        out.append(Sample(id=it.id, repeat=0, meta=it.meta, score=ItemScore({"exact": 0.0}), answer=text,
                          output=json.dumps({"restored_text": text}, ensure_ascii=False), input=it.public))
    return out


def test_shared_verdicts_are_the_verdicts_computed_afresh():
    bench = VietnameseDiacritics()
    items = list(bench.load())[:40]
    answers = [it.gold["references"][0] if i % 4 else "Sorry, I can only answer in English, here it is."
               for i, it in enumerate(items)]
    checks = RunChecks(bench, items)
    got = checks.check_all(_samples(bench, items, answers))
    for it, text in zip(items, answers):
        assert got(it.id, 0) == {"language": verdict(bench, text, "vi", it.public)}
    kept = [got(it.id, 0)["language"] for it in items]
    distinct = {json.dumps(v, sort_keys=True) for v in kept}
    assert len(distinct) < len(kept) and len({id(v) for v in kept}) == len(distinct)  # one dict per value


def test_a_verdict_of_negative_zero_is_not_merged_with_zero():
    checks = RunChecks(VietnameseDiacritics(), [])
    a = checks._shared({"verdict": "ok", "p": 0.0})
    b = checks._shared({"verdict": "ok", "p": -0.0})
    c = checks._shared({"verdict": "ok", "p": 0.0})
    assert c is a and b is not a
    nested = {"verdict": "ok", "scripts": {"Latin": {"deep": 1}}}
    assert checks._shared(nested) is nested  # what it cannot compare keeps its own dict


def test_the_memo_is_stored_packed_and_read_back_the_same():
    ok = {"expected": "vi", "letters": 30, "scripts": {"Latin": 1.0}, "verdict": "ok"}
    wrong = {"expected": "vi", "letters": 40, "scripts": {"Latin": 1.0}, "verdict": "wrong_language"}
    memo = {"language": {"h1": ok, "h2": ok, "h3": wrong, "h4": ok}, "summary": {"content": "c", "checks": {}}}
    packed = json.loads(storable(_packed(memo)))
    assert packed["verdicts"] == [ok, wrong] and packed["language"] == {"h1": 0, "h2": 0, "h3": 1, "h4": 0}
    back = _unpacked(packed)
    assert back == memo and back["language"]["h1"] is back["language"]["h2"]
    # a damaged entry is dropped (checked again), an old unpacked memo starts its verdicts afresh
    damaged = _unpacked({"language": {"a": 0, "b": 7, "c": "0", "d": True}, "verdicts": [ok]})
    assert damaged["language"] == {"a": ok}
    assert "language" not in _unpacked({"language": {"h1": ok}, "summary": {}})


# -- the error table --------------------------------------------------------------------------------

def test_the_error_table_is_each_samples_errors_summed_per_group():
    bench = VietnameseDiacritics()
    items = list(bench.load())[:60]
    answers = []
    for i, it in enumerate(items):
        ref = it.gold["references"][0]
        answers.append(ref if i % 3 == 0 else it.public["text"] if i % 3 == 1 else ref.upper() + " thêm")
    samples = _samples(bench, items, answers)
    samples[5] = Sample(id=items[5].id, repeat=0, meta=items[5].meta, score=ItemScore({}, failure="timeout"))
    got = error_table(bench, samples, {it.id: it for it in items}, bench.metrics)
    expected: dict[str, Counter] = {}
    words: Counter = Counter()
    for s, it in zip(samples, items):
        c, w = (Counter({"call_failed": 1}), 0) if s.output is None else vietnamese_errors(s.answer, it.gold["references"])
        for g in ("overall", f"category={it.meta['category']}"):
            expected.setdefault(g, Counter()).update(c)
            words[g] += w
    assert sum(expected["overall"].values()) > 0 and got["overall"]["samples"] == len(samples)
    assert got["overall"]["words"] == words["overall"]
    assert got["overall"]["errors"] == {k: expected["overall"].get(k, 0) for k in got["kinds"]}
    for cat, table in got["groups"]["category"].items():
        assert table["errors"] == {k: expected[f"category={cat}"].get(k, 0) for k in got["kinds"]}
        assert table["words"] == words[f"category={cat}"]
        assert table["samples"] == sum(1 for it in items if it.meta["category"] == cat)


# -- the input floor, each item's made as its reply is scored ------------------------------------------

class _Watched(VietnameseDiacritics):
    floors: list[int] = []  # per input_floor call: how many item scores it was given

    def input_floor(self, dataset, items=None, scored=None):
        _Watched.floors.append(len(scored or {}))
        return super().input_floor(dataset, items, scored)


def test_the_floor_made_as_replies_are_scored_is_the_floor_made_after(tmp_path, cache_path):
    """Each item's floor score is made as its sample is (in the event loop, beside its own reply's
    score), in a first run and in a cached one alike; the floor is the floor made in one pass."""
    bench = _Watched()
    items = list(bench.load())
    f = tmp_path / "replies.jsonl"
    f.write_text("".join(json.dumps({"id": it.id, "output": json.dumps({"restored_text": it.gold["references"][0]},
                                                                         ensure_ascii=False)}, ensure_ascii=False) + "\n"
                         for it in items), encoding="utf-8")
    _Watched.floors = []
    first = evaluate(bench, f"replay:{f}", RunOptions(cache_path=cache_path, progress=False, out=str(tmp_path / "a")))
    again = evaluate(bench, f"replay:{f}", RunOptions(cache_path=cache_path, progress=False, out=str(tmp_path / "b")))
    assert _Watched.floors == [len(items), len(items)]
    assert again.results["counts"]["model_calls"] == 0
    direct = VietnameseDiacritics().input_floor(bench.load())
    assert first.results["input_floor"] == again.results["input_floor"] == json.loads(json.dumps(direct))


# -- the Vietnamese text helpers' caches --------------------------------------------------------------

def test_an_ascii_word_is_its_own_syllable_key_as_the_rule_gives_it():
    import random
    import unicodedata

    from glotbench.text.vietnamese import TONE_MARKS, _syllable_key

    def rule(word: str) -> str:  # the documented rule, written out: tone marks taken out and appended
        d = unicodedata.normalize("NFD", word)
        tones = "".join(TONE_MARKS[c] for c in d if c in TONE_MARKS)
        base = unicodedata.normalize("NFC", "".join(c for c in d if c not in TONE_MARKS))
        return base + "\x00" + tones if tones else unicodedata.normalize("NFC", word)

    rng = random.Random(32)
    pool = "abcdeghiklmnopqrstuvxyAEIOU0123456789_àáảãạăằắẳẵặâầấẩẫậđèéẻẽẹêềếểễệìíỉĩịòóỏõọôồốổỗộơờớởỡợ" \
           "ùúủũụưừứửữựỳýỷỹỵĐ\u0300\u0301\u0303\u0309\u0323"
    for _ in range(3000):
        w = "".join(rng.choice(pool) for _ in range(rng.randint(1, 7)))
        assert _syllable_key(w) == rule(w), w


def test_words_gives_each_caller_its_own_list():
    from glotbench.text.vietnamese import words

    first = words("Tôi đi học, hôm nay.")
    first.append("changed")
    assert words("Tôi đi học, hôm nay.") == ["Tôi", "đi", "học", "hôm", "nay"]


def test_a_replys_finish_reason_is_one_shared_string():
    from glotbench.models.openai_compat import OpenAICompatModel as OpenAICompat

    a = OpenAICompat.response_from(json.loads('{"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]}'))
    b = OpenAICompat.response_from(json.loads('{"choices": [{"message": {"content": "y"}, "finish_reason": "stop"}]}'))
    assert a.finish_reason == "stop" and a.finish_reason is b.finish_reason
    odd = OpenAICompat.response_from({"choices": [{"message": {"content": "z"}, "finish_reason": 7}]})
    assert odd.finish_reason == 7


def test_a_samples_token_counts_read_as_the_dict_they_replace():
    import copy
    import pickle

    from glotbench.core import TokenCounts, jsonable

    t, d = TokenCounts(300, 41), {"prompt": 300, "completion": 41}
    assert t == d and d == t and dict(t) == d and list(t) == ["prompt", "completion"] and len(t) == 2
    assert t["prompt"] == 300 and t.get("completion") == 41 and t.get("cached", 0) == 0
    with pytest.raises(KeyError):
        t["cached"]
    assert jsonable(t) == d and pickle.loads(pickle.dumps(t)) == t and copy.deepcopy(t) == d
    assert TokenCounts(0, 0) != d and TokenCounts(0, 0) == {"prompt": 0, "completion": 0}
    s = Sample(id="a", repeat=0, meta={}, score=ItemScore({}), tokens=t)
    assert s.to_record()["tokens"] == d and type(s.to_record()["tokens"]) is dict

"""Issue 32, CPU per run: each shortcut taken on a run's path gives what the long way gave. The long
ways are written out here as they were (before docs/performance.md's "CPU per request" changes) and
compared on texts in several scripts, random code points included."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import unicodedata

import pytest

from glotbench.text import vietnamese as V

TEXTS = [
    "Sáng nay tôi dậy muộn nên không kịp ăn sáng. Câu số 0.",
    "Hòa bình và thủy chung; hoà bình, thuỷ chung!",
    "plain ASCII text, 42 words or so",
    "ພາສາລາວ ແລະ ภาษาไทย mixed with English",
    "ភាសាខ្មែរ និង မြန်မာဘာသာ",
    "ĐẠI HỌC Quốc gia Hà Nội — “trích dẫn”",
    "İstanbul straße ǅemal ﬁne",  # casefold splits or changes these
    "a\u0301 e\u0323\u0302 combining marks apart",
    "",
    "   spaces\t\tand\nnewlines   ",
    "中文 日本語 한국어 Ελληνικά русский",
]


def _random_texts(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    pools = [range(0x20, 0x7F), range(0xC0, 0x250), range(0x300, 0x370), range(0x1EA0, 0x1F00),
             range(0x0E80, 0x0EFF), range(0x1780, 0x17FF), range(0x1000, 0x109F), range(0x4E00, 0x4E80),
             range(0x2000, 0x2070)]
    out = []
    for _ in range(n):
        chars = []
        for _ in range(rng.randint(0, 40)):
            pool = rng.choice(pools)
            chars.append(chr(rng.choice(pool)) if rng.random() > 0.15 else " ")
        out.append("".join(chars))
    return out


ALL = TEXTS + _random_texts(400)


# -- the long ways, as they were ---------------------------------------------------------------------

def old_comparison_key(text: str) -> str:
    text = V.normalize_space(unicodedata.normalize("NFC", text))
    return re.sub(r"\w+", lambda m: V._syllable_key(m.group(0)), text)


_OLD_SPACE = re.compile(r"\s+")
_OLD_D = str.maketrans({"đ": "d", "Đ": "D"})


def old_strip(text: str) -> str:
    kept = re.sub("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+", "",
                  unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFC", kept.translate(_OLD_D))


def old_normalize_space(text: str) -> str:
    return _OLD_SPACE.sub(" ", text).strip()


def old_same_letters(prediction: str, source: str) -> bool:
    return [w.casefold() for w in V.words(V.strip(prediction))] == [w.casefold() for w in V.words(source)]


def old_aligned_word_matches(prediction: str, reference: str) -> tuple[int, int]:
    r = V.words(reference)
    if prediction == reference:
        return len(r), len(r)
    p = V.words(prediction)
    pairs = V.align(V.letter_keys(prediction), V.letter_keys(reference))
    return sum(1 for i, j in pairs if V.same_word(p[i], r[j])), len(r)


def old_foreign_script(text: str, code: str | None, min_letters: int = 4, share: float = 0.5) -> str | None:
    import regex

    from glotbench.languages import PROFILES, _script_class, language_scripts

    letter, latin = regex.compile(r"[\p{L}\p{M}]"), regex.compile(r"\p{Script=Latin}")
    scripts = language_scripts(code)
    own = _script_class(scripts) if scripts else None
    chars = letter.findall(text)
    if own is None or len(chars) < min_letters:
        return None
    if "Latin" not in scripts and "Latn" not in scripts:
        others = [c for c in chars if not latin.match(c)]
        if len(others) >= min_letters:
            chars = others
    if sum(1 for c in chars if own.match(c)) >= share * len(chars):
        return None
    joined = "".join(chars)
    known = sorted({s for p in PROFILES.values() for s in p.scripts} - set(scripts))
    counts = {s: len(rx.findall(joined)) for s in known if (rx := _script_class((s,))) is not None}
    best = max(counts, key=lambda s: counts[s], default=None)
    return best if best is not None and counts[best] else "another script"


# -- the tests --------------------------------------------------------------------------------------

def test_the_comparison_key_is_the_one_made_word_by_word():
    for t in ALL:
        assert V.comparison_key(t) == old_comparison_key(t), t


def test_strip_and_the_space_rule_are_the_regex_and_table_ones():
    """`strip` without NFD/NFC for ASCII and with str.replace for đ; `normalize_space` by split and
    join: the same texts as the regexes and the translation table, on every code point whitespace
    or not (re's \\s and str.isspace must agree on each)."""
    spaces = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000
                     and (chr(c).isspace() or _OLD_SPACE.fullmatch(chr(c))))
    assert all(c.isspace() and _OLD_SPACE.fullmatch(c) for c in spaces), [hex(ord(c)) for c in spaces]
    texts = ALL + [f"{c}a{c}{c}b {c}" for c in spaces] + ["Đường đi", "ĐĐđđ", "đ\u0303", spaces]
    texts += ["".join(chr(c) for c in range(lo, lo + 64)) for lo in range(0, 0x3000, 64)]
    from glotbench.checks.tokens import chars

    for t in texts:
        assert V.strip.__wrapped__(t) == old_strip(t), repr(t)
        assert V.normalize_space(t) == old_normalize_space(t), repr(t)
        assert chars(t) == sum(1 for c in t if not c.isspace()), repr(t)  # the token check's characters


def test_a_profile_code_is_its_own_group_as_langcodes_reads_it():
    """`language_group` takes a tag that is its resolved code as its own group without langcodes:
    what langcodes gives for every 2- and 3-letter code that resolves to itself."""
    import itertools
    import string

    from glotbench.languages import _tagged_group, language_group, resolve_code

    seen = 0
    for k in (2, 3):
        for letters in itertools.product(string.ascii_lowercase, repeat=k):
            code = "".join(letters)
            if resolve_code(code) == code:
                assert _tagged_group(code, code) == code == language_group(code), code
                seen += 1
    assert seen > 10_000
    assert language_group("zh-TW") == "zh-Hant" and language_group("pt-PT") == "pt-PT"  # langcodes' own path


def test_same_letters_and_aligned_matches_are_those_of_the_long_way():
    rng = random.Random(3)
    pairs = [(a, b) for a in ALL[:60] for b in ALL[:60]]
    pairs += [(t, V.normalize_space(V.strip(t))) for t in ALL]  # an answer that strips to its source
    pairs += [(V.strip(t).upper(), V.strip(t)) for t in ALL]  # case differs: no shortcut
    rng.shuffle(pairs)
    for a, b in pairs:
        assert V.same_letters(a, b) == old_same_letters(a, b), (a, b)
        assert V.aligned_word_matches(a, b) == old_aligned_word_matches(a, b), (a, b)


@pytest.mark.parametrize("code", ["vi", "lo", "th", "km", "my", "zh", "en", "xx", None])
def test_foreign_script_counted_by_regex_is_the_per_character_count(code):
    from glotbench.languages import foreign_script

    for t in ALL:
        for min_letters, share in ((4, 0.5), (1, 0.9), (10, 0.2), (0, 1.0), (0, 1.5)):
            assert foreign_script(t, code, min_letters, share) == old_foreign_script(t, code, min_letters, share), (t, code)


def test_a_text_answer_is_kept_without_a_round_trip_only_when_json_gives_it_back():
    from glotbench.core import ItemScore, Sample
    from glotbench.scoring import score_record

    def sample(answer):
        return Sample(id="a", repeat=0, meta={}, score=ItemScore({"x": 1.0}), answer=answer, answer_key=None,
                      output="o", error=None, flags=())

    for answer in ["Tiếng Việt", 'quote " and \\ and \n\x00', "", "\ud800 lone", "\ud83d\ude00"]:
        kept = score_record(sample(answer)) is not None
        assert kept == (json.loads(json.dumps(answer)) == answer), repr(answer)
    assert score_record(sample("\ud83d\ude00")) is None  # two halves that JSON makes one character
    assert score_record(sample(float("nan"))) is None and score_record(sample(["a", 1])) is not None


def test_the_checks_content_key_is_the_one_json_dumps_made():
    import hashlib

    from glotbench.checks import _content_key
    from glotbench.core import ItemScore, Sample, jsonable
    from glotbench.keys import hash_text

    samples = [Sample(id=f"i{i}", repeat=0, meta={"category": "c"}, score=ItemScore({"exact": 1.0}),
                      answer=t, answer_key=None, output=t, error=None, flags=("f",), input={"text": t})
               for i, t in enumerate(TEXTS)]
    h = hashlib.sha256(hash_text("m"))
    for s in samples:
        h.update(hash_text(json.dumps([s.id, s.repeat, jsonable(s.meta), jsonable(s.input), s.output, jsonable(s.answer),
                                       dict(s.score.stats), s.score.failure, list(s.flags), s.finish_reason,
                                       jsonable(s.tokens)], ensure_ascii=False, default=str)))
    model = type("M", (), {"cache_id": "m"})()
    assert _content_key(samples, model) == h.hexdigest()


def test_a_builtin_datasheet_is_made_when_read_and_valid():
    """Not at import (bibtexparser and langcodes stay unloaded by a run), and every built-in's is a
    validated Datasheet when read."""
    code = ("import sys, glotbench.benchmarks.vi_diacritics as v, glotbench.benchmarks.deepsea; "
            "print(sorted(m for m in ('bibtexparser', 'langcodes', 'glotbench.tasks.spec') if m in sys.modules)); "
            "v.VietnameseDiacritics().run_language(); print('langcodes' in sys.modules); "
            "v.VietnameseDiacritics.datasheet; print('bibtexparser' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    # a run's language group (`vi`) is read without langcodes
    assert out.stdout.split("\n")[:3] == ["[]", "False", "True"], out.stdout

    from glotbench.benchmarks.base import Benchmark
    from glotbench.datasheet import Datasheet
    from glotbench.plugins import benchmark_entry, benchmarks

    seen = 0
    for name in benchmarks():
        target = benchmark_entry(name).resolve()
        if isinstance(target, type) and issubclass(target, Benchmark) and target.datasheet is not None:
            assert isinstance(target.datasheet, Datasheet), name
            assert target.datasheet is target().datasheet  # made once
            seen += 1
    assert seen >= 6  # vi-diacritics and DeepSEA's five


def test_a_builtin_profile_code_is_a_language_code_without_langcodes():
    """`language_code` returns a built-in profile's own code without langcodes: langcodes holds
    each valid, so the long way returns it too. Building a built-in benchmark reads its datasheet
    (the contract check), which checks its languages so: langcodes is not imported by it."""
    import langcodes

    from glotbench import languages as L

    assert L._BUILTIN_CODES
    for code in sorted(L._BUILTIN_CODES):
        assert langcodes.tag_is_valid(code), code
        assert L.resolve_code(code) == code and L.language_code(code) == code
    code = ("import sys; from glotbench.registry import get_benchmark; b = get_benchmark('vi-diacritics'); "
            "print('langcodes' in sys.modules); from glotbench.languages import language_code; "
            "print(language_code('vie'), 'langcodes' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["False", "vi True"], out.stdout  # another form: the long way

def old_jsonable(value):
    import dataclasses
    from collections.abc import Mapping

    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: old_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): old_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [old_jsonable(v) for v in value]
    return str(value)


def test_jsonable_is_the_long_way():
    """Same data and the same types (True stays a bool, a str subclass stays as it is), so the same
    JSON text in the checks' content key and a sample's record."""
    import dataclasses
    import enum
    from decimal import Decimal
    from types import MappingProxyType

    from glotbench.core import TokenCounts, jsonable
    from glotbench.metrics import ItemScore

    class Letter(str, enum.Enum):
        A = "A"

    @dataclasses.dataclass
    class Verdict:
        ok: bool
        why: object

    values = [None, True, 0, -0.0, float("nan"), 1.5, "x", *ALL[:40], Decimal("1.10"), Letter.A, TokenCounts(3, 4),
              Verdict(True, {"a": [1, (2, Decimal("3"))]}), {1: "a", (2, 3): None, "k": {"n": Letter.A}},
              MappingProxyType({"text": "Sáng", "n": 2, "f": 0.1, "d": {"x": TokenCounts(1, 2)}}),
              ItemScore({"exact": 1.0}), [Verdict, {1, 2}, frozenset()], Verdict]
    for v in values:
        got, want = jsonable(v), old_jsonable(v)
        assert json.dumps(got, ensure_ascii=False, default=str) == json.dumps(want, ensure_ascii=False, default=str), v
        assert type(got) is type(want), v


def test_building_a_builtin_checks_its_contract_without_making_its_datasheet():
    """registry.get_benchmark checks every declared fact (benchmarks/base.py contract_fault): a
    Declared datasheet is not made there (it parsed the citation with bibtexparser, looked the
    languages up in langcodes and validated the pydantic model: 56 ms of a run's CPU, issue 32)."""
    code = ("import sys; from glotbench.registry import get_benchmark; b = get_benchmark('vi-diacritics'); "
            "print(sorted(m for m in ('bibtexparser', 'langcodes') if m in sys.modules)); "
            "b.datasheet; print(sorted(m for m in ('bibtexparser', 'langcodes') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    before, after = out.stdout.split("\n")[:2]
    assert before == "[]" and "bibtexparser" in after, out.stdout  # made when read: the citation parsed then


def test_a_declared_datasheet_of_another_type_fails_where_it_is_read():
    from glotbench.benchmarks.base import contract_fault
    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
    from glotbench.datasheet import Declared

    class Odd(VietnameseDiacritics):
        datasheet = Declared(lambda: "a datasheet")  # type: ignore[arg-type,return-value]

    assert contract_fault(Odd()) is None  # not made to check the contract
    with pytest.raises(TypeError, match="not a Datasheet"):
        _ = Odd().datasheet

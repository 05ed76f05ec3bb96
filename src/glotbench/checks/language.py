"""Is the answer in the language the task asked for? Script shares, then language identification.

An answer's letters (Unicode category L) are counted by Unicode script (`regex`'s \\p{Script=...}).
The verdict, for an answer whose task expects language L (`expected_language`):

1. `unchecked`: fewer than MIN_LETTERS letters (a number, a name, an empty span: nothing to judge).
2. `wrong_script`: less than half of the letters are in L's scripts (the profile's `scripts`):
   an English answer to a Lao translation, Thai letters for Lao, pinyin for Chinese.
3. `wrong_language`: the script fits, the answer has at least MIN_LID_LETTERS letters, L shares its
   script with another profile language and is one of the languages the identifier knows, and the identifier (py3langid, restricted to the languages
   glotbench has profiles for) names another language with probability >= MIN_CONFIDENCE that is not
   a close relative L cannot be told from (`SAME_LANGUAGE`: Indonesian and Malay).
4. `zawgyi`: L is written in the Myanmar script, and Google's offline Zawgyi detector
   (myanmartools' `ZawgyiDetector`) gives the text a Zawgyi probability >= ZAWGYI_P: Burmese in the
   Zawgyi font encoding, which reuses the Myanmar code points for other letters (the right language,
   the wrong encoding: not a wrong-language answer; `rescore --variant norm=zawgyi` converts it).
5. `ok` otherwise. Code-mixed text (Vietnamese with English words) is the matrix language's: the
   identifier reads it as Vietnamese (measured: docs/checks.md).

Which tasks have an expected output language is decided per benchmark (`expected_language`, from
its declared facts: `Answers`); the measurements behind the library choice and the thresholds are
in docs/checks.md. The verdict is the language check's (it reads a finished run) and the
`wrong_language=fail|zero` run settings' (benchmarks/settings.py applies them while scoring), so this
module sits below the benchmarks and imports none of them (tests/test_layers.py).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

from glotbench.languages import PROFILES, profile, profiles_generation, resolve_code

MIN_LETTERS = 4
MIN_LID_LETTERS = 20
MIN_CONFIDENCE = 0.9
SHARE = 0.5  # at least this share of the letters in the expected scripts
ZAWGYI_P = 0.95  # myanmartools' Zawgyi probability from which a Myanmar-script answer is Zawgyi
# Languages the identifier cannot reliably tell apart (measured on the fixture: P/R about 0.8): an
# answer detected as either is accepted for both.
SAME_LANGUAGE = ({"id", "ms"},)
# The identifier's finer labels folded into the profile's code.
_FOLD = {"ary": "ar", "arz": "ar", "yue": "zh", "wuu": "zh", "bcl": "tl"}


def _script_names() -> tuple[str, ...]:
    """Every script a profile names, plus the scripts answers most often stray into: made once per
    change to the profiles, not per answer (2 of `script_shares`' 3.2 µs a reply)."""
    return _script_tuple(profiles_generation())


@functools.lru_cache(maxsize=4)
def _script_tuple(generation: int) -> tuple[str, ...]:
    """`_script_names` as made after `generation` changes to the profiles."""
    names = {s for p in PROFILES.values() for s in p.scripts}
    return tuple(sorted(names | {"Latin", "Han", "Cyrillic", "Hangul", "Devanagari", "Greek", "Hebrew"}))


@functools.lru_cache(maxsize=8)
def _script_pattern(names: tuple[str, ...]) -> Any:
    import regex

    return regex.compile("|".join(f"(?P<{n}>\\p{{Script={n}}})" for n in names))


@functools.lru_cache(maxsize=8)
def _char_scripts(names: tuple[str, ...]) -> dict[str, str | None]:
    """Each character's class for `script_shares`, filled as characters are met: its script among
    `names`, `Inherited` (a mark of no listed script), `Other` (a letter of none), None (not a
    letter or mark). One dictionary look-up per character instead of a regex match and a category."""
    return {}


# Where Latin-script text lives, precomposed: ASCII, Latin-1, Latin Extended-A and -B, and Latin Extended
# Additional (Vietnamese). No mark is in these blocks (U+0300 onwards are).
_LATIN_BLOCKS = ((0x0000, 0x024F), (0x1E00, 0x1EFF))


@functools.lru_cache(maxsize=8)
def _latin_text(names: tuple[str, ...]) -> re.Pattern[str]:
    """A pattern that matches a whole text made only of the characters of `_LATIN_BLOCKS` that
    `script_shares` counts as Latin or does not count (not a letter or mark): in such a text every
    letter is Latin and no mark follows one, so the counts are the letters' (`str.isalpha`, category L,
    as `_char_script` reads it). A letter of another script there (µ, U+00B5, is Common) is left out:
    a text holding one is counted character by character. Built once: 848 characters, about 2 ms."""
    keep = []
    for lo, hi in _LATIN_BLOCKS:
        for c in map(chr, range(lo, hi + 1)):
            kind = _char_script(c, names)
            if kind in (None, "Latin") and c.isalpha() == (kind == "Latin"):  # counted iff a letter
                keep.append(c)
    return re.compile("[" + "".join(re.escape(c) for c in keep) + "]*")


_CHAR_LIMIT = 1 << 16  # characters remembered per script list: a reply of random code points stays bounded


def _char_script(c: str, names: tuple[str, ...]) -> str | None:
    cat = unicodedata.category(c)
    if cat[0] not in "LM":
        return None
    m = _script_pattern(names).match(c)
    return m.lastgroup if m else ("Inherited" if cat[0] == "M" else "Other")


def script_shares(text: str) -> tuple[int, dict[str, float]]:
    """(letters, {script: share}), shares rounded to 3 places. Counted: letters and combining marks
    (categories L and M: a Burmese or Khmer syllable is mostly marks); a mark of the Inherited script
    (a combining accent) counts for the letter before it; a script not listed counts as `Other`."""
    names = _script_names()
    if _latin_text(names).fullmatch(text):  # Latin letters and no mark: the count alone (1.6 against 8.3 µs)
        n = sum(map(str.isalpha, text))
        return n, ({"Latin": 1.0} if n else {})
    known = _char_scripts(names)
    counts: Counter[str] = Counter()
    last = None
    for c in text:
        try:
            script = known[c]
        except KeyError:
            script = _char_script(c, names)
            if len(known) < _CHAR_LIMIT:
                known[c] = script
        if script is None:
            last = None
            continue
        if script == "Inherited":
            if last is None:
                continue
            script = last
        counts[script] += 1
        last = script
    n = sum(counts.values())
    return n, ({k: round(v / n, 3) for k, v in counts.most_common()} if n else {})


@functools.lru_cache(maxsize=4)
def _identifier(codes: tuple[str, ...]) -> tuple[Any, tuple[str, ...]]:
    """(py3langid restricted to the profile languages it knows, those languages), read once per
    process and only when an answer needs it (`check_text`). Its model ships xz-compressed: unpacking
    it took 0.9 s and a 130 MB peak in every run that asked. It is unpacked once per machine, already
    restricted to these languages, into the cache folder (`_unpacked`), and later runs read those
    files (of the 39 MB transition table, only the rows the answers walk through: `_Rows`); the same
    arrays, so the same probabilities. Where the folder cannot be written, the model is read as
    py3langid reads it."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    try:
        return _unpacked(MODEL_DIR / MODEL_FILE, codes)
    except (OSError, ValueError, KeyError):
        pass
    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    labels = set(ident.nb_classes)
    known = tuple(c for c in codes if c in labels)
    ident.set_languages(list(known))
    return ident, known


_PARTS = ("ptc.npy", "pc.npy", "nextmove.bin", "row.bin", "out.bin", "meta.json")


def _unpacked(model: Any, codes: tuple[str, ...]) -> tuple[Any, tuple[str, ...]]:
    """The identifier from the unpacked, restricted copy of `model` in the cache folder (made first
    when missing; keyed by py3langid's version, the model file's size and time, and `codes`)."""
    import hashlib
    import json
    from pathlib import Path

    import numpy as np
    from py3langid.langid import LanguageIdentifier

    from glotbench.keys import cache_dir

    st = Path(model).stat()
    key = hashlib.sha256(json.dumps([library(), str(model), st.st_size, st.st_mtime_ns, codes]).encode()).hexdigest()
    folder = cache_dir() / "langid" / key[:24]
    if not all((folder / p).is_file() for p in _PARTS):
        _unpack(model, codes, folder)
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))

    def read(name: str) -> Any:
        path = folder / name
        data = path.read_bytes()
        if len(data) != meta["bytes"][name]:
            raise ValueError(f"{path}: {len(data)} bytes, not {meta['bytes'][name]}")
        return memoryview(data).cast(meta["codes"][name])

    path = folder / "nextmove.bin"
    if path.stat().st_size != meta["bytes"]["nextmove.bin"]:
        raise ValueError(f"{path}: not {meta['bytes']['nextmove.bin']} bytes")
    ident = LanguageIdentifier(np.load(folder / "ptc.npy"), np.load(folder / "pc.npy"), list(meta["classes"]),
                               _Rows(path, meta["codes"]["nextmove.bin"]), read("out.bin"), norm_probs=True,
                               tk_row=[])
    # py3langid keeps each state's row offset as a list of ints (104,583 of them: 4 MB); the same
    # offsets as one unsigned array (0.4 MB), set where it reads them (py3langid's version is in the key)
    ident.tk_row = read("row.bin")
    # numpy's stubs declare no buffer protocol for Python 3.11 (`__buffer__` is 3.12's); an ndarray is one
    ident._rowbase = memoryview(np.asarray(ident.tk_row, dtype=np.uint32) << np.uint32(8)).cast("B").cast("I")  # type: ignore[arg-type]
    return ident, tuple(meta["known"])


class _Rows:
    """The identifier's transition table (`tk_nextmove`: 256 entries per distinct row, 39 MB) as
    py3langid indexes it (`row << 8 | byte`), each row read from the unpacked file when a text first
    walks through it: a run holds the rows its answers reach, not the table (mapped, the kernel
    made a whole 82-byte answer's walk 22 MB resident: it maps large pages around each one read)."""

    def __init__(self, path: Any, code: str):
        import os
        from array import array

        self._file = open(path, "rb", buffering=0)  # noqa: SIM115 - open while the identifier is
        self._fd = self._file.fileno()
        self._code, self._width = code, array(code).itemsize
        self._rows: dict[int, Any] = {}
        self._pread = os.pread

    def __getitem__(self, i: int) -> int:
        row = self._rows.get(i >> 8)
        if row is None:
            size = 256 * self._width
            # typeshed's overloads take only a literal format code; the file's code is read from meta.json
            row = self._rows[i >> 8] = memoryview(self._pread(self._fd, size, (i >> 8) * size)).cast(self._code)  # type: ignore[call-overload]
        return row[i & 255]


def _unpack(model: Any, codes: tuple[str, ...], folder: Any) -> None:
    """py3langid's model (npz inside xz: py3langid/modelio.py) written as flat files, its class columns
    restricted to `codes` as `set_languages` restricts them, one array in memory at a time; into a
    temporary folder renamed into place (another process may be doing the same)."""
    import json
    import lzma
    import os
    import shutil
    import tempfile

    import numpy as np

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".unpacking-", dir=folder.parent)
    try:
        with tempfile.TemporaryFile(suffix=".npz", dir=tmp) as npz:
            with lzma.open(model) as src:
                shutil.copyfileobj(src, npz, length=1 << 20)
            npz.seek(0)
            with np.load(npz, allow_pickle=False) as data:
                classes = data["classes"].tolist()
                known = tuple(c for c in codes if c in set(classes))
                keep = [i for i, c in enumerate(classes) if c in set(known)]
                np.save(os.path.join(tmp, "ptc.npy"), np.ascontiguousarray(data["ptc"][:, keep]))
                np.save(os.path.join(tmp, "pc.npy"), np.asarray(data["pc"])[keep])
                meta: dict[str, Any] = {"classes": [classes[i] for i in keep], "known": list(known), "codes": {}}
                sizes = {}
                for name, field in (("nextmove.bin", "nextmove"), ("row.bin", "nextmove_row"), ("out.bin", "out_feat")):
                    arr = np.ascontiguousarray(data[field])
                    if field == "out_feat":  # py3langid keeps it as a list of ints: here 32-bit signed
                        arr, code = arr.astype(np.int32), "i"
                    else:  # as py3langid's _to_array: an unsigned array of the stored width
                        code = {2: "H", 4: "I", 8: "L"}[arr.dtype.itemsize]
                    with open(os.path.join(tmp, name), "wb") as f:
                        f.write(arr.tobytes())
                    meta["codes"][name], sizes[name] = code, arr.nbytes
                    del arr
                meta["bytes"] = sizes
        with open(os.path.join(tmp, "meta.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f)
        try:
            os.rename(tmp, folder)
        except OSError:  # another process put it there first, or a broken one is there: replaced
            if all((folder / p).is_file() for p in _PARTS) and folder.exists():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                shutil.rmtree(folder, ignore_errors=True)
                os.rename(tmp, folder)
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


def identifier_languages() -> tuple[str, ...]:
    """The profile languages the identifier knows (its candidates): read from its model."""
    return _identifier(tuple(sorted(PROFILES)))[1]


def shares_script(code: str) -> bool:
    """Whether another profile language is written in one of `code`'s scripts: only then can the
    script alone not tell them apart, and the identifier is asked."""
    own = set(PROFILES[code].scripts) if code in PROFILES else set()
    return any(own & set(p.scripts) for c, p in PROFILES.items() if c != code)


def identify(text: str, expected: str | None = None) -> tuple[str, float, float]:
    """(the likeliest language, its probability, the probability of `expected` and the languages it
    cannot be told from) among the profile languages the identifier knows."""
    ident, _ = _identifier(tuple(sorted(PROFILES)))
    ranked = [(_FOLD.get(lang, lang), float(p)) for lang, p in ident.rank(text)]
    top, p_top = ranked[0]
    p_expected = sum(p for lang, p in ranked if expected is not None and same_language(lang, expected))
    return top, p_top, p_expected


def library() -> str:
    from importlib import metadata

    return f"py3langid-{metadata.version('py3langid')}"


@functools.lru_cache(maxsize=1)
def _zawgyi_detector() -> Any:
    from myanmartools import ZawgyiDetector

    return ZawgyiDetector()


def zawgyi_probability(text: str) -> float:
    """myanmartools' probability that `text` is Zawgyi-encoded (its model ships in the package);
    text without Myanmar characters gets no verdict from it (negative infinity there): 0."""
    p = float(_zawgyi_detector().get_zawgyi_probability(text))
    return p if p > 0 else 0.0


ZAWGYI_CHARS = 100  # a data item's Myanmar-script text read for its Zawgyi verdict: its first this many characters


def zawgyi_data(texts: Any) -> bool:
    """Whether a data item's text (its strings, in order: `texts`) is Zawgyi-encoded: its Myanmar-script
    strings, joined, first ZAWGYI_CHARS characters, myanmartools' probability >= ZAWGYI_P. Text with no
    Myanmar letter is never read (a regex search: little cost for other scripts)."""
    import re

    myanmar = re.compile("[\u1000-\u109f]")
    mm = [t for t in texts if myanmar.search(t)]
    return bool(mm) and zawgyi_probability(" ".join(mm)[:ZAWGYI_CHARS]) >= ZAWGYI_P


def zawgyi_library() -> str:
    from importlib import metadata

    return f"myanmartools-{metadata.version('myanmartools')}"


def same_language(a: str, b: str) -> bool:
    return a == b or any(a in g and b in g for g in SAME_LANGUAGE)


def check_text(text: str, expected: str) -> dict[str, Any]:
    """The verdict on `text` for expected language `expected` (see the module's rules), with the
    letters counted, the script shares and, when it ran, the identifier's language and probability."""
    code = resolve_code(expected) or expected
    prof = profile(code)
    letters, shares = script_shares(text)
    out: dict[str, Any] = {"expected": code, "letters": letters, "scripts": shares}
    if prof is None or not prof.scripts:
        return {**out, "verdict": "unchecked", "why": f"no script known for {code!r}"}
    if letters < MIN_LETTERS:
        return {**out, "verdict": "unchecked", "why": f"fewer than {MIN_LETTERS} letters"}
    share = sum(v for k, v in shares.items() if k in prof.scripts)
    out["expected_share"] = round(share, 3)
    if share < SHARE:
        top = next(iter(shares))
        return {**out, "verdict": "wrong_script", "why": f"{share:.0%} of the letters in {'/'.join(prof.scripts)}; mostly {top}"}
    if "Myanmar" in prof.scripts:
        pz = zawgyi_probability(text)
        out["zawgyi_probability"] = round(pz, 4)
        if pz >= ZAWGYI_P:
            return {**out, "verdict": "zawgyi", "why": f"Zawgyi-encoded ({zawgyi_library()} p={pz:.3f})"}
    if letters >= MIN_LID_LETTERS and shares_script(code) and code in identifier_languages():
        # Full-width forms (Ｓａｙａ: an IME's habit) are the same letters to a reader; the identifier
        # reads bytes and took them for Chinese. It reads the width-folded text (NFKC).
        found, p, p_expected = identify(unicodedata.normalize("NFKC", text), code)
        out.update(detected=found, confidence=round(p, 3), expected_probability=round(p_expected, 3))
        if not same_language(found, code) and p_expected <= 1 - MIN_CONFIDENCE:
            return {**out, "verdict": "wrong_language",
                    "why": f"identified as {found} (p={p:.2f}; {code} p={p_expected:.2f})"}
    return {**out, "verdict": "ok"}


# -- which tasks expect which output language ---------------------------------------------------

Rule = Callable[[Mapping[str, Any], Mapping[str, Any]], "str | None"]

if TYPE_CHECKING:
    from glotbench.items import PublicItem


class Answers(Protocol):
    """The declared facts of a benchmark (benchmarks/base.py `Benchmark`) that decide what language
    its answers are expected in and which text of an answer is checked."""

    rewrites: str | None
    headline_pipeline: str | None

    def output_language(self, item: PublicItem) -> str | None: ...

    def output_language_words(self) -> str | None: ...


def expectation(bench: Answers) -> tuple[Rule, str] | None:
    """(rule(fields, meta) -> language, description) for a benchmark whose answers have an expected
    language: its declared `output_language(public_item)`, described by `output_language_words()`;
    None for one whose answers are letters, numbers or labels (no rule declared)."""
    words = bench.output_language_words()
    if words is None:
        return None
    from glotbench.items import PublicItem

    return (lambda f, m: bench.output_language(PublicItem("", f, m))), words


def input_words(bench: Answers, text: str, fields: Mapping[str, Any]) -> bool:
    """Whether `text` is the item's own input with its words kept: for a benchmark whose answer
    rewrites its input (`rewrites`: diacritics restored, tones corrected), such an answer is in the
    input's language by construction, and is not identified (Vietnamese without its diacritics reads
    as Tagalog, English or Javanese to the identifier: 18 of vi-diacritics' 164 stripped inputs).
    Another answer (a translation, a rewrite) is checked as usual."""
    field = bench.rewrites
    if field is None or not isinstance(fields.get(field), str):
        return False
    from glotbench.text.vietnamese import same_letters

    return same_letters(text, fields[field])


def verdict(bench: Answers, text: str, lang: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """`check_text`, except for an answer that keeps its input's words (`input_words`): `ok`."""
    if input_words(bench, text, fields):
        letters, shares = script_shares(text)
        return {"expected": lang, "letters": letters, "scripts": shares, "verdict": "ok",
                "why": "the input's words (restored or corrected): not identified"}
    return check_text(text, lang)


def expected_language(bench: Answers, fields: Mapping[str, Any], meta: Mapping[str, Any]) -> str | None:
    rule = expectation(bench)
    return None if rule is None else rule[0](fields, meta)


def answer_text(bench: Answers, answer: Any) -> str | None:
    """The text of an answer that is checked: the answer itself, or a task's headline pipeline's."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, Mapping):
        head = bench.headline_pipeline
        for key in (head, "restored_text", "corrected_text", "text"):
            if key and isinstance(answer.get(key), str):
                return answer[key]
    return None

"""One place per language: what extraction, numeric matching, segmentation (BLEU, chrF++, token F1),
near-duplicate search and the contamination check need to know about a language. Adding a language
is one `LanguageProfile` entry in PROFILES, or `register_language(profile)` at run time: every reader
looks the profiles up when it is called, never at import.

Answer phrases are built from the profile by one rule for every language (`answer_phrase_pattern`):

    NOUN (COPULA [":"] | ":" | "：" | "=" | " - ")   e.g. "the answer is", "Answer:", "đáp án là", "ຄຳຕອບ:"
    CHOOSE                                  e.g. "I choose", "chọn", "pilih"

A phrase with a copula, a colon (any language accepts the colon) or a choose-verb is *strong*; the
bare noun ("đáp án B", "answer B") is *weak*. Digits need no table: Python reads every Unicode
decimal digit (category Nd), so `to_ascii_digits` works for any script; `digits` below only names a
language's native digits for documentation and tests.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Iterable, Mapping

import regex

LETTERS = ("A", "B", "C", "D", "E")
# The segmenters glotbench.text.segment knows: words from a dictionary (laonlp, pythainlp-newmm),
# words from a CRF model (khmercut for Khmer, pyidaungsu for Burmese: the `words` extra), character
# clusters, single characters, or the spaces already in the text.
SEGMENTERS = ("whitespace", "laonlp", "pythainlp-newmm", "khmercut", "pyidaungsu", "charcluster", "char")
# The language each word segmenter is for (a segmenter of one language is never used for another).
SEGMENTER_LANGUAGE = MappingProxyType({"laonlp": "lo", "pythainlp-newmm": "th", "khmercut": "km", "pyidaungsu": "my"})


@dataclass(frozen=True)
class LanguageProfile:
    code: str  # ISO 639-1 (or 639-3 where there is no 639-1 code)
    name: str
    answer_nouns: tuple[str, ...] = ()  # regex fragments, matched case-insensitively
    copulas: tuple[str, ...] = ()  # "is", "là", "คือ": between the noun and the answer
    choose: tuple[str, ...] = ()  # "choose", "chọn": a verb followed directly by the letter
    option_words: tuple[str, ...] = ()  # "option", "ข้อ": may stand between a phrase and the letter
    native_letters: Mapping[str, str] = field(default_factory=dict, hash=False)  # native option labels -> A-E
    digit_zero: str = "0"  # the script's digit zero (its ten digits are consecutive code points)
    segmenter: str = "whitespace"  # one of SEGMENTERS
    spaces: bool = True  # False: the script is written without spaces between words
    script: str = ""  # a regex character class body for the script's letters (spaceless scripts)
    # The Unicode scripts (as `regex` names them in \p{Script=...}) the language is written in: the
    # script check of answers (glotbench.checks.language) reads a reply's letters against them.
    scripts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "native_letters", MappingProxyType(dict(self.native_letters)))
        bad = [v for v in self.native_letters.values() if v not in LETTERS]
        if bad:
            raise ValueError(f"{self.code}: native letters must map to A-E, got {bad}")
        if unicodedata.category(self.digit_zero) != "Nd" or unicodedata.decimal(self.digit_zero) != 0:
            raise ValueError(f"{self.code}: digit_zero must be a decimal digit zero")
        if not self.spaces and not self.script:
            raise ValueError(f"{self.code}: a script without spaces needs its `script` character class")
        if self.segmenter not in SEGMENTERS:
            raise ValueError(f"{self.code}: unknown segmenter {self.segmenter!r}; one of {', '.join(SEGMENTERS)}")
        if not self.spaces and self.segmenter == "whitespace":
            raise ValueError(f"{self.code}: a script without spaces needs a segmenter other than whitespace")

    @property
    def digits(self) -> str:
        """The language's own ten digits, 0-9."""
        return "".join(chr(ord(self.digit_zero) + i) for i in range(10))


def _lao_thai_letters(base: str) -> dict[str, str]:
    return dict(zip(base, LETTERS))


PROFILES: dict[str, LanguageProfile] = {p.code: p for p in (
    LanguageProfile("en", "English", (r"(?:the\s+)?(?:(?:correct|right|final|best)\s+)?answer",
                                      r"(?:the\s+)?(?:correct|right|best)\s+(?:option|choice)"),
                    (r"is", r"would\s+be", r"will\s+be"), (r"i\s+(?:would\s+)?(?:choose|pick|select)",),
                    (r"option", r"choice"), scripts=("Latin",)),
    LanguageProfile("vi", "Vietnamese",
                    (r"(?:đáp\s+án|câu\s+trả\s+lời|phương\s+án)(?:\s+(?:đúng|chính\s+xác|cuối\s+cùng))?",
                     r"lựa\s+chọn\s+(?:đúng|chính\s+xác)"),
                    (r"là",), (r"chọn",), (r"đáp\s+án", r"phương\s+án", r"lựa\s+chọn"), scripts=("Latin",)),
    LanguageProfile("th", "Thai", (r"คำตอบ(?:ที่ถูกต้อง|ที่ถูก|สุดท้าย)?", r"ตอบ", r"ตัวเลือกที่ถูก(?:ต้อง)?"), (r"คือ",), (r"เลือก",),
                    (r"ข้อ", r"ตัวเลือก"), _lao_thai_letters("กขคงจ"), "๐", "pythainlp-newmm", False,
                    "\u0e00-\u0e7f", scripts=("Thai",)),
    LanguageProfile("lo", "Lao", (r"ຄຳຕອບ(?:ທີ່ຖືກຕ້ອງ|ທີ່ຖືກ|ສຸດທ້າຍ)?", r"ຕອບ", r"ຕົວເລືອກທີ່ຖືກ(?:ຕ້ອງ)?"), (r"ແມ່ນ", r"ຄື"), (r"ເລືອກ",),
                    (r"ຂໍ້", r"ຕົວເລືອກ"), _lao_thai_letters("ກຂຄງຈ"), "໐", "laonlp", False, "\u0e80-\u0eff", scripts=("Lao",)),
    LanguageProfile("id", "Indonesian", (r"jawaban(?:nya)?(?:\s+(?:yang\s+)?(?:benar|tepat))?",
                                             r"pilihan(?:nya)?\s+(?:yang\s+)?(?:benar|tepat)", r"pilihannya"),
                    (r"adalah", r"ialah", r"yaitu"), (r"pilih",), (r"pilihan", r"opsi"), scripts=("Latin",)),
    LanguageProfile("ms", "Malay", (r"jawapan(?:nya)?(?:\s+(?:yang\s+)?(?:betul|tepat))?",
                                        r"pilihan(?:nya)?\s+(?:yang\s+)?(?:betul|tepat)"), (r"ialah", r"adalah"),
                    (r"pilih",), (r"pilihan",), scripts=("Latin",)),
    LanguageProfile("tl", "Tagalog", (r"(?:ang\s+)?(?:tamang\s+)?sagot",), (r"ay",), (), (r"opsyon",), scripts=("Latin",)),
    LanguageProfile("ceb", "Cebuano", (r"(?:ang\s+)?(?:husto\s+nga\s+)?tubag",), (r"mao\s+ang", r"kay"), (), (), scripts=("Latin",)),
    LanguageProfile("jv", "Javanese", (r"wangsulan(?:e|ipun)?", r"jawaban(?:e)?"), (r"yaiku", r"inggih\s+punika"),
                    (), (), scripts=("Latin",)),
    LanguageProfile("su", "Sundanese", (r"jawaban(?:ana)?",), (r"nyaéta", r"nyaeta"), (), (), scripts=("Latin",)),
    LanguageProfile("km", "Khmer", (r"ចម្លើយ(?:ត្រឹមត្រូវ)?",), (r"គឺ",), (r"ជ្រើសរើស",), (r"ជម្រើស",),
                    _lao_thai_letters("កខគឃង"), digit_zero="០", segmenter="charcluster", spaces=False, script="\u1780-\u17ff", scripts=("Khmer",)),
    LanguageProfile("my", "Burmese", (r"အဖြေ(?:မှန်)?",), (r"မှာ", r"က", r"သည်"), (), (),
                    _lao_thai_letters("ကခဂဃင"), digit_zero="၀", segmenter="charcluster", spaces=False, script="\u1000-\u109f", scripts=("Myanmar",)),
    LanguageProfile("ta", "Tamil", (r"(?:சரியான\s+)?(?:பதில்|விடை)",), (r"ஆகும்",), (), (), digit_zero="௦", scripts=("Tamil",)),
    LanguageProfile("ar", "Arabic", (r"(?:الإجابة|الاجابة|الجواب)(?:\s+(?:الصحيحة|الصحيح))?",), (r"هي", r"هو"),
                    (r"أختار", r"اختار"), (r"الخيار",), {"أ": "A", "ب": "B", "ج": "C", "د": "D"}, "٠", scripts=("Arabic",)),
    LanguageProfile("zh", "Chinese", (r"(?:正确)?答案",), (r"是", r"为", r"為"), (r"选择", r"選擇", r"选", r"選"),
                    (r"选项", r"選項"), segmenter="char", spaces=False, script="\u3400-\u4dbf\u4e00-\u9fff", scripts=("Han",)),
    LanguageProfile("ja", "Japanese", (r"(?:正解|答え)",), (r"は",), (r"選択",), (), segmenter="char", spaces=False,
                    script="\u3040-\u30ff\u4e00-\u9fff", scripts=("Han", "Hiragana", "Katakana")),
)}


# The built-in profiles' codes: each a valid tag in IANA's registry (`language_code`'s shortcut)
_BUILTIN_CODES = frozenset(PROFILES)

# ISO 639-3 codes (FLORES-200 and hub configs name languages as `lao_Laoo`, `zsm_Latn`) of the profiles.
ISO639_3 = {"eng": "en", "vie": "vi", "tha": "th", "lao": "lo", "ind": "id", "zsm": "ms", "msa": "ms", "tgl": "tl",
            "fil": "tl", "ceb": "ceb", "jav": "jv", "sun": "su", "khm": "km", "mya": "my", "tam": "ta", "arb": "ar",
            "ara": "ar", "zho": "zh", "cmn": "zh", "jpn": "ja"}


def resolve_code(code: str | None) -> str | None:
    """A profile's code for `lo`, `lao`, `lao_Laoo` (FLORES-200) or `lo-LA` (BCP 47); a language
    without a profile comes back as its own first part (`swh_Latn` -> `swh`)."""
    if not code:
        return None
    head = code.replace("-", "_").split("_")[0].lower()
    if head in PROFILES or head in ISO639_3:
        return head if head in PROFILES else ISO639_3[head]
    head = _registry_preferred(head)  # IANA's preferred value: `bur` -> `my`, `in` -> `id`, `iw` -> `he`
    return head if head in PROFILES else ISO639_3.get(head, head)


@functools.lru_cache(maxsize=1024)
def _registry_preferred(head: str) -> str:
    """The code IANA's registry prefers for a language subtag (through `langcodes`): a deprecated
    code's Preferred-Value (`in` -> `id`, `iw` -> `he`, `jw` -> `jv`) and ISO 639-2/B's bibliographic
    codes as their 639-1 code (`bur` -> `my`, `may` -> `ms`, `chi` -> `zh`); else `head` itself."""
    import langcodes

    try:
        return langcodes.Language.get(head).language or head if langcodes.tag_is_valid(head) else head
    except (ValueError, LookupError):
        return head



# ISO 639 codes that name no language (639-2's special codes); qaa-qtz are private use.
NOT_A_LANGUAGE = MappingProxyType({"und": "undetermined", "mul": "multiple languages", "mis": "uncoded languages",
                                   "zxx": "no linguistic content"})


def language_code(given: str) -> str:
    """The code `resolve_code` gives for a language a user names (`lo`, `lao`, `lao_Laoo`, `lo-LA`),
    checked: a profile's code, or a tag whose language is in IANA's language subtag registry (ISO
    639-1, 639-3; the `langcodes` package's copy), not a special code (`und`, `zxx`...) nor private
    use (`qaa`-`qtz`) unless a profile registers it. Else ValueError: one line with the nearest known codes.
    A built-in profile's own code (`vi`) is returned without `langcodes`, which holds each of them valid
    (tests/test_cpu_per_run.py): a built-in benchmark's datasheet checks its languages this way when
    it is first read, and every run reads it (registry.get_benchmark's contract check), where the
    import was 18 ms of the run's start (docs/performance.md, issue 32)."""
    if given in _BUILTIN_CODES and given in PROFILES:
        return given
    import langcodes

    code = (resolve_code(given.strip()) if given else None) or ""
    tag_ok = bool(code) and langcodes.tag_is_valid(given.strip().replace("_", "-"))
    if tag_ok and code in PROFILES:
        return code
    special = NOT_A_LANGUAGE.get(code) or ("private use" if code and "qaa" <= code <= "qtz" else None)
    if tag_ok and code.isascii() and code.isalpha() and 2 <= len(code) <= 3 and not special:
        return code
    why = (f"is ISO 639's code for {special}, not a language" if special else
           "is not a language tag in the IANA registry (ISO 639-1 or 639-3, e.g. lo, lao, lao_Laoo, lo-LA)")
    raise ValueError(f"{given!r} {why}; {_suggest(given)}")


def language_group(given: str) -> str:
    """The group a language tag's runs and tables are kept under: the profile's code (`resolve_code`),
    then the script where the tag's (given, or implied by its region through IANA's likely subtags:
    `zh-TW` is written in Hant) is not the language's usual one, then the region where it was given
    and is not the usual one for that language and script. So `lo`, `lao_Laoo`, `lo-Laoo` and `lo-LA`
    are `lo`; `zh`, `zh-CN`, `zho_Hans` are `zh` while `zh-TW`, `zh-Hant` and `zho_Hant` are
    `zh-Hant`; `sr-Latn` and `sr-Cyrl` are `sr-Latn` and `sr`; `arb_Latn` (Belebele's romanised
    Arabic) is `ar-Latn`; `pt-BR` is `pt`, `pt-PT` is `pt-PT`. Trailing parts that make no BCP 47
    tag are dropped (Global PIQA's `srp_latn_torl` is `sr-Latn`); a tag `langcodes` cannot read at
    all keeps its language only."""
    code = resolve_code(given.strip()) if given else None
    if not code:
        return ""
    return _group(code, given.strip().replace("_", "-"))


def _group(code: str, tag: str) -> str:
    """A tag that is its profile's code (`vi`, every built-in's language) is its own group, without
    `langcodes` (imported for it, it was 27 ms of a 2,000-request run's start, measured: its tables
    and regexes; docs/performance.md): read by `_tagged_group`, such a tag has the script and the
    region of its own maximized form, so neither is kept (tests/test_cpu_per_run.py holds this for
    every profile and ISO 639-3 code)."""
    return code if tag == code else _tagged_group(code, tag)


@functools.lru_cache(maxsize=1024)
def _tagged_group(code: str, tag: str) -> str:
    import langcodes

    parts = tag.split("-")
    while len(parts) > 1 and not langcodes.tag_is_valid("-".join(parts)):  # srp_latn_torl: a variety's own suffix
        parts.pop()
    tag = "-".join(parts)
    try:
        if not langcodes.tag_is_valid(tag) or not langcodes.tag_is_valid(code):
            return code
        given = langcodes.Language.get(tag)
        usual = langcodes.Language.get(code).maximize()
        written = given.maximize().script
        script = written if written and written != usual.script else None
        region = given.territory
        if region and script:
            usual = langcodes.Language.get(f"{code}-{script}").maximize()
        region = region if region and region != usual.territory else None
        if region and not script and written != langcodes.Language.get(f"{code}-{region}").maximize().script:
            script = written  # zh-Hans-TW: `zh-TW` alone reads as Hant, so the group keeps its script
    except (ValueError, LookupError):
        return code
    return "-".join(x for x in (code, script, region) if x)


def checked_group(given: str) -> str:
    """`language_group` of a tag a user gives (`--language`), after `language_code` checked it names
    a language (ValueError: one line with the nearest known codes)."""
    language_code(given)
    return language_group(given)


def language_label(group: str) -> str:
    """A group's name for tables and headers: the profile's name (else the code) and the group's
    script and region subtags, `Chinese (Hant script)`, `Portuguese (PT)`, `Lao`."""
    code, *rest = group.split("-")
    p = profile(code)
    name = p.name if p else code
    parts = [f"{x} script" if len(x) == 4 else x for x in rest]
    return f"{name} ({', '.join(parts)})" if parts else name


def _suggest(given: str) -> str:
    """The profiles' codes nearest to `given` by spelling, by code or by name, else all of them."""
    import difflib

    names = {**{p.code: p.name for p in PROFILES.values()}, **{k: PROFILES[v].name for k, v in ISO639_3.items()}}
    key = given.strip().replace("-", "_").split("_")[0].lower()
    by_name = [c for c, n in names.items() if n.lower() == key or n.lower().startswith(key) and len(key) > 2]
    near = list(dict.fromkeys(by_name + difflib.get_close_matches(key, list(names), n=4, cutoff=0.5)))[:4]
    if near:
        return "did you mean " + ", ".join(f"{c} ({names[c]})" for c in near) + "?"
    return "languages with a profile: " + ", ".join(f"{p.code} ({p.name})" for p in PROFILES.values())

# Invisible format characters (Unicode category Cf) that text carries inside and between words:
# U+200B ZWSP (Khmer, Burmese and Lao text often carries it between words), U+200C ZWNJ, U+200D ZWJ,
# U+2060 WJ, U+FEFF BOM, U+00AD soft hyphen, the bidirectional marks (LRM, RLM, ALM; Arabic text
# carries them), embeddings and isolates, U+180E and U+2061-2064. Removed before texts are compared
# (an option's text with or without them is the same text) and before numbers are read (`4\u200b2`
# is 42); answer phrases read them as word breaks (BREAK below).
FORMAT_CHARS = ("\u00ad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff")
ZERO_WIDTH = FORMAT_CHARS  # the name older code and task files know (the `remove_zero_width` step)
_NO_FORMAT = {ord(c): None for c in FORMAT_CHARS}


def remove_zero_width(text: str, sep: str = "") -> str:
    """`text` without FORMAT_CHARS (each replaced by `sep`)."""
    if text.isascii():
        return text
    return text.translate(_NO_FORMAT if not sep else {ord(c): sep for c in FORMAT_CHARS})


# The word breaks an answer phrase accepts between its parts (noun, qualifier, copula, choose-verb,
# option word) and between the words inside a part: any run of whitespace (tabs, newlines, U+00A0
# NBSP and U+3000 are whitespace to `regex`'s \s) and of FORMAT_CHARS (ZWSP, ZWNJ, ZWJ, WJ, BOM, soft
# hyphen, bidirectional marks). In a
# script written without spaces (Khmer, Lao, Thai, Burmese...) a break may stand between any two
# characters of a part (`ចម្លើយ\u200bត្រឹមត្រូវ\u200bគឺ C`, `ຄຳຕອບ ທີ່ຖືກຕ້ອງ ແມ່ນ C`): the pattern
# cannot know where the words inside a part end. In a script written with spaces it stands where
# the part has `\s` ("đáp\u200bán", "the\u00a0answer"); a break inside a word is not that word.
INVISIBLE_BREAKS = FORMAT_CHARS
BREAK_CHARS = r"\s" + INVISIBLE_BREAKS  # a character class's body
BREAK = "[" + BREAK_CHARS + "]"

_TOKEN = regex.compile(r"""
    (?P<flags>\(\?[a-zA-Z-]+\))
  | (?P<open>\((?:\?(?:[:=!>|]|<[=!]|P?<\w+>|[a-zA-Z-]+:))?)
  | (?P<close>\))
  | (?P<alt>\|)
  | (?P<quant>(?:[?*+]|\{\d*(?:,\d*)?\})[?+]?)
  | (?P<space>\\s)
  | (?P<atom>\\[pPN]\{[^}]*\}|\\.|\[\^?\]?(?:\\.|[^\]\\])*\]|.)
""", regex.VERBOSE | regex.DOTALL)


@functools.lru_cache(maxsize=512)
def breakable(fragment: str, spaces: bool = True) -> str:
    r"""A phrase fragment (a profile's regex) that accepts word breaks: its `\s` reads any BREAK; in a
    script without spaces (`spaces=False`) optional breaks stand between any two of its atoms too."""
    out: list[str] = []
    prev = None  # the kind of the token before: an atom, a quantifier or a group's end can be followed by a gap
    after_space = False  # the last atom was a break already (`\s+`): no gap after it
    for m in _TOKEN.finditer(fragment):
        kind, text = m.lastgroup, m.group()
        if kind == "space":
            text = BREAK
        elif not spaces and kind in ("atom", "open") and prev in ("atom", "quant", "close") and not after_space:
            out.append(BREAK + "*")
        if kind != "quant":
            after_space = kind == "space"
        out.append(text)
        prev = kind
    return "".join(out)


# -- scripts of text ---------------------------------------------------------------------------

def language_scripts(code: str | None) -> tuple[str, ...]:
    """The Unicode scripts a language is written in, from declared facts: a FLORES or BCP 47 code's
    own script subtag (`khm_Khmr` -> Khmr, `sr-Cyrl`) when `regex` knows it, else the profile's
    `scripts`; () when neither says (then no script check is possible)."""
    if not code:
        return ()
    sub = code.replace("-", "_").split("_")[1:2]
    if sub and len(sub[0]) == 4 and _script_class((sub[0].title(),)) is not None:
        return (sub[0].title(),)
    p = profile(resolve_code(code))
    return p.scripts if p else ()


def script_mismatch(code: str | None) -> str | None:
    """What is wrong with a FLORES-200 or BCP 47 code whose script subtag is not a script of its
    language's profile (`khm_Laoo`: Khmer is written in Khmer script), or None: no subtag, a subtag
    `regex` does not know (Hans, Jpan), a language without a profile, or Latin (`Latn`: romanised text,
    as Belebele's and FLORES-200's `arb_Latn`)."""
    if not code:
        return None
    parts = code.replace("-", "_").split("_")
    sub = parts[1].title() if len(parts) > 1 and len(parts[1]) == 4 else None
    p = profile(resolve_code(code))
    theirs = _script_class((sub,)) if sub else None
    if theirs is None or p is None or not p.scripts or sub == "Latn":
        return None
    samples = [_script_sample(s) for s in p.scripts]
    if any(c is not None and theirs.match(c) for c in samples):
        return None
    named = next((s for s in sorted({s for q in PROFILES.values() for s in q.scripts})
                  if (c := _script_sample(s)) is not None and theirs.match(c)), None)
    subtag = f"{named} ({sub})" if named and named != sub else sub
    return (f"{code}: {parts[0]} is {p.name}, written in {' or '.join(p.scripts)} script, not {subtag}: "
            "the code's script must be its language's")


@functools.lru_cache(maxsize=64)
def _script_sample(name: str) -> str | None:
    """One letter of the script `name` (its first in code point order), to compare scripts by."""
    rx = _script_class((name,))
    if rx is None:
        return None
    m = rx.search(_letters())
    return m.group() if m else None


@functools.lru_cache(maxsize=1)
def _letters() -> str:
    return "".join(chr(i) for i in range(0x41, 0x20000) if unicodedata.category(chr(i)).startswith("L"))


@functools.lru_cache(maxsize=64)
def _script_class(scripts: tuple[str, ...]) -> regex.Pattern[str] | None:
    try:
        return regex.compile("[" + "".join(rf"\p{{Script={s}}}" for s in scripts) + "]")
    except regex.error:
        return None


# letters and marks (a Lao, Khmer or Burmese syllable is mostly marks) are what a text's script is judged by
_NOT_LETTER = regex.compile(r"[^\p{L}\p{M}]+")
_LATIN = regex.compile(r"\p{Script=Latin}")
# A text is in its language's script when at least this share of its letters and marks are in the
# language's scripts: a text is judged by its dominant script, never by one letter (a stray Lao
# letter in a Khmer passage does not make it Lao). For a language not written in Latin, Latin letters
# (names, code, English terms in a Lao question) are set aside when the text has at least
# `min_letters` letters of other scripts. The same share as the script check of replies
# (glotbench.checks.language.SHARE).
SCRIPT_SHARE = 0.5


def foreign_script(text: str, code: str | None, min_letters: int = 4, share: float = SCRIPT_SHARE) -> str | None:
    """The dominant script of a text that is not in its language's scripts (`language_scripts`):
    a text of at least `min_letters` letters and marks, fewer than `share` of them in those scripts
    (Latin set aside as SCRIPT_SHARE says): Khmer rows under a Lao configuration, with or without
    stray Lao letters. None when the text fits, has too few letters, or the language's scripts are
    unknown. The script is named among the scripts the profiles declare (and the language's own),
    else "another script"."""
    scripts = language_scripts(code)
    if share <= 1 and ("Latin" in scripts or "Latn" in scripts) and text.isascii():
        return None  # ASCII letters are all Latin (and no ASCII is a mark): 2,000 rows of a load read so
    own = _script_class(scripts) if scripts else None
    # the letters and marks as one string, counted by regex calls rather than a Python loop over
    # characters: every data row is checked as it is read (34 ms of a 2,000-row load before)
    joined = _NOT_LETTER.sub("", text)
    if own is None or len(joined) < min_letters:
        return None
    if "Latin" not in scripts and "Latn" not in scripts:
        others = _LATIN.sub("", joined)
        if len(others) >= min_letters:
            joined = others
    if len(own.findall(joined)) >= share * len(joined):
        return None
    known = sorted({s for p in PROFILES.values() for s in p.scripts} - set(scripts))
    counts = {s: len(rx.findall(joined)) for s in known if (rx := _script_class((s,))) is not None}
    best = max(counts, key=lambda s: counts[s], default=None)
    return best if best is not None and counts[best] else "another script"


def register_language(p: LanguageProfile, *, replace: bool = False) -> LanguageProfile:
    """Add a language profile at run time (a plugin's language). Extraction, numeric matching,
    segmentation, BLEU, chrF++, token F1, dedupe and the contamination check all honour it from then
    on. A different profile under a code already known needs `replace=True`."""
    if not isinstance(p, LanguageProfile):
        raise TypeError(f"register_language takes a LanguageProfile, got {type(p).__name__}")
    known = PROFILES.get(p.code)
    if known is not None and known != p and not replace:
        raise ValueError(f"language {p.code!r} already has a profile; pass replace=True to change it")
    PROFILES[p.code] = p
    profiles_changed()
    return p


_GENERATION = 0  # changes to PROFILES so far: what is derived from every profile is made again after one


def profiles_changed() -> None:
    """Note a change to PROFILES (`register_language` notes its own; a caller that edits the dict
    itself, a test restoring it, says so here)."""
    global _GENERATION
    _GENERATION += 1


def profiles_generation() -> int:
    """How many changes PROFILES has seen: a value derived from every profile (the scripts the
    language check names) is remade when it changes."""
    return _GENERATION


def profile(code: str | None) -> LanguageProfile | None:
    """The language's profile, or None for a language glotbench has no profile for."""
    return PROFILES.get(code or "")


def segmenter_of(code: str | None) -> str:
    p = profile(code)
    return p.segmenter if p else "whitespace"


def spaceless_pattern() -> regex.Pattern[str]:
    """Characters of the scripts written without spaces (for the contamination check's n-gram choice)."""
    return _spaceless(tuple(PROFILES.values()))


@functools.lru_cache(maxsize=8)
def _spaceless(profiles: tuple[LanguageProfile, ...]) -> regex.Pattern[str]:
    return regex.compile("[" + "".join(p.script for p in profiles if not p.spaces) + "]")


def written_without_spaces(text: str) -> bool:
    """True when at least half of the text's letters belong to a script written without spaces (any
    profile with `spaces=False`): such text is compared by character n-grams, other text by words.
    The one rule of the near-duplicate search (build/dedupe.py) and the contamination check."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    pattern = spaceless_pattern()
    return sum(bool(pattern.match(c)) for c in letters) * 2 >= len(letters)


# -- digits -----------------------------------------------------------------------------------

_SEPARATORS = {0x066B: ".", 0x066C: ",", 0x2212: "-"}  # Arabic decimal and thousands separators, minus


def to_ascii_digits(text: str) -> str:
    """Every Unicode decimal digit (Nd: Thai, Lao, Khmer, Arabic-Indic, Devanagari, fullwidth...)
    as its ASCII digit; the Arabic decimal (٫) and thousands (٬) separators and U+2212 minus too."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() and not c.isascii() else _SEPARATORS.get(ord(c), c)
                   for c in text)


# -- answer phrases -----------------------------------------------------------------------------

_LETTER_CHARS = "".join(LETTERS)


def _alt(parts: Iterable[str]) -> str:
    kept = [p for p in parts if p]
    return "(?:" + "|".join(kept) + ")" if kept else "(?!)"


@dataclass(frozen=True)
class PhrasePatterns:
    """`candidates` finds option letters with no letter, mark or digit after them; `before` (a
    reverse pattern, searched with endpos just after a candidate) finds the answer phrase that ends
    right before it. Anchoring on the few candidate letters instead of trying every phrase at every
    position keeps long replies cheap."""

    candidates: regex.Pattern[str]
    before: regex.Pattern[str]
    window: int = 160  # characters before a letter where its phrase may start


def answer_phrase_pattern(codes: tuple[str, ...] | None = None) -> PhrasePatterns:
    """The answer-phrase patterns over `codes` (default: every profile)."""
    return _phrase_pattern(tuple(sorted(PROFILES)) if codes is None else tuple(codes),
                           tuple(PROFILES.values()))


@functools.lru_cache(maxsize=8)
def _phrase_pattern(codes: tuple[str, ...], _profiles: tuple[LanguageProfile, ...]) -> PhrasePatterns:
    """A phrase followed by an option letter, over the given languages. A match is strong when group
    `choose` (a choose-verb) or `sep` (a copula or separator after the noun) is set, weak otherwise
    (the noun alone); then `letter` (A-E or a native label)."""
    profs = [PROFILES[c] for c in codes if c in PROFILES]
    spaced = [breakable(n) for p in profs if p.spaces for n in p.answer_nouns]
    spaceless = [breakable(n, False) for p in profs if not p.spaces for n in p.answer_nouns]
    choose = [r"(?<![\p{L}\p{M}])" + _alt(_parts(p.choose, p)) if p.spaces else _alt(_parts(p.choose, p))
              for p in profs if p.choose]
    copulas = [c for p in profs for c in _parts(p.copulas, p)]
    opts = [o for p in profs for o in _parts(p.option_words, p)]
    natives = "".join(k for p in profs for k in p.native_letters)
    noun = _alt([r"(?<![\p{L}\p{M}])" + _alt(spaced) if spaced else "", _alt(spaceless) if spaceless else ""])
    gap = "[" + BREAK_CHARS + "*_]*"  # breaks and markdown emphasis
    sep = (gap + "(?:" + (_alt(copulas) + gap + "[:：=]?|" if copulas else "") + "[:：=]|" + BREAK
           + "[-–—](?=" + BREAK + "))")
    lead = "[" + BREAK_CHARS + r"*_`'\"“”‘’«(\[（【]*"
    option = r"(?:" + _alt(opts) + BREAK + "*)?" if opts else ""
    letter = "[" + _LETTER_CHARS + natives + "]"
    # Copulas are pooled across languages ("answer là B" reads B too): harmless, one alternation.
    head = r"(?:(?P<choose>" + _alt(choose) + r")|" + noun + r"(?P<sep>" + sep + r")?)"
    return PhrasePatterns(
        # a letter that a word goes on after is no answer: a soft hyphen, or a Latin letter after
        # invisible breaks ("A\u200bpple"); in scripts without spaces a break after a native label may
        # end its word, so only the letter's own script continuing it counts there
        candidates=regex.compile(r"(?-i:" + letter + r")(?![\p{L}\p{M}\p{N}]|\u00ad|(?<=[A-Za-z])["
                                 + INVISIBLE_BREAKS + r"]+\p{Latin})"),
        before=regex.compile(r"(?r)" + head + lead + option + lead + r"(?-i:(?P<letter>" + letter + r"))\Z",
                             regex.IGNORECASE))


def answer_is_pattern(code: str | None) -> regex.Pattern[str] | None:
    """The language's strong "the answer is" phrase alone (no letter after it), for span answers."""
    p = profile(code)
    return None if p is None or not p.answer_nouns else _answer_is(p)


@functools.lru_cache(maxsize=64)
def _answer_is(p: LanguageProfile) -> regex.Pattern[str]:
    start = r"(?<![\p{L}\p{M}])" if p.spaces else ""
    noun = start + _alt(_parts(p.answer_nouns, p))
    gap = "[" + BREAK_CHARS + "*_]*"
    pat = noun + gap + "(?:" + (_alt(_parts(p.copulas, p)) + gap + "[:：]?|" if p.copulas else "") + "[:：])"
    return regex.compile(pat, regex.IGNORECASE)


def _parts(fragments: tuple[str, ...], p: LanguageProfile) -> list[str]:
    return [breakable(f, p.spaces) for f in fragments]


def native_letter(ch: str) -> str:
    """A-E for an option label in any profile's native form (ข -> B), else `ch` unchanged."""
    for p in PROFILES.values():
        if ch in p.native_letters:
            return p.native_letters[ch]
    return ch

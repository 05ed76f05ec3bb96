"""Named answer extractors shared by benchmarks. Each returns an `Extraction`: the answer, or None
with the reason it failed, so extraction failures are counted apart from wrong answers."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from decimal import Decimal  # imported where numbers are read (a cold start never needs it)

_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_BLOCK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


# The version of the shared reading rules (answer phrases and their word breaks, format characters,
# option matching, numbers): every signature built on them names it (a task's extraction steps,
# laobench-mcq's extract, DeepSEA's rules, numeric match), so a changed rule changes the signature of
# every task, library and user files alike. Bump it whenever a rule reads some reply differently.
#   4: answer phrases read through word breaks (whitespace, ZWSP, ZWNJ, WJ, NBSP, BOM)
#   5: format characters (ZWJ, soft hyphen, bidi marks too) ignored in options and inside numbers
#   6: Khmer (ក-ង) and Burmese (က-င) native option labels read as A-E
READING_VERSION = 6


@dataclass(frozen=True, slots=True)
class Extraction:
    answer: Any  # the answer may be any type: a letter, a number, a verdict object
    failure: str | None = None  # "think_unclosed", "format", ...
    detail: str | None = None  # why there is no answer (a parser's message): the error of a retried reply


def strip_think(text: str) -> tuple[str, bool]:
    """Remove `<think>...</think>` blocks. Returns (text, ok); ok is False when a think block is
    left unclosed (the model never reached its answer), which counts as no answer."""
    if "<" not in text:  # no tag of either kind: the text as it is (each reply is read twice: 2 x 0.6 µs)
        return text.strip(), True
    stripped = _THINK_BLOCK.sub("", text)
    if _THINK_OPEN.search(stripped):
        return "", False
    # A closing tag with no opening one: some servers drop the opening tag from the reply.
    close = stripped.lower().rfind("</think>")
    if close != -1:
        stripped = stripped[close + len("</think>"):]
    return stripped.strip(), True


def free_text(text: str) -> Extraction:
    """A free-form answer: the reply without its think blocks; empty is a failure."""
    body, ok = strip_think(text)
    if not ok:
        return Extraction(None, "think_unclosed")
    return Extraction(body) if body.strip() else Extraction(None, "empty")


def strict_json_object(body: str, object_pairs_hook=None) -> object:
    """json.loads of `body`, allowing one surrounding code fence (```json ... ```) and nothing else.
    Raises ValueError when it is not JSON."""
    m = re.match(r"^```(?:json|JSON)?\s*(.*?)\s*```$", body.strip(), re.DOTALL)
    return json.loads(m.group(1) if m else body, object_pairs_hook=object_pairs_hook)


# One decoder and one compiled pattern for every reply, as json.loads keeps one decoder: a decoder
# built and the pattern looked up per reply were 1.7 of json_field's 5.7 µs (timeit, issue 32)
_DECODER = json.JSONDecoder()
_BRACE = re.compile(r"\{")


def _json_objects(text: str):
    """Yield every decodable JSON object that starts at a '{' in text, in order."""
    for m in _BRACE.finditer(text):
        try:
            obj, _ = _DECODER.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield obj


def json_object(text: str, field: str) -> tuple[dict | None, str | None]:
    """(the JSON object of a reply whose `field` is a string, None) or (None, failure kind). Code
    fences and prose around the object are tolerated; the last such object wins (a model's final
    answer), looking inside code fences first, then the whole reply."""
    body, ok = strip_think(text)
    if not ok:
        return None, "think_unclosed"
    candidates = [m.group(1) for m in _FENCE.finditer(body)] + [body]
    for chunk in candidates:
        found = None
        for obj in _json_objects(chunk):
            if isinstance(obj.get(field), str):
                found = obj
        if found is not None:
            return found, None
    return None, "format"


def json_field(text: str, field: str) -> Extraction:
    """The string value of `field` in the JSON object of a reply (`json_object`)."""
    obj, failure = json_object(text, field)
    return Extraction(None, failure) if obj is None else Extraction(obj[field])


# -- tags --------------------------------------------------------------------------------------

def extract_tag(text: str, tag: str) -> tuple[str | None, str]:
    """Content of the last <tag>...</tag>: ("content", "closed"); an unclosed last tag gives
    ("", "unclosed"); no tag at all (None, "missing")."""
    opens = [m.end() for m in re.finditer(f"<{re.escape(tag)}>", text)]
    if not opens:
        return None, "missing"
    rest = text[opens[-1]:]
    close = rest.find(f"</{tag}>")
    if close == -1:
        return "", "unclosed"
    return rest[:close].strip(), "closed"


# -- multiple-choice letters -------------------------------------------------------------------
# One extractor for option letters. A letter is an option letter only when no letter, mark or
# digit of any script stands next to it ("Câu" holds no C, "Dựa" no D). Rules (named):
#   answer_phrase (default): the letter after the last *strong* answer phrase of any language
#       profile (glotbench.languages: noun + copula or colon, or a choose-verb); else after the last
#       weak one (the bare noun); else a reply that is only a letter; else, given the options, the
#       one option whose text the reply names. Letters mentioned after the answer never override it.
#   first_standalone (DeepSEA's IndoMMLU release rule): inside the closed answer tag if there is
#       one, else the whole reply: the first standalone upper-case A-E; with case="upper_first",
#       then the first standalone lower-case a-e; case="upper_only" stops after the upper case.

LETTER_RULES = ("answer_phrase", "first_standalone")
_EDGE = r"[\p{L}\p{M}\p{N}_]"


@functools.lru_cache(maxsize=4)
def _standalone(letters: str) -> Any:
    import regex

    return regex.compile(rf"(?<!{_EDGE})([{letters}])(?!{_EDGE})")


@functools.lru_cache(maxsize=8)
def _bare_pattern(natives: str) -> Any:
    import regex

    from glotbench.languages import BREAK_CHARS

    return regex.compile(rf"[{BREAK_CHARS}*_`'\"“”(\[（【]*([A-E{natives}])[{BREAK_CHARS}*_`'\"“”)\]）】.:：]*")


def _bare_letter(body: str) -> str | None:
    from glotbench.languages import PROFILES, native_letter

    m = _bare_pattern("".join(k for p in PROFILES.values() for k in p.native_letters)).fullmatch(body)
    return native_letter(m.group(1)) if m else None


def normalise_option(text: str) -> str:
    """Lower case, format characters (ZWSP, ZWNJ, ZWJ, WJ, BOM, soft hyphen, bidirectional marks:
    glotbench.languages.remove_zero_width) removed, spaces collapsed: how option texts are matched."""
    from glotbench.languages import remove_zero_width

    return " ".join(remove_zero_width(text).lower().split()).strip(" .。")


def _names(reply: str, option: str) -> bool:
    """Whether the reply names the option's text: as whole words in scripts written with spaces
    ("12" does not name the option "2"), as a substring in scripts without them (Lao, Thai)."""
    import regex

    from glotbench.languages import spaceless_pattern

    if not option:
        return False
    if spaceless_pattern().search(option):
        return option in reply
    return regex.search(rf"(?<!{_EDGE}){regex.escape(option)}(?!{_EDGE})", reply) is not None


def mc_letter(text: str, options: dict[str, str] | None = None, *, rule: str = "answer_phrase",
              case: str = "upper_first") -> Extraction:
    """The chosen letter A-E of a multiple-choice reply, by `rule` (see above). Failures
    (`no_letter`, `think_unclosed`) are counted apart from wrong answers."""
    from glotbench.languages import answer_phrase_pattern, native_letter
    from glotbench.text.segment import repair_lao_am

    if rule not in LETTER_RULES:
        raise ValueError(f"unknown letter rule {rule!r}; one of {', '.join(LETTER_RULES)}")
    body, ok = strip_think(text)
    if not ok:
        return Extraction(None, "think_unclosed")
    if rule == "first_standalone":
        content, state = extract_tag(body, "answer")
        scope = content if state == "closed" and content is not None else body
        m = _standalone("A-E").search(scope)
        if m is None and case == "upper_first":
            m = _standalone("a-e").search(scope)
        return Extraction(m.group(1).upper()) if m else Extraction(None, "no_letter")
    body = repair_lao_am(body)
    strong = weak = None
    pats = answer_phrase_pattern()
    for c in pats.candidates.finditer(body):
        m = pats.before.search(body, max(0, c.start() - pats.window), c.end())
        if m is None:
            continue
        if m.group("choose") is not None or m.group("sep") is not None:
            strong = m.group("letter")
        else:
            weak = m.group("letter")
    found = strong or weak or _bare_letter(body)
    if found is not None:
        return Extraction(native_letter(found))
    if options:
        named = named_option(body, options)
        if named is not None:
            return Extraction(named)
    return Extraction(None, "no_letter")


# -- numbers ----------------------------------------------------------------------------------
# The one number extractor: the numeric match (metrics/numeric.py) and DeepSEA's MGSM read numbers
# here, each naming its comma rule.

_GROUPED_NUMBER = re.compile(r"-?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|-?[0-9]+(?:\.[0-9]+)?")
_PLAIN_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_COMMA_BETWEEN_DIGITS = re.compile(r"(?<=[0-9]),(?=[0-9]{3}(?![0-9]))")
COMMA_RULES = ("grouped", "between_digits")


def last_number(text: str, *, marker: str | None = None, native_digits: bool = True,
                commas: str = "grouped") -> "Decimal | None":
    """The last number in `text` as an exact Decimal, or None.

    Format characters (languages.FORMAT_CHARS: ZWSP, ZWNJ, ZWJ, WJ, BOM, soft hyphen, bidirectional
    marks) are removed first, so one inside a number does not split it (`๔\u200b๒` is 42).
    `native_digits`: every Unicode decimal digit (Thai, Lao, Khmer, Arabic-Indic...), the Arabic
    decimal and thousands separators and U+2212 minus are read as ASCII first
    (languages.to_ascii_digits); without it only ASCII digits are numbers. `marker`: only the text
    after its last occurrence, word breaks read as in answer phrases (the whole text when it does
    not occur). A number is an optional '-',
    digits and an optional decimal part; thousands commas by `commas`: "grouped" (numeric match) — a
    number written in groups of three (1,234,567) is read whole; "between_digits" (DeepSEA's MGSM
    rule) — every comma between a digit and exactly three digits is deleted first."""
    from decimal import Decimal

    from glotbench.languages import remove_zero_width, to_ascii_digits

    if commas not in COMMA_RULES:
        raise ValueError(f"commas must be one of {', '.join(COMMA_RULES)}, got {commas!r}")
    text = remove_zero_width(text)  # a format character inside a number is no break: `4\u200b2` is 42
    if native_digits:
        text = to_ascii_digits(text)
    if marker:
        last = None
        for last in _marker_pattern(marker).finditer(text, overlapped=True):  # noqa: B007 - the last match
            pass
        if last is not None:
            text = text[last.end():]
    if commas == "between_digits":
        found = _PLAIN_NUMBER.findall(_COMMA_BETWEEN_DIGITS.sub("", text))
    else:
        found = _GROUPED_NUMBER.findall(text)
    return Decimal(found[-1].replace(",", "")) if found else None


@functools.lru_cache(maxsize=64)
def _marker_pattern(marker: str) -> Any:
    """The marker as written, read through word breaks (glotbench.languages.breakable): its spaces
    match any run of breaks, and in a script written without spaces a break may stand between any
    two of its characters ("ຄຳຕອບ\u200b:" is the marker "ຄຳຕອບ:")."""
    import regex

    from glotbench.languages import breakable, written_without_spaces

    body = r"\s+".join(regex.escape(w) for w in marker.split())
    return regex.compile(breakable(body, not written_without_spaces(marker)) if body else regex.escape(marker))


def parse_number(value: "str | int | float") -> "Decimal":
    """A gold number (a JSON number or a string) as an exact Decimal: digits of any script,
    thousands commas, format characters and surrounding spaces allowed. Raises
    decimal.InvalidOperation otherwise."""
    from decimal import Decimal

    from glotbench.languages import remove_zero_width, to_ascii_digits

    return Decimal(remove_zero_width(to_ascii_digits(str(value))).replace(",", "").strip())


def named_option(text: str, options: Mapping[str, str], *, longest: bool = False) -> str | None:
    """The key of the one option whose text the reply names (case and spacing ignored; whole words
    in scripts written with spaces, a substring in scripts without); None when none or several do.
    `longest`: an option named only inside a longer named option's text is not named by it (the
    reply แมวดำ names แมวดำ, not also แมว; `New York` names it, not also `York`); options of the
    same text stay ambiguous."""
    reply = normalise_option(text)
    norm = {k: normalise_option(v) for k, v in options.items()}
    hits = [k for k in norm if _names(reply, norm[k])]
    if longest and len(hits) > 1 and len({norm[k] for k in hits}) == len(hits):
        masked, kept = reply, []
        for k in sorted(hits, key=lambda k: -len(norm[k])):
            if _names(masked, norm[k]):
                kept.append(k)
                masked = masked.replace(norm[k], "\x00" * len(norm[k]))
        hits = kept
    return hits[0] if len(hits) == 1 else None

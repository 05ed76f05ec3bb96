"""Named answer extractors shared by benchmarks. Each returns an `Extraction`: the answer, or None
with the reason it failed, so extraction failures are counted apart from wrong answers."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_BLOCK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Extraction:
    answer: str | None
    failure: str | None = None  # "think_unclosed", "format", ...


def strip_think(text: str) -> tuple[str, bool]:
    """Remove `<think>...</think>` blocks. Returns (text, ok); ok is False when a think block is
    left unclosed (the model never reached its answer), which counts as no answer."""
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


def _json_objects(text: str):
    """Yield every decodable JSON object that starts at a '{' in text, in order."""
    decoder = json.JSONDecoder()
    for m in re.finditer(r"\{", text):
        try:
            obj, _ = decoder.raw_decode(text, m.start())
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


# -- multiple-choice letters -------------------------------------------------------------------

# Answer phrases per language (matched case-insensitively); the letter after them is case-sensitive.
ANSWER_PHRASES: dict[str, tuple[str, ...]] = {
    "en": (r"(?:the\s+)?(?:correct\s+|final\s+)?answer\s*(?:is|:)", r"answer\s*[-=]"),
    "vi": (r"đáp\s+án(?:\s+đúng)?(?:\s+là)?\s*:?", r"câu\s+trả\s+lời(?:\s+đúng)?(?:\s+là)?\s*:?", r"chọn\s+(?:đáp\s+án\s+)?"),
    "th": (r"คำตอบ(?:ที่ถูกต้อง|ที่ถูก)?(?:\s*คือ)?\s*:?", r"ตอบ\s*:?"),
    "lo": (r"ຄຳຕອບ(?:ທີ່ຖືກຕ້ອງ|ທີ່ຖືກ)?(?:\s*ແມ່ນ|\s*ຄື)?\s*:?", r"ຕອບ\s*:?"),
    "id": (r"jawaban(?:nya)?(?:\s+yang\s+(?:benar|tepat))?(?:\s+adalah)?\s*:?", r"pilihan(?:nya)?\s+(?:adalah\s+)?"),
    "ar": (r"(?:الإجابة|الاجابة|الجواب)(?:\s+الصحيحة)?(?:\s+هي)?\s*:?",),
    "zh": (r"答案(?:是|为|為)?\s*[:：]?", r"(?:选择|選擇|选|選)\s*"),
}
_LETTER_AFTER = r"[\s*_`'\"“”‘’(\[（【]*([A-E])(?![A-Za-z])"
_PHRASE_RE = re.compile("|".join(f"(?i:{p})" for ps in ANSWER_PHRASES.values() for p in ps))
_BARE_LETTER = re.compile(r"^[\s*_`'\"(\[（【]*([A-E])[\s*_`'\")\]）】.:]*$")


def _normalise_option(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .。")


def mc_letter(text: str, options: dict[str, str] | None = None) -> Extraction:
    """The chosen letter A-E of a multiple-choice reply.

    After think-stripping (and Lao AM repair): the last letter that follows an answer phrase in any
    of the languages in ANSWER_PHRASES; else a reply that is only a letter ("B", "(B)", "**B.**");
    else, when `options` maps letters to option texts, the one option whose text appears in the reply.
    Failures (`no_letter`, `think_unclosed`) are counted apart from wrong answers."""
    from glotbench.text.segment import repair_lao_am

    body, ok = strip_think(text)
    if not ok:
        return Extraction(None, "think_unclosed")
    body = repair_lao_am(body)
    last: str | None = None
    for m in _PHRASE_RE.finditer(body):
        lm = re.match(_LETTER_AFTER, body[m.end():])
        if lm:
            last = lm.group(1)
    if last is not None:
        return Extraction(last)
    bare = _BARE_LETTER.match(body)
    if bare:
        return Extraction(bare.group(1))
    if options:
        reply = _normalise_option(body)
        hits = [k for k, v in options.items() if _normalise_option(v) and _normalise_option(v) in reply]
        if len(hits) == 1:
            return Extraction(hits[0])
    return Extraction(None, "no_letter")

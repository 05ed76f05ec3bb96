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


def json_field(text: str, field: str) -> Extraction:
    """The string value of `field` in the JSON object of a reply. Tolerates code fences and prose
    around the object; the last object holding the field wins (a model's final answer)."""
    body, ok = strip_think(text)
    if not ok:
        return Extraction(None, "think_unclosed")
    candidates = [m.group(1) for m in _FENCE.finditer(body)] + [body]
    found: str | None = None
    for chunk in candidates:
        for obj in _json_objects(chunk):
            value = obj.get(field)
            if isinstance(value, str):
                found = value
        if found is not None:
            return Extraction(found)
    return Extraction(None, "format")

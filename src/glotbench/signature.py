"""THE signature object: every setting that changes a number, as ordered parts (sacrebleu's
`Signature` is the model: `sacrebleu/metrics/base.py`).

A signature is written as `key:value` parts joined by `|`, the first naming what was measured
(`glotbench:laobench-mcq|v:1.2|prompt:3f2a…|data:9c1e…|thinking:default|subset:limit5,5of40,ab12…`).
This module is the one place that joins parts or splits them: `Signature.build` from parts,
`format()` to the text results.json and the store keep, `Signature.parse` of such a text (every
stored run's signature reads back and formats to the same bytes), and what readers ask of one
(`get`, `without`, `difference`). A part may be a bare word (`token_f1`, `unscored`), and a part
nested from another tool's signature keeps its own `key:value` form (sacrebleu's
`sacrebleu:nrefs:1|case:mixed|…` is parts `sacrebleu`=`nrefs:1`, `case`=`mixed`, …).

It imports nothing of glotbench: metrics, benchmarks, the run directory and every view use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Mapping, Union

__all__ = ["Part", "Signature"]

SEP = "|"  # between parts
KV = ":"  # between a part's key and its value
NESTED = ";"  # between the parts of a signature kept as one part's value (`nested()`)

Part = tuple[str, Union[str, None]]  # (key, value); value None: a bare word
PartLike = Union[tuple[str, object], str, "Signature"]  # a value is written as f"{value}"


ESCAPES = {SEP: "%7C", KV: "%3A"}  # what a built part's key or value writes for the separators


def _check(key: str, value: str | None) -> Part:
    """A part that reads back as built: `|` in a key or value, and `:` in a key, written as their URL
    escapes (a user's regex `(yes|no)` in a task's `extract:` part); an empty key is an error."""
    key = str(key).replace(SEP, ESCAPES[SEP]).replace(KV, ESCAPES[KV])
    if not key:
        raise ValueError("a signature part's key must be non-empty text")
    return key, None if value is None else str(value).replace(SEP, ESCAPES[SEP])


@dataclass(frozen=True, slots=True)
class Signature:
    """Ordered parts `(key, value)`; value None is a bare word. Frozen; equal when the parts are."""

    parts: tuple[Part, ...] = ()

    # -- building -------------------------------------------------------------------------------

    @classmethod
    def build(cls, *parts: PartLike | Mapping[str, object] | None, **named: object) -> "Signature":
        """A signature from parts in order: `(key, value)` pairs (value None: a bare word, as `parse`
        gives it), mappings (their items in order), other signatures (their parts), bare words, then
        `named` keywords; a None part is skipped. A mapping's or keyword's value is written as
        `f"{value}"`, None included (`key:None`), as the f-strings it replaced wrote it; the
        separators inside a key or value are escaped (`%7C`, `%3A`), so the parts read back."""
        out: list[Part] = []
        for p in parts:
            if p is None:
                continue
            if isinstance(p, Signature):
                out += p.parts
            elif isinstance(p, str):
                out.append(_check(p, None))
            elif isinstance(p, Mapping):
                out += [_check(k, f"{v}") for k, v in p.items()]
            else:
                k, v = p
                out.append(_check(k, None if v is None else f"{v}"))
        out += [_check(k, f"{v}") for k, v in named.items()]
        return cls(tuple(out))

    @classmethod
    def parse(cls, text: str | "Signature") -> "Signature":
        """The parts of a formatted signature: `Signature.parse(s).format() == s` for every string."""
        if isinstance(text, Signature):
            return text
        if not text:
            return cls(())
        parts: list[Part] = []
        for p in str(text).split(SEP):
            k, sep, v = p.partition(KV)
            parts.append((k, v if sep else None))
        return cls(tuple(parts))

    def plus(self, *parts: PartLike | Mapping[str, object] | None, **named: object) -> "Signature":
        """This signature followed by more parts (as `build` reads them)."""
        return Signature(self.parts + Signature.build(*parts, **named).parts)

    def without(self, *keys: str) -> "Signature":
        """The parts whose key is none of `keys` (`without("subset")`: the scorer's signature of a
        run on fewer items)."""
        return Signature(tuple(p for p in self.parts if p[0] not in keys))

    # -- writing --------------------------------------------------------------------------------

    def format(self, sep: str = SEP) -> str:
        """The text results.json and the store keep (`key:value|key:value`)."""
        return sep.join(k if v is None else f"{k}{KV}{v}" for k, v in self.parts)

    def under(self, key: str) -> "Signature":
        """This signature named by `key`: its first part becomes `key:FIRST` (`token_f1|norm:…`
        under `glotbench` is `glotbench:token_f1|norm:…`)."""
        return Signature.parse(f"{_check(key, None)[0]}{KV}{self.format()}")

    def nested(self) -> str:
        """This signature as one part's value: its parts joined by `;` (a scorer's metric
        signature inside a task's `scorer:` part)."""
        return self.format(NESTED)

    def __str__(self) -> str:
        return self.format()

    # -- reading --------------------------------------------------------------------------------

    @property
    def head(self) -> str:
        """The first part as written (`glotbench:laobench-mcq`): what was measured."""
        return Signature(self.parts[:1]).format()

    def keys(self) -> list[str]:
        return [k for k, _ in self.parts]

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of the first part named `key` (a bare word: its key is its text, value None)."""
        return next((v for k, v in self.parts if k == key), default)

    def __contains__(self, key: object) -> bool:
        return any(k == key for k, _ in self.parts)

    def __iter__(self) -> Iterator[Part]:
        return iter(self.parts)

    def __len__(self) -> int:
        return len(self.parts)

    def texts(self) -> frozenset[str]:
        """Each part as written (`data:9c1e…`), as a set: what tells two signatures apart."""
        return frozenset(Signature((p,)).format() for p in self.parts)

    def fields(self) -> dict[str, str]:
        """The parts by key (a bare word's value ""), the first one as `benchmark` (its whole
        text); of two parts with one key, the later one's value. What `difference` compares."""
        out: dict[str, str] = {}
        for i, (k, v) in enumerate(self.parts):
            if i == 0:
                out["benchmark"] = self.head
            else:
                out[k] = "" if v is None else v
        return out

    def difference(self, other: "Signature | str") -> list[tuple[str, str | None, str | None]]:
        """`(key, this value, other value)` for every key whose value differs (None: absent), in
        the order the keys first appear."""
        a, b = self.fields(), Signature.parse(other).fields()
        return [(k, a.get(k), b.get(k)) for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]


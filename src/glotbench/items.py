"""Items: the public part a model may see, and the gold it must never see.

`PublicItem` has no gold attribute at all, so renderers and models cannot leak it by accident:
isolation holds by construction, not by convention.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping


def _freeze(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


_SHARED_TYPES = (str, int, bool, type(None))  # immutable, and equal only to themselves within a type


def _freeze_meta(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    """An item's meta, frozen; one read-only mapping shared by the items whose meta is the same
    (language, category, split: a data set has few), where every value is a string, an integer, a
    boolean or None: the items of a 10,000-row file then hold one meta, not 10,000 (about 220 bytes
    an item). A value of any other kind (a float, a list) gets the item its own copy, as before."""
    try:
        key = tuple((k, type(v), v) for k, v in mapping.items())
    except AttributeError:  # not a mapping: refused below as before
        return _freeze(mapping)
    if all(type(v) in _SHARED_TYPES and type(k) is str for k, _, v in key):
        return _shared_meta(key)
    return _freeze(mapping)


@functools.lru_cache(maxsize=1024)  # bounded: a data set with a meta per item keeps only the last ones
def _shared_meta(key: tuple[tuple[str, type, Any], ...]) -> Mapping[str, Any]:
    return MappingProxyType({k: v for k, _, v in key})


@dataclass(frozen=True, slots=True)
class PublicItem:
    """What a prompt renderer and a model receive: id, public fields and metadata, no gold."""

    id: str
    fields: Mapping[str, Any]
    meta: Mapping[str, Any] = field(default_factory=lambda: _freeze({}))

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]


@dataclass(frozen=True, slots=True)
class Item:
    """One benchmark example: `public` fields, `gold` answers/references, and `meta`
    (language, category, split...)."""

    id: str
    public: Mapping[str, Any]
    gold: Mapping[str, Any]
    meta: Mapping[str, Any] = field(default_factory=lambda: _freeze({}))

    @classmethod
    def create(
        cls,
        id: str,
        public: Mapping[str, Any],
        gold: Mapping[str, Any],
        meta: Mapping[str, Any] | None = None,
    ) -> "Item":
        return cls(str(id), _freeze(public), _freeze(gold), _freeze_meta(meta or {}))

    def to_public(self) -> PublicItem:
        return PublicItem(self.id, self.public, self.meta)

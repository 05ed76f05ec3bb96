"""Items: the public part a model may see, and the gold it must never see.

`PublicItem` has no gold attribute at all, so renderers and models cannot leak it by accident:
isolation holds by construction, not by convention.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping


def _freeze(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


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
        return cls(str(id), _freeze(public), _freeze(gold), _freeze(meta or {}))

    def to_public(self) -> PublicItem:
        return PublicItem(self.id, self.public, self.meta)

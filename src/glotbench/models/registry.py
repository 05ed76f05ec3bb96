"""Kept for old imports: the registry lives in `glotbench.registry` (its tables in `glotbench.plugins`)."""

from __future__ import annotations

from typing import Any

from glotbench.plugins import load_model, models, register_model

__all__ = ["BACKENDS", "load_model", "register_model"]


def __getattr__(name: str) -> Any:
    if name == "BACKENDS":
        return {n: (None, d) for n, d in models().items()}
    raise AttributeError(name)

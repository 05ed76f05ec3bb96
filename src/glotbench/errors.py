"""User-facing errors: each one is printed as a single readable line by the CLI, never a traceback."""

from __future__ import annotations


class GlotbenchError(Exception):
    """An error caused by the user's input or environment (bad spec, bad file, unreachable endpoint)."""


class DataError(GlotbenchError):
    """A data file is malformed; the message names the file, the line and the field."""


class SpecError(GlotbenchError):
    """An unknown benchmark name or model spec string."""

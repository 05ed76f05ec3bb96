"""User-facing errors: each one is printed as a single readable line by the CLI, never a traceback."""

from __future__ import annotations


class GlotbenchError(Exception):
    """An error caused by the user's input or environment (bad spec, bad file, unreachable endpoint)."""

    exit_code = 2


class InvalidRunError(GlotbenchError):
    """A run too many of whose model calls failed to give any number at all (rundir/validity.py):
    the command exits 3, as an invalid run does, and the same command finishes it later."""

    exit_code = 3


class DataError(GlotbenchError):
    """A data file is malformed; the message names the file, the line and the field."""


class SpecError(GlotbenchError):
    """An unknown benchmark name or model spec string."""

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


def user_module_error(module: str, e: BaseException) -> str:
    """One line for a user's module (a `python:MODULE:FUNCTION` model, a `MODULE:CLASS` benchmark)
    that was found but failed while importing: a SyntaxError, an ImportError inside it, any exception
    at its top level. It names the module as the user's, the error and FILE:LINE (the innermost frame
    outside the import machinery), so it is never taken for a bug of glotbench's."""
    import os
    import traceback

    path: str | None
    line: int | None
    if isinstance(e, SyntaxError) and e.filename:
        path, line = e.filename, e.lineno
    else:
        frames = [f for f in traceback.extract_tb(e.__traceback__)
                  if not f.filename.startswith("<") and "importlib" not in f.filename]
        path, line = (frames[-1].filename, frames[-1].lineno) if frames else (None, None)
    where = ""
    if path:
        rel = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
        where = f" at {rel}:{line}"
    what = " ".join(f"{type(e).__name__}: {e.msg if isinstance(e, SyntaxError) else e}".split())[:200]
    return f"your module {module!r} failed to import ({what}{where}): fix it there; this is not a bug in glotbench"


def module_missing(e: ModuleNotFoundError, name: str) -> bool:
    """Whether `e` says the module `name` itself (or a package above it) is not there, rather than an
    import inside a module that was found (then the module's own error: `user_module_error`)."""
    parts = name.split(".")
    return e.name in {".".join(parts[:i]) for i in range(1, len(parts) + 1)}

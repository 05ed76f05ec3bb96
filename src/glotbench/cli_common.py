"""Shared by the command modules: the one-line error exit."""

from __future__ import annotations

import typer


def die(message: str, code: int = 2) -> None:
    """Print `error: message` on stderr and exit with `code` (no traceback)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)

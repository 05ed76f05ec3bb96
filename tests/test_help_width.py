"""`--help` at 80 columns (issue 21): typer's rich panels cut long words in their narrow description
column to "…" (a model spec, a default path) and click's command list cuts each summary to one line
with "..."; every command's help is now click's plain layout, wrapped, with nothing dropped."""

from __future__ import annotations

import re

import pytest
import typer
from conftest import cli

from glotbench.cli.app import app


def _commands(group, prefix=()):
    for name, cmd in sorted(group.commands.items()):
        yield prefix + (name,)
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, prefix + (name,))


ALL = list(_commands(typer.main.get_command(app)))


def test_every_command_is_checked():
    assert ("run",) in ALL and ("runs", "ls") in ALL and ("build", "review", "export") in ALL and len(ALL) > 30


@pytest.mark.parametrize("path", [(), *ALL], ids=lambda p: " ".join(p) or "glotbench")
def test_help_at_80_columns_is_whole(path):
    r = cli(*path, "--help", env={"COLUMNS": "80", "TERM": "xterm"})
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout and not re.search(r"\w\.\.\.$", r.stdout, re.M), r.stdout
    assert r.stdout.lstrip().startswith("Usage: ")
    long = [ln for ln in r.stdout.splitlines() if len(ln) > 80 and not any(len(w) > 40 for w in ln.split())]
    assert not long, long  # only an unbreakable word (a URL) may pass the margin

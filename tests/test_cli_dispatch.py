"""The console script builds only the command group it runs (`cli.app.modules_for`): each command must
behave exactly as in the app holding every command: its name in its usage line, its arguments
parsed as its own, bad input as one `error:` line with exit 2."""

from __future__ import annotations

import pytest

from conftest import cli
from glotbench.cli.app import COMMANDS
from glotbench.cli.options import ALIASES

ALL = sorted(n for names in COMMANDS.values() for n in names)


@pytest.mark.parametrize("name", ALL)
def test_each_command_is_a_command_of_the_console_script(name):
    """A module registering one plain command (data: `contamination`) must not become the whole
    app (typer runs a lone command as the app itself, and its first argument would be the
    command's name)."""
    out = cli(name, "--help")
    assert out.returncode == 0, out.stderr
    usage = next(line for line in out.stdout.splitlines() if "Usage:" in line)
    assert f"glotbench {name} " in usage, usage


def test_top_level_contamination_runs(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Sáng nay tôi dậy muộn nên không kịp ăn sáng.\n", encoding="utf-8")
    out = cli("contamination", "vi-diacritics", str(corpus))  # the hidden alias of `build contamination`
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == ["note: `glotbench contamination` is now `glotbench build contamination BENCHMARK CORPUS...`; the old name will go"]
    assert "items" in out.stdout and "share an n-gram" in out.stdout
    same = cli("build", "contamination", "vi-diacritics", str(corpus))
    assert same.returncode == 0 and same.stdout == out.stdout


def test_bad_input_to_a_lone_command_is_one_error_line(tmp_path):
    out = cli("contamination", "no-such-benchmark", str(tmp_path / "missing.txt"))
    assert out.returncode == 2
    lines = [x for x in out.stderr.strip().splitlines() if not x.startswith("note: ")]  # the alias's note
    assert len(lines) == 1 and lines[0].startswith("error: ") and "no-such-benchmark" in lines[0], out.stderr


def test_help_before_a_command_lists_every_command():
    """`glotbench --help run` prints the top-level help (click's --help is eager): all commands but
    the hidden aliases of folded ones."""
    out = cli("--help", "run")
    assert out.returncode == 0
    for name in ALL:
        assert (f"\n  {name} " in out.stdout) != (name in ALIASES), name



def _snippet_line(snippet: str, variable: str, value: str | None) -> tuple[str, str]:
    """Run `snippet` in a fresh interpreter with the environment variable `variable` set to `value`
    (None: unset); its stderr's last line, and the whole stderr for a failure's message."""
    import os
    import subprocess
    import sys

    child = {k: v for k, v in os.environ.items() if k != variable}
    if value is not None:
        child[variable] = value
    out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, env=child, timeout=60)
    return out.stderr.strip().splitlines()[-1], out.stderr


_PLUGINS_SNIPPET = """
import os, sys
from glotbench.cli import main
sys.argv = ["glotbench", "list"]
try:
    main()
except SystemExit:
    pass
from pydantic import BaseModel
class Row(BaseModel):  # a schema built in the command's process
    x: int
import pydantic.plugin._loader as loader
print(repr(os.environ.get("PYDANTIC_DISABLE_PLUGINS")), loader._plugins is not None, file=sys.stderr)
"""


@pytest.mark.parametrize("env, shown, scanned", [
    (None, "'__all__'", False),  # off unless asked for: no scan of every installed package's entry points
    ("", "''", True),  # an empty value (the user's) loads them again
    ("logfire", "'logfire'", True),  # the user's own list is kept
])
def test_pydantic_plugins_are_off_unless_the_user_set_them(env, shown, scanned):
    last, stderr = _snippet_line(_PLUGINS_SNIPPET, "PYDANTIC_DISABLE_PLUGINS", env)
    value, loaded = last.rsplit(" ", 1)
    assert value == shown, stderr
    assert loaded == str(scanned), stderr


def test_the_console_script_runs_commands_with_the_tuned_collector_on(tmp_path):
    """`glotbench.__main__` turns the collector off while the command starts; the command itself
    runs with it on, at the tuned threshold."""
    import json

    out = cli("run", "vi-diacritics", "--model", "python:helpers:collector_state", "--limit", "1", "--no-cache",
              "--no-progress", "--out", str(tmp_path / "r"))
    assert out.returncode == 0, out.stderr
    sample = json.loads((tmp_path / "r" / "samples.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert "enabled=True threshold=10000" in sample["output"], sample["output"]


_BLAS_SNIPPET = """
import os, sys
import glotbench.__main__ as entry
before = "numpy" in sys.modules
sys.argv = ["glotbench", "list"]
try:
    entry.main()
except SystemExit:
    pass
print(before, repr(os.environ.get("OPENBLAS_THREAD_TIMEOUT")), file=sys.stderr)
"""


@pytest.mark.parametrize("env, shown", [
    (None, "'4'"),  # OpenBLAS's threads sleep at once instead of spinning 2^28 cycles (docs/performance.md)
    ("28", "'28'"),  # the user's own value is kept
])
def test_openblas_threads_wait_briefly_unless_the_user_set_it(env, shown):
    """The console script sets OpenBLAS's thread timeout before anything has imported numpy (which
    reads it once, when it loads OpenBLAS), unless the user set it."""
    last, stderr = _snippet_line(_BLAS_SNIPPET, "OPENBLAS_THREAD_TIMEOUT", env)
    before, value = last.split(" ", 1)
    assert (before, value) == ("False", shown), stderr

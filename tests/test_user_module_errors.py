"""A user's module that fails while importing (issue #30, reading item 5): a `python:MODULE:FUNCTION`
model or a `MODULE:CLASS` benchmark whose module has a SyntaxError, an ImportError inside it or an
exception at its top level is named as the user's module, with FILE:LINE, in one line; a module that
is not there at all keeps its "cannot import" line."""

from __future__ import annotations

import pytest
from conftest import cli

MODULES = {
    "badsyn": ('x = 1\ndef answer(msgs)\n    return "ກ"\n', "SyntaxError", "badsyn.py:2"),
    "badimp": ('import os\nimport no_such_dependency_xyz\ndef answer(msgs):\n    return "A"\n',
               "ModuleNotFoundError: No module named 'no_such_dependency_xyz'", "badimp.py:2"),
    "badname": ('from os import no_such_name\n', "ImportError", "badname.py:1"),
    "badrun": ('\n\nRATE = 1 / 0\n', "ZeroDivisionError", "badrun.py:3"),
    "badindent": ('def answer(msgs):\nreturn "A"\n', "IndentationError", "badindent.py:2"),
}


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize("as_", ["model", "benchmark"])
def test_a_broken_user_module_is_named_with_its_line(tmp_path, name, as_):
    text, what, where = MODULES[name]
    (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    args = (("run", "vi-diacritics", "--model", f"python:{name}:answer") if as_ == "model"
            else ("run", f"{name}:Bench", "--model", "python:nowhere:none"))
    r = cli(*args, "--limit", "1", "--no-cache", "--out", str(tmp_path / "r"), cwd=str(tmp_path))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith(f"error: your module {name!r} failed to import ({what}"), lines[0]
    assert f" at {where})" in lines[0] and "not a bug in glotbench" in lines[0]
    assert "bug in code glotbench called" not in lines[0]


def test_a_module_that_is_not_there_keeps_its_message(tmp_path):
    r = cli("run", "vi-diacritics", "--model", "python:no_such_module_here:f", "--limit", "1", "--no-cache",
            "--out", str(tmp_path / "r"), cwd=str(tmp_path))
    assert r.returncode == 2
    assert "cannot import module 'no_such_module_here': No module named 'no_such_module_here'" in r.stderr

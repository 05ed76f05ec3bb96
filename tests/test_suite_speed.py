"""What keeps the suite quick (issue 32): `cli()` forks the test process, which it may do only while torch
is not loaded there (tests/conftest.py). A test file that imports torch or transformers while the suite is
collected loads it for every test, and each `cli()` of the whole suite then starts a fresh interpreter
(0.8-2 s each) instead of a fork: that is how the whole suite lost the fork in the previous step."""

from __future__ import annotations

import ast
import sys

import pytest

from conftest import _LazyModule, importorskip_lazily

HEAVY = ("torch", "transformers")


def _module_level_imports(tree: ast.Module) -> list[str]:
    """Modules a test file imports when it is collected: its top-level statements (inside `if`/`try` too,
    not inside functions or classes), `pytest.importorskip(...)` calls included."""
    found: list[str] = []
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr == "importorskip" \
                    and child.args and isinstance(child.args[0], ast.Constant):
                found.append(child.args[0].value)
            if isinstance(child, ast.stmt | ast.expr):
                todo.append(child)
    return found


def test_the_rule_finds_top_level_imports_and_importorskip():
    # the call split in two, so this file is not taken for one that loads torch (conftest._loads_torch)
    tree = ast.parse("import pytest\ntorch = pytest.importorskip(" "'torch')\n"
                     "try:\n    from transformers import AutoModel\nexcept ImportError:\n    pass\n"
                     "def test_x():\n    import torch\n")
    assert {"torch", "transformers", "pytest"} <= set(_module_level_imports(tree))
    assert _module_level_imports(ast.parse("def f():\n    import torch\n")) == []


def test_no_test_file_imports_torch_while_the_suite_is_collected(repo_root):
    bad = {p.name: m for p in (repo_root / "tests").glob("*.py")
           for m in _module_level_imports(ast.parse(p.read_text(encoding="utf-8")))
           if m.split(".")[0] in HEAVY}
    assert bad == {}, "use conftest.importorskip_lazily, or import inside the test or fixture"


def test_torch_is_not_loaded_before_the_tests_that_need_it():
    # the tests that load torch run last (conftest sorts them), so here it is loaded only if collecting
    # the suite, or a test that does not declare it, loaded it: every later `cli()` would spawn
    assert "torch" not in sys.modules


def test_a_lazy_module_imports_on_first_use_and_skips_when_missing():
    json = importorskip_lazily("json")
    assert isinstance(json, _LazyModule)
    with pytest.raises(AttributeError):
        json.__test__  # noqa: B018 - what collection asks every module-level name
    assert json.dumps([1]) == "[1]"
    with pytest.raises(pytest.skip.Exception):
        importorskip_lazily("no_such_module_glotbench_x")


def test_cli_forks_a_process_that_has_every_glotbench_module_imported():
    # what a forked `cli()` child finds imported: its command imports nothing of glotbench (each child
    # had spent 0.3-0.5 s of CPU importing what its command needed)
    import pkgutil

    import glotbench
    from conftest import _fork_safe

    assert _fork_safe()  # no thread here, torch not loaded (the test above)
    missing = [m.name for m in pkgutil.walk_packages(glotbench.__path__, "glotbench.")
               if m.name not in sys.modules and not m.name.startswith("glotbench.testing")]
    assert missing == []


def test_tests_that_share_one_resource_are_grouped_onto_one_worker(request):
    """`--dist loadgroup` (pyproject.toml): conftest marks the groups before xdist reads them into the
    node ids. Marked after it, the marks did nothing: the embedded model was converted on both
    workers (5 min each) and the PostgreSQL tests shared one database from two processes."""
    from conftest import _loads_torch

    if not getattr(request.config.option, "loadgroup", False):  # xdist sets it only for `--dist loadgroup`
        pytest.skip("the suite runs without --dist loadgroup (-n 0)")
    from pathlib import Path

    items = request.session.items
    model = [it for it in items if _loads_torch(Path(str(it.fspath)))]
    pg = [it for it in items if "GLOTBENCH_TEST_PG_URL" in Path(str(it.fspath)).read_text(encoding="utf-8")]
    assert model or pg, "run with the model or PostgreSQL tests to check their groups"
    assert all(it.nodeid.endswith("@model") for it in model), [it.nodeid for it in model if "@" not in it.nodeid]
    assert all(it.nodeid.endswith(("@postgresql", "@model")) for it in pg)

"""Imports point down, and nothing imports another module's private name (docs/architecture.md,
"Layers"). Every module under src/glotbench is parsed with `ast`; every import of a glotbench module,
at the top of the file or inside a function, is checked against the layer of its unit: its top-level
package, or a module of a package that spans two layers named on its own (`checks.rescore`)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "glotbench"

# Top to bottom. A package may import its own layer's packages or lower ones, never a higher one;
# the packages of one layer import each other without a cycle (test_no_cycle_between_packages).
LAYERS: list[set[str]] = [
    {"__main__", "cli", "service", "build", "testing", "inspect_ext"},  # commands and applications (inspect_ext: Inspect's)
    # running: evaluate, the runner, the cache, judged phases, sweeps; a finished run's checks computed
    # again and its answers re-scored (they rebuild the run's benchmark and read it through report)
    {"engine", "checks.stored", "checks.rescore"},
    {"store", "report"},  # run directories read back: the results store, tables, pages, board, compare, diff
    {"registry"},  # a benchmark by name: registered, a task file, MODULE:CLASS, with its run settings
    # what is measured, with the run settings every benchmark takes (benchmarks/settings.py); the checks
    # every benchmark takes (language, extraction, errors, tokens, circular, pivot: what reads its samples)
    {"tasks", "checks", "benchmarks"},
    # the language verdict of a text: read by the language check, applied by the wrong_language
    # run settings while scoring (benchmarks/settings.py)
    {"checks.language"},
    # the parts (contract: the benchmark as scoring and judges/ read it, below benchmarks/base.py's Benchmark)
    {"judges", "scoring", "contract", "models", "metrics", "extract", "contamination", "languages", "text", "datasheet"},
    {"rundir", "runfiles", "core", "signature", "items", "data", "loading", "plugins", "keys", "stats", "errors", "console",
     "glotbench"},
]
UNITS = {name for names in LAYERS for name in names}

# Imports that point up, each with its reason. Keep this list short.
EXCEPTIONS = {
    ("glotbench.benchmarks.registry", "glotbench.registry"):
        "an old import path kept for users (`from glotbench.benchmarks.registry import get_benchmark`); "
        "nothing in glotbench imports it (test_nothing_imports_the_old_paths)",
}


def modules() -> dict[str, Path]:
    out = {}
    for p in sorted(SRC.rglob("*.py")):
        parts = p.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def package(module: str) -> str:
    """The unit whose layer `module` has: `checks.rescore` where LAYERS names it, else `checks`."""
    parts = module.split(".")
    if len(parts) > 2 and ".".join(parts[1:3]) in UNITS:
        return ".".join(parts[1:3])
    return parts[1] if len(parts) > 1 else "glotbench"


def layer(pkg: str) -> int:
    found = [i for i, names in enumerate(LAYERS) if pkg in names]
    assert found, f"glotbench.{pkg} has no layer: add it to LAYERS here and to docs/architecture.md"
    return found[0]


def imports(module: str, path: Path) -> list[tuple[str, list[str], int]]:
    """(module imported, names imported from it, line) for every glotbench import in the file."""
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names if a.name.split(".")[0] == "glotbench"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolved against this module's package
                base = module.split(".")[: len(module.split(".")) - node.level + is_package]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "glotbench":
                out.append((target, [a.name for a in node.names], node.lineno))
    return out


@functools.lru_cache(maxsize=1)
def edges() -> list[tuple[str, str, list[str], int]]:
    """(importer, imported module, names, line), a name that is itself a module counted as the module."""
    mods = modules()
    out = []
    for module, path in mods.items():
        for target, names, line in imports(module, path):
            subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in mods]
            for t in subs or [target]:
                out.append((module, t, [n for n in names if f"{target}.{n}" not in mods], line))
    return out


def test_every_import_points_down():
    up = []
    for src, dst, _, line in edges():
        a, b = package(src), package(dst)
        if a != b and layer(b) < layer(a) and (src, dst) not in EXCEPTIONS:
            up.append(f"{src}:{line} imports {dst} ({a} is below {b})")
    assert up == []


def test_no_cycle_between_packages():
    """Packages of one layer may import each other, in one direction only."""
    graph: dict[str, set[str]] = {}
    for src, dst, _, _ in edges():
        a, b = package(src), package(dst)
        if a != b and (src, dst) not in EXCEPTIONS:
            graph.setdefault(a, set()).add(b)
    cycles = [(a, b) for a in graph for b in graph[a] if a in graph.get(b, set()) and a < b]

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph.get(start, ()))

    longer = sorted(a for a in graph if reaches(a, a, {a}))
    assert cycles == [] and longer == []


def test_no_private_name_is_imported_across_modules():
    """`from glotbench.x import _name` from another module: a private name is the module's own."""
    bad = [f"{src}:{line} imports {', '.join(n for n in names if n.startswith('_') and not n.startswith('__'))} "
           f"from {dst}" for src, dst, names, line in edges()
           if src != dst and any(n.startswith("_") and not n.startswith("__") for n in names)]
    assert bad == []


def test_nothing_imports_the_old_paths():
    old = {"glotbench.benchmarks.registry", "glotbench.models.registry"}
    assert [f"{src}:{line}" for src, dst, _, line in edges() if dst in old] == []


def test_the_checks_see_function_level_imports(tmp_path):
    """The parser finds an import inside a function and a relative one, so neither hides an arrow."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from glotbench.engine.evaluate import evaluate\n"
                 "    from ..core import Sample, _hidden\n", encoding="utf-8")
    got = imports("glotbench.metrics.m", f)
    assert got == [("glotbench.engine.evaluate", ["evaluate"], 2), ("glotbench.core", ["Sample", "_hidden"], 3)]
    assert layer(package("glotbench.engine.evaluate")) < layer(package("glotbench.metrics.m"))


def test_a_package_spanning_two_layers_is_checked_per_module():
    """`checks.rescore` sits above report (it reads runs through it); the rest of `checks` below the
    registry (which gives every benchmark its run settings), and `checks.language` below the
    benchmarks (whose wrong_language settings apply its verdict): each import is checked at its own layer."""
    assert package("glotbench.checks.rescore") == "checks.rescore" and package("glotbench.checks.extraction") == "checks"
    assert package("glotbench.checks.language") == "checks.language"
    assert layer("checks.rescore") < layer("report") < layer("registry") < layer("checks") < layer("checks.language")



def test_the_engine_prints_nothing_through_report():
    """The engine reads finished runs through `report.rundata`, and prints (progress lines) through the
    one console below everything (`glotbench.console`): no table, page or printer of `report/`."""
    bad = [f"{src}:{line} imports {dst}" for src, dst, _, line in edges()
           if src.startswith("glotbench.engine") and dst.startswith("glotbench.report") and dst != "glotbench.report.rundata"]
    assert bad == []


def test_benchmarks_render_without_the_models():
    """`Prompt` and `GenerateConfig` live in `core`, below the models: what is measured (benchmarks,
    tasks, checks) imports no model module."""
    bad = [f"{src}:{line} imports {dst}" for src, dst, _, line in edges()
           if package(src) in ("benchmarks", "tasks", "checks", "checks.language") and dst.startswith("glotbench.models")]
    assert bad == []


def test_only_rundir_names_the_run_directorys_files():
    """The run directory has one owner (docs/architecture.md, "Run directory, one owner"): outside
    `rundir/`, code names run.json, results.json and samples.jsonl by `rundir`'s constants (`RUN_JSON`,
    `RESULTS`, `SAMPLES`) and reads them through its readers, never by a literal file name (a literal
    is how a reader that bypasses `rundir`'s schemas starts). The store's migrations are exempt: a
    migration stays as it ran."""
    names = {"run.json", "results.json", "samples.jsonl"}
    found = [f"{module}:{node.lineno} {node.value!r}" for module, path in modules().items()
             if not module.startswith(("glotbench.rundir", "glotbench.store.migrations"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and node.value in names]
    assert found == []


DOC = SRC.parents[1] / "docs" / "architecture.md"


def test_the_doc_lists_every_import_inside_a_layer():
    """docs/architecture.md lists, between its markers, each package's imports of packages of its own
    layer; the list is what the code does, no more and no less."""
    import re

    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- imports inside a layer: begin -->")[1].split("<!-- imports inside a layer: end -->")[0]
    doc = set()
    for line in block.strip().splitlines():
        importer, imported = line.removeprefix("- ").split(" → ")
        doc |= {(importer.strip("`"), b) for b in re.findall(r"`([^`]+)`", imported)}
    code = {(package(s), package(d)) for s, d, _, _ in edges()
            if package(s) != package(d) and package(s) != "glotbench" and layer(package(s)) == layer(package(d))
            and (s, d) not in EXCEPTIONS}
    assert doc == code, (sorted(code - doc), sorted(doc - code))


def test_the_doc_has_a_row_for_every_module():
    """Every module under src/glotbench has a row in docs/architecture.md's module table (a package's
    `__init__` counts as the package when its row names `pkg/`, and `__init__`s without code as none;
    the migrations as their folder), and every path a row names exists."""
    import re

    rows = [line.split("|")[1] for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    named = {m for row in rows for m in re.findall(r"`([^`]+)`", row)}
    # a path from the package, from the repository (tools/...), or a benchmark's `data/` folder
    missing = sorted(n for n in named if not any((d / n).exists() for d in (SRC, SRC.parents[1], SRC / "benchmarks")))
    assert missing == []
    unlisted = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        parts = rel.split("/")
        if rel in named or any("/".join(parts[:i]) + "/" in named for i in range(1, len(parts))):
            continue  # named, or inside a folder a row names (cli/, rundir/, store/migrations/)
        if path.name == "__init__.py" and len(path.read_text(encoding="utf-8").strip().splitlines()) <= 60:
            continue  # a package's docstring and re-exports
        if path.name == "__main__.py":
            continue
        unlisted.append(rel)
    assert unlisted == []

"""Task files: YAML read with the line of every key, validated into a `TaskSpec`, every error one
line `FILE:LINE: field: problem` (as glotbench.data reports rows); where task files are found.

A task is found by name in, in order: the folders given with `--include-path DIR` (or
`add_include_path`), then the shipped library (`glotbench/tasks/library/*.yaml`). A path to a
`.yaml`/`.yml` file is a task too (`glotbench run path/to/task.yaml`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from glotbench.errors import DataError, SpecError

LIBRARY = Path(__file__).with_name("library")
SUFFIXES = (".yaml", ".yml")
MAX_VALUES = 100_000  # values in a YAML document with its aliases expanded (a task file has a few hundred)
_INCLUDE: list[Path] = []


@dataclass(frozen=True)
class Where:
    """Names a place in a task for its error messages: `FILE:LINE: dotted.path` (a file's), or
    `TASK: dotted.path` for a task built in Python."""

    name: str
    lines: Mapping[tuple[Any, ...], int] = field(default_factory=dict)
    file: bool = False

    def line(self, path: tuple[Any, ...]) -> int | None:
        for cut in range(len(path), -1, -1):
            if path[:cut] in self.lines:
                return self.lines[path[:cut]]
        return None

    def __call__(self, *path: Any) -> str:
        dotted = ".".join(str(p) for p in path)
        head = self.head(*path)
        return f"{head}: {dotted}" if dotted else head

    def head(self, *path: Any) -> str:
        """`FILE:LINE` of a key (the task's name for a task built in Python)."""
        line = self.line(tuple(path)) if self.file else None
        return f"{self.name}:{line}" if line is not None else self.name


def check_expansion(node: Any, name: str) -> None:
    """Refuse a document whose aliases expand to more than MAX_VALUES values: nine anchors of nine
    aliases each are 9**9 values in a few lines (a "billion laughs"), which every reader of the data
    after the parser (validation, the signature's hash, a dump) would walk without end."""
    import yaml

    count = 0
    seen: set[int] = set()  # distinct nodes: an alias repeats one
    stack = [node]
    while stack:
        n = stack.pop()
        count += 1
        seen.add(id(n))
        if count > MAX_VALUES:
            why = ("YAML aliases repeating anchors); write the values out" if len(seen) < count
                   else "no aliases: the file itself is that large)")
            raise DataError(f"{name}:{n.start_mark.line + 1}: the document expands to more than {MAX_VALUES:,} "
                            f"values ({why}")
        if isinstance(n, yaml.MappingNode):
            stack.extend(v for kv in n.value for v in kv)
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)


def load_yaml(text: str, name: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """The document and the line (1-based) where each key's value starts; a key given twice in one
    mapping is an error (YAML parsers keep the last one silently)."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            check_expansion(node, name)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        raise DataError(f"{name}:{mark.line + 1 if mark else 1}: not valid YAML ({e.problem or e.context})") from None
    except yaml.YAMLError as e:
        raise DataError(f"{name}: not valid YAML ({e})") from None
    finally:
        loader.dispose()
    lines: dict[tuple[Any, ...], int] = {}

    def walk(n: Any, path: tuple[Any, ...]) -> None:
        lines.setdefault(path, n.start_mark.line + 1)
        if isinstance(n, yaml.MappingNode):
            seen: set[Any] = set()
            for k, v in n.value:
                key = k.value
                if key in seen:
                    raise DataError(f"{name}:{k.start_mark.line + 1}: {'.'.join(map(str, path + (key,)))}: "
                                    "given twice in one mapping")
                seen.add(key)
                lines[path + (key,)] = k.start_mark.line + 1
                walk(v, path + (key,))
        elif isinstance(n, yaml.SequenceNode):
            for i, v in enumerate(n.value):
                walk(v, path + (i,))

    if node is not None:
        walk(node, ())
    return data, lines


def validate_spec(raw: Any, where: Where) -> Any:
    """`raw` (a dict) as a TaskSpec; the first problem as `FILE:LINE: field: problem`, others counted."""
    from pydantic import ValidationError

    from glotbench.data import problem_text
    from glotbench.tasks.spec import TaskSpec

    if isinstance(raw, TaskSpec):
        return raw
    if not isinstance(raw, dict):
        raise DataError(f"{where()}: a task is a mapping of keys (name, version, data, prompt, scorer...)")
    try:
        return TaskSpec.model_validate(raw)
    except ValidationError as e:
        # A key that is not allowed first: a typo (`promt:`) explains the key reported missing.
        errors = sorted(e.errors(include_url=False), key=lambda x: x["type"] != "extra_forbidden")
        path = data_path(tuple(errors[0]["loc"]), raw)
        more = len(errors) - 1
        text = (unknown_key(str(path[-1]) if path else "") if errors[0]["type"] == "extra_forbidden"
                else problem_text([errors[0]], lambda loc: ""))
        head = where(*path) if path else where()
        raise DataError(f"{head}: {text}" + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")) from None


def unknown_key(key: str) -> str:
    """`unknown key`, with the task key it most resembles (`promt` -> prompt, `revison` -> revision)."""
    import difflib

    from glotbench.tasks import spec

    known = sorted({f for m in vars(spec).values() if isinstance(m, type) and issubclass(m, spec.Part)
                    for f in m.model_fields})
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    return "unknown key" + (f" (did you mean {close[0]}?)" if close else " (docs/tasks.md lists every key)")


def data_path(loc: tuple[Any, ...], raw: Any) -> tuple[Any, ...]:
    """pydantic's error location as keys of the document: its union and tag steps (`rubric`,
    `list[str]`, `FixedChoices`) are left out by walking the data; a last key the data lacks (a
    missing field) is kept."""
    path: tuple[Any, ...] = ()
    node = raw
    for i, part in enumerate(loc):
        if isinstance(node, dict) and part in node:
            path, node = path + (part,), node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            path, node = path + (part,), node[part]
        elif i == len(loc) - 1 and isinstance(node, dict) and isinstance(part, str) and part.isidentifier() \
                and not part[:1].isupper():
            path += (part,)
    return path


def read_task_file(path: str | Path) -> tuple[Any, Where]:
    """(TaskSpec, Where) of a task file."""
    from glotbench.data import check_file, read_text

    p = check_file(path)
    raw, lines = load_yaml(read_text(p), str(p))
    where = Where(str(p), lines, file=True)
    return validate_spec(raw, where), where


# -- finding tasks ------------------------------------------------------------------------------

def add_include_path(folder: str | Path) -> None:
    """Look for task files in `folder` too (before the library); `--include-path DIR`."""
    p = Path(folder)
    if not p.is_dir():
        raise SpecError(f"--include-path {folder}: not a directory")
    if p not in _INCLUDE:
        _INCLUDE.insert(0, p)
    _scan.cache_clear()


def is_task_path(name: str) -> bool:
    return name.endswith(SUFFIXES) or Path(name).is_file() and Path(name).suffix in SUFFIXES


def _folders() -> list[Path]:
    return [*_INCLUDE, LIBRARY]


@functools.lru_cache(maxsize=8)
def _scan(folders: tuple[Path, ...]) -> tuple[dict[str, tuple[Path, str]], dict[Path, str]]:
    """Task name -> (file, description), first folder first; and each file that does not parse ->
    why (it has no name to be found by: `unreadable()` lists it, and running its stem reads it)."""
    import yaml

    out: dict[str, tuple[Path, str]] = {}
    broken: dict[Path, str] = {}
    for folder in folders:
        for f in sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES):
            try:
                doc = yaml.safe_load(f.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
                broken[f] = "not UTF-8 text" if isinstance(e, UnicodeDecodeError) else \
                    "not valid YAML" if isinstance(e, yaml.YAMLError) else "cannot be read"
                continue
            if isinstance(doc, dict) and isinstance(doc.get("name"), str):
                out.setdefault(doc["name"], (f, str(doc.get("description") or "").strip().splitlines()[0]
                                             if doc.get("description") else ""))
            else:
                broken[f] = "no name: key"
    return out, broken


def _names(folders: tuple[Path, ...]) -> dict[str, tuple[Path, str]]:
    return _scan(folders)[0]


def unreadable() -> dict[Path, str]:
    """The task files in the folders that cannot be found by name (they do not parse, or name no task)."""
    return _scan(tuple(_folders()))[1]


def task_names() -> dict[str, str]:
    """Every task found by name -> its description."""
    return {n: d for n, (_, d) in _names(tuple(_folders())).items()}


def library_task(name: str) -> Path | None:
    """The shipped library's file of the task called `name` (never an `--include-path` one), or None."""
    hit = _names((LIBRARY,)).get(name)
    return hit[0] if hit else None


def included_task(name: str) -> Path | None:
    """The file of a task called `name` in an `--include-path` folder (not the library), or None;
    reads nothing when no folder was added."""
    if not _INCLUDE:
        return None
    hit = _names(tuple(_INCLUDE)).get(name)
    return hit[0] if hit else None


def shadows_library(name: str) -> bool:
    """Whether an `--include-path` task called `name` hides the library's task of that name."""
    return included_task(name) is not None and name in _names((LIBRARY,))


def find_task(name: str) -> Path | None:
    """The file of the task called `name`, or None."""
    if is_task_path(name):
        if not Path(name).is_file():
            raise SpecError(f"task file not found: {name}")
        return Path(name)
    hit = _names(tuple(_folders())).get(name)
    if hit:
        return hit[0]
    # a file named after the task that does not parse: reading it reports its FILE:LINE error
    return next((f for f in unreadable() if f.stem == name), None)

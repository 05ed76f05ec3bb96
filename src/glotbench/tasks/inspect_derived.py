"""A derived dataset scored by glotbench's own Inspect scorer, run back in glotbench (issue #35):
`glotbench run hf/ORG/NAME/ID@SHA` of an eval.yaml whose `glotbench:` key declares `glotbench/score`
with a library task and its options (`inspect_yaml.export_derived` writes it) runs THAT library task
with those options on the items its rows carry as JSON (the `glotbench` column), read from the hub
dataset at that commit (or from `--data FILE`, a copy of its rows).

Each row is checked before anything runs, one `FILE:LINE: ...` line for the first problem: the
column is there and is JSON text of at most MAX_ITEM_CHARS characters and MAX_DEPTH levels; its
item names the declared task, options and the installed version (as glotbench/score checks them,
`derived_item`); it has an id, public fields and a gold the task's scorer reads; the row's `input`
(and `system`) is the prompt the task renders for the item and its `target` the placeholder's; no
id twice. The run's data is `hub:ORG/NAME@SHA/SPLIT` with the file's hash in the signature, and its
data label says the items came from that derived dataset, not from the task's own data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from glotbench.core import Dataset
from glotbench.errors import DataError, GlotbenchError, SpecError
from glotbench.items import Item
from glotbench.rundir.schema import DataLabel
from glotbench.tasks.benchmark import TaskBenchmark
from glotbench.tasks.files import Where, library_task

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark

MAX_ITEM_CHARS = 1_000_000  # one item's JSON (an XL-Sum article is some 10,000 characters)
MAX_DEPTH = 32  # nesting of one item's JSON (a library item's is at most 4: gold -> tags -> list)
_ITEM_KEYS = {"id", "task", "version", "options", "public", "gold", "meta"}


def options_key(options: Any) -> str:
    """A task's options as one comparable text (sorted JSON)."""
    return json.dumps(options or {}, sort_keys=True, ensure_ascii=False)


def _depth(value: Any) -> int:
    """The nesting depth of parsed JSON, walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        deepest = max(deepest, d)
        if isinstance(v, dict):
            stack += [(x, d + 1) for x in v.values()]
        elif isinstance(v, list):
            stack += [(x, d + 1) for x in v]
    return deepest


def derived_item(raw: Any, bench: Benchmark, where: str, column: str, need_task: bool) -> Item:
    """The item a derived row's `column` holds (JSON text), checked against `bench`: the version it
    was derived from, and the task and options where the row names them (`need_task`: it must);
    DataError naming `where` otherwise. glotbench/score (inspect_ext.py) and the import read it alike."""
    from glotbench.tasks.inspect_yaml import scorer_options

    if not isinstance(raw, str):
        raise DataError(f"{where}: no {column!r} " + ("column" if raw is None else f"text (a {type(raw).__name__})")
                        + " (a derived row's item as JSON: `tasks check --eval-yaml` writes it)")
    if len(raw) > MAX_ITEM_CHARS:
        raise DataError(f"{where}: its {column!r} item is {len(raw):,} characters; a derived item is at most "
                        f"{MAX_ITEM_CHARS:,}")
    try:
        row = json.loads(raw)
    except RecursionError:
        raise DataError(f"{where}: its {column!r} item is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:
        raise DataError(f"{where}: its {column!r} item is not JSON ({str(e).splitlines()[0][:80]})") from None
    if not isinstance(row, dict):
        raise DataError(f"{where}: its {column!r} is not a derived row's item (a JSON object)")
    if _depth(row) > MAX_DEPTH:
        raise DataError(f"{where}: its {column!r} item is nested deeper than {MAX_DEPTH} levels")
    if str(row.get("version")) != str(bench.version):
        raise DataError(f"{where}: the rows were derived from {bench.name} v{row.get('version')}; "
                        f"the installed task is v{bench.version}")
    # Rows derived with another task or other options (a translation direction, a language, a split)
    # would be scored by rules that are not theirs: refused, both named (rows written before the
    # task was recorded carry only the version: glotbench/score reads them, the import does not).
    if need_task and ("task" not in row or "options" not in row):
        raise DataError(f"{where}: its {column!r} item names no task and options (written by an older glotbench: "
                        f"export the task again)")
    derived = (row.get("task"), options_key(row.get("options")))
    wanted = (bench.name, options_key(scorer_options(bench) if isinstance(bench, TaskBenchmark) else {}))  # a built-in: none
    if "task" in row and derived != wanted:
        raise DataError(f"{where}: the rows were derived from task {derived[0]} with options {derived[1]}; "
                        f"the scorer was given task {wanted[0]} with options {wanted[1]}")
    if need_task and set(row) - _ITEM_KEYS:
        raise DataError(f"{where}: its {column!r} item has keys a derived item has not: "
                        + ", ".join(sorted(map(str, set(row) - _ITEM_KEYS))[:5]))
    ident = row.get("id")
    if isinstance(ident, bool) or not isinstance(ident, (str, int)) or not str(ident).strip():
        raise DataError(f"{where}: its {column!r} item has no id (text)")
    for key in ("public", "gold", "meta"):
        if not isinstance(row.get(key, {}), dict):
            raise DataError(f"{where}: its {column!r} item's {key} is not a mapping")
    if not row.get("gold"):
        raise DataError(f"{where}: its {column!r} item has no gold (the references it is scored against)")
    return Item.create(str(ident), row.get("public") or {}, row["gold"], row.get("meta") or {})


@dataclass(frozen=True)
class Declaration:
    """An eval.yaml task's `glotbench:` declaration: glotbench/score with a library task and its options."""

    task: str
    options: Mapping[str, Any]
    at: str  # FILE:LINE of the declaration, for errors


@dataclass(frozen=True)
class DerivedSource:
    """Where a derived dataset's rows are: the hub repository at its commit, its config and split."""

    repo: str
    revision: str
    config: str | None
    split: str

    @property
    def source(self) -> str:
        """The data a run of these rows records (`hub_rows`' source): `hub:ORG/NAME@SHA[ CONFIG]/SPLIT`."""
        return f"hub:{self.repo}@{self.revision}" + (f" {self.config}" if self.config else "") + f"/{self.split}"


class DerivedTask(TaskBenchmark):
    """A library task run on a derived dataset's items (the rows' `glotbench` column), not on its own data."""

    def __init__(self, spec: Any, where: Where | None, base_dir: str | Path | None, derived_from: DerivedSource, /,
                 **options: Any):  # positional: a task's options may be called `source` (flores-plus)
        super().__init__(spec, where, base_dir, **options)
        self.derived_from = derived_from

    def load(self, path: str | None = None) -> Dataset:
        from glotbench.tasks.inspect_yaml import GLOTBENCH_COLUMN, PLACEHOLDER_KIND, target_text
        from glotbench.tasks.source import hub_rows, local_rows, user_file_format

        s = self.derived_from
        if path is not None and path.startswith("hub:") and path != s.source:  # not these rows: never swapped in
            raise DataError(f"--data {path[:120]}: the task is {self.name} over the rows of {s.source}; "
                            "a run of it reads those rows, or a local copy of them (--data FILE)")
        if path is None or path.startswith("hub:"):  # the hub as pinned (a recorded run's source passed back)
            rows = hub_rows(s.repo, s.revision, s.config, s.split, None, {}, None)
        else:
            rows = local_rows(path, user_file_format(path, None))
        items: list[Item] = []
        seen: set[str] = set()
        for where, row in rows.rows:
            item = derived_item(row.get(GLOTBENCH_COLUMN), self, where, GLOTBENCH_COLUMN, need_task=True)
            if item.id in seen:
                raise DataError(f"{where}: item id {item.id!r} twice")
            seen.add(item.id)
            if "id" in row and str(row["id"]) != item.id:
                raise DataError(f"{where}: the row's id {str(row['id'])[:40]!r} is not its item's {item.id!r}")
            if problem := self.scorer.check_gold(item) or self._meta_problem(item):
                raise DataError(f"{where}: {problem}")
            try:
                messages = [m["content"] for m in self.render(item.to_public()).messages]
            except GlotbenchError as e:
                raise DataError(f"{where}: {self.name} cannot render its item: {e}") from None
            except Exception as e:  # noqa: BLE001 - a template over fields the item lacks: one line
                raise DataError(f"{where}: {self.name} cannot render its item ({type(e).__name__}: "
                                f"{str(e)[:80]})") from None
            if messages != [x for x in (row.get("system"), row.get("input")) if x is not None]:
                raise DataError(f"{where}: its input is not the prompt {self.name} renders for its item "
                                "(the rows were changed, or derived by another version of the task)")
            if row.get("target") != target_text(item, PLACEHOLDER_KIND):
                raise DataError(f"{where}: its target is not its item's first reference (the placeholder's)")
            items.append(item)
        if not items:
            raise DataError(f"{rows.source}: no items")
        return self.dataset(items, rows.source, rows.sha256)

    def _meta_problem(self, item: Item) -> str | None:
        """What is wrong with an item's meta, or None: only the keys the task's loader writes (its
        `fields.meta`, `lang`, `duplicate_options`), as text, with the `lang` and `duplicate_options` it
        writes. Meta picks the groups, the clusters, the expected language and how a reply naming a
        shared option reads: a row's other meta would change what is scored and how it is grouped."""
        from glotbench.tasks.fields import duplicate_options

        declared = set(self.spec.fields.meta)
        extra = sorted(set(item.meta) - declared - {"lang", "duplicate_options"})
        if extra:
            return f"its item's meta has keys {self.name} does not write: {', '.join(map(str, extra))[:80]}"
        if bad := [k for k, v in item.meta.items() if not isinstance(v, str)]:
            return f"its item's meta {bad[0]!r} is not text"
        choices = item.public.get("choices")
        twins = "=".join(duplicate_options(list(choices))) if self.spec.fields.choices is not None and isinstance(
            choices, (list, tuple)) and all(isinstance(c, str) for c in choices) else ""
        want = {"lang": self.lang or None, "duplicate_options": twins or None}
        for key, value in want.items():
            if key not in declared and item.meta.get(key) != value:
                return (f"its item's meta {key} is {item.meta.get(key)!r}; {self.name} writes "
                        + ("none" if value is None else repr(value)))
        return None

    def data_label(self, dataset: Dataset) -> DataLabel:
        s = self.derived_from
        if dataset.source != s.source:  # `--data FILE`: rows in the derived form, not the hub's (never compared)
            return {"kind": "derived", "sample": False, "items": len(dataset),
                    "label": f"items of the file {Path(dataset.source).name} ({len(dataset)}, rows in the form of the "
                             f"derived dataset {s.repo}@{s.revision[:12]}, not checked against it), not read from "
                             f"{self.name}'s own data"}
        return {"kind": "derived", "sample": False, "items": len(dataset),
                "label": f"items of the derived dataset {s.repo}@{s.revision[:12]} ({len(dataset)}, exported by "
                         f"glotbench from {self.name} v{self.version}), not read from the task's own data"}


def derived_factory(decl: Declaration, source: DerivedSource) -> Callable[..., DerivedTask]:
    """The factory `get_benchmark` calls: the declared library task with its options (a `--bench-opt`
    that changes one of them is refused) over the derived rows."""
    from glotbench.benchmarks.options import convert_options
    from glotbench.tasks.benchmark import task_factory
    from glotbench.tasks.files import read_task_file

    path = library_task(decl.task)
    if path is None:  # checked when declared; a library changed since
        raise SpecError(f"{decl.at}: {decl.task!r} is not a task of glotbench's library")
    spec, where = read_task_file(path)
    lib = task_factory(spec, where, path.parent)
    try:
        declared = convert_options(lib, dict(decl.options), name=decl.task)
        ref = lib(**declared)
    except GlotbenchError as e:
        raise SpecError(f"{decl.at}: {e}") from None
    except TypeError as e:
        raise SpecError(f"{decl.at}: bad option for {decl.task}: {e}") from None

    def make(**options: Any) -> DerivedTask:
        bench = DerivedTask(spec, where, path.parent, source, **{**declared, **options})
        changed = sorted(k for k in bench.options if bench.options[k] != ref.options.get(k))
        if changed:  # the rows were rendered and graded with the declared options, and only with them
            raise SpecError(f"--bench-opt {', '.join(changed)}: the rows of {source.repo}@{source.revision[:12]} were "
                            f"derived with {decl.task}'s declared options {options_key(decl.options)}; a run of them "
                            "takes no other")
        return bench

    make.__signature__ = lib.__signature__  # type: ignore[attr-defined]
    make.__annotations__ = lib.__annotations__
    make.__name__ = make.__qualname__ = decl.task
    make.spec = spec  # type: ignore[attr-defined]
    return make

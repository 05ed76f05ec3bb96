"""`glotbench tasks`: the task files glotbench finds (the shipped library and `--include-path`
folders), and a check of a task file without running it."""

from __future__ import annotations

import re

from typing import TYPE_CHECKING, Annotated, Any, Callable

import typer

from glotbench.cli.options import ErrorHandlingGroup

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark

tasks_app = typer.Typer(help="Task files: benchmarks composed in YAML (docs/tasks.md).", cls=ErrorHandlingGroup,
                        no_args_is_help=True)
IncludePath = Annotated[list[str], typer.Option("--include-path", help="Also a folder of task files (repeatable).")]


@tasks_app.command("list")
def list_tasks(
    include_path: IncludePath = [],
    language: Annotated[str | None, typer.Option(
        "--language", "-l", help="Only the families covering this language (lo, km, my, th, vi, id, tl...), "
                                 "with their datasheets.")] = None,
) -> None:
    """The tasks found by name: the --include-path folders first, then the shipped library. With
    --language: every benchmark family (built-in or task file) whose datasheet covers the language,
    with the options selecting it, its origin, licence and source."""
    from glotbench.tasks import add_include_path

    for folder in include_path:
        add_include_path(folder)
    if language is not None:
        return _list_language(language)
    from glotbench.registry import benchmarks
    from glotbench.tasks.files import included_task, shadows_library, task_names, unreadable

    builtin = benchmarks(hidden=True)
    for name, desc in sorted(task_names().items()):
        clash = (" (also a built-in benchmark's name: rename the task to run it)" if name in builtin else
                 f" (from {included_task(name)}, in place of the library's)" if shadows_library(name) else "")
        typer.echo(f"  {name:<16} {desc}{clash}")
    for path, why in unreadable().items():
        typer.echo(f"skipped {path}: {why} (glotbench tasks check {path} says where)", err=True)


def _list_language(language: str) -> None:
    from glotbench.errors import SpecError
    from glotbench.languages import checked_group, language_label
    from glotbench.registry import families

    try:
        code = checked_group(language)  # zh-TW: zh-Hant, not zh
    except ValueError as e:
        raise SpecError(f"--language {e}") from None
    problems: dict[str, str] = {}
    found = families(code, problems)
    for path, why in problems.items():
        typer.echo(f"skipped {path}: {why} (not read, so not known to cover {code}; glotbench tasks check "
                   f"{path} says where)", err=True)
    name = language_label(code)
    others = sorted({g for f in families() if f.datasheet for g in f.datasheet.languages
                     if g != code and g.split("-")[0] == code.split("-")[0]})
    also = (f" (other groups of this language, each its own --language: {', '.join(others)})" if others else "")
    if not found:
        typer.echo(f"no benchmark family covers {name} ({code}){also}; `glotbench tasks list` shows them all")
        return
    data_only = sum(1 for f in found if f.datasheet is not None and f.datasheet.needs_data(code))
    typer.echo(f"{len(found)} benchmark families cover {name} ({code})"
               + (f"; {data_only} of them only with --data FILE (marked *: the pinned or bundled data has no "
                  f"{name} rows)" if data_only else "") + also + ":")
    for f in found:
        ds = f.datasheet
        assert ds is not None  # families(code) keeps only those whose datasheet covers code
        opts = " ".join(f"{k}={v}" for k, v in (ds.options_for(code) or {}).items())
        star = "*" if ds.needs_data(code) else " "
        use = {True: "yes", False: "no", None: "unclear"}[ds.commercial]
        typer.echo(f" {star}{f.name:<24} {ds.origin_of(code):<18} commercial use: {use:<8} {opts}")
        typer.echo(f"  {'':<24} {f.description}")
        typer.echo(f"  {'':<24} licence: {ds.licence}; source: {ds.source}")
        if ds.licence_note:  # why commercial use is unclear, or what else the licence carries
            typer.echo(f"  {'':<24} licence note: {ds.licence_note}")
        if ds.reference:
            at = f" @ {ds.reference_commit}" if ds.reference_commit else " (no commit pinned)"
            typer.echo(f"  {'':<24} reference: {ds.reference}{at}")


@tasks_app.command("check")
def check(
    task: Annotated[str, typer.Argument(help="A task file, or a task's name.")],
    bench_opt: Annotated[list[str], typer.Option("--bench-opt", help="A setting KEY=VALUE (repeatable).")] = [],
    data: Annotated[str | None, typer.Option(help="Also load this data file (in the hub's schema) and render its first item.")] = None,
    include_path: IncludePath = [],
    eval_yaml: Annotated[str | None, typer.Option("--eval-yaml", help="Also write the task as Inspect's eval.yaml "
                                                   "(what Inspect cannot express: exit 2, each part named); a task "
                                                   "rendered from several columns with a derived dataset next to it "
                                                   "(data/SPLIT.jsonl, README.md) from --data or the hub.")] = None,
) -> None:
    """Validate a task (every error FILE:LINE: field: problem) and print its signature parts; with
    --data, or when the task names its own local file (data.file), load the rows (the first bad row
    is the error; every item's prompt is rendered, as a run renders them before its first call) and show
    the first item's prompt. Calls no model; a hub download only with --data.
    With --eval-yaml FILE, the task (its options filled in) as Inspect's eval.yaml (docs/tasks.md, "Every
    library task as an eval.yaml")."""
    from glotbench.cli.options import split_pairs
    from glotbench.registry import get_benchmark
    from glotbench.tasks import add_include_path
    from glotbench.tasks.benchmark import TaskBenchmark

    for folder in include_path:
        add_include_path(folder)
    bench = get_benchmark(task, **dict(split_pairs(list(bench_opt))))
    own_file = isinstance(bench, TaskBenchmark) and bench.data.file is not None
    dataset = bench.load(data) if data is not None or own_file else None  # every row checked before "ok"
    prompt = None
    if dataset is not None:
        bench.expand(dataset)  # the run settings' units (permute=circular: every item has options to rotate)
        prompt = bench.prompt_hash(dataset)  # every item rendered, as a run does before its first call
    typer.echo(f"{bench.name} v{bench.version}: ok")
    if eval_yaml is not None:
        _write_eval_yaml(bench, eval_yaml, lambda: dataset if dataset is not None else bench.load(data))
    for k, v in bench.run_signature_parts().items():
        typer.echo(f"  {k}: {v}")
    if prompt is not None:
        typer.echo(f"  prompt: {prompt} (every item's prompt rendered)")
    if dataset is not None:
        from glotbench.rundir.validity import duplicates_text, zawgyi_text

        extra = bench.extra_results(dataset)
        for text in (duplicates_text(extra), zawgyi_text(extra)):
            if text:
                typer.echo(f"note: {text}", err=True)
        first = bench.render(dataset[0].to_public())
        left = dataset.rows_left_out
        cut = f" (data.where left out {left} of {len(dataset) + left} rows)" if left is not None else ""
        typer.echo(f"{len(dataset)} items from {dataset.source}{cut}; the first item's prompt:")
        for m in first.messages:
            typer.echo(f"[{m['role']}]\n{m['content']}")


def _write_eval_yaml(bench: Benchmark, out: str, rows: Callable[[], Any]) -> None:
    """The task as Inspect's eval.yaml: reading the dataset's own columns where it can; else with a
    derived dataset (each item as glotbench renders it, `rows()` loaded) next to it, in the hub's layout."""
    import json
    from pathlib import Path

    from glotbench.cli.options import not_replaced as _not_replaced
    from glotbench.errors import DataError
    from glotbench.tasks.inspect_yaml import DERIVED_CARD, NotTranslatable, derived_plan, export_derived, export_text

    if not out.strip():  # Path("") is the current folder: never what an empty value meant
        raise DataError("--eval-yaml: an empty path; give the eval.yaml's file")
    prefix = f"{bench.name}: "
    derived = None
    try:
        text, notes = export_text(bench)
    except NotTranslatable:
        try:  # refused before any row is read, else the rows rendered
            derived_plan(bench)
            ds = rows()
            text, derived, path, card, notes = export_derived(bench, ds, _rows_source(ds))
        except NotTranslatable as e:  # one error line naming every part (each is `NAME: key: why`)
            raise DataError(f"{prefix}no eval.yaml written: Inspect cannot express "
                            + "; ".join(line.removeprefix(prefix) for line in e.lines)) from None
    _not_replaced(Path(out), "# Written by glotbench", "an eval.yaml", fix=EMPTY_FOLDER)
    if derived is not None:  # every file checked before any is written
        folder = Path(out).parent
        readme = folder / "README.md"
        ours = _not_replaced(readme, DERIVED_CARD, "the derived dataset's card (README.md)", anywhere=True, fix=EMPTY_FOLDER)
        if not ours and (folder / path).exists():
            raise DataError(f"{folder / path}: a file glotbench did not write (no derived dataset's README.md beside "
                            "it); the derived rows would replace it (write the eval.yaml into an empty folder)")
    for up in [Path(out).parent, *Path(out).parent.parents]:
        if up.exists() and not up.is_dir():
            raise DataError(f"--eval-yaml {out}: {up} is a file, not a folder")
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    if derived is not None:
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in derived), encoding="utf-8")
        readme.write_text(card, encoding="utf-8")
        typer.echo(f"wrote {folder / path} ({len(derived)} items as glotbench renders them) and {readme}: the derived "
                   "dataset the eval.yaml reads")
    Path(out).write_text(text, encoding="utf-8")
    typer.echo(f"wrote {out} (Inspect's eval.yaml); it scores as Inspect scores, which differs in:")
    for n in notes:
        typer.echo(f"  {n}")


def _rows_source(dataset: Any) -> str:
    """Where a derived dataset's rows came from, in words: the pinned hub data, or the user's file (not
    the task's hub repository), with the rows data.where left out."""
    from pathlib import Path

    src = str(dataset.source)
    out = src.removeprefix("hub:").split(" ")[0] if src.startswith("hub:") else f"the file {Path(src).name}"
    left = dataset.rows_left_out
    return out + (f" (data.where left out {left} of {len(dataset) + left} rows)" if left else "")


EMPTY_FOLDER = "write the eval.yaml into an empty folder, or move the file"


@tasks_app.command("import-lm-eval")
def import_lm_eval(
    file: Annotated[str, typer.Argument(help="An lm-evaluation-harness task YAML (its include: files next to it).")],
    out: Annotated[str | None, typer.Option("--out", "-o", help="Write the task file here (default: print it).")] = None,
) -> None:
    """Translate an lm-evaluation-harness task YAML (multiple_choice or generate_until, Jinja templates)
    into a glotbench task file, checked to validate; each key it cannot translate is one line on
    stderr (and in the file's header). A prompt, choice list or target given by Python (!function)
    is not imported (exit 2)."""
    from glotbench.errors import DataError
    from glotbench.tasks.lm_eval_import import NotTranslatable, import_file

    try:
        text, got = import_file(file, out)
    except NotTranslatable as e:
        for line in e.lines:
            typer.echo(f"not translated: {line}", err=True)
        raise DataError(f"{file}: not imported: its prompt, choices or target cannot be translated "
                        f"(the line{'s' * (len(e.lines) > 1)} above)") from None
    for line in got.notes:
        typer.echo(f"not translated: {line}", err=True)
    if out is None:
        typer.echo(text, nl=False)
    else:
        typer.echo(f"wrote {out}: task {got.keys['name']}" + (f"; {len(got.notes)} key(s) not translated (listed above "
                                                            "and in its header)" if got.notes else ""), err=True)


@tasks_app.command("import-inspect")
def import_inspect(
    file: Annotated[str, typer.Argument(help="An Inspect eval.yaml (a hub dataset's task declaration).")],
    repo: Annotated[str, typer.Option("--repo", help="The hub dataset it belongs to (ORG/NAME).")],
    revision: Annotated[str | None, typer.Option("--revision", help="The dataset's commit (40 hex).")] = None,
    task_id: Annotated[str | None, typer.Option("--task", help="The task's id (eval.yaml lists several).")] = None,
    out: Annotated[str | None, typer.Option("--out", "-o", help="Write the task file here (default: print it).")] = None,
) -> None:
    """Translate an Inspect eval.yaml task into a glotbench task file scored as Inspect scores; each key
    that cannot be translated is one line on stderr (exit 2). `glotbench run hf/ORG/NAME[/TASK]@SHA`
    does the same from the hub."""
    from pathlib import Path

    from glotbench.data import read_text
    from glotbench.errors import DataError
    from glotbench.tasks.inspect_yaml import NotTranslatable, parse_spec, task_text

    if (parsed := parse_spec(f"hf/{repo}")) is None or parsed[1] is not None:
        raise DataError(f"--repo {repo!r}: a hub dataset's ORG/NAME")
    if revision is not None and re.fullmatch(r"[0-9a-fA-F]{40}", revision):
        revision = revision.lower()  # a commit copied in capitals is the same commit (the hub names it lower-case)
    if revision is not None and not re.fullmatch(r"[0-9a-f]{40}", revision):
        raise DataError(f"--revision {revision!r}: the dataset's commit, 40 hex digits")
    if revision is None:
        revision = "PIN-A-COMMIT"
        typer.echo("note: no --revision: the task file says revision: PIN-A-COMMIT; glotbench runs hub data only "
                   "at a pinned commit (40 hex), so put the dataset's commit there", err=True)
    try:
        text = task_text(read_text(Path(file)), file, repo, revision, task_id)
    except NotTranslatable as e:
        for line in e.lines:
            typer.echo(f"not translated: {line}", err=True)
        raise DataError(f"{file}: not imported: Inspect would score it by rules glotbench does not reproduce "
                        f"(the line{'s' * (len(e.lines) > 1)} above)") from None
    if out is None:
        typer.echo(text, nl=False)
    else:
        Path(out).write_text(text, encoding="utf-8")
        typer.echo(f"wrote {out}", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")

"""Shared by the command modules: the options every command group declares the same way, declared once
here as `Annotated` types and gathered into option groups (`MODEL_CALLS`, `PRICES`, `ITEMS`,
`JUDGED_ITEMS`, `JUDGE_CALLS`) that `@with_options` adds to each command taking them (as inspect_ai's `_cli/common.py`
does with click), and the one error handler (`ErrorHandlingGroup`): a bad input is a single `error:
...` line on stderr and exit code 2; anything else is a bug in glotbench, said so in one line with how
to see the traceback (`GLOTBENCH_DEBUG=1`), exit code 1.

Nothing heavy is imported here: `glotbench --help` must stay fast.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import traceback
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Optional, Sequence

import typer
from typer.core import TyperGroup

try:  # typer >= 0.2x carries its own copy of click; older typer runs on click itself
    from typer._click import ClickException
    from typer._click.exceptions import UsageError
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import ClickException, UsageError  # type: ignore[assignment]  # an older typer runs on click: its own class

from glotbench.errors import GlotbenchError

# Exceptions that mean "this input (file, option value, reply) is bad", not "glotbench has a bug":
# our own errors (every reader validates what it reads: glotbench.data), a value no parser took
# (JSON, UTF-8, a number), a file that cannot be read. Any other exception, a KeyError or TypeError
# included, is a bug: `bug_report` says so (GLOTBENCH_DEBUG=1 shows the traceback).
INPUT_ERRORS = (GlotbenchError, ValueError, OSError)
BUG_EXIT = 1  # input errors exit 2, an invalid run 3, an interrupted command 130


def die(message: str, code: int = 2) -> None:
    """Print `error: message` on stderr and exit with `code` (no traceback)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def exit_if_invalid(results: dict[str, Any]) -> None:
    """After a command printed its results: an invalid run (too many failed model calls,
    rundir/validity.py) is one `error:` line and exit code 3. Everything is written by then."""
    from glotbench.rundir.validity import INVALID_RUN_EXIT, validity_text

    text = validity_text(results)
    if text is None:
        return
    v = results.get("validity") or {}
    limit = v.get("max_failure_rate")
    cached = (results.get("config") or {}).get("cache", True)
    phases = [pv for pv in (v.get("phases") or {}).values() if isinstance(pv, dict) and not pv.get("valid", True)]
    kinds = set(v.get("kinds") or ()).union(*(pv.get("kinds") or () for pv in phases))
    from glotbench.rundir.validity import UNREADABLE

    if kinds and all(k.startswith(UNREADABLE) for k in kinds) or any(pv.get("reason") for pv in phases):
        fix = ("a judge's replies hold no verdict that can be read (samples.jsonl of each judge-* directory says "
               "why): use another judge or more --max-retries, and run the same command again")
    elif kinds == {"missing"}:  # a replay file without outputs for those items (a judged run's phases too)
        fix = "the replay file has no output for them: add them and run the same command again"
    else:
        model = results.get("model")
        python = isinstance(model, dict) and model.get("backend") == "python"  # no endpoint to fix
        what = ("the model's code (it raised an exception: samples.jsonl's error says which)"
                if kinds == {"exception"} else
                "the model's code (samples.jsonl's error says what it returned)" if python else "the endpoint")
        fix = (f"fix {what} and run the same command again to finish the run"
               + (" (replies already received come from the call cache)" if cached
                  else " (with --no-cache every call is made again)"))
    typer.echo(f"error: {text}" + (f", above --max-failure-rate {limit:g}" if limit is not None else "")
               + ": the scores count those items as failures and do not measure the model. Everything is written "
               f"and marked invalid; {fix}", err=True)
    raise typer.Exit(INVALID_RUN_EXIT)


def describe(e: BaseException) -> str:
    """One line for an input error: our own messages as they are, others with their kind."""
    if isinstance(e, GlotbenchError):
        msg = str(e)
    elif isinstance(e, json.JSONDecodeError):
        msg = f"not valid JSON: {e}"
    elif isinstance(e, UnicodeDecodeError):
        msg = f"not UTF-8 text: {e}"
    elif isinstance(e, IsADirectoryError):
        msg = f"{e.filename}: is a directory, not a file"
    elif isinstance(e, FileNotFoundError):
        msg = f"{e.filename}: no such file or directory"
    elif isinstance(e, OSError):
        msg = f"{e.filename or ''}{': ' if e.filename else ''}{e.strerror or e}"
    elif isinstance(e, ValueError):
        msg = str(e)
    else:
        msg = str(e)
    return " ".join(msg.split()) or type(e).__name__  # exactly one line


PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../glotbench


def _place(frame: traceback.FrameSummary) -> str:
    """`FILE:LINE`, a file inside glotbench by its path from the package (`glotbench/engine/x.py`)."""
    path = os.path.abspath(frame.filename)
    inside = path.startswith(PACKAGE_DIR + os.sep)
    name = os.path.relpath(path, os.path.dirname(PACKAGE_DIR)) if inside else os.path.basename(path)
    return f"{name.replace(os.sep, '/')}:{frame.lineno}"


def bug_report(e: BaseException) -> str:
    """One line for an exception no input explains: what and where it was raised (the innermost frame),
    and how to see the traceback. Raised in glotbench's own code, it is glotbench's bug; raised in code
    glotbench called (a plugin benchmark, a `python:` model, a task's function, a library), that code
    is named with the glotbench line that called it, and the bug is not called glotbench's."""
    frames = traceback.extract_tb(e.__traceback__)
    what = " ".join(f"{type(e).__name__}: {e}".split())[:200]
    ours = [f for f in frames if os.path.abspath(f.filename).startswith(PACKAGE_DIR + os.sep)]
    hint = "run the command again with GLOTBENCH_DEBUG=1 to see the traceback, and report it"
    if frames and ours and frames[-1] is not ours[-1]:
        return (f"this is a bug in code glotbench called, not a problem with the input ({what} at "
                f"{_place(frames[-1])}, called from {_place(ours[-1])}); {hint} where that code is kept")
    where = f" at {_place(frames[-1])}" if frames else ""
    return f"this is a bug in glotbench, not a problem with the input ({what}{where}); {hint}"


class ErrorHandlingGroup(TyperGroup):
    """The one error handler: every command (and sub-group) runs inside this group's `invoke`.

    It also gives every command click's plain help layout rather than typer's rich panels: at 80
    columns the panels' narrow description column cut long words (a model spec, a default path)
    to "…"; click's layout wraps at spaces and never drops text."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["rich_markup_mode"] = None
        super().__init__(*args, **kwargs)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command list with each command's first sentence whole, wrapped (click cuts it to
        one line with "...")."""
        rows = [(name, cmd.get_short_help_str(10_000)) for name in self.list_commands(ctx)
                if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None and hasattr(cmd, "rich_markup_mode"):
            cmd.rich_markup_mode = None
        return cmd

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, html_args(args))

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, ClickException, BrokenPipeError):
            raise  # click's own exits and usage errors; a closed pipe is click's to handle
        except KeyboardInterrupt:
            if ctx.meta.get(NO_CACHE_SEEN):
                die("interrupted; nothing was cached (--no-cache): the same command starts over", 130)
            die("interrupted; commands that call models resume from the call cache when run again", 130)
        except INPUT_ERRORS as e:
            if os.environ.get("GLOTBENCH_DEBUG"):
                raise
            msg = describe(e)
            if not isinstance(e, GlotbenchError):  # our own messages name their file; others get the command
                group = ctx.command_path.split()[-1] if ctx.parent else ""
                cmd = " ".join(x for x in (group if ctx.parent else "", ctx.invoked_subcommand or "") if x)
                msg = f"{cmd}: {msg}" if cmd else msg
            die(msg, getattr(e, "exit_code", 2))
        except Exception as e:  # noqa: BLE001 - a bug: one line that says so, not a traceback
            if os.environ.get("GLOTBENCH_DEBUG"):
                raise
            die(bug_report(e), BUG_EXIT)


# One HTML convention (report, board, compare, diff): `--html [FILE]`. Click has no option with an
# optional value, so `--html` not followed by a page name is rewritten to `--html=` (the command's
# default page) before parsing. A page name ends in .html or .htm; anything else after `--html` is the
# command's next argument (`report --html RUN` keeps working); `--html=NAME` takes any name.
def html_option(default: str, what: str = "Write the HTML page") -> Any:
    """The `--html [FILE]` option; `default` is the page a bare --html writes."""
    return typer.Option("--html", metavar="[FILE]", help=f"{what}: --html alone to {default}; "
                        "--html FILE.html (or --html=FILE) to FILE.")

HTML_SUFFIXES = (".html", ".htm")


def html_args(args: list[str]) -> list[str]:
    """`args` with each bare `--html` (no page name after it) written `--html=`."""
    out: list[str] = []
    for i, a in enumerate(args):
        if a == "--":
            return out + args[i:]
        nxt = args[i + 1] if i + 1 < len(args) else None
        bare = nxt is None or nxt.startswith("-") or not nxt.lower().endswith(HTML_SUFFIXES)
        out.append("--html=" if a == "--html" and bare else a)
    return out


def html_page(value: str | None, default: str) -> str | None:
    """The page `--html [FILE]` asks for: None without --html, `default` for a bare --html."""
    return None if value is None else (value or default)


# The folded commands (issue 33: at most 20 top-level commands) and the form that replaces each. The
# old name stays a hidden command so scripts and docs do not break at once.
ALIASES: dict[str, str] = {
    "arena": "run laobench-arena --bench-opt baseline=SPEC --judge J",  # its flags: --bench-opt KEY=VALUE
    "aragen": "run aragen --judge J",
    "arena-report": "report --judges ARENA...",
    "judge-audit": "report --judges ARAGEN...",
    "arena-rank": "board --bt ARENA...",
    "checks": "rescore --checks RUN",
    "diff": "compare --items RUN_A RUN_B",
    "contamination": "build contamination BENCHMARK CORPUS...",
}


def alias(app: typer.Typer, name: str, fn: Callable[..., Any]) -> None:
    """Register `fn` as the hidden command `name` (one of ALIASES): it runs as before and says, in
    one line on stderr, the command that replaces it."""
    new = ALIASES[name]

    @functools.wraps(fn)
    def command(*args: Any, **kwargs: Any) -> Any:
        typer.echo(f"note: `glotbench {name}` is now `glotbench {new}`; the old name will go", err=True)
        return fn(*args, **kwargs)

    app.command(name, hidden=True, cls=_alias_command(name, new))(command)


def _alias_command(name: str, new: str) -> type:
    """The click command of the alias `name`: a usage error (a missing or unknown option) is one
    `error:` line naming the form that replaces it, not click's three lines of usage."""
    from typer.core import TyperCommand

    class AliasCommand(TyperCommand):
        def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
            try:
                return super().parse_args(ctx, args)
            except UsageError as e:
                die(f"{name}: {e.format_message()} (`glotbench {name}` is now `glotbench {new}`)")
                raise  # not reached: die exits

    return AliasCommand


def print_endpoints(models: list[tuple[str, str | None]], api_key_env: str | None = None) -> None:
    """At a command's start, where each endpoint model's requests go (the URL and where it came from,
    the key's variable; models/endpoint.py): `endpoint: ...` for the run's model, `judge SPEC:
    endpoint: ...` for the others named by their role. Models without an endpoint print nothing."""
    from glotbench.models.endpoint import endpoint_line, spec_endpoint

    seen = set()
    for label, spec in models:
        desc = spec_endpoint(spec, api_key_env) if spec and spec not in seen else None
        if desc is not None:
            seen.add(spec)
            typer.echo((f"{label}: " if label else "") + str(endpoint_line(desc)))


def split_pairs(values: list[str], what: str = "--bench-opt", form: str = "KEY=VALUE") -> tuple[tuple[str, str], ...]:
    """`KEY=VALUE` strings as pairs (values stay text: the benchmark converts them to its declared types)."""
    from glotbench.engine.options import unique_pairs

    pairs = []
    for kv in values:
        key, sep, value = kv.partition("=")
        if not sep or not key.strip():
            raise GlotbenchError(f"{what} takes {form}, got {kv!r}")
        pairs.append((key.strip(), value))
    return unique_pairs(pairs, what)


def not_replaced(path: Any, marker: str, what: str, *, anywhere: bool = False, fix: str = "move the file") -> bool:
    """Whether `path` is a file glotbench wrote (its text starts with, or `anywhere` holds, `marker`);
    False where there is none; else one DataError line: a folder there, or a file of the user's that
    a command would replace (nothing of the user's is ever overwritten; `fix` says what to do)."""
    from pathlib import Path

    from glotbench.errors import DataError

    path = Path(path)
    if not path.exists():
        return False
    if path.is_dir():
        raise DataError(f"{path}: is a directory, not a file")
    text = path.read_text(encoding="utf-8", errors="replace")
    if (marker in text) if anywhere else text.startswith(marker):
        return True
    raise DataError(f"{path}: a file glotbench did not write; {what} would replace it ({fix})")


def read_json(path: str, schema: Any = None) -> Any:
    """A JSON file named on the command line, read through glotbench.data (its size limit, errors
    as FILE:LINE: field: problem); `schema` defaults to any JSON object."""
    from glotbench.data import AnyObject, read_dict

    return read_dict(path, schema or AnyObject)


def to_json(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False)


# ---- shared options (declared once; a command gives the default) ----
ModelSpec = Annotated[str, typer.Option("--model", "-m", help="Model spec, e.g. openai:qwen3@http://localhost:8000/v1 (see `glotbench list`).")]
Data = Annotated[Optional[str], typer.Option(help="Use this data file instead of the bundled data.")]
Limit = Annotated[Optional[int], typer.Option(help="Only the first N items (of the subset, with --subset).")]
FirstN = Annotated[Optional[int], typer.Option("--limit", help="Only the first N items; the run is then marked a subset.")]
Subset = Annotated[Optional[str], typer.Option(help="A named subset of the items: quick (20%, at most 30, stratified by group).")]
Quick = Annotated[bool, typer.Option("--quick", help="Shorthand for --subset quick: a small stratified subset, to try a setup.")]
MaxFailureRate = Annotated[float, typer.Option(help="Largest share of items whose model call may fail (HTTP, connection, timeout...) before the run is invalid (exit 3).")]
Out = Annotated[Optional[str], typer.Option(help="Output directory (default: runs/KIND/TIME-MODEL).")]
Concurrency = Annotated[Optional[int], typer.Option(help="Requests in flight (default: the backend's; per phase for judged runs).")]
ConcurrencyOrAuto = Annotated[Optional[str], typer.Option("--concurrency", help="Requests in flight (default: the backend's), or auto: find the endpoint's limit (AIMD on 429s and timeouts, at most --max-concurrency).")]
Timeout = Annotated[float, typer.Option(help="Per-request timeout in seconds.")]
MaxRetries = Annotated[int, typer.Option(help="Retries per request (429, 5xx, timeouts; a malformed verdict too).")]
ApiKeyEnv = Annotated[Optional[str], typer.Option(help="Environment variable holding the API key (default OPENAI_API_KEY).")]
MaxTokens = Annotated[Optional[int], typer.Option(help="Reply token limit (default: the benchmark's).")]
Temperature = Annotated[Optional[float], typer.Option(help="Sampling temperature (default: the benchmark's).")]
Seed = Annotated[Optional[int], typer.Option(help="Sampling seed, passed to the model.")]
NO_CACHE_SEEN = "glotbench.no_cache"  # in the click context's meta (shared by the whole command chain)


def _note_no_cache(ctx: typer.Context, value: bool) -> bool:
    """What the interrupt handler needs to know: with --no-cache there is nothing to resume from."""
    if value:
        ctx.meta[NO_CACHE_SEEN] = True
    return value


NoCache = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the call cache.", callback=_note_no_cache)]
CachePath = Annotated[Optional[str], typer.Option(help="Call cache file (default: the user cache directory's glotbench/calls.sqlite).")]
PriceIn = Annotated[Optional[float], typer.Option(help="Price per million prompt tokens, for the cost line.")]
PriceOut = Annotated[Optional[float], typer.Option(help="Price per million completion tokens.")]
Thinking = Annotated[Optional[bool], typer.Option("--thinking/--no-thinking", help="Ask a reasoning model for its thinking or non-thinking mode (chat_template_kwargs.enable_thinking).")]
Moved = Annotated[list[str], typer.Option("--moved", help="A file a run read by path, at its new place (repeatable): a SentencePiece model of bleu_tokenize=spm:PATH, a fewshot_data file. Used where the recorded path is gone or changed, and only when its SHA-256 is the one the run recorded (any other file is refused).")]
MetricCheckpoint = Annotated[Optional[str], typer.Option("--metric-checkpoint", help="A learned translation metric's local checkpoint DIR, never downloaded: COMET-22- or xCOMET-style (unbabel-comet's layout: hparams.yaml, checkpoints/model.ckpt, encoder/ with config.json and tokenizer), an xCOMET-lite folder (config.json, model.safetensors, encoder/) or MetricX-24 (an mT5 folder); its scores are added beside the benchmark's metrics, its SHA-256 in the signature. Translation benchmarks only (a declared source field and a corpus metric).")]
BenchOpt = Annotated[list[str], typer.Option("--bench-opt", help="Benchmark setting KEY=VALUE (repeatable), e.g. method=loglik or baseline=SPEC (laobench-arena); booleans are true/false.")]
Progress = Annotated[bool, typer.Option(help="Show progress.")]
Resamples = Annotated[int, typer.Option(help="Bootstrap resamples (and randomisation trials).")]
Human = Annotated[Optional[str], typer.Option(help="Human labels file (JSONL).")]
WriteCards = Annotated[Optional[str], typer.Option("--write-cards", help="Write a validity card per judge and language into this directory (needs --human).")]
Correction = Annotated[str, typer.Option(help="Multiple-comparison correction of the p-values: holm, bh (Benjamini–Hochberg) or none.")]
Db = Annotated[str, typer.Option(help="SQLAlchemy URL: SQLite file (default) or postgresql+psycopg://...")]
DEFAULT_DB = "sqlite:///glotbench-service.sqlite"


@dataclass(frozen=True)
class OptionGroup:
    """Options that several commands take, declared once: `@with_options(GROUP, ...)` adds them to a
    command's signature (after its own), and their values reach the command as keyword arguments
    (`**shared`), ready for `run_options`."""

    name: str
    params: tuple[inspect.Parameter, ...]


def option_group(name: str, **options: tuple[Any, Any]) -> OptionGroup:
    """`option_group("model calls", timeout=(Timeout, 120.0), ...)`: each option's type and default."""
    return OptionGroup(name, tuple(inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, annotation=t, default=d)
                                   for k, (t, d) in options.items()))


def with_options(*groups: OptionGroup) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the groups' options to a command that takes `**shared` (typer reads the signature)."""
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn, eval_str=True)
        own = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        if len(own) == len(sig.parameters):
            raise TypeError(f"{fn.__name__} takes the options of {[g.name for g in groups]} as **kwargs")
        added = [p for g in groups for p in g.params]
        clash = {p.name for p in own} & {p.name for p in added}
        if clash or len({p.name for p in added}) != len(added):
            raise TypeError(f"{fn.__name__}: options declared twice: {sorted(clash) or [p.name for p in added]}")

        @functools.wraps(fn)
        def command(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

        command.__signature__ = sig.replace(parameters=[*own, *added])  # type: ignore[attr-defined]
        return command
    return deco


# The option groups: every command that calls models takes MODEL_CALLS; those whose costs are shown take
# PRICES; those that run a benchmark's items take ITEMS; the judged commands and the build tools set
# one concurrency per phase (JUDGE_CALLS; `run` takes --concurrency N|auto).
MODEL_CALLS = option_group("model calls", max_retries=(MaxRetries, 5), timeout=(Timeout, 120.0),
                           no_cache=(NoCache, False), cache_path=(CachePath, None), api_key_env=(ApiKeyEnv, None),
                           progress=(Progress, True))
JUDGE_CALLS = option_group("judge calls", concurrency=(Concurrency, None))
PRICES = option_group("prices", price_in=(PriceIn, None), price_out=(PriceOut, None))
ITEMS = option_group("items", data=(Data, None), limit=(Limit, None), max_failure_rate=(MaxFailureRate, 0.05))
# the build tools' judge runs: no items option, but their validity has the same threshold
FAILURES = option_group("failures", max_failure_rate=(MaxFailureRate, 0.05))
# arena and aragen: no --subset, so --limit says the run is then a subset
JUDGED_ITEMS = option_group("judged items", data=(Data, None), limit=(FirstN, None),
                            max_failure_rate=(MaxFailureRate, 0.05))


def run_options(*, no_cache: bool = False, bench_opt: Sequence[str] = (), **fields: Any):
    """`RunOptions` from the shared CLI options (`--no-cache` → use_cache, `--bench-opt` → pairs)."""
    from glotbench.engine.evaluate import RunOptions

    renames = {"timeout": "timeout_s", "price_in": "price_in_per_mtok", "price_out": "price_out_per_mtok"}
    kw = {renames.get(k, k): v for k, v in fields.items()}
    if isinstance(kw.get("concurrency"), str):  # `--concurrency N|auto`
        value = kw["concurrency"].strip().lower()
        if value != "auto":
            try:
                value = int(value)
            except ValueError:
                raise GlotbenchError(f"--concurrency must be a whole number >= 1 or auto, got {kw['concurrency']!r}") from None
        kw["concurrency"] = value
    return RunOptions(use_cache=not no_cache, bench_options=split_pairs(list(bench_opt)), **kw)


def use_moved(paths: Sequence[str]) -> None:
    """`--moved FILE`s known (rundir `add_moved`) before the runs are read."""
    if paths:
        from glotbench.rundir import add_moved

        add_moved(paths)

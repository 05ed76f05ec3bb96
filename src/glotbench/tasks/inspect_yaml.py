"""Inspect's `eval.yaml` (a task declared at the root of a hub dataset, read by inspect_ai 0.3.285's
`_eval/task/hf.py`) as a glotbench task: `glotbench run hf/ORG/DATASET[/TASK_ID]@REVISION`, or
`glotbench tasks import-inspect FILE --repo ORG/DATASET --revision SHA` for the task file.

What maps (docs/tasks.md, "Inspect's eval.yaml", has the table):

    config, split                 data.config (none for "default"), data.split; the revision pinned (40 hex)
    field_spec.input              fields.public.prompt; metadata: public and meta fields of their names
    field_spec.target             fields.gold.answer (`literal:X`: X; an integer with choices: its letter)
    field_spec.choices            fields.choices (a list column, or one column per option)
    system_message, prompt_template, multiple_choice
                                  prompt.system and prompt.user, their str.format fields as Jinja
    generate (max_tokens)         the reply (prompt.max_tokens; 1024 when no solver names one)
    choice                        extract [inspect_choice] + option_accuracy
    exact, f1, match, includes, pattern, answer
                                  extract [raw] + the `inspect` scorer (glotbench.tasks.inspect_rules)

Everything else that changes a number is refused, one line `FILE:LINE: key: what` each (as the
lm-eval importer refuses), never translated approximately.

The other way (`export`, `glotbench tasks check TASK --eval-yaml OUT`): a task as one eval.yaml task,
its header noting what Inspect then scores differently; each scorer as NO_INSPECT_SCORER and
`_scorer_of` decide; an imported task exports back to itself.
"""

from __future__ import annotations

import json
import re
import string
from typing import TYPE_CHECKING, Any, Callable

from glotbench.errors import DataError
from glotbench.tasks.files import Where, load_yaml
from glotbench.tasks.lm_eval_import import NotTranslatable, dump_yaml

if TYPE_CHECKING:
    from glotbench.benchmarks.base import Benchmark
    from glotbench.core import Dataset
    from glotbench.tasks.benchmark import TaskBenchmark

_SHA = re.compile(r"[0-9a-f]{40}")
_SPEC = re.compile(r"hf/([A-Za-z0-9][\w.-]*)/([A-Za-z0-9][\w.-]*)(?:/([^/@]+))?(?:@(.*))?")
_FIELD_KEYS = {"input", "target", "choices", "id", "metadata", "sandbox", "files", "setup", "checkpoint"}
MAX_TOKENS = 1024  # Inspect sends no cap unless a solver names max_tokens; glotbench needs one

SINGLE_ANSWER = ("Answer the following multiple choice question. The entire content of your response should be of "
                 "the following format: 'ANSWER: $LETTER' (without quotes) where LETTER is one of {letters}.\n\n"
                 "{question}\n\n{choices}")
SINGLE_ANSWER_COT = ("Answer the following multiple choice question. The last line of your response should be of the "
                     "following format: 'ANSWER: $LETTER' (without quotes) where LETTER is one of {letters}. Think "
                     "step by step before answering.\n\n{question}\n\n{choices}")
_CHOICES = '{% for c in choices %}{{ c.label }}) {{ c.text }}{% if not loop.last %}\n{% endif %}{% endfor %}'
_LETTERS = '{{ labels | join(",") }}'


def parse_spec(spec: str) -> tuple[str, str | None, str | None] | None:
    """`hf/ORG/DATASET[/TASK_ID][@REVISION]` as (repo, task id, revision); None: not such a name."""
    m = _SPEC.fullmatch(spec)
    return None if m is None else (f"{m[1]}/{m[2]}", m[3], m[4])


def _jinja(template: str, names: dict[str, str], where: str, strict: bool) -> str:
    """A str.format template as Jinja: each `{name}` of `names` its Jinja text; a literal `{` kept.
    `strict` (multiple_choice's str.format): an unknown field is refused; else it stays as written
    (inspect's format_template keeps unknown fields)."""
    out = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as e:
        raise NotTranslatable([f"{where}: not a str.format template ({e})"]) from None
    for literal, field, spec, conv in parsed:
        out.append(literal.replace("{", '{{ "{" }}'))
        if field is None:
            continue
        if spec or conv or field not in names:
            if strict or spec or conv:
                raise NotTranslatable([f"{where}: the field {{{field}{'!' + conv if conv else ''}"
                                       f"{':' + spec if spec else ''}}} is not translated (known: {', '.join(names)})"])
            out.append('{{ "{" }}' + field + "}")
            continue
        out.append(names[field])
    return "".join(out)


def _max_tokens(value: Any, where: str, bad: list[str]) -> int | None:
    """A solver's max_tokens (multiple_choice's, generate's), or None with its line in `bad`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        bad.append(f"{where}: a whole number of at least 1")
        return None
    return value


def _task_of(doc: Any, where: Where, task_id: str | None) -> tuple[dict[str, Any], int]:
    tasks = doc.get("tasks") if isinstance(doc, dict) else None
    if tasks is None or tasks == []:
        raise DataError(f"{where('tasks')}: missing (eval.yaml lists its tasks under tasks:)")
    if not isinstance(tasks, list):
        raise DataError(f"{where('tasks')}: a list of tasks, not {type(tasks).__name__}")
    ids = [t.get("id") if isinstance(t, dict) else None for t in tasks]
    twice = sorted({str(i) for i in ids if i is not None and ids.count(i) > 1})
    if twice:
        raise DataError(f"{where('tasks')}: task id{'s' * (len(twice) > 1)} given twice: {', '.join(twice)}")
    if task_id is None:
        if len(tasks) > 1:
            raise DataError(f"{where('tasks')}: {len(tasks)} tasks; name one: "
                            + ", ".join(str(i) for i in ids))
        i = 0
    elif task_id in ids:
        i = ids.index(task_id)
    else:
        raise DataError(f"{where('tasks')}: no task {task_id!r} (it has: {', '.join(str(i) for i in ids)})")
    if not isinstance(tasks[i], dict):
        raise DataError(f"{where('tasks', i)}: a task is a mapping")
    return tasks[i], i


_JINJA_WORDS = {"and", "or", "not", "in", "is", "if", "else", "true", "false", "none", "True", "False", "None",
                "opt", "loop", "self"}


def _column(fs: dict[str, Any], key: str, default: str, at: Any, bad: list[str], jinja: bool) -> str:
    """field_spec[key] as a top-level column name glotbench reads as Inspect does: text, without a
    dot (glotbench reads `a.b` as column b inside column a); where a template names it (`jinja`: the
    target with choices, metadata), a Jinja name (letters, digits, `_`; not a keyword). Else a refusal in `bad`."""
    name = fs.get(key, default)
    if not isinstance(name, str) or not name.strip():
        bad.append(f"{at('field_spec', key)}: {name!r}: a column name (text), not {type(name).__name__}")
        return str(name)
    if "." in name or "{" in name:
        bad.append(f"{at('field_spec', key)}: {name!r}: a column name with '.' or '{{' (glotbench reads "
                   "a.b as a nested column and {{ }} as a template)")
    elif jinja and (not name.isidentifier() or name in _JINJA_WORDS):
        bad.append(f"{at('field_spec', key)}: {name!r}: a column the prompt or gold template cannot name "
                   "(letters, digits and _, not a Jinja keyword)")
    return name


def glotbench_declaration(doc: dict[str, Any], where: Where, task: dict[str, Any]) -> Any:
    """The `glotbench:` declaration of this task (a derived export of a task glotbench's own Inspect
    scorer scores; Inspect reads only `tasks:`) as an `inspect_derived.Declaration`, or None where it
    declares none for this task. A malformed one, or one naming no task of glotbench's library (a
    path, a task file, a built-in benchmark), is refused in one line."""
    from glotbench.tasks.files import library_task
    from glotbench.tasks.inspect_derived import Declaration

    if "glotbench" not in doc:
        return None
    shape = f"scorers: {{TASK_ID: {{name: {GLOTBENCH_SCORER}, args: {{task: NAME, options: {{...}}}}}}}}"
    scorers = doc["glotbench"].get("scorers") if isinstance(doc["glotbench"], dict) else None
    if not isinstance(scorers, dict):
        raise NotTranslatable([f"{where('glotbench')}: glotbench's declaration is {shape}"])
    ident = task.get("id")
    if not isinstance(ident, str) or ident not in scorers:
        return None
    d = scorers[ident]
    at = where("glotbench", "scorers", ident)
    args = d.get("args") if isinstance(d, dict) else None
    lib = args.get("task") if isinstance(args, dict) else None
    if not isinstance(lib, str) or d.get("name") != GLOTBENCH_SCORER:
        raise NotTranslatable([f"{at}: glotbench's declaration is {shape}"])
    assert isinstance(args, dict)
    opts = args.get("options") or {}
    if set(args) - {"task", "options"} or not isinstance(opts, dict) or not all(
            isinstance(k, str) and isinstance(v, (str, int, float, bool)) for k, v in opts.items()):
        raise NotTranslatable([f"{at}: glotbench's declaration is {shape} (options: names and plain values)"])
    if library_task(lib) is None:
        raise DataError(f"{at}.args.task: {lib[:80]!r} is not a task of glotbench's library (glotbench/score "
                        "runs a shipped task by name; a path, a task file or a built-in benchmark is not run from "
                        "a hub dataset)")
    return Declaration(lib, opts, at)


def translate(doc: Any, where: Where, repo: str, revision: str, task_id: str | None = None) -> dict[str, Any]:
    """The glotbench task keys of one task of an eval.yaml; NotTranslatable names every key refused."""
    task, i = _task_of(doc, where, task_id)
    at = lambda *k: where("tasks", i, *k)  # noqa: E731
    if (decl := glotbench_declaration(doc, where, task)) is not None:  # no task file holds it: run from the hub
        raise DataError(f"{decl.at}: scored by glotbench's Inspect scorer {GLOTBENCH_SCORER} (task {decl.task}) on "
                        f"its rows' {GLOTBENCH_COLUMN} column, not by its `scorers:` (a placeholder): no task file "
                        f"holds that; run it from the hub: glotbench run hf/{repo}/{task.get('id')}@SHA")
    bad: list[str] = []
    known = {"id", "config", "split", "field_spec", "shuffle_choices", "epochs", "epoch_reducer", "solvers", "scorers"}
    for k in task:
        if k not in known:
            bad.append(f"{at(k)}: not a key of Inspect's HFTask")
    if task.get("shuffle_choices"):
        bad.append(f"{at('shuffle_choices')}: shuffled options (Inspect draws a new order per run) are not translated")
    if task.get("epochs", 1) != 1:
        bad.append(f"{at('epochs')}: {task['epochs']} epochs (repeated replies reduced) are not translated")
    if task.get("epoch_reducer") is not None:
        bad.append(f"{at('epoch_reducer')}: epoch reducers are not translated")
    fs = task.get("field_spec")
    if not isinstance(fs, dict):
        raise NotTranslatable(bad + [f"{at('field_spec')}: missing (input, target, choices)"])
    for k in fs:
        if k in ("input_image", "description"):
            bad.append(f"{at('field_spec', k)}: {'image input' if k == 'input_image' else 'a sample description'} "
                       "is not translated")
        elif k not in _FIELD_KEYS:
            bad.append(f"{at('field_spec', k)}: not a key of Inspect's field spec")
    if not isinstance(fs.get("choices"), (str, list, type(None))) or isinstance(fs.get("choices"), list) and not all(
            isinstance(c, str) for c in fs["choices"]):
        bad.append(f"{at('field_spec', 'choices')}: a column name or a list of column names")
        fs = {**fs, "choices": None}
    for k in ("id", "config", "split"):  # Inspect's HFTask: text; a number or null is no config or split name
        if k in task and (not isinstance(task[k], str) or not task[k].strip()):
            bad.append(f"{at(k)}: {task[k]!r}: text (a name), not {type(task[k]).__name__}")
    col_input = _column(fs, "input", "input", at, bad, jinja=False)
    col_id = _column(fs, "id", "id", at, bad, jinja=False) if fs.get("id") is not None else None
    choices = fs.get("choices")
    target = fs.get("target", "target")
    literal = isinstance(target, str) and target.startswith("literal:")
    target = target if literal else _column(fs, "target", "target", at, bad, jinja=choices is not None)
    for c in choices if isinstance(choices, list) else [choices] if choices is not None else []:
        _column({"choices": c}, "choices", "", at, bad, jinja=False)
    metadata = fs.get("metadata") or []
    if not isinstance(metadata, list) or not all(isinstance(m, str) for m in metadata):
        bad.append(f"{at('field_spec', 'metadata')}: a list of column names")
        metadata = []
    for m in metadata:
        if m in ("prompt", "choices", "question", "letters"):
            bad.append(f"{at('field_spec', 'metadata')}: {m!r} is a name the prompt templates reserve")
        else:  # read in the prompt's templates as {{ NAME }}
            _column({"metadata": m}, "metadata", "", at, bad, jinja=True)
    names = {m: "{{ " + m + " }}" for m in metadata}

    # solvers -> the prompt
    system: list[str] = []
    user = "{{ prompt }}"
    generated = mc = False
    max_tokens = MAX_TOKENS
    solvers = task.get("solvers") or []
    scorers = task.get("scorers") or []
    if not isinstance(solvers, list) or not isinstance(scorers, list):
        raise NotTranslatable(bad + [f"{at('solvers' if not isinstance(solvers, list) else 'scorers')}: a list"])
    for j, s in enumerate(solvers):
        w = at("solvers", j)
        name = str(s.get("name")) if isinstance(s, dict) else None
        args = (s.get("args") or {}) if isinstance(s, dict) else {}
        if not isinstance(args, dict):
            bad.append(f"{w}.args: a mapping of the solver's arguments")
            continue
        if generated:
            bad.append(f"{w}: {name}: a solver after the reply is generated (a second turn) is not translated")
            continue
        if name in ("system_message", "prompt_template"):
            extra = {k: v for k, v in args.items() if k != "template"}
            if not isinstance(args.get("template"), str):
                bad.append(f"{w}.args.template: missing")
                continue
            consts = {k: _jinja(str(v), {}, w, False) for k, v in extra.items()}  # params: literal text
            try:
                if name == "system_message":
                    system.append(_jinja(args["template"], {**names, **consts}, f"{w}.args.template", False))
                else:
                    user = _jinja(args["template"], {**names, **consts, "prompt": user}, f"{w}.args.template", False)
            except NotTranslatable as e:
                bad += e.lines
        elif name == "multiple_choice":
            if args.get("multiple_correct"):
                bad.append(f"{w}.args.multiple_correct: several correct options are not translated")
            unknown = set(args) - {"template", "cot", "multiple_correct", "max_tokens"}
            bad += [f"{w}.args.{k}: not translated" for k in sorted(unknown)]
            template = args.get("template") or (SINGLE_ANSWER_COT if args.get("cot") else SINGLE_ANSWER)
            if not isinstance(template, str):
                bad.append(f"{w}.args.template: text")
                continue
            if "{question}" not in template or "{choices}" not in template:
                bad.append(f"{w}.args.template: needs {{question}} and {{choices}}")
                continue
            try:
                user = _jinja(template, {"question": user, "choices": _CHOICES, "letters": _LETTERS},
                              f"{w}.args.template", True)
            except NotTranslatable as e:
                bad += e.lines
            if args.get("max_tokens") is not None:
                max_tokens = _max_tokens(args["max_tokens"], f"{w}.args.max_tokens", bad) or max_tokens
            generated = mc = True
        elif name == "generate":
            bad += [f"{w}.args.{k}: generate's arguments but max_tokens are not translated" for k in args
                    if k != "max_tokens"]
            if "max_tokens" in args:
                max_tokens = _max_tokens(args["max_tokens"], f"{w}.args.max_tokens", bad) or max_tokens
            generated = True
        else:
            bad.append(f"{w}: {name}: the solver is not translated" + (
                " (a judge or tool loop has no glotbench equivalent)" if name in ("use_tools", "self_critique") else
                " (chain_of_thought rewrites the prompt; use multiple_choice's cot)" if name == "chain_of_thought" else ""))
    if not generated and not bad:
        bad.append(f"{at('solvers')}: no generate or multiple_choice: nothing asks the model")

    # scorers -> extraction and scorer
    if len(scorers) != 1:
        bad.append(f"{at('scorers')}: {len(scorers)} scorers; a glotbench task has one")
    extract: dict[str, list[Any]] = {"answer": ["raw"]}
    scorer: Any = None
    for j, s in enumerate(scorers[:1]):
        w = at("scorers", j)
        name = str(s.get("name")) if isinstance(s, dict) else None
        args = (s.get("args") or {}) if isinstance(s, dict) else {}
        if not isinstance(args, dict):
            bad.append(f"{w}.args: a mapping of the scorer's arguments")
            continue
        allowed = {"choice": set(), "exact": set(), "f1": {"stop_words"}, "includes": {"ignore_case"},
                   "match": {"location", "ignore_case", "numeric"}, "pattern": {"pattern", "ignore_case", "match_all"},
                   "answer": {"pattern"}}.get(name or "")
        if allowed is None:
            why = {"model_graded_qa": "a model-graded scorer", "model_graded_fact": "a model-graded scorer",
                   "math": "math's symbolic equivalence"}.get(str(name), "an unknown scorer")
            bad.append(f"{w}: {name}: {why} is not translated")
            continue
        bad += [f"{w}.args.{k}: not an argument of {name}" for k in sorted(set(args) - allowed)]
        if name == "choice":
            if not mc:
                bad.append(f"{w}: choice needs the multiple_choice solver")
            extract, scorer = {"letter": ["inspect_choice"]}, "option_accuracy"
        else:
            if args.get("numeric"):
                bad.append(f"{w}.args.numeric: match's numeric rule (Inspect's unicode number parser) is not translated")
            scorer = {"kind": "inspect", "scorer": name,
                      **{k: v for k, v in args.items() if k in ("location", "ignore_case", "stop_words", "pattern",
                                                                 "match_all")}}
            if name == "answer":
                from glotbench.tasks.inspect_rules import ANSWER_PATTERNS

                if args.get("pattern") not in ANSWER_PATTERNS:
                    bad.append(f"{w}.args.pattern: letter, word or line")
                else:
                    scorer = {"kind": "inspect", "scorer": "pattern", "pattern": ANSWER_PATTERNS[args["pattern"]]}
            elif name == "pattern" and not isinstance(args.get("pattern"), str):
                bad.append(f"{w}.args.pattern: missing (the regular expression)")
            if mc and name not in ("pattern", "answer"):
                bad.append(f"{w}: {name} after multiple_choice scores the raw reply; use choice")
    if choices is None and mc:
        bad.append(f"{at('field_spec', 'choices')}: missing (multiple_choice needs the options)")
    if bad:
        raise NotTranslatable(bad)

    fields: dict[str, Any] = {"public": {"prompt": col_input, **{m: m for m in metadata}}}
    if col_id is not None:  # the sample's id: the item's
        fields["id"] = col_id
    if choices is not None:
        fields["choices"] = [str(c) for c in choices] if isinstance(choices, list) else str(choices)
    if target.startswith("literal:"):
        gold = "{% raw %}" + target.removeprefix("literal:") + "{% endraw %}"
    elif choices is not None:  # Inspect: an integer target with choices is its letter
        gold = "{{ " + target + " | letter if " + target + " is integer else " + target + " }}"
    else:
        gold = target
    fields["gold"] = {"answer": gold}
    if metadata:
        fields["meta"] = {m: m for m in metadata}
    ident = task.get("id")
    name = re.sub(r"[^a-z0-9._-]+", "-", (repo.split("/")[1] + (f"-{ident}" if ident else "")).lower()).strip("-._")
    prompt: dict[str, Any] = {"user": user, "max_tokens": max_tokens}
    if system:
        prompt["system"] = "\n\n".join(system)
    config = task.get("config", "default")
    return {"name": name or "inspect-task", "version": "inspect-1",
            "description": f"Inspect eval.yaml task of {repo}" + (f" ({ident})" if ident else ""),
            "data": {"hub": repo, **({"config": str(config)} if config != "default" else {}),
                     "split": str(task.get("split", "test")), "revision": revision},
            "fields": fields, "prompt": prompt, "extract": extract, "scorer": scorer}


def task_text(text: str, name: str, repo: str, revision: str, task_id: str | None = None) -> str:
    """The task file of an eval.yaml's text: a header naming the source, then the keys; validated."""
    from glotbench.tasks.files import validate_spec

    doc, lines = load_yaml(text, name)
    keys = translate(doc, Where(name, lines, file=True), repo, revision, task_id)
    head = (f"# Imported from Inspect's eval.yaml of {repo}@{revision}"
            + (f" (task {task_id})" if task_id else "") + " by glotbench; scores as inspect_ai 0.3.285 scores.\n")
    out = head + dump_yaml(keys)
    raw, out_lines = load_yaml(out, keys["name"] + ".yaml")
    validate_spec(raw, Where(keys["name"] + ".yaml", out_lines, file=True))
    return out


def hub_factory(spec: str) -> Callable[..., Any] | None:
    """The benchmark factory of `hf/ORG/DATASET[/TASK_ID]@REVISION`: eval.yaml read from the hub at the
    pinned revision (the hub's cache; HF_HUB_OFFLINE=1 reads only it), translated into a task file
    kept in glotbench's cache folder; or, where its `glotbench:` key declares glotbench's own scorer,
    that library task over the derived rows (`inspect_derived`). None: not an hf/ name."""
    parsed = parse_spec(spec)
    if parsed is None:
        return None
    repo, task_id, revision = parsed
    revision = revision.lower() if revision and _SHA.fullmatch(revision.lower()) else revision  # a commit in capitals
    if not revision or not _SHA.fullmatch(revision):
        raise DataError(f"{spec}: pin the dataset to a commit: hf/{repo}{'/' + task_id if task_id else ''}@SHA "
                        "(40 hex; glotbench runs hub data only at a pinned revision)")
    from glotbench.keys import cache_dir
    from glotbench.tasks import from_file
    from glotbench.tasks.source import hub_file

    path = hub_file(repo, revision, "eval.yaml")
    if not path.is_file():
        raise DataError(f"{repo}@{revision[:12]} has no eval.yaml at its root")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{repo}@{revision[:12]}/eval.yaml: not UTF-8 ({e.reason})") from None
    name = f"hf/{repo}@{revision[:12]}/eval.yaml"
    doc, lines = load_yaml(text, name)
    where = Where(name, lines, file=True)
    task, i = _task_of(doc, where, task_id)
    if (decl := glotbench_declaration(doc, where, task)) is not None:
        from glotbench.tasks.inspect_derived import DerivedSource, derived_factory

        for k in ("config", "split"):
            if k in task and (not isinstance(task[k], str) or not task[k].strip()):
                raise DataError(f"{where('tasks', i, k)}: {task[k]!r}: text (a name), not {type(task[k]).__name__}")
        config = task.get("config", "default")
        return derived_factory(decl, DerivedSource(repo, revision, None if config == "default" else config,
                                                   task.get("split", "test")))
    out = task_text(text, name, repo, revision, task_id)
    dest = cache_dir() / "inspect-tasks" / f"{repo.replace('/', '+')}+{task_id or ''}+{revision}.yaml"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(out, encoding="utf-8")
    return from_file(dest)


# -- export: a glotbench task as an eval.yaml ---------------------------------------------------------

_JINJA = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}|\{%|\{#", re.S)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LETTER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\|\s*letter\s*\}\}")


def _format_parts(template: str, where: str) -> list[tuple[str, str | None]]:
    """A Jinja template as (literal text, name or None) pairs; anything but `{{ name }}` refused."""
    out: list[tuple[str, str | None]] = []
    pos, text = 0, ""
    for m in _JINJA.finditer(template):
        text += template[pos:m.start()]
        pos = m.end()
        if m.group(1) in ('"{"', "'{'", '"}"', "'}'"):  # a literal brace (as the import writes one)
            text += m.group(1)[1]
            continue
        if m.group(1) is None or not _IDENT.fullmatch(m.group(1)):
            raise NotTranslatable([f"{where}: {m.group(0)}{template[m.end():m.end() + 20]}...: Jinja beyond "
                                   "{{ name }} has no str.format equivalent"])
        out.append((text, m.group(1)))
        text = ""
    out.append((text + template[pos:], None))
    return out


def _fmt(parts: list[tuple[str, str | None]], names: dict[str, str], where: str) -> str:
    text = []
    for literal, name in parts:
        text.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is None:
            continue
        if name not in names:
            raise NotTranslatable([f"{where}: {{{{ {name} }}}} has no eval.yaml equivalent here"])
        text.append(names[name])
    return "".join(text)


# What Inspect's eval.yaml has for each glotbench scorer, decided from inspect_ai 0.3.285's code
# (scorer/_classification.py, _match.py, _pattern.py; docs/tasks.md has the table): the scorers
# without one, each with its reason. option_accuracy is `choice`, inspect is itself, exact_match is
# `match` (location exact) and token_f1 is `f1` (both with notes of what differs), token_f1 in a
# language written without spaces is refused (`_scorer_of`).
NO_INSPECT_SCORER: dict[str, str] = {
    "corpus": "no Inspect scorer sums sufficient statistics (BLEU, chrF)",
    "rouge": "Inspect has no ROUGE scorer",
    "ifeval": "Inspect has no instruction-following checks among eval.yaml's scorers",
    "entity_f1": "Inspect has no entity F1 over BIO tags",
    "numeric_match": "Inspect's match(numeric=True) reads numbers by its own parser, which glotbench does not "
                     "reproduce (its import refuses it too); glotbench reads native digits (Lao, Thai, Khmer)",
    "rubric": "a judged rubric: Inspect's model_graded_qa grades with its own template",
}
_RAW = re.compile(r"\{% raw %\}(.*)\{% endraw %\}", re.S)
_IMPORTED_LETTER = re.compile(r"\{\{\s*(\w+)\s*\|\s*letter if (\w+) is integer else (\w+)\s*\}\}")


def _scorer_of(bench: TaskBenchmark, at: Any, bad: list[str], notes: list[str]) -> dict[str, Any] | None:
    """The eval.yaml scorer of the task's scorer (None: multiple_choice's `choice`); `bad` and `notes`
    get what Inspect cannot express and what it scores differently."""
    sc = bench.spec.scorer
    if sc.kind in NO_INSPECT_SCORER:
        what = "corpus " + "/".join(sc.metrics) if sc.kind == "corpus" else sc.kind
        bad.append(f"{at('scorer')}: {what}: {NO_INSPECT_SCORER[sc.kind]}")
        return None
    if sc.kind == "option_accuracy":
        if bench.spec.fields.choices is None:
            bad.append(f"{at('scorer')}: option_accuracy without fields.choices: Inspect's choice needs the options")
        if sc.balanced:
            notes.append("metrics: Inspect reports accuracy; glotbench's balanced and normalised "
                         "accuracy have no Inspect equivalent")
        return None
    if sc.kind == "inspect":  # an imported eval.yaml's own scorer: the same rule, nothing differs
        args = {"exact": {}, "f1": {"stop_words": sc.stop_words} if sc.stop_words else {},
                "match": {"location": sc.location, "ignore_case": sc.ignore_case},
                "includes": {"ignore_case": sc.ignore_case},
                "pattern": {"pattern": sc.pattern, "ignore_case": sc.ignore_case, "match_all": sc.match_all}}
        return {"name": sc.scorer, **({"args": args[sc.scorer]} if args[sc.scorer] else {})}
    if sc.kind == "exact_match":
        if sc.ignore:
            bad.append(f"{at('scorer', 'ignore')}: patterns removed before comparing: Inspect's scorers have none")
            return None
        case = any(n in sc.normalise for n in ("lower", "casefold"))
        notes.append("scorer: Inspect's match(location=exact) strips whitespace and ASCII punctuation at both ends"
                     + (" and casefolds" if case else "") + "; glotbench's exact_match applies "
                     + ("+".join(sc.normalise) or "no normalisation") + " (scores differ where these do)")
        return {"name": "match", "args": {"location": "exact", "ignore_case": case}}
    if sc.kind == "token_f1":
        from glotbench.text.segment import needs_segmentation

        if needs_segmentation(bench.lang):
            bad.append(f"{at('scorer')}: token_f1 ({bench.lang}): Inspect's f1 splits words on spaces and '-' only, "
                       f"so a {bench.lang} answer written without spaces is one word (all or nothing) where "
                       "glotbench segments it into words")
            return None
        notes.append(f"scorer: Inspect's f1 (words split on spaces and '-', casefolded, ASCII punctuation and a/an/the "
                     f"removed, numbers as floats, each F1 rounded to 2 places, no exact-match metric) for "
                     f"glotbench's token_f1 (norm={sc.norm}, empty={sc.empty}, refs={sc.refs}): scores differ")
        return {"name": "f1"}
    bad.append(f"{at('scorer')}: {sc.kind}: no Inspect scorer")
    return None


def _target_of(spec: Any, mc: bool, at: Any, bad: list[str]) -> str | None:  # mc: the options are shown
    """field_spec.target of the task's gold answer: a column, `literal:X`, or (with choices) a column of
    letters or of 0-based indices made letters."""
    gold = spec.fields.gold
    if "answer" not in gold:
        key = next(iter(gold), "answer")
        bad.append(f"{at('fields', 'gold', key)}: {gold.get(key)!r}: a list of references: Inspect's target is "
                   "one column made one string (str() of a list)")
        return None
    g = gold["answer"]
    if not isinstance(g, str):
        bad.append(f"{at('fields', 'gold', 'answer')}: a list: Inspect's target is one column")
        return None
    if (m := _RAW.fullmatch(g)) and "{%" not in m.group(1):
        return "literal:" + m.group(1)
    if mc and (m := _LETTER.fullmatch(g.strip())):
        return m.group(1)
    if mc and (m := _IMPORTED_LETTER.fullmatch(g.strip())) and m.group(1) == m.group(2) == m.group(3):
        return m.group(1)
    if "{" in g or "." in g:
        bad.append(f"{at('fields', 'gold', 'answer')}: {g!r}: Inspect's target is a column "
                   "(with choices: a letter, or a 0-based index made its letter)")
        return None
    return g


def export(bench: Benchmark) -> tuple[dict[str, Any], list[str]]:
    """One task of an eval.yaml for a built TaskBenchmark (its options filled in), and the notes of
    what differs from glotbench's own run of it; NotTranslatable names each part Inspect cannot express."""
    bench = _task_bench(bench)
    spec, v, data = bench.spec, bench.variant, bench.data
    at = lambda *k: f"{bench.name}: {'.'.join(map(str, k))}"  # noqa: E731
    bad: list[str] = []
    notes: list[str] = []
    if data.hub is None:
        bad.append(f"{at('data')}: a local file; eval.yaml declares a hub dataset's own task")
    if data.roles:
        bad.append(f"{at('data', 'roles')}: joined configs have no eval.yaml equivalent")
    if bench.method != "generate":
        bad.append(f"{at('method')}: {bench.method}: Inspect's eval.yaml tasks generate replies")
    before = len(bad)
    scorer = _scorer_of(bench, at, bad, notes)
    scored = len(bad) == before  # a scorer Inspect has: its target is checked too
    choices = spec.fields.choices
    mc = choices is not None  # options shown: multiple_choice (then choice, or the task's pattern scorer)
    if hasattr(choices, "fixed"):
        bad.append(f"{at('fields', 'choices')}: fixed choices (Inspect reads the options from each record)")
    elif isinstance(choices, str) and "{" in choices or isinstance(choices, list) and any("{" in c for c in choices):
        bad.append(f"{at('fields', 'choices')}: a template (Inspect reads columns)")
    if mc and scorer is not None and scorer["name"] != "pattern":
        bad.append(f"{at('scorer')}: {spec.scorer.kind} with the options shown: after multiple_choice Inspect's "
                   f"{scorer['name']} scores the raw reply (glotbench's import refuses it; use option_accuracy)")
    target = _target_of(spec, mc, at, bad) if scored else None
    if bench.shots or v.preamble:
        bad.append(f"{at('fewshot' if bench.shots else 'prompt.preamble')}: few-shot examples and preambles are not "
                   "eval.yaml solvers")
    if v.labels != "latin":
        bad.append(f"{at('prompt', 'labels')}: native option labels (Inspect shows A, B, C)")
    public = {c: c for c in spec.fields.public} if isinstance(spec.fields.public, list) else dict(spec.fields.public)
    for k, col in public.items():
        if "{" in col or "." in col:
            bad.append(f"{at('fields', 'public', k)}: {col!r}: a template or role (Inspect reads a column)")
    if v.user is None:
        bad.append(f"{at('prompt', 'user')}: missing (a plain-text prompt only)")
    if bad:
        raise NotTranslatable(bad)
    user = v.user
    imported = mc and _CHOICES in user  # an imported multiple_choice template: its own option lines and letters
    if imported:
        user = user.replace(_CHOICES, "{{ options }}").replace(_LETTERS, "{{ letters }}")
    parts = _format_parts(user, at("prompt", "user"))
    if mc:
        opts = [i for i, (_, n) in enumerate(parts) if n == "options"]
        if len(opts) != 1:
            raise NotTranslatable([f"{at('prompt', 'user')}: {{{{ options }}}} {len(opts)} times; multiple_choice "
                                   "places the options once"])
        head, tail = parts[:opts[0] + 1], parts[opts[0] + 1:]
    else:
        head, tail = parts, []
    asked = [n for _, n in head if n in public]
    if not asked:
        raise NotTranslatable([f"{at('prompt', 'user')}: no field{' before {{ options }}' * mc} to be Inspect's input"])
    question = "prompt" if "prompt" in asked else asked[-1]  # an imported task's input keeps its name
    constants = {"language": bench.renderer.language or "", "lang": bench.lang or ""}
    metadata = [k for k in public if k != question]
    if any(public[k] != k for k in metadata):
        raise NotTranslatable([f"{at('fields', 'public')}: a field renamed from its column "
                               "(Inspect's metadata keeps column names)"])
    fields = {**constants, **{k: "{" + k + "}" for k in metadata}}
    mc_parts = [("", "question")] + tail
    if mc:
        if any(n == "letters" for _, n in head):  # multiple_choice's {letters}: the text around the fields is its
            named = [i for i, (_, n) in enumerate(head) if n in public]
            k0, k1 = named[0], named[-1]
            if any(n == "letters" for _, n in head[k0:k1 + 1]):
                raise NotTranslatable([f"{at('prompt', 'user')}: the option letters between the fields: "
                                       "multiple_choice's {letters} and prompt_template's fields cannot interleave"])
            mc_parts = head[:k0] + [(head[k0][0], "question")] + head[k1 + 1:] + tail
            head = [("", head[k0][1])] + head[k0 + 1:k1 + 1] + [("", None)]
        else:
            mc_parts = [("", "question"), (head[-1][0], "options")] + tail
            head = head[:-1] + [("", None)]  # {{ options }} itself: multiple_choice's {choices}
    prompt_t = _fmt(head, {**fields, str(question): "{prompt}"}, at("prompt", "user"))
    solvers: list[dict[str, Any]] = []
    if v.system:
        solvers.append({"name": "system_message", "args": {"template": _fmt(
            _format_parts(v.system, at("prompt", "system")), fields, at("prompt", "system"))}})
    if prompt_t != "{prompt}":
        solvers.append({"name": "prompt_template", "args": {"template": prompt_t}})
    field_spec: dict[str, Any] = {"input": public[question], "target": target}
    pipeline = spec.extract[bench.headline_pipeline]
    if mc:
        mc_names = {**constants, "question": "{question}", "options": "{choices}", "letters": "{letters}"}
        solvers.append({"name": "multiple_choice", "args": {
            "template": _fmt(mc_parts, mc_names, at("prompt", "user")), "max_tokens": v.max_tokens}})
        field_spec["choices"] = list(choices) if isinstance(choices, list) else choices
        if not imported:
            notes.append("option lines: Inspect writes 'A) text' where glotbench writes 'A. text'")
    else:
        solvers.append({"name": "generate", "args": {"max_tokens": v.max_tokens}})
    if scorer is None and pipeline != ["inspect_choice"]:
        notes.append("extraction: Inspect's ANSWER: parser (inspect_choice) replaces " +
                     ", ".join(f"{p} ({'>'.join(str(s) for s in spec.extract[p])})" for p in spec.extract))
    elif scorer is not None and pipeline != ["raw"]:
        notes.append(f"extraction: Inspect scores the whole reply; glotbench's {bench.headline_pipeline} reads it "
                     f"through {'>'.join(str(s) for s in pipeline)}")
    if metadata:
        field_spec["metadata"] = [public[k] for k in metadata]
    if spec.data.files:
        notes.append("data.files: Inspect reads the config's files from the dataset card, not glotbench's patterns")
    task = {"id": bench.name, "config": data.config or "default", "split": data.split,
            "field_spec": field_spec, "solvers": solvers, "scorers": [scorer or {"name": "choice"}]}
    return task, notes


def _task_bench(bench: Benchmark) -> TaskBenchmark:
    """`bench` as the task file's benchmark it must be to have an eval.yaml; else NotTranslatable."""
    from glotbench.tasks.benchmark import TaskBenchmark

    if not isinstance(bench, TaskBenchmark):
        raise NotTranslatable([f"{bench.name}: a built-in benchmark (Python code, not a task file): its prompt and "
                               "scoring have no eval.yaml form"])
    return bench


def export_text(bench: Benchmark) -> tuple[str, list[str]]:
    """The eval.yaml of one task: a header (the revision to pin, what differs), then `tasks:`."""
    task, notes = export(bench)
    bench = _task_bench(bench)
    head = [f"# Written by glotbench from its task {bench.name} v{bench.version}; the dataset "
            f"{bench.data.hub} (run it pinned: inspect eval hf/{bench.data.hub}@{bench.data.revision}).",
            "# It scores as Inspect scores, which differs from glotbench's own run of the task in:" if notes else
            "# It scores as Inspect scores, as glotbench's own run of the task does (Inspect's own rules)."]
    head += [f"#   {n}" for n in notes]
    return "\n".join(head) + "\n" + dump_yaml({"tasks": [task]}), notes


# -- export with a derived dataset: each item as glotbench renders and grades it ----------------------
# Inspect's eval.yaml reads fields from the dataset as they are; a task that renders its prompt,
# options or gold from several columns (templates, fixed choices, a 1-based number, a nested
# reference) is written with a derived dataset next to its eval.yaml, in the hub's layout: one row
# per item with its rendered prompt (`input`, and `system`), its `target` and its option texts
# (`choices`). The eval.yaml then only sends `input` (generate) and scores the reply by Inspect's rule
# nearest the task's extraction (`_derived_scorer`); what that rule does differently is noted.

DERIVED_DATA = "data/{split}.jsonl"
DERIVED_CARD = "# Derived by glotbench"
GLOTBENCH_COLUMN = "glotbench"  # a glotbench-scored row's item as JSON text (glotbench/inspect_ext.py reads it)


def _step_name(step: Any) -> str:
    return step if isinstance(step, str) else next(iter(step))


def _letter_reader(steps: list[Any]) -> bool:
    """The pipeline reads an option letter by an answer phrase (option_letter's default rule or
    Inspect's own ANSWER: parser), which Inspect's answer(letter) reads too."""
    core = [s for s in steps if _step_name(s) != "strip_think"]
    if len(core) != 1:
        return False
    s = core[0]
    if s == "inspect_choice":
        return True
    return _step_name(s) == "option_letter" and (s == "option_letter" or s["option_letter"] is None
                                                  or s["option_letter"].get("rule", "answer_phrase") == "answer_phrase")


_OPEN = re.compile(r"(?<!\\)\((?!\?)")  # an unescaped `(` that opens a capturing group


def _regex_pattern(arg: Any) -> str | None:
    """A regex step (the `regex` pipeline step: its first match, or lm-eval's findall at `select` 0 or
    -1) as the pattern Inspect's `pattern` scorer searches (its first match's groups): the pattern
    itself, or, for the last match, followed by a lookahead that no later match follows. None where
    that is not the same reading (several groups, a `(` in a character class, other arguments, not a
    pattern Python's re reads)."""
    if isinstance(arg, str):
        pattern, select = arg, 0
    elif isinstance(arg, dict) and set(arg) == {"pattern", "select"} and arg["select"] in (0, -1):
        pattern, select = arg["pattern"], arg["select"]
    else:
        return None
    if not isinstance(pattern, str) or re.search(r"\[[^\]]*\(", pattern):
        return None
    try:
        if re.compile(pattern).groups > 1:
            return None
        later = _OPEN.sub("(?:", pattern)
        out = pattern if select == 0 else f"{pattern}(?![\\s\\S]*(?:{later}))"
        return out if re.compile(later).groups == 0 and re.compile(out).groups == re.compile(pattern).groups else None
    except re.error:
        return None


def _derived_scorer(bench: TaskBenchmark, at: Any, bad: list[str], notes: list[str]) -> tuple[dict[str, Any], str] | None:
    """The eval.yaml scorer of a derived export and what its target column holds (letter, text,
    references); None with the reasons in `bad`."""
    before = len(bad)
    scorer = _scorer_of(bench, at, bad, notes)
    if len(bad) > before:
        return None
    pipe = bench.headline_pipeline
    steps = bench.extract_steps[pipe]
    shown = ">".join(str(s) for s in steps)
    if bench.spec.scorer.kind != "option_accuracy":
        assert scorer is not None
        if steps != ["raw"]:
            notes.append(f"extraction: Inspect scores the whole reply; glotbench's {pipe} reads it through {shown}")
        return scorer, "references"
    core = [s for s in steps if _step_name(s) != "strip_think"]
    if _letter_reader(steps):
        if bench.variant.labels != "latin":
            bad.append(f"{at('prompt', 'labels')}: native option labels (Inspect's answer(letter) reads A-Z)")
            return None
        notes.append(f"extraction: Inspect's answer(letter) (the letter after the last 'ANSWER:', any case) for "
                     f"glotbench's {pipe} ({shown}); they agree on replies ending 'Answer: X'")
        return {"name": "answer", "args": {"pattern": "letter"}}, "letter"
    if core == ["option_text"]:
        notes.append(f"extraction: Inspect's match(location=exact) compares the whole reply (whitespace and ASCII "
                     f"punctuation stripped at both ends, casefolded) with the gold option's text; glotbench's "
                     f"{pipe} ({shown}) finds the one option the reply names")
        return {"name": "match", "args": {"location": "exact", "ignore_case": True}}, "text"
    if len(core) == 1 and _step_name(core[0]) == "regex" and (pattern := _regex_pattern(core[0]["regex"])):
        if bench.variant.labels != "latin":
            bad.append(f"{at('prompt', 'labels')}: native option labels (the letters Inspect's target holds are A-Z)")
            return None
        notes.append(f"extraction: Inspect's pattern (Python's re, case as written) for glotbench's {pipe} ({shown}; "
                     "the regex module); the last match is the first one no later match follows")
        return {"name": "pattern", "args": {"pattern": pattern, "ignore_case": False}}, "letter"
    if len(core) == 1 and _step_name(core[0]) == "seahelm_label":
        notes.append(f"extraction: Inspect's pattern (the task's answer tag, then an option's text, any case) for "
                     f"glotbench's {pipe} ({shown}); where the tag is missing SEA-HELM reads the whole reply "
                     "and Inspect reads no answer")
        return {"name": "pattern", "args": {"pattern": "", "ignore_case": True}}, "text"  # the pattern: per task, below
    bad.append(f"{at('extract', pipe)}: {shown}: no Inspect scorer reads a reply this way "
               "(Inspect reads a letter after ANSWER:, a whole reply, or a pattern's first match)")
    return None


# A task no Inspect rule scores (derived_plan's "glotbench" kind): the eval.yaml, whose scorers are
# Inspect's ten built-in names only (0.3.285's HFScorer), names `match` (the reply equal to the first
# reference) as the placeholder Inspect needs, and glotbench's own Inspect scorer under `glotbench:`
# (glotbench/inspect_ext.py), which `inspect score` applies to the log.
GLOTBENCH_SCORER = "glotbench/score"
PLACEHOLDER = {"name": "match", "args": {"location": "exact", "ignore_case": True}}
PLACEHOLDER_KIND = "glotbench"  # derived_plan's target kind of a task glotbench's own scorer scores


def scorer_options(bench: TaskBenchmark) -> dict[str, Any]:
    """The options `glotbench/score` rebuilds the task with: each declared option's value, and the
    prompt variant where it is not the default (it may replace the scorer and the extraction)."""
    opts = {k: v for k, v in bench.options.items() if k in bench.spec.options}
    return {**opts, **({"prompt": bench.options["prompt"]} if bench.options.get("prompt", "default") != "default" else {})}


def derived_plan(bench: Benchmark) -> tuple[dict[str, Any], str, list[str]]:
    """What a derived export of `bench` can be, before any row is read: the scorer, the target kind,
    and the notes; NotTranslatable names each part Inspect cannot express. A task no Inspect rule
    scores (its scorer, its gold, its extraction) is the "glotbench" kind: scored by glotbench's own
    Inspect scorer; only a library task (the scorer names it), generated and zero-shot, not judged."""
    from glotbench.tasks.files import library_task

    bench = _task_bench(bench)
    at = lambda *k: f"{bench.name}: {'.'.join(map(str, k))}"  # noqa: E731
    bad: list[str] = []  # what Inspect's own rules cannot score
    notes: list[str] = []
    fixed: list[str] = []  # what no scorer changes
    if bench.method != "generate":
        fixed.append(f"{at('method')}: {bench.method}: Inspect's eval.yaml tasks generate replies")
    if bench.shots:
        fixed.append(f"{at('fewshot')}: few-shot examples are turns of the conversation; an eval.yaml input is one turn")
    got = _derived_scorer(bench, at, bad, notes) if not fixed else None
    if got is not None and got[1] == "references" and "answer" not in bench.spec.fields.gold:
        key = next(iter(bench.spec.fields.gold), "answers")
        bad.append(f"{at('fields', 'gold', key)}: a list of references: an eval.yaml target is one text (Inspect's "
                   "hf loader reads str() of a list)")
    if not fixed and (bad or got is None):
        if bench.judged:
            fixed.append(f"{at('scorer')}: a judged scorer: its verdicts come from judge models, not from a scorer "
                         "of the reply")
        elif library_task(bench.name) is None or bench.task_file() is not None:
            fixed.append(f"{at('name')}: glotbench's Inspect scorer ({GLOTBENCH_SCORER}) names a library task; "
                         "this task file is not one")
        else:
            why = "; ".join(line.removeprefix(f"{bench.name}: ") for line in bad) or "no Inspect rule"
            opts = scorer_options(bench)
            s_opts = f" -S options='{json.dumps(opts, ensure_ascii=False)}'" if opts else ""
            return PLACEHOLDER, PLACEHOLDER_KIND, [
                f"scorer: Inspect's own scorers cannot score it ({why}); eval.yaml names only those (Inspect's "
                "HFScorer), so its `match` (the reply equal to the first reference) is a placeholder, NOT the "
                f"task's metric. The task's metrics, by glotbench's own code: inspect score LOG --scorer "
                f"{GLOTBENCH_SCORER} -S task={bench.name}{s_opts} --action overwrite (`pip install glotbench` "
                "registers the scorer with Inspect)"]
    if fixed:
        raise NotTranslatable(fixed + bad)
    assert got is not None
    if bench.spec.groups or bench.spec.cluster:
        notes.append("groups and clusters: the derived rows carry no " + " or ".join(
            x for x in ("groups (" + ", ".join(bench.spec.groups) + ")" if bench.spec.groups else "",
                        f"cluster ({bench.spec.cluster})" if bench.spec.cluster else "") if x)
                     + "; Inspect reports one accuracy without clustered intervals")
    return got[0], got[1], notes


def target_text(item: Any, kind: str) -> str:
    """An item's eval.yaml target of this kind (`letter`, `text`, `references`, PLACEHOLDER_KIND)."""
    if kind == PLACEHOLDER_KIND:  # the placeholder's target: the first reference text, or none
        first = next(iter(item.gold.values()), None)
        first = first[0] if isinstance(first, (list, tuple)) and first else first
        return first if isinstance(first, str) else ""
    if kind == "letter":
        return str(item.gold["answer"])
    if kind == "text":
        letter = str(item.gold["answer"])
        return str(item.public["choices"][ord(letter) - ord("A")])
    gold = item.gold.get("answers", item.gold.get("answer"))
    refs = list(dict.fromkeys(str(g) for g in gold)) if isinstance(gold, list) else [str(gold)]
    if len(refs) != 1:  # Inspect's hf loader makes the target str(value): a list would be its Python text
        raise NotTranslatable([f"item {item.id}: {len(refs)} references: an eval.yaml target is one text "
                               "(Inspect reads str() of a list)"])
    return refs[0]


def export_derived(bench: Benchmark, dataset: Dataset, source: str | None = None) -> tuple[str, list[dict[str, Any]], str, str, list[str]]:
    """A derived export of `bench` over its loaded `dataset`: the eval.yaml text, its rows, the data
    file's path in the repository, the dataset card, and the notes of what Inspect scores differently.
    `source`: where the rows came from, in words (a user's file is not the task's pinned hub data)."""
    scorer, kind, notes = derived_plan(bench)
    bench = _task_bench(bench)
    at = lambda *k: f"{bench.name}: {'.'.join(map(str, k))}"  # noqa: E731
    rows: list[dict[str, Any]] = []
    systems = set()
    labels = set()
    for item in dataset:
        messages = bench.render(item.to_public()).messages
        roles = [m["role"] for m in messages]
        if roles not in (["user"], ["system", "user"]):
            raise NotTranslatable([f"{at('prompt')}: item {item.id}: messages {'/'.join(roles)}: an eval.yaml input "
                                   "is one user turn after at most one system message"])
        row: dict[str, Any] = {"id": str(item.id), "input": messages[-1]["content"]}
        if len(messages) == 2:
            row["system"] = messages[0]["content"]
            systems.add(row["system"])
        choices = item.public.get("choices")
        if isinstance(choices, (list, tuple)):
            row["choices"] = [str(c) for c in choices]
            labels.add(tuple(row["choices"]))
        if kind == PLACEHOLDER_KIND:  # the item as glotbench scores it (glotbench/score reads it)
            from glotbench.core import jsonable

            # the task and options it was derived with: glotbench/score refuses rows of another task
            row[GLOTBENCH_COLUMN] = json.dumps({"id": item.id, "task": bench.name, "version": bench.version,
                                                "options": scorer_options(bench), **{
                k: jsonable(dict(getattr(item, k))) for k in ("public", "gold", "meta")}}, ensure_ascii=False)
        try:
            row["target"] = target_text(item, kind)
        except NotTranslatable as e:
            raise NotTranslatable([f"{bench.name}: {line}" for line in e.lines]) from None
        rows.append(row)
    if not rows:
        raise NotTranslatable([f"{at('data')}: no items to write"])
    if scorer["name"] == "pattern" and not scorer["args"]["pattern"]:  # SEA-HELM's: TAG, then the labels; one for all
        if len(labels) != 1:
            raise NotTranslatable([f"{at('fields', 'choices')}: the labels differ between items; an eval.yaml "
                                   "pattern is one for the task"])
        tag = next(s for s in bench.extract_steps[bench.headline_pipeline] if _step_name(s) == "seahelm_label")
        tag = tag["seahelm_label"]["tag"]
        scorer = {"name": "pattern", "args": {"pattern": tag + r"[\s\*]*(" + "|".join(next(iter(labels))) + ")+",
                                              "ignore_case": True}}
    split = bench.data.split
    path = DERIVED_DATA.format(split=split)
    field_spec: dict[str, Any] = {"input": "input", "target": "target", "id": "id"}
    solvers: list[dict[str, Any]] = []
    if systems:
        if len(systems) < len(rows) and any("system" not in r for r in rows):
            raise NotTranslatable([f"{at('prompt', 'system')}: a system message for some items only"])
        field_spec["metadata"] = ["system"]
        solvers.append({"name": "system_message", "args": {"template": "{system}"}})
    if kind == PLACEHOLDER_KIND:
        field_spec["metadata"] = [*field_spec.get("metadata", []), GLOTBENCH_COLUMN]
    solvers.append({"name": "generate", "args": {"max_tokens": bench.variant.max_tokens}})
    task = {"id": bench.name, "config": "default", "split": split, "field_spec": field_spec,
            "solvers": solvers, "scorers": [scorer]}
    if source is None:
        source = f"{bench.data.hub}@{bench.data.revision}" if bench.data.hub else "a local file"
    head = [f"# Written by glotbench from its task {bench.name} v{bench.version} with a derived dataset: {path}",
            f"# next to this file holds the {len(rows)} items of {source} as glotbench renders them",
            "# (input, system: the prompt; target: the gold; choices: the options). Push this folder as a",
            "# dataset repository, then run: inspect eval hf/ORG/NAME@SHA",
            "# It scores as Inspect scores, which differs from glotbench's own run of the task in:" if notes else
            "# It scores as Inspect scores, as glotbench's own run of the task does (Inspect's own rules)."]
    head += [f"#   {n}" for n in notes]
    doc: dict[str, Any] = {"tasks": [task]}
    if kind == PLACEHOLDER_KIND:  # Inspect reads only `tasks:`; glotbench's import and the header's command read this
        doc["glotbench"] = {"scorers": {bench.name: {"name": GLOTBENCH_SCORER, "args": {
            "task": bench.name, **({"options": o} if (o := scorer_options(bench)) else {})}}}}
    text = "\n".join(head) + "\n" + dump_yaml(doc)
    licence = bench.spec.datasheet.licence if bench.spec.datasheet is not None else None
    card = (f"---\nconfigs:\n- config_name: default\n  data_files:\n  - split: {split}\n    path: {path}\n---\n"
            f"{DERIVED_CARD} from its task {bench.name} v{bench.version} and {source}"
            + (f" (licence: {licence})" if licence else "") + ".\n\nIts eval.yaml runs it with Inspect "
            "(`inspect eval hf/ORG/NAME@SHA`) and glotbench (`glotbench run hf/ORG/NAME@SHA`).\n")
    return text, rows, path, card, notes

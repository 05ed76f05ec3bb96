"""`glotbench tasks import-lm-eval FILE.yaml`: an lm-evaluation-harness task YAML of the simple kinds
(`multiple_choice`, `generate_until`, prompts as Jinja templates) as a glotbench task file, with one
line `FILE:LINE: key: what` for each key it does not translate.

lm-eval is not needed: its YAML is read here, its `include:` chain resolved (relative to each file,
included keys first, the file's own winning, as lm-eval merges them) and its `!function` tags kept
as markers (Python cannot go into a task file: a prompt, target or choice list given by a function
stops the import; a `process_docs` or a custom filter is reported and left out). What maps:

    doc_to_text, description        prompt.text, prompt.preamble (a column name: its value)
    doc_to_choice                   fields.choices (a list: fixed; a column or a template: per item)
    doc_to_target                   multiple choice: the gold option by lm-eval's rule (`lm_eval_target`);
                                    generate_until: the gold answer (exact_match) or reference (BLEU, chrF)
    target_delimiter, fewshot_*     loglik.delimiter, fewshot (n, split, sampler first_n or lm-eval's stream)
    metric_list                     acc, acc_norm, acc_bytes: log-likelihood norms sum, char, byte;
                                    exact_match with its options; bleu, chrf, chrf++ on unsegmented text
    generation_kwargs, filter_list  prompt.stop and max_tokens; extraction pipelines (regex, take_first, ...)

The template names a prompt reads become the public fields (kept under their names); everything else
in a row stays out of the prompt. Tests: tests/test_tasks_import_lm_eval.py renders the imported
files and lm-eval's own tasks on the same rows.

Over 400 lines on purpose: it is one translation table, each lm-eval key's rule beside the line it
writes when the key does not translate; split, the table and its notes would drift apart.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glotbench.errors import DataError
from glotbench.tasks.fields import RESERVED
from glotbench.tasks.files import check_expansion

PLACEHOLDER_REVISION = "PIN-A-COMMIT"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IGNORED = {"tag", "task_alias", "group_alias", "should_decontaminate", "doc_to_decontamination_query",
            "higher_is_better", "unsafe_code"}  # they change no number


class NotTranslatable(DataError):
    """The prompt, the choices or the target cannot be translated; `lines` names each key."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        super().__init__(lines[0] + (f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""))


@dataclass(frozen=True)
class Function:
    """A `!function module.name` tag: Python, which a task file cannot hold."""

    ref: str


@dataclass
class Imported:
    keys: dict[str, Any]  # the glotbench task's keys
    notes: list[str] = field(default_factory=list)  # `FILE:LINE: key: what` for each key not translated

    def text(self, source: str) -> str:
        """The task file: a header naming the source and what was not translated, then the keys."""
        head = [f"# Imported from lm-evaluation-harness's {source} by `glotbench tasks import-lm-eval`."]
        if self.notes:
            head.append("# Not translated (the numbers may differ from lm-eval's where these matter):")
            head += [f"#   {n}" for n in self.notes]
        return "\n".join(head) + "\n" + dump_yaml(self.keys)


# -- reading lm-eval's YAML ------------------------------------------------------------------------

def _loader() -> Any:
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: Function(str(loader.construct_scalar(node))))
    return Loader


def _read_one(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"{path}: cannot read ({e})") from None
    loader = _loader()(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            check_expansion(node, str(path))
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise DataError(f"{path}:{mark.line + 1 if mark else 1}: not valid YAML ({getattr(e, 'problem', e)})") from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise DataError(f"{path}: an lm-eval task YAML is a mapping of keys")
    return data, {str(k.value): f"{path}:{k.start_mark.line + 1}" for k, _ in node.value}


def read(path: str | Path, _seen: frozenset[Path] = frozenset()) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """The task's keys after its `include:` chain, where each came from (`FILE:LINE`, the path as
    given and the includes relative to it), and the lines of includes that could not be read."""
    p = Path(path)
    if p.resolve() in _seen:
        raise DataError(f"{p}: include: a cycle back to this file")
    cfg, where = _read_one(p)
    notes: list[str] = []
    if "include" not in cfg:
        return cfg, where, notes
    merged: dict[str, Any] = {}
    merged_where: dict[str, str] = {}
    includes = cfg.pop("include")
    for inc in includes if isinstance(includes, list) else [includes]:
        target = Path(str(inc)) if Path(str(inc)).is_absolute() else p.parent / str(inc)
        if not target.is_file():
            notes.append(f"{where['include']}: include: {inc}: not found (its keys are missing here)")
            continue
        sub, sub_where, sub_notes = read(target, _seen | {p.resolve()})
        sub.pop("task_list", None)
        merged.update(sub)
        merged_where.update(sub_where)
        notes += sub_notes
    merged.update(cfg)
    merged_where.update({k: v for k, v in where.items() if k != "include"})
    return merged, merged_where, notes


def _has_function(value: Any) -> Function | None:
    if isinstance(value, Function):
        return value
    if isinstance(value, dict):
        return next((f for v in value.values() if (f := _has_function(v))), None)
    if isinstance(value, list):
        return next((f for v in value if (f := _has_function(v))), None)
    return None


# -- translating -----------------------------------------------------------------------------------

class _Translation:
    def __init__(self, path: Path):
        self.path = path
        self.cfg, self.where, self.notes = read(path)
        self.unread = list(self.notes)  # includes not found: they explain keys reported missing
        self.fatal: list[str] = []

    def at(self, key: str) -> str:
        return self.where.get(key, str(self.path))

    def note(self, key: str, what: str, fatal: bool = False) -> None:
        line = f"{self.at(key)}: {key}: {what}"
        (self.fatal if fatal else self.notes).append(line)

    def get(self, key: str, default: Any = None, essential: bool = False) -> Any:
        value = self.cfg.get(key, default)
        fn = _has_function(value)
        if fn is not None:
            self.note(key, f"!function {fn.ref}: Python, which a task file cannot hold", fatal=essential)
            return None
        return value


def _template(value: Any) -> str:
    """A prompt template from lm-eval's doc_to_text: a column name is its value."""
    text = str(value)
    return "{{ " + text + " }}" if _IDENT.fullmatch(text) else text


def _names(sources: list[str]) -> list[str]:
    """The row columns the templates read (Jinja's undeclared names, its globals left out)."""
    from jinja2 import meta

    from glotbench.tasks.template import environment

    env = environment()
    found: list[str] = []
    for src in sources:
        try:
            names = meta.find_undeclared_variables(env.parse(src))
        except Exception as e:  # noqa: BLE001 - reported by the caller's validation with its line
            raise DataError(f"not a valid template ({e}): {src[:80]!r}") from None
        found += sorted(n for n in names if n not in env.globals and n not in found)
    return found


def rename(source: str, old: str, new: str) -> str:
    """`source` with the variable `old` read as `new` (Jinja's own tokens: an attribute `.old` or a
    string stays as it is)."""
    from glotbench.tasks.template import environment

    out, prev = [], ""
    for _, kind, value in environment().lex(source):
        out.append(new if kind == "name" and value == old and prev != "." else value)
        if kind != "whitespace":
            prev = value
    return "".join(out)


def _jinja_list(texts: list[str]) -> str:
    """A Jinja list literal of these strings (each a JSON string: Jinja reads its escapes)."""
    return "[" + ", ".join(json.dumps(t, ensure_ascii=False) for t in texts) + "]"


def _choices(t: _Translation, raw: Any) -> tuple[Any, str | None]:
    """fields.choices and a template rendering the options as a list literal (for the gold rule)."""
    if isinstance(raw, dict):
        raw = list(raw.values())
    if isinstance(raw, list):
        texts = [str(c) for c in raw]
        return {"fixed": texts}, "{{ " + _jinja_list(texts) + " }}"
    if isinstance(raw, str):
        if _IDENT.fullmatch(raw):
            return raw, "{{ " + raw + " }}"
        return raw, raw
    t.note("doc_to_choice", f"{type(raw).__name__}: not translated", fatal=True)
    return None, None


def _gold_choice(target: Any, choice_list: str) -> str:
    """fields.gold.answer: lm-eval's doc_to_target made the gold option's label."""
    chosen = "{% set _c %}" + choice_list + "{% endset %}"
    if isinstance(target, int) and not isinstance(target, bool):
        return chosen + "{{ " + str(target) + " | lm_eval_target(_c) }}"
    text = str(target)
    if _IDENT.fullmatch(text):
        return chosen + "{{ " + text + " | lm_eval_target(_c) }}"
    return chosen + "{% set _t %}" + text + "{% endset %}{{ _t | lm_eval_target(_c, rendered=true) }}"


def _fewshot(t: _Translation, out: dict[str, Any]) -> None:
    cfg = t.cfg
    fs_cfg = t.get("fewshot_config") or {}
    split = cfg.get("fewshot_split") or fs_cfg.get("split")
    pool = split or cfg.get("training_split") or cfg.get("validation_split") or cfg.get("test_split")
    sampler = fs_cfg.get("sampler", "default")
    if sampler not in ("default", "first_n"):
        t.note("fewshot_config", f"sampler {sampler}: not translated (lm-eval's default stream is used)")
    for k in sorted(set(fs_cfg) - {"sampler", "split"}):
        t.note("fewshot_config", f"{k}: not translated")
    fewshot: dict[str, Any] = {"n": int(cfg.get("num_fewshot") or 0),
                               "sampler": "first_n" if sampler == "first_n" else "sequential",
                               "delimiter": cfg.get("fewshot_delimiter", "\n\n"),
                               # lm-eval leaves the item out of its draws when the few-shot split is
                               # named as the test split, or neither is named
                               "draw_spare": split == cfg.get("test_split")}
    if pool and pool != out["data"]["split"]:
        fewshot["split"] = pool
    out["fewshot"] = fewshot


def _mc(t: _Translation, out: dict[str, Any], text: str) -> None:
    if t.cfg.get("doc_to_choice") is None:
        t.note("doc_to_choice", "missing (a multiple_choice task needs its choices)", fatal=True)
        return
    choices_raw = t.get("doc_to_choice", essential=True)
    if choices_raw is None:
        return
    choices, as_list = _choices(t, choices_raw)
    target = t.get("doc_to_target", essential=True)
    if choices is None or as_list is None or target is None:
        return
    if isinstance(text, str) and text.strip().isdigit():
        t.note("doc_to_text", "an index: several inputs per choice (Winogrande-style) are not translated", fatal=True)
    norms = {"acc": "sum", "acc_norm": "char", "acc_bytes": "byte"}
    head = None
    for m in t.get("metric_list") or [{"metric": "acc"}, {"metric": "acc_norm"}]:
        name = m.get("metric") if isinstance(m, dict) else m
        if name in norms:
            head = head or norms[name]
        else:
            t.note("metric_list", f"{name}: not computed (acc, acc_norm and acc_bytes are: accuracy under the "
                                  "log-likelihood norms sum, char and byte)")
        if isinstance(m, dict) and m.get("aggregation", "mean") != "mean":
            t.note("metric_list", f"{name}: aggregation {m['aggregation']}: not translated (the mean is used)")
    if t.cfg.get("filter_list") is not None:
        t.note("filter_list", "filters of a multiple_choice task: not translated")
    out["fields"]["choices"] = choices
    out["fields"]["gold"] = {"answer": _gold_choice(target, as_list)}
    out["prompt"]["defaults"] = {"method": "loglik"}
    out["loglik"] = {"continuations": "texts", "delimiter": t.cfg.get("target_delimiter", " "), "norm": head or "sum",
                     "encoding": "lm-eval"}  # lm-eval's tokenisation of the pair (trailing whitespace moved)
    many = isinstance(choices, dict) and len(choices["fixed"]) > 5
    out["extract"] = {"option": ["option_text"]} if many else {"letter": ["option_letter"]}
    out["scorer"] = "option_accuracy"


def _pipeline(t: _Translation, spec: dict[str, Any]) -> list[Any] | None:
    steps: list[Any] = []
    for f in spec.get("filter") or []:
        fn = f.get("function") if isinstance(f, dict) else None
        if fn == "take_first":
            continue
        if fn == "regex":
            steps.append({"regex": {"pattern": f.get("regex_pattern", r"#### (\-?[0-9\.\,]+)"),
                                    "select": int(f.get("group_select", 0))}})
        elif fn == "remove_whitespace":
            steps.append("free_text")
        elif fn in ("lowercase", "uppercase"):
            steps.append("lower" if fn == "lowercase" else "upper")
        else:
            t.note("filter_list", f"{spec.get('name')}: filter {fn}: not translated (the pipeline is left out)")
            return None
    return steps or ["raw"]


def _generate(t: _Translation, out: dict[str, Any]) -> None:
    target = t.get("doc_to_target", essential=True)
    if target is None:
        return
    if t.cfg.get("doc_to_choice") is not None:
        t.note("doc_to_choice", "choices of a generate_until task: not translated", fatal=True)
    gen = t.get("generation_kwargs")
    gen = dict(gen) if isinstance(gen, dict) else {"until": [t.cfg.get("fewshot_delimiter", "\n\n")]}
    until = gen.pop("until", [t.cfg.get("fewshot_delimiter", "\n\n")])
    out["prompt"]["stop"] = [until] if isinstance(until, str) else [str(u) for u in until]
    out["prompt"]["max_tokens"] = int(gen.pop("max_gen_toks", 256))
    if gen.pop("do_sample", False) or float(gen.pop("temperature", 0.0) or 0.0) != 0.0:
        t.note("generation_kwargs", "sampling: not translated (glotbench decodes greedily, temperature 0)")
    for k in sorted(gen):
        t.note("generation_kwargs", f"{k}: not translated")
    scorer: dict[str, Any] | None = None
    for m in t.get("metric_list") or [{"metric": "exact_match"}]:
        m = m if isinstance(m, dict) else {"metric": m}
        name = m.get("metric")
        if name == "exact_match" and scorer is None:
            normalise = [n for k, n in (("ignore_case", "lower"), ("ignore_punctuation", "remove_ascii_punct"),
                                        ("ignore_numbers", "remove_ascii_digits")) if m.get(k)]
            scorer = {"kind": "exact_match", "ignore": [str(r) for r in m.get("regexes_to_ignore") or []],
                      "normalise": normalise}
            for k in sorted(set(m) - {"metric", "aggregation", "higher_is_better", "ignore_case",
                                      "ignore_punctuation", "ignore_numbers", "regexes_to_ignore"}):
                t.note("metric_list", f"exact_match: {k}: not translated")
        elif name in ("bleu", "chrf", "chrf++") and (scorer is None or scorer["kind"] == "corpus"):
            scorer = scorer or {"kind": "corpus", "metrics": [], "bleu_tokenize": "13a", "segment": False}
            scorer["metrics"].append(name)
        else:
            t.note("metric_list", f"{name}: not computed" + (" (one scorer per task: the first)" if scorer else ""))
    if scorer is None:
        t.note("metric_list", "no metric glotbench computes", fatal=True)
        return
    gold_key = "answer" if scorer["kind"] == "exact_match" else "reference"
    out["fields"]["gold"] = {gold_key: str(target)} if _IDENT.fullmatch(str(target)) or "{" in str(target) \
        else {gold_key: "{{ " + json.dumps(str(target), ensure_ascii=False) + " }}"}
    pipelines: dict[str, Any] = {}
    listed = t.cfg.get("filter_list")  # a custom filter's !function is named with its pipeline
    for spec in listed if isinstance(listed, list) else [{"name": "none", "filter": [{"function": "take_first"}]}]:
        steps = _pipeline(t, spec) if isinstance(spec, dict) else None
        if steps is not None:
            name = re.sub(r"[^a-z0-9._-]+", "-", str(spec.get("name", "none")).lower()).strip("-.") or "none"
            pipelines[name if not name.startswith("loglik") else f"p-{name}"] = steps
    if not pipelines:
        t.note("filter_list", "no pipeline could be translated", fatal=True)
        return
    out["extract"] = pipelines
    out["scorer"] = scorer


def translate(path: str | Path) -> Imported:
    """The glotbench task of an lm-eval task YAML, and what was not translated. Raises DataError
    (its lines first) when the prompt, the choices or the target cannot be translated."""
    from glotbench.languages import profile, resolve_code

    t = _Translation(Path(path))
    cfg = t.cfg
    if "group" in cfg and not isinstance(cfg.get("task"), str):
        raise DataError(f"{t.at('group')}: group: a group of tasks; import each task's YAML")
    if not isinstance(cfg.get("task", ""), str):  # lm-eval reads a list under task: as a group, group: or not
        raise DataError(f"{t.at('task')}: task: a list of tasks (a group, as lm-eval reads it); import each task's YAML")
    if "class" in cfg:
        raise DataError(f"{t.at('class')}: class: a Python task class; only YAML tasks are imported")
    kind = cfg.get("output_type", "generate_until")
    if kind not in ("multiple_choice", "generate_until"):
        raise DataError(f"{t.at('output_type')}: output_type: {kind} is not one of the kinds imported "
                        "(multiple_choice, generate_until)")
    name = re.sub(r"[^a-z0-9._-]+", "-", str(cfg.get("task") or Path(path).stem).lower()).strip("-.")
    version = (cfg.get("metadata") or {}).get("version", "1.0") if isinstance(cfg.get("metadata"), dict) else "1.0"
    hub, config = cfg.get("dataset_path"), cfg.get("dataset_name")
    kwargs = dict(t.get("dataset_kwargs") or {})
    revision = str(kwargs.pop("revision", "") or "")
    kwargs.pop("trust_remote_code", None)
    for k in sorted(kwargs):
        t.note("dataset_kwargs", f"{k}: not translated")
    if not hub:
        t.note("dataset_path", "missing: give data.file or data.hub", fatal=True)
    elif not re.fullmatch(r"[0-9a-f]{40}", revision):
        t.note("dataset_path", f"{hub}: no pinned revision: set data.revision to a commit of the dataset "
                               "(or --bench-opt revision=SHA; --data FILE needs none)")
    split = cfg.get("test_split") or cfg.get("validation_split") or "test"
    out: dict[str, Any] = {"name": name or "imported", "version": str(version),
                           "description": f"lm-evaluation-harness's {cfg.get('task', name)}, imported"}
    lang = resolve_code(str(config)) if config else None
    if lang and profile(lang) is not None:
        out["language"] = str(config)
    out["data"] = {"hub": str(hub or "unknown/unknown"), **({"config": str(config)} if config else {}),
                   "split": str(split), "revision": revision or PLACEHOLDER_REVISION}
    out["fields"] = {}
    doc_to_text = t.get("doc_to_text", essential=True)
    if "doc_to_text" not in cfg:
        t.note("doc_to_text", "missing", fatal=True)
    text = _template(doc_to_text) if doc_to_text is not None else ""
    out["prompt"] = {"text": text}
    description = t.get("description")
    if description:
        out["prompt"]["preamble"] = str(description)
    for key, why in (("process_docs", "Python that filters or rewrites the rows; the rows are taken as they are"),
                     ("process_results", "Python scoring"), ("use_prompt", "a promptsource prompt"),
                     ("doc_to_image", "images"), ("doc_to_audio", "audio"),
                     ("gen_prefix", "an assistant prefix"), ("custom_dataset", "a dataset built in Python")):
        if cfg.get(key) is not None:
            fn = _has_function(cfg[key])
            t.notes.append(f"{t.at(key)}: {key}: " + (f"!function {fn.ref}: " if fn else "") + f"not translated ({why})")
    if int(cfg.get("repeats") or 1) != 1:
        t.note("repeats", "not translated (use glotbench run --repeats)")
    if kind == "multiple_choice":
        _mc(t, out, text)
    else:
        _generate(t, out)
    _fewshot(t, out)
    handled = {"task", "output_type", "dataset_path", "dataset_name", "dataset_kwargs", "training_split",
               "validation_split", "test_split", "fewshot_split", "doc_to_text", "doc_to_target", "doc_to_choice",
               "target_delimiter", "fewshot_delimiter", "num_fewshot", "fewshot_config", "description",
               "generation_kwargs", "metric_list", "filter_list", "metadata", "repeats", "process_docs",
               "process_results", "use_prompt", "doc_to_image", "doc_to_audio", "gen_prefix", "custom_dataset"}
    for key in cfg:
        if key not in handled and key not in _IGNORED:
            t.note(key, "not translated")
    if t.fatal:  # an include not found first: it explains a key reported missing
        raise NotTranslatable(t.unread + t.fatal)
    prompts = [k for k in ("text", "preamble") if k in out["prompt"]]
    public = []
    for k, key in (("text", "doc_to_text"), ("preamble", "description")):
        if k in out["prompt"]:
            try:
                public += [n for n in _names([out["prompt"][k]]) if n not in public]
            except DataError as e:
                raise DataError(f"{t.at(key)}: {key}: {e}") from None
    renamed = {n: f"lm_{n}" for n in public if n in RESERVED}  # MMLU's `choices` column: glotbench's options
    for old, new in renamed.items():
        for k in prompts:
            out["prompt"][k] = rename(out["prompt"][k], old, new)
    out["fields"] = {"public": {renamed.get(n, n): n for n in public} if renamed else public, **out["fields"]}
    order = ("name", "version", "description", "language", "data", "fields", "prompt", "fewshot", "loglik",
             "extract", "scorer")
    return Imported({k: out[k] for k in order if k in out}, t.notes)


def dump_yaml(keys: dict[str, Any]) -> str:
    """The keys as YAML: strings with line breaks as literal blocks (YAML keeps them exactly)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: Any, value: str) -> Any:
        # a prompt of several lines as a literal block; a delimiter of blank lines in double quotes
        style = ("|" if "\n" in value.strip() else '"') if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return yaml.dump(keys, Dumper=Dumper, allow_unicode=True, sort_keys=False, width=120)


def import_file(path: str | Path, out: str | Path | None = None) -> tuple[str, Imported]:
    """Translate `path`, check the result validates and builds as a task, and write it to `out` (if
    given). Returns the task file's text and the translation."""
    from glotbench.tasks.benchmark import TaskBenchmark
    from glotbench.tasks.files import Where, load_yaml, validate_spec

    got = translate(path)
    text = got.text(str(path))
    name = str(out or f"{got.keys['name']}.yaml")
    raw, lines = load_yaml(text, name)
    spec = validate_spec(raw, Where(name, lines, file=True))
    TaskBenchmark(spec, Where(name, lines, file=True), Path(name).parent)  # templates compile, options resolve
    if out is not None:
        Path(out).write_text(text, encoding="utf-8")
    return text, got

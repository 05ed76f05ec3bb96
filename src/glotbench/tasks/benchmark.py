"""`TaskBenchmark`: a benchmark composed from a `TaskSpec`'s parts, on the ordinary Benchmark contract
(load, render, extract, score, aggregate), so the runner, the cache, reports and `compare` treat it
as any built-in. The options a run gives (`--bench-opt`) are filled into the spec's templates when
the object is built; every setting that changes a number is in the signature (`signature_parts`:
the spec's hash with its options, the method, the extraction pipelines, the log-likelihood
normalisation, the scorer with its segmenter, the few-shot settings, the language).

Over 400 lines on purpose: one class, `TaskBenchmark`, implements the whole Benchmark contract for
every task spec; its methods read the same filled templates and parts.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from glotbench.benchmarks.base import Benchmark, RescorePlan
from glotbench.core import Dataset
from glotbench.errors import DataError, SpecError
from glotbench.extract import Extraction
from glotbench.items import Item, PublicItem
from glotbench.languages import language_group, script_mismatch
from glotbench.metrics import ItemScore
from glotbench.core import GenerateConfig, Prompt
from glotbench.tasks import fields as F
from glotbench.tasks import loglik
from glotbench.tasks.files import Where
from glotbench.tasks.pipelines import Pipeline, build_pipeline
from glotbench.tasks.render import Renderer
from glotbench.tasks.scorers import MODEL_FAILURES, make_scorer
from glotbench.tasks.source import Rows, hub_rows, join_roles, local_rows, user_file_format
from glotbench.tasks.template import (LETTERS, cells, compile_template, expression_value, is_template, one_expression, render,
                                      text_columns, typed_texts)

if TYPE_CHECKING:
    from glotbench.judges.pipeline import JudgedDeclaration

# Settings every task takes, next to the options its file declares: (default, type, help).
BUILTIN_OPTIONS: dict[str, tuple[Any, type, str]] = {
    "method": (None, str, "generate (extract from replies) or loglik (the likeliest choice; local models); "
                          "default: the prompt variant's, else generate"),
    "prompt": ("default", str, "a prompt variant of the task (prompt.variants)"),
    "shots": (None, int, "few-shot examples (default: the task's fewshot.n)"),
    "multiturn": (None, bool, "few-shot examples as chat turns (default: the task's fewshot.multiturn)"),
    "fewshot_seed": (None, int, "the seed that draws few-shot examples"),
    "fewshot_data": (None, str, "a file of few-shot examples in the data's schema (with --data)"),
    "revision": (None, str, "another pinned commit of the hub dataset"),
    "norm": (None, str, "the headline log-likelihood normalisation: sum, token, char, byte or grapheme"),
    "pipeline": (None, str, "the headline extraction pipeline"),
    "bleu_tokenize": (None, str, "a corpus scorer's BLEU tokenizer: none or 13a over segmented text, or spm:PATH "
                                 "(spBLEU: the local SentencePiece model file at PATH, signed by its SHA-256)"),
}


def _fill(value: Any, opt: Mapping[str, Any], where: str) -> Any:
    """Options filled into a data or language setting (`{{ config }}`)."""
    if isinstance(value, str) and is_template(value):
        return render(value, opt, where)
    if isinstance(value, list):
        return [_fill(v, opt, where) for v in value]
    if isinstance(value, dict):
        return {_fill(k, opt, where): _fill(v, opt, where) for k, v in value.items()}
    return value


def run_spec(spec: Any, variant: str) -> Any:
    """The spec a run of prompt variant `variant` uses: the variant's templates as the prompt (no other
    variants), and the parts it replaces (few-shot, log-likelihood, extraction, scorer) in place of the
    task's. Its hash is the signature's `task:` part, so a variant added to a file leaves the others'
    signatures as they were."""
    from glotbench.tasks.spec import PARTS_A_VARIANT_REPLACES

    v = spec.prompt.variant(variant)
    update: dict[str, Any] = {k: getattr(v, k) for k in PARTS_A_VARIANT_REPLACES if getattr(v, k) is not None}
    if v.extract is not None and spec.headline not in v.extract:
        update["headline"] = None
    prompt = {k: getattr(v, k) for k in type(v).model_fields if k not in PARTS_A_VARIANT_REPLACES}
    update["prompt"] = spec.prompt.model_copy(update={**prompt, **{k: None for k in PARTS_A_VARIANT_REPLACES},
                                                      "variants": {}})
    return spec.model_copy(update=update)


def spec_hash(spec: Any, opt: Mapping[str, Any]) -> str:
    """SHA-256 (12 hex) of the spec as data (its description left out) with the run's options."""
    body = spec.model_dump(mode="json", exclude={"description", "datasheet"})
    # Checks, not settings: unset, the hash stays as it was before they existed.
    for key in ("language_by", "where"):
        if body["data"].get(key) is None:
            body["data"].pop(key, None)
    for o in body.get("options", {}).values():
        if o.get("pattern") is None:
            o.pop("pattern", None)
    if body.get("input_language") is None:  # added later (a translation's source language): unset, as before
        body.pop("input_language", None)
    variants = body.get("prompt", {}).get("variants", {}).values()
    for scorer in [body.get("scorer"), *(v.get("scorer") for v in variants)]:
        if isinstance(scorer, dict) and scorer.get("kind") == "exact_match":
            scorer.pop("labels", None)  # a check of the gold, not a setting
        if isinstance(scorer, dict) and scorer.get("kind") == "token_f1":  # settings added later, at their defaults
            if scorer.get("empty") == "v1.1":
                scorer.pop("empty")
            if scorer.get("exact_match") is False:
                scorer.pop("exact_match")
    return hashlib.sha256(json.dumps([body, dict(opt)], sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:12]


class TaskBenchmark(Benchmark):
    """A benchmark built from a TaskSpec (a task file, a @task function)."""

    answers_are_outputs = True
    loglik_detail = True  # the runner returns every choice's log-probability and token count
    headline_pipeline: str  # always one of the task's pipelines (`_pipelines`)

    def __init__(self, spec: Any, where: Where | None = None, base_dir: str | Path | None = None, **options: Any):
        from glotbench.languages import resolve_code

        self.file_spec = spec
        self._where = where or Where(spec.name)
        self._base = Path(base_dir) if base_dir is not None else Path.cwd()
        self.name, self.version = spec.name, spec.version
        self.datasheet = spec.datasheet
        self.description = (spec.description or spec.name).strip().splitlines()[0]
        self.spec = spec  # until the variant is known (the options are checked against the file's)
        self.options = self._options(options)
        opt = self.options
        w = self._where
        try:
            self.variant = spec.prompt.variant(opt["prompt"])
        except ValueError as e:
            raise SpecError(f"{self.name}: {e}") from None
        from glotbench.tasks.spec import PARTS_A_VARIANT_REPLACES

        # Where each part is written in the file (errors name its line): a variant's own, or the task's.
        inside = () if opt["prompt"] == "default" else ("prompt", "variants", opt["prompt"])
        self._paths = {"prompt": inside or ("prompt",), **{k: inside + (k,) if inside and getattr(self.variant, k) is not None
                                                           else (k,) for k in PARTS_A_VARIANT_REPLACES}}
        self.spec = spec = run_spec(spec, opt["prompt"])
        self.method = opt["method"] = opt["method"] or "generate"
        if self.method not in ("generate", "loglik"):
            raise SpecError(f"{self.name}: method must be generate or loglik, got {self.method!r}")
        declared = {k: v for k, v in opt.items() if k in spec.options}
        # `files` and `sha256` are filled per config and split when the rows are read (`_files`);
        # `role_by` and `language_by` are templates over each row.
        self.data = spec.data.model_copy(update=_fill(spec.data.model_dump(exclude_unset=True,
                                                                           exclude={"files", "sha256", "role_by",
                                                                                    "language_by", "where"}),
                                                       declared, w("data")))
        if opt["revision"]:
            if not re.fullmatch(r"[0-9a-f]{40}", opt["revision"]):
                raise SpecError(f"{self.name}: revision {opt['revision']!r} is not a commit hash (40 hex): pin the "
                                "data to a commit of the dataset's history, not a branch that moves")
            self.data = self.data.model_copy(update={"revision": opt["revision"]})
        self.language = _fill(spec.language, declared, w("language")) if spec.language else None  # as written
        self.lang = resolve_code(self.language)
        # the group its results are shown under: the script or region kept where not the usual one (zh-Hant)
        self.group = language_group(self.language) if self.language else None
        self.input_language = _fill(spec.input_language, declared, w("input_language")) if spec.input_language else None
        self.variant = spec.prompt
        self.shots = spec.fewshot.n if opt["shots"] is None else opt["shots"]
        if self.shots < 0:
            raise SpecError(f"{self.name}: shots must be at least 0")
        self.multiturn = spec.fewshot.multiturn if opt["multiturn"] is None else opt["multiturn"]
        self.fewshot_seed = spec.fewshot.seed if opt["fewshot_seed"] is None else opt["fewshot_seed"]
        self._renderer = Renderer(self.variant, spec.fewshot, spec.loglik, self.lang, declared, self.method,
                                 self.multiturn, at=self._template_at)
        if self.variant.labels == "native":
            try:
                self.renderer.labels(2)
            except ValueError as e:
                raise SpecError(f"{self.name}: {e}") from None
        self._scorer = make_scorer(self._scorer_spec(spec.scorer, opt["bleu_tokenize"]), self.lang)
        # the declared facts the checks read (Benchmark): from the scorer
        self.answer_kind = self._scorer.answer_kind
        if self.method == "generate" and self._scorer.answers_in_language and self.lang:
            self.output_language_rule = f"the task's language ({spec.scorer.kind} scorer)"
        self.judged = self._scorer.judged  # run by engine/judged.py (`judged_declaration`): answers, then the judges
        if self.judged:  # a rubric scorer: the judges its task file names (Benchmark.default_judges)
            self.default_judges = tuple(spec.scorer.judges)  # type: ignore[union-attr]  # judged: a rubric
        self._pipes, self.headline_pipeline = self._pipelines(opt)
        self.norm = opt["norm"] or spec.loglik.norm
        self.group_by = tuple(spec.groups)
        self.cluster_by = spec.cluster
        self.input_answer = spec.input_answer  # the task's declared fact (Benchmark.input_answer)
        self.default_config = GenerateConfig(temperature=0.0, max_tokens=self.variant.max_tokens)
        self.metrics = tuple(m for p in self.pipelines for m in self.scorer.metrics(p, p == self.headline_pipeline))
        self._check_templates()

    # The parts built from the spec: objects without a stable text, kept out of the benchmark's public
    # state (the aggregate cache keys on that state: the spec and the options already name them).
    @property
    def renderer(self) -> Renderer:
        return self._renderer

    @property
    def scorer(self) -> Any:
        return self._scorer

    @property
    def pipelines(self) -> dict[str, Pipeline | None]:
        return self._pipes

    # -- building --------------------------------------------------------------------------------

    def _options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        try:  # the prompt variant's defaults come before the file's
            defaults = dict(self.spec.prompt.variant(given.get("prompt") or "default").defaults)
        except ValueError as e:
            raise SpecError(f"{self.name}: {e}") from None
        wrong = set(defaults) - set(self.spec.options) - set(BUILTIN_OPTIONS) | ({"prompt"} & set(defaults))
        if wrong:
            raise SpecError(f"{self.name}: prompt variant {given.get('prompt')!r}: defaults: no option {sorted(wrong)[0]!r}")
        for name, o in self.spec.options.items():
            value = given.get(name, defaults.get(name, o.default))
            if value is None:
                raise SpecError(f"{self.name} needs --bench-opt {name}=VALUE"
                                + (f" ({o.help})" if o.help else "")
                                + (f"; one of {', '.join(map(str, o.choices))}" if o.choices else ""))
            if o.choices is not None and value not in o.choices:
                raise SpecError(f"{self.name}: {name} must be one of {', '.join(map(str, o.choices))}, got {value!r}")
            if o.pattern is not None and not re.fullmatch(o.pattern, str(value)):
                raise SpecError(f"{self.name}: {name} {value!r} does not match {o.pattern}"
                                + (f" ({o.help})" if o.help else ""))
            if isinstance(value, str) and re.fullmatch(r"[a-z]{2,3}_[A-Z][a-z]{3}", value) and script_mismatch(value):
                raise SpecError(f"{self.name}: {name} {script_mismatch(value)}")  # khm_Laoo: before any download
            out[name] = value
        for name, (default, _, _) in BUILTIN_OPTIONS.items():
            out[name] = given.get(name, defaults.get(name, default))
        unknown = set(given) - set(out)
        if unknown:
            raise SpecError(f"{self.name} has no option {sorted(unknown)[0]!r}; its options: {', '.join(sorted(out))}")
        return out

    def _pipelines(self, opt: Mapping[str, Any]) -> tuple[dict[str, Pipeline | None], str]:
        spec = self.spec
        self._letter_pipes: list[str] = []
        self.extract_steps: dict[str, Any] = {}
        if self.method == "loglik":
            if spec.fields.choices is None:
                raise SpecError(f"{self.name}: method=loglik needs choices (fields.choices)")
            norm = opt["norm"] or spec.loglik.norm
            if norm not in loglik.NORMS:
                raise SpecError(f"{self.name}: norm must be one of {', '.join(loglik.NORMS)}, got {norm!r}")
            return {f"loglik_{n}": None for n in loglik.NORMS}, f"loglik_{norm}"
        if opt["norm"] is not None:
            raise SpecError(f"{self.name}: norm is a setting of method=loglik")
        # a step's arguments may name the run's options and the prompt's vars (a per-language answer tag)
        filled = {"vars": spec.prompt.vars, **{k: v for k, v in opt.items() if k in spec.options}}
        # each pipeline's steps with the options filled in (what a reader of the task, like the eval.yaml
        # export, sees as the extraction rule)
        self.extract_steps = {name: _fill(steps, filled, self._at("extract", name)) for name, steps in spec.extract.items()}
        built = {name: build_pipeline(name, steps, self._at) for name, steps in self.extract_steps.items()}
        choices = spec.fields.choices
        n_fixed = len(choices.fixed) if hasattr(choices, "fixed") else len(choices) if isinstance(choices, list) else 0
        self._letter_pipes = [name for name, steps in spec.extract.items()
                              if any(s == "option_letter" or isinstance(s, dict) and "option_letter" in s for s in steps)]
        for name in self._letter_pipes:
            if n_fixed > 5:
                raise DataError(f"{self._at('extract', name)}: option_letter reads A-E and the task has {n_fixed} "
                                "choices: use option_text")
        head = opt["pipeline"] or spec.headline or next(iter(spec.extract))
        if head not in built:
            raise SpecError(f"{self.name}: no pipeline {head!r}; its pipelines: {', '.join(built)}")
        return {head: built[head], **{k: v for k, v in built.items() if k != head}}, head

    def _template_at(self, key: str) -> str:
        """`FILE:LINE` of a prompt template (`continuations`: of loglik's) in the run's variant."""
        return self._where.head(*self._paths["loglik" if key == "continuations" else "prompt"], key)

    def _at(self, part: str, *rest: Any) -> str:
        """`FILE:LINE: path` of a part of the run's spec: in the prompt variant that gave it, or the task's."""
        return self._where(*self._paths.get(part, (part,)), *rest)

    def _check_templates(self) -> None:
        """Every template compiles (a syntax error names the task file's line before any call)."""
        spec, w = self.spec, self._where
        found: list[tuple[tuple[Any, ...], str]] = []
        f = spec.fields
        if f.id:
            found.append((("fields", "id"), f.id))
        named = {} if isinstance(f.public, list) else f.public
        for part, mapping in (("public", named), ("meta", f.meta)):
            found += [(("fields", part, k), v) for k, v in mapping.items()]
        for k, v in f.gold.items():
            found += [(("fields", "gold", k), x) for x in (v if isinstance(v, list) else [v])]
        if isinstance(f.choices, str):
            found.append((("fields", "choices"), f.choices))
        prompt = self._paths["prompt"]
        for key in ("user", "text", "system", "preamble"):
            value = getattr(self.variant, key)
            if value is not None:
                found.append(((*prompt, key), value))
        if spec.fewshot.answer:
            found.append(((*self._paths["fewshot"], "answer"), spec.fewshot.answer))
        if isinstance(spec.loglik.continuations, list):
            found += [((*self._paths["loglik"], "continuations", i), c) for i, c in enumerate(spec.loglik.continuations)]
        for path, source in found:
            if is_template(source):
                try:
                    compile_template(source)
                except ValueError as e:
                    raise DataError(f"{w(*path)}: {e}") from None
        reserved = set(f.public) & set(F.RESERVED)
        if reserved:
            raise DataError(f"{w('fields', 'public')}: {sorted(reserved)[0]!r} is set by the task (choices, fewshot)")

    # -- data ------------------------------------------------------------------------------------

    def _rows(self, path: str | None, split: str, fmt_file: str | None = None) -> Rows:
        d = self.data
        if path is not None:
            rows = local_rows(path, user_file_format(path, d.format))
            if d.roles:
                rows = Rows(self._split_roles(rows.rows), rows.source, rows.sha256)
            return rows
        if d.file is not None:
            return local_rows(self._base / d.file, d.format)
        assert d.hub is not None and d.revision is not None
        if not d.roles:
            return hub_rows(d.hub, d.revision, d.config, split, *self._files(d.config, split), d.format)
        parts = {role: hub_rows(d.hub, d.revision, cfg, split, *self._files(cfg, split), d.format)
                 for role, cfg in d.roles.items()}
        joined = join_roles({r: p.rows for r, p in parts.items()}, d.join or "id")
        digest = hashlib.sha256("".join(p.sha256 for p in parts.values()).encode()).hexdigest()
        return Rows(joined, " + ".join(f"{r}={p.source}" for r, p in parts.items()), digest)

    def _files(self, config: str | None, split: str) -> tuple[Any, dict[str, str]]:
        """The file patterns and SHA-256 pins with the options, the config and the split filled in."""
        ctx = {**self.renderer.opt, "config": config or "", "split": split}
        files = _fill(self.data.files, ctx, self._where("data", "files"))
        return files, _fill(dict(self.data.sha256), ctx, self._where("data", "sha256"))

    def _split_roles(self, rows: list[Any]) -> list[Any]:
        """--data FILE for a task of several roles: one file holding every role's rows, told apart
        by `data.role_by` (FLORES+: `{{ iso_639_3 }}_{{ iso_15924 }}` is the config)."""
        d = self.data
        if not d.role_by:
            raise DataError(f"{self._where('data', 'roles')}: --data gives one file: set data.role_by, the template "
                            "naming each row's config")
        parts: dict[str, list[Any]] = {role: [] for role in d.roles}
        config_to_role = {cfg: role for role, cfg in d.roles.items()}
        for where, row in rows:
            role = config_to_role.get(render(d.role_by, row, f"{where}: data.role_by"))
            if role is not None:
                parts[role].append((where, row))
        for role, got in parts.items():
            if not got:
                raise DataError(f"{rows[0][0].rsplit(':', 1)[0]}: no row of {role} ({d.roles[role]}) by data.role_by")
        return join_roles(parts, d.join or "id")

    def load(self, path: str | None = None) -> Dataset:
        if path is not None and path.startswith("hub:"):
            path = None  # the source a hub run recorded (`compare` passes it back): the hub, as pinned
        rows = self._kept(self._rows(path, self.data.split))
        items = F.make_items(rows.rows, self.spec.fields, self.renderer.opt, self.lang)
        fs = self.spec.fewshot
        if self.shots or fs.ids:
            if self.options["fewshot_data"]:
                pool_rows, same = self._rows(self.options["fewshot_data"], self.data.split).rows, False
            elif fs.split is None or fs.split == self.data.split:
                pool_rows, same = rows.rows, True
            elif path is not None:
                raise DataError(f"{self.name}: the few-shot examples come from the {fs.split!r} split: give its "
                                "file with --bench-opt fewshot_data=FILE (or shots=0)")
            else:
                pool_rows, same = self._rows(None, fs.split).rows, False
            kept = pool_rows if same else self._kept(Rows(pool_rows, rows.source, rows.sha256)).rows  # same: kept already
            pool = F.make_items(kept, self.spec.fields, self.renderer.opt, self.lang)
            n_choices = len(items[0].public.get("choices") or ()) if items else 0
            items = F.attach_shots(items, pool, fs, self.shots, self.fewshot_seed, self.renderer.labels(n_choices),
                                   self.renderer.opt, same, self.renderer.gold_continuation)
        if not items:
            raise DataError(f"{rows.source}: no items")
        self._check_items(items, rows.rows)
        return self.dataset(items, rows.source, rows.sha256, rows_left_out=rows.left_out)

    def _kept(self, rows: Rows) -> Rows:
        """The rows `data.where` keeps (all without it): its template renders True or False per row."""
        if not self.data.where:
            return rows
        expression = one_expression(self.data.where)
        assert expression is not None  # DataSpec refuses any other data.where
        typed = text_columns(row for _, row in rows.rows)
        kept = []
        for where, row in rows.rows:
            verdict = expression_value(expression, {**typed_texts(row, typed), "opt": self.renderer.opt},
                                       f"{where}: data.where")
            if not isinstance(verdict, bool):  # a text "False" is not False: said, never guessed
                what = f"the text {verdict[:40]!r}" if isinstance(verdict, str) else f"{type(verdict).__name__} {verdict!r:.40}"
                raise DataError(f"{where}: data.where: gave {what}, not True or False"
                                + (" (compare it as text, e.g. {{ column == 'yes' }})" if isinstance(verdict, str) else ""))
            if verdict:
                kept.append((where, row))
        if not kept:
            raise DataError(f"{rows.source}: no row is kept by data.where ({self.data.where.strip()})")
        return Rows(kept, rows.source, rows.sha256, len(rows.rows) - len(kept))

    def _check_items(self, items: list[Item], rows: list[Any]) -> None:
        """A gold the scorer cannot read (`Scorer.check_gold`), and options per row (a list column) the task cannot label or read: more than 26 (A-Z), or more
        than 5 for an option_letter pipeline (it reads A-E). Refused at load, naming the row; else
        every such item would be a scorer error in a run that looks valid."""
        for item, (where, row) in zip(items, rows):
            problem = self.scorer.check_gold(item) or self._language_problem(item, row, where)
            if problem:
                raise DataError(f"{where}: {problem}")
            n = len(item.public.get("choices") or ())
            if n > len(LETTERS):
                raise DataError(f"{where}: fields.choices: {n} options; a task labels at most {len(LETTERS)} (A-Z)")
            if n > 5 and self.method != "loglik" and self._letter_pipes:
                raise DataError(f"{where}: fields.choices: {n} options, and option_letter (pipeline "
                                f"{self._letter_pipes[0]!r}) reads A-E: use option_text, or method=loglik")

    def _language_problem(self, item: Item, row: Any, where: str) -> str | None:
        """A row the task's language does not describe: its own language (`data.language_by`) is
        another, or its dominant script is not the language's (Khmer rows under lao_Laoo, stray Lao
        letters or not). A task of several roles (FLORES+): each role's text against its config (`_role_problem`)."""
        from glotbench.languages import PROFILES, foreign_script, resolve_code

        if self.data.roles:
            return self._role_problem(row)
        if not self.language:
            return None

        def named(code: str) -> str:
            p = PROFILES.get(resolve_code(code) or "")
            return f"{code} ({p.name})" if p else code

        def column(template: str | None) -> str | None:  # `{{ NAME }}` -> NAME
            m = re.fullmatch(r"\{\{\s*(\w+)\s*\}\}", (template or "").strip())
            return m.group(1) if m else None

        option = column(self.spec.language) if column(self.spec.language) in self.spec.options else None
        expected = self.input_language or self.language  # the public text's language: a translation's source
        mine = (f"the task's input language is {named(self.input_language)}" if self.input_language
                else f"the task's language is {named(self.language)}")
        col = column(self.data.language_by)
        if self.data.language_by and (col is None or row.get(col) is not None):  # a row without the column: its script tells
            theirs = render(self.data.language_by, row, f"{where}: data.language_by").strip()
            if theirs and resolve_code(theirs) != self.lang:
                told = f"the row's {col} is" if col else f"the row's language ({self.data.language_by.strip()}) is"
                fix = f"; for these rows run with --bench-opt {option}={theirs}" if option else ""
                return f"data.language_by: {told} {named(theirs)}, but {mine}{fix}"
        how = f"; give the rows' language with --bench-opt {option}=..." if option else ""
        if self.input_answer is not None:  # a translation: its reference in the task's language, its input in the input language
            ref = item.gold.get("reference")
            refs = [ref] if isinstance(ref, str) else [r for r in ref or () if isinstance(r, str)]
            source = item.public.get(self.input_answer)
            checks = [([source], self.input_language, mine)] if self.input_language and isinstance(source, str) else []
            checks.append((refs, self.language, f"the task's language is {named(self.language)}"))
        else:
            texts = [v for v in item.public.values() if isinstance(v, str)]
            if not hasattr(self.spec.fields.choices, "fixed"):  # a task's own labels (SIB-200's topics) are not the row's
                texts += list(item.public.get("choices") or ())
            checks = [(texts, expected, mine)]
        # A row is judged by its dominant script (languages.SCRIPT_SHARE), never by one stray letter: its
        # longest text (Belebele's passage, XCOPA's premise) and its texts together both hold under that
        # share of letters in the language's scripts. Fields may be labels in English (XCOPA's question
        # "effect", Global-MMLU's subject "high_school_geography"), and a text may mix in code or names.
        for texts, code, whose in checks:
            longest = max(texts, key=lambda t: sum(c.isalpha() for c in t), default="")
            script = foreign_script(longest, code) and foreign_script(" ".join(texts), code)
            if script:
                return f"the row's text is written in {script} script, but {whose}{how}"
        return None

    def _role_problem(self, row: Any) -> str | None:
        """A task of several roles (FLORES+): each role's columns the fields read (`target.text`) are
        written in that role's config's script (`khm_Khmr` rows whose text is Thai are refused)."""
        from glotbench.languages import PROFILES, foreign_script, resolve_code

        used = repr((dict(self.spec.fields.public), dict(self.spec.fields.gold)))
        for role, config in self.data.roles.items():
            part = row.get(role) if isinstance(row, dict) else None
            for col in dict.fromkeys(re.findall(rf"\b{re.escape(role)}\.(\w+)", used)):
                value = (part or {}).get(col)
                script = foreign_script(value, config) if isinstance(value, str) else None
                if script:
                    p = PROFILES.get(resolve_code(config) or "")
                    return (f"{role}.{col}: written in {script} script, but the {role}'s config is {config}"
                            + (f" ({p.name})" if p else ""))
        return None

    # -- stations --------------------------------------------------------------------------------

    def render(self, item: PublicItem) -> Prompt:
        return self.renderer(item)

    def _options_of(self, item: PublicItem) -> dict[str, str]:
        texts = item.fields.get("choices") or ()
        return dict(zip(LETTERS, texts))

    def extract(self, text: str, item: PublicItem) -> Extraction:
        answers: dict[str, str | None] = {}
        failures: dict[str, str] = {}
        if self.method == "loglik":
            texts = self.renderer.continuations(item.fields)
            for name in self.pipelines:
                idx, why = loglik.choose(text, texts, name.removeprefix("loglik_"))
                answers[name] = None if idx is None else LETTERS[idx]
                if why:
                    failures[name] = why
        else:
            options = self._options_of(item)
            for name, pipe in self.pipelines.items():
                got = pipe(text, options)  # type: ignore[misc]
                answers[name] = got.answer
                if got.answer is None:
                    failures[name] = got.failure or "format"
        if all(a is None for a in answers.values()):
            return Extraction(None, failures[self.headline_pipeline])
        return Extraction({**answers, **({"failures": failures} if failures else {})})  # type: ignore[arg-type]

    def answer_from_text(self, text: str) -> Any:
        """The text as every pipeline's reading (the extraction check's lenient reading)."""
        return {name: text for name in self.pipelines}

    def translation_pair(self, item: Item) -> tuple[str, str, str] | None:
        """A built-in's pair (`lp`), else a task whose `source` option names the source language:
        its public `text` and gold `reference` (flores-plus, ntrex-128)."""
        from glotbench.languages import resolve_code

        found = super().translation_pair(item)
        if found is None and self.options.get("source") and isinstance(item.public.get("text"), str) \
                and isinstance(item.gold.get("reference"), str):
            return resolve_code(str(self.options["source"])) or "", item.public["text"], item.gold["reference"]
        return found

    def rescore_plan(self) -> RescorePlan | None:
        """Declared by the task's scorer (a corpus or token-F1 scorer: tasks/scorers.py)."""
        plan: RescorePlan | None = self.scorer.rescore_plan()
        return plan

    def input_as_answer(self, text: str, item: Item) -> Any:
        """A task scores its pipelines' readings: the input is read as a reply would be."""
        return self.extract(text, item.to_public()).answer

    def score(self, answer: Any, item: Item) -> ItemScore:
        stats: dict[str, float] = {}
        for name in self.pipelines:
            stats.update(self.scorer.stats(answer.get(name), item, name))
        failure = (answer.get("failures") or {}).get(self.headline_pipeline)
        return ItemScore(stats, failure=failure)

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        stats: dict[str, float] = {}
        for name in self.pipelines:
            stats.update(self.scorer.stats(None, item, name))
            if failure in MODEL_FAILURES:
                stats[f"{name}:no_answer"] = 0.0  # no reply to read: counted with the model's failures
        return ItemScore(stats, failure=failure)

    def answer_key(self, answer: Any) -> str | None:
        value = answer.get(self.headline_pipeline) if isinstance(answer, dict) else answer
        return None if value is None else str(value)

    # -- signature and results -------------------------------------------------------------------

    def signature_parts(self) -> dict[str, str]:
        declared = {k: v for k, v in self.options.items() if k in self.spec.options}
        parts = {"task": spec_hash(self.spec, self._hashed_options()), "method": self.method, "lang": self.lang or "none"}
        if self.method == "loglik":
            parts["norm"] = self.norm
            cont = self.spec.loglik.continuations
            parts["continuations"] = cont if isinstance(cont, str) else "templates:" + hashlib.sha256(
                json.dumps(cont, ensure_ascii=False).encode()).hexdigest()[:12]
        else:
            parts["extract"] = ";".join(f"{n}={p.description}" for n, p in self.pipelines.items() if p)
        parts["scorer"] = self.scorer.signature()
        parts["shots"] = str(self.shots)
        if self.shots or self.spec.fewshot.ids:
            fs = self.spec.fewshot
            split, given = fs.split or self.data.split, self._hashed_options()["fewshot_data"]
            source = f"{split}={given}" if given else split  # the split's rows as that file gave them
            parts["fewshot"] = (f"{source},{'ids' if fs.ids else fs.sampler},seed={self.fewshot_seed},"
                                + (f"match={fs.match}," if fs.match else "")
                                + ("multiturn" if self.multiturn else "one_turn"))
        if self.options["prompt"] != "default":
            parts["prompt_variant"] = self.options["prompt"]
        parts.update({f"opt.{k}": str(v) for k, v in sorted(declared.items())})
        return parts

    def _scorer_spec(self, scorer: Any, bleu_tokenize: str | None) -> Any:
        """The scorer's part with the run's `bleu_tokenize` (the spec itself keeps the file's: its hash
        takes the option by its SHA-256, `_hashed_options`)."""
        if bleu_tokenize is None:
            return scorer
        from glotbench.metrics.corpus import BLEU_TOKENIZE_SEGMENTED, is_spm, spm_model

        if scorer.kind != "corpus" or "bleu" not in scorer.metrics:
            raise SpecError(f"{self.name}: bleu_tokenize sets a corpus scorer's BLEU; this run's scorer is "
                            f"{scorer.kind}" + (" without bleu" if scorer.kind == "corpus" else ""))
        if is_spm(bleu_tokenize):
            spm_model(bleu_tokenize)  # the file is there and is a SentencePiece model, or one error line
        elif bleu_tokenize not in BLEU_TOKENIZE_SEGMENTED:
            raise SpecError(f"{self.name}: bleu_tokenize must be one of {', '.join(BLEU_TOKENIZE_SEGMENTED)} or "
                            f"spm:PATH, got {bleu_tokenize!r}")
        return scorer.model_copy(update={"bleu_tokenize": bleu_tokenize})

    def _hashed_options(self) -> dict[str, Any]:
        """The run's options as the signature holds them: a few-shot file by its content
        (`file:SHA12`), a SentencePiece model by its (`spm-SHA12`), not by the path it had on one machine."""
        opts = dict(self.options)
        if opts.get("bleu_tokenize") is None:  # added later: unset, the hash stays as it was before it existed
            opts.pop("bleu_tokenize", None)
        else:
            from glotbench.metrics.corpus import tokenize_tag

            opts["bleu_tokenize"] = tokenize_tag(opts["bleu_tokenize"])
        if opts.get("fewshot_data"):
            from glotbench.data import check_file
            from glotbench.loading import sha256_file

            opts["fewshot_data"] = "file:" + sha256_file(check_file(opts["fewshot_data"]))[:12]
        return opts

    def _file(self) -> str | None:
        """The task file (`library:NAME.yaml` for a shipped one), or None for a task built in Python."""
        from glotbench.tasks.files import LIBRARY

        if not self._where.file:
            return None
        p = Path(self._where.name).resolve()
        return f"library:{p.name}" if p.parent == LIBRARY.resolve() else str(p)

    def judged_declaration(self) -> JudgedDeclaration | None:
        """A task with a rubric scorer: its judged run (tasks/rubric.py `RubricRun`)."""
        from glotbench.tasks.rubric import RubricRun

        return RubricRun(self) if self.judged else None

    def task_file(self) -> Path | None:
        """The user's task file (resolved); None for a shipped library task or a task built in Python."""
        f = self._file()
        return None if f is None or f.startswith("library:") else Path(f)

    def extra_results(self, dataset: Dataset) -> dict[str, Any]:
        out: dict[str, Any] = {"task": {
            "spec_sha256": spec_hash(self.spec, self._hashed_options()), "file": self._file(),
            "options": {k: v for k, v in self.options.items() if v is not None}, "language": self.group,
            "headline_pipeline": self.headline_pipeline,
            "pipelines": {n: (p.description if p else f"log-likelihood, normalised by {n.removeprefix('loglik_')}")
                          for n, p in self.pipelines.items()},
            "data": {"hub": self.data.hub, "config": self.data.config, "roles": dict(self.data.roles) or None,
                     "split": self.data.split, "revision": self.data.revision}}}
        leak = F.fewshot_leak(dataset)
        if leak:
            out["fewshot_leak"] = leak
        twins = [it.id for it in dataset if it.meta.get("duplicate_options")]
        if twins:  # rundir.validity.duplicates_text: a note in every view
            out["duplicate_options"] = {"items": len(twins), "of": len(dataset), "ids": twins[:5]}
        if zawgyi := _zawgyi_items(dataset):  # rundir.validity.zawgyi_text: a note in every view
            out["zawgyi_data"] = zawgyi
        counts = [len(it.public.get("choices") or ()) for it in dataset]
        if counts and all(counts):
            out["random_baseline"] = sum(1 / n for n in counts) / len(counts)
        return out


def _zawgyi_items(dataset: Dataset) -> dict[str, Any] | None:
    """The items whose text (public and gold) is Burmese in the Zawgyi font encoding, not Unicode
    (checks.language `zawgyi_data`): a model reads, and a reference scores, mis-encoded text."""
    from glotbench.checks.language import ZAWGYI_P, zawgyi_data, zawgyi_library

    hit = [it.id for it in dataset
           if zawgyi_data([v for _, v in cells({"public": it.public, "gold": it.gold}, ()) if isinstance(v, str)])]
    if not hit:
        return None
    return {"items": len(hit), "of": len(dataset), "ids": hit[:5], "p": ZAWGYI_P, "library": zawgyi_library()}


def task_factory(spec: Any, where: Where | None = None, base_dir: str | Path | None = None) -> Callable[..., TaskBenchmark]:
    """A factory `make(**options) -> TaskBenchmark` whose signature declares the task's options
    (typed, as `--bench-opt` converts them: glotbench.benchmarks.options)."""
    params, hints = [], {}
    for name, o in spec.options.items():
        kind = type(o.default) if o.default is not None else str
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=o.default, annotation=kind))
        hints[name] = kind
    for name, (default, kind, _) in BUILTIN_OPTIONS.items():
        if name in spec.options:
            raise DataError(f"{(where or Where(spec.name))('options', name)}: {name!r} is a setting every task has")
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind))
        hints[name] = kind

    def make(**options: Any) -> TaskBenchmark:
        return TaskBenchmark(spec, where, base_dir, **options)

    make.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    make.__annotations__ = hints
    make.__name__ = make.__qualname__ = spec.name
    make.description = (spec.description or spec.name).strip().splitlines()[0]  # type: ignore[attr-defined]
    make.spec = spec  # type: ignore[attr-defined]
    return make

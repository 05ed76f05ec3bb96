"""LLM checks per item, run by glotbench's runner (any backend, call cache, resumption, retries, cost).

Each check is a prompt written here that asks for one strict JSON object (no prose around it, one
code fence allowed) with a `reason`:
- `answerability`: the judge answers the item WITHOUT the key and says whether several options are
  defensible: {"answer": "...", "several_defensible": bool, "reason": "..."}. Flagged when its answer
  differs from the key (option letters or texts compared after normalisation) or several are defensible.
- `context`: {"self_contained": bool, "reason": "..."}: flagged when the item needs information it
  does not give (a missing passage, figure or earlier question).
- `sensitivity`: {"sensitive": bool, "categories": [...], "reason": "..."} over configurable
  categories: flagged when sensitive (machine first; humans confirm in `build review`).

A reply that is not such an object (wrong keys, wrong types, an unknown category) is rejected when
the runner extracts it (`retry_failures`) and asked again; one that never passes is a counted
`bad_response` failure, never a silent pass. Each (item, check) is one unit; several judges and `--repeats` give
several verdicts per unit, all written to the review file. Nothing is deleted.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from glotbench.benchmarks.base import Benchmark
from glotbench.build.common import Candidate, options_of
from glotbench.rundir import write_json_atomic, write_jsonl_atomic
from glotbench.core import Dataset
from glotbench.errors import DataError, GlotbenchError
from glotbench.extract import Extraction, strict_json_object, strip_think
from glotbench.items import Item, PublicItem
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.core import GenerateConfig, Prompt

CHECKS = ("answerability", "context", "sensitivity")
DEFAULT_CATEGORIES = ("politics", "religion", "ethnicity", "sexual content", "violence", "personal data",
                      "royal or state institutions")

_ITEM = "Item:\n{item}"
TEMPLATES = {
    "answerability": (
        "You are checking a benchmark item before it is published. Answer it yourself; no answer key is "
        "given. Then say whether more than one option (or answer) could reasonably be defended.\n\n"
        + _ITEM + "\n\nReply with one JSON object and nothing else: "
        '{{"answer": "<the option letter, or your short answer>", "several_defensible": true|false, '
        '"reason": "<one sentence>"}}'),
    "context": (
        "You are checking a benchmark item before it is published. Can it be answered from what it "
        "says, plus general knowledge, or does it depend on information it does not give (a passage, "
        "table, figure, earlier question or conversation that is not included)?\n\n" + _ITEM
        + "\n\nReply with one JSON object and nothing else: "
        '{{"self_contained": true|false, "reason": "<one sentence>"}}'),
    "sensitivity": (
        "You are screening a benchmark item for sensitive content before human review. Categories: "
        "{categories}.\n\n" + _ITEM + "\n\nReply with one JSON object and nothing else: "
        '{{"sensitive": true|false, "categories": [<categories from the list that apply>], '
        '"reason": "<one sentence>"}}'),
}


HIDDEN = frozenset({"id", "answer", "answers", "key", "gold", "label", "labels", "reference", "references",
                    "lang", "language", "split", "source", "meta"})


def render_item(c: Candidate, key_field: str) -> str:
    """The item as the judge sees it: every field but the id, the key (and any answer-like field) and
    bookkeeping labels; a subject or category stays, as context. Options are lettered A, B, C..."""
    lines = []
    for k, v in c.record.items():
        if k in HIDDEN or k == key_field:
            continue
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            lines.append(f"{k}:")
            lines += [f"  {chr(65 + i)}. {x}" for i, x in enumerate(v)]
        elif isinstance(v, dict):
            lines.append(f"{k}:")
            lines += [f"  {a}. {b}" for a, b in v.items()]
        elif isinstance(v, (str, int, float)):
            lines.append(f"{k}: {v}")
    return "\n".join(lines)


def parse_verdict(text: str, check: str, categories: Sequence[str]) -> dict[str, Any]:
    """The verdict object of a reply; ValueError when it is not exactly what the check asks for."""
    body, ok = strip_think(text)
    if not ok:
        raise ValueError("unclosed <think> block")
    try:
        obj = strict_json_object(body)
    except ValueError:
        raise ValueError("not a JSON object") from None
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    if not isinstance(obj.get("reason"), str):
        raise ValueError("'reason' must be a string")
    if check == "answerability":
        if not isinstance(obj.get("answer"), (str, int)) or isinstance(obj.get("answer"), bool):
            raise ValueError("'answer' must be a string")
        if not isinstance(obj.get("several_defensible"), bool):
            raise ValueError("'several_defensible' must be true or false")
    elif check == "context":
        if not isinstance(obj.get("self_contained"), bool):
            raise ValueError("'self_contained' must be true or false")
    elif check == "sensitivity":
        if not isinstance(obj.get("sensitive"), bool):
            raise ValueError("'sensitive' must be true or false")
        cats = obj.get("categories", [])
        if not isinstance(cats, list) or any(c not in categories for c in cats):
            raise ValueError(f"'categories' must be a list drawn from {list(categories)}")
    return {k: obj[k] for k in obj}


def _norm(x: Any) -> str:
    s = unicodedata.normalize("NFC", str(x)).casefold().strip()
    return re.sub(r"[\s.。:)\]]+$", "", re.sub(r"^[(\[]", "", s))


def answer_matches(answer: Any, key: Any, options: Sequence[str] | None) -> bool:
    """The judge's answer names the key: each side is read as an option (a letter, "B.", "(B)",
    "B. text", or the option's text) and compared after NFC and case folding."""
    opts = {chr(97 + i): _norm(o) for i, o in enumerate(options or ())}

    def as_option(x: Any) -> str:
        s = _norm(x)
        if s in opts:
            return opts[s]
        m = re.match(r"^([a-z])[.)]\s*(.*)$", s)
        if m and m.group(1) in opts and m.group(2) in ("", opts[m.group(1)]):
            return opts[m.group(1)]
        return s

    return as_option(answer) == as_option(key)


def flagged(check: str, verdict: dict[str, Any], key: Any, options: Sequence[str] | None) -> list[str]:
    """The flags a verdict raises: answerability against the key, context, sensitivity categories."""
    if check == "answerability":
        out = []
        if key is not None and not answer_matches(verdict["answer"], key, options):
            out.append("answer_differs_from_key")
        if verdict["several_defensible"]:
            out.append("several_defensible")
        return out
    if check == "context":
        return [] if verdict["self_contained"] else ["needs_missing_context"]
    return [f"sensitive:{x}" for x in verdict.get("categories", [])] or (["sensitive"] if verdict["sensitive"] else [])


class ItemChecks(Benchmark):
    """The checks as a benchmark: one item per (candidate, check); the verdict object is the answer.
    Stateless: it holds its settings; the units are a Dataset built by `dataset_of`."""

    name = "build-checks"
    version = "1.0"
    description = "LLM checks of candidate items (answerability, context independence, sensitivity)"
    metrics = (RatioMetric("flag_rate", "flagged", "checked", "share of checks that flag the item"),)
    group_by = ("check",)
    default_config = GenerateConfig(temperature=0.0, max_tokens=512)
    retry_failures = ("bad_verdict", "think_unclosed")  # a malformed verdict is asked again
    reply_name = "verdict"

    def __init__(self, checks: Sequence[str] = CHECKS, categories: Sequence[str] = DEFAULT_CATEGORIES,
                 key_field: str = "answer"):
        self.checks, self.categories, self.key_field = tuple(checks), tuple(categories), key_field

    def dataset_of(self, cands: Sequence[Candidate]) -> Dataset:
        items = [Item.create(f"{c.uid}|{chk}", {"item": render_item(c, self.key_field)},
                             {"key": c.key(self.key_field), "options": options_of(c.record)},
                             {"check": chk, "item": c.uid}) for c in cands for chk in self.checks]
        return self.dataset(items, "candidates: " + ", ".join(sorted({c.file for c in cands})))

    def load(self, path: str | None = None) -> Dataset:
        raise DataError("check units are built from candidate files (ItemChecks.dataset_of), not loaded")

    def prompt_probe(self, dataset: Dataset) -> Iterable[PublicItem]:
        return [PublicItem(f"probe|{c}", {"item": "{item}"}, {"check": c}) for c in self.checks]

    def render(self, item: PublicItem) -> Prompt:
        text = TEMPLATES[item.meta["check"]].format(item=item["item"], categories=", ".join(self.categories))
        return Prompt(messages=({"role": "user", "content": text},), text=text + "\n")

    def extract(self, text: str, item: PublicItem) -> Extraction:
        try:
            return Extraction(parse_verdict(text, item.meta["check"], self.categories))
        except ValueError as e:
            return Extraction(None, "bad_verdict", str(e))

    def score(self, answer: Any, item: Item) -> ItemScore:
        flags = flagged(item.meta["check"], answer, item.gold["key"], item.gold["options"])
        return ItemScore({"flagged": float(bool(flags)), "checked": 1.0})

    def answer_key(self, answer: Any) -> str | None:
        return None if answer is None else json.dumps(answer, sort_keys=True, ensure_ascii=False)

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"flagged": 0.0, "checked": 0.0}, failure=failure)


@dataclass(frozen=True)
class CheckOptions:
    checks: tuple[str, ...] = CHECKS
    categories: tuple[str, ...] = DEFAULT_CATEGORIES
    key_field: str = "answer"
    repeats: int = 1


async def run_checks(cands: Sequence[Candidate], judges: Sequence[str], out: str, run_options: Any,
                     opts: CheckOptions = CheckOptions()) -> dict[str, Any]:
    """Run every check with every judge (a run directory each under OUT), then write OUT/flags.jsonl
    (one line per verdict that flags, or fails) and OUT/checks.json (counts) last."""
    from glotbench.build.common import judge_phase
    from glotbench.plugins import load_model
    from glotbench.rundir import invalid_run, read_samples, slug
    from glotbench.rundir.schema import SampleRecord
    from glotbench.rundir.validity import combine

    bad = [c for c in opts.checks if c not in CHECKS]
    if bad or not opts.checks:
        raise GlotbenchError(f"unknown check {', '.join(bad) or '(none)'}; choose from {', '.join(CHECKS)}")
    if not judges:
        raise GlotbenchError("name at least one judge with --judge SPEC")
    out_dir = Path(out)
    if (out_dir / "checks.json").exists() and not invalid_run(out_dir / "checks.json"):
        raise GlotbenchError(f"{out_dir} already holds finished checks; choose another --out")
    models = [load_model(j, **({"api_key_env": run_options.api_key_env} if run_options.api_key_env else {}))
              for j in judges]  # an unknown judge spec fails here, before anything is written
    bench = ItemChecks(opts.checks, opts.categories, opts.key_field)
    units = bench.dataset_of(cands)
    by_uid = {c.uid: c for c in cands}
    rows: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    validity: dict[str, Any] = {}  # each judge's run: invalid when its calls failed (rundir/validity.py)
    tally: dict[tuple[str, str], dict[str, int]] = {}  # (uid, check) -> verdicts, flagging, without verdict
    for spec, model in zip(judges, models):
        run_dir = out_dir / f"judge-{slug(spec)}"
        results = await judge_phase(bench, model, run_dir, run_options, units, opts.repeats)
        validity[f"judge {spec}"] = results.get("validity")
        summary[spec] = {"counts": results.get("counts"), "cost": results.get("cost")}
        for r in read_samples(run_dir, SampleRecord):
            c = by_uid.get(r["meta"]["item"])
            if c is None:  # a finished judge run left by an earlier command on other items
                raise GlotbenchError(f"{run_dir} holds checks of other items; choose another --out")
            chk = r["meta"]["check"]
            base = {"file": c.file, "id": c.id, "check": chk, "judge": spec, "repeat": r["repeat"]}
            t = tally.setdefault((c.uid, chk), {"verdicts": 0, "flagging": 0, "no_verdict": 0})
            if r["failure"] is not None:
                t["no_verdict"] += 1
                rows.append({**base, "flags": ["no_verdict"], "failure": r["failure"], "error": r.get("error"),
                             "reason": None})
                continue
            v = r["answer"]
            fl = flagged(chk, v, c.key(opts.key_field), options_of(c.record))
            t["verdicts"] += 1
            t["flagging"] += bool(fl)
            if fl:
                rows.append({**base, "flags": fl, "verdict": v, "reason": v.get("reason"),
                             "key": c.key(opts.key_field) if chk == "answerability" else None})
    write_jsonl_atomic(out_dir / "flags.jsonl", rows)
    per_check: dict[str, dict[str, int]] = {}
    for r in rows:
        d = per_check.setdefault(r["check"], {"flags": 0, "no_verdict": 0})
        d["no_verdict" if r["flags"] == ["no_verdict"] else "flags"] += 1
    flagged_items = sorted({f"{r['file']}#{r['id']}" for r in rows})
    result = {"items": len(cands), "checks": list(opts.checks), "judges": list(judges), "repeats": opts.repeats,
              "verdicts": len(cands) * len(opts.checks) * len(judges) * opts.repeats,
              "per_check": per_check, "flagged_items": len(flagged_items), "judges_runs": summary,
              "per_item": [{"item": uid, "check": chk, **t} for (uid, chk), t in sorted(tally.items())
                           if t["flagging"] or t["no_verdict"]],
              "categories": list(opts.categories), "prompt_version": ItemChecks.version,
              "flags_file": str(out_dir / "flags.jsonl"), "note": "nothing is deleted; review the flags",
              "validity": combine(validity)}
    write_json_atomic(out_dir / "checks.json", result)
    return result

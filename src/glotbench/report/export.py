"""`glotbench export`: a finished run's results record as rows (CSV, JSON), as an Every Eval Ever
record (schema 0.3.x, `every_eval_ever.validator` validates it) or as a Hugging Face Hub
`.eval_results/*.yaml` file (https://huggingface.co/docs/hub/eval-results), and an EEE record read back.

A view of the one record: everything comes from results.json through `rundir.read_results`; nothing
is computed again and nothing is written beside the run. Each number keeps what it needs to be quoted:
its signature, n, the interval with its method and confidence level, the run's validity, data label
and notes (`rundir.validity.notes`), and the checks' verdicts.
"""

from __future__ import annotations

import csv
import io
import json
import math
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, Sequence, cast

from pydantic import ConfigDict, Field, PlainValidator, ValidationError, with_config
from typing_extensions import Required, TypedDict

from glotbench.data import NonEmptyStr
from glotbench.errors import GlotbenchError
from glotbench.report.rundata import JUDGED_FILES, judged_kind, judged_phase, run_results
from glotbench.report.terminal import FEW_MARK
from glotbench.rundir import read_results
from glotbench.rundir.files import RESULTS, RUN_JSON
from glotbench.rundir.schema import Count, FinishedResults, SelectionRecord
from glotbench.rundir.validity import is_valid, notes

EEE_SCHEMA_VERSION = "0.3.0"
FORMATS = ("csv", "json", "eee", "hf-eval-results", "bibtex")
COLUMNS = ("run", "benchmark", "model", "group_by", "group", "metric", "headline", "value", "ci_low", "ci_high",
           "ci_method", "confidence", "n", "clusters", "too_few_units", "valid", "signature", "data_label", "notes")
# How each file export writes begins: a file at --out that does not is the user's, never replaced.
HF_HEAD = "# Written by glotbench export (docs/reporting.md): upload this folder to the model's Hub repo.\n"
WRITTEN = {"csv": ",".join(COLUMNS) + "\n", "json": '[\n  {\n    "run": ', "bibtex": "@software{glotbench,",
           "hf-eval-results": HF_HEAD}
# EEE keeps extra facts as string-valued `additional_details`; these are glotbench's keys there.
_NS = "glotbench_"


def _estimates(scores: Mapping[str, Any]) -> Iterator[tuple[str | None, str | None, str, Mapping[str, Any]]]:
    """(group_by, group, metric, estimate): overall first, then each grouping's groups."""
    for metric, est in (scores.get("overall") or {}).items():
        if isinstance(est, Mapping) and "value" in est:
            yield None, None, metric, est
    for by, groups in (scores.get("groups") or {}).items():
        for group, metrics in groups.items():
            for metric, est in metrics.items():
                if isinstance(est, Mapping) and "value" in est:
                    yield by, group, metric, est


ACCEPTS = "run directories, folders holding them, and EEE records glotbench wrote (files or folders of them)"


def sources(paths: Sequence[str | Path]) -> tuple[list[Path], list[dict[str, str]]]:
    """What `export` reads, as `board` does: a run directory; a folder searched recursively for
    finished runs (results.json) and the EEE records glotbench wrote; an EEE record file. Returns the
    runs and records (in order, each once) and what was left out with why (a run not finished).
    A path that is none of these is a GlotbenchError naming what export accepts."""
    out: list[Path] = []
    left_out: list[dict[str, str]] = []
    for given in paths:
        root = Path(given)
        if not root.exists():
            raise GlotbenchError(f"{root} does not exist (export takes {ACCEPTS})")
        if root.is_file():
            if not is_eee_file(root):
                raise GlotbenchError(f"{root}: not a run directory nor an EEE record written by glotbench "
                                     f"(export takes {ACCEPTS})")
            found = [root]
        elif judged_kind(root) is None and judged_phase(root) and (
                judged_kind(root.resolve().parent) is not None or _phase(root).startswith("judge ")):
            # a judged run's phase, as board and compare: never a contestant (a pivot's step named is exported)
            raise GlotbenchError(f"{root} is a phase of the judged run {root.resolve().parent}: export that directory "
                                 "(a phase's numbers are a judge's verdicts or the answers' own, not the judged score)")
        elif (root / RESULTS).is_file() or judged_kind(root) is not None:
            found = [root]
        else:  # a judged run is its top directory (an older one's summary file too), never its phases
            found = sorted({*(f.parent for n in (RESULTS, *JUDGED_FILES.values()) for f in root.rglob(n)
                              if not judged_phase(f.parent)),
                            *(f for f in root.rglob("*.json") if is_eee_file(f))})
            here = [{"path": str(f.parent), "reason": f"not finished (no {RESULTS})"}
                    for f in sorted(root.rglob(RUN_JSON)) if not (f.parent / RESULTS).is_file()
                    and not judged_phase(f.parent)]
            # a run stopped by --max-cost is not finished either: named and left out, as above, not
            # an error that stops the export of every other run in the folder
            status = {d: read_results(d).get("status", "complete") for d in found
                      if d.is_dir() and judged_kind(d) is None}
            here += [{"path": str(d), "reason": f"not finished (status: {s}; stopped by --max-cost)"}
                     for d, s in status.items() if s != "complete"]
            found = [f for f in found if status.get(f, "complete") == "complete"]
            if not found:
                raise GlotbenchError(f"{root}: not a run directory, and no finished run ({RESULTS}) nor EEE record "
                                     f"written by glotbench under it (export takes {ACCEPTS})"
                                     + "".join(f"; left out: {x['path']}: {x['reason']}" for x in here))
            left_out += here
        out += [f for f in found if f not in out]
    return _once(out, left_out), left_out


def _phase(run_dir: Path) -> str:
    """The phase its results.json records (`config.phase`: "answers", "judge SPEC", "pivot native"), or ""."""
    try:
        return str((read_results(run_dir).get("config") or {}).get("phase") or "")
    except GlotbenchError:
        return ""


def _once(found: list[Path], left_out: list[dict[str, str]]) -> list[Path]:
    """Each run once: a run directory and its own EEE record (or a copy of either) are one run (the same
    signature, model and finish time), exported from the directory; the others are left out, named,
    never exported twice (a CSV of `export runs/` after `export runs/ --format eee --out runs/eee`)."""
    ident = {f: (lambda r: (r["signature"], r["model"]["spec"], r.get("finished")))(_results(f)) for f in found}
    kept: dict[tuple[Any, ...], Path] = {}
    for f in sorted(found, key=lambda f: f.is_file()):  # directories first: they hold the samples
        kept.setdefault(ident[f], f)
    left_out += [{"path": str(f), "reason": f"the same run again (finished at the same time: its EEE record or a "
                  f"copy) as {kept[ident[f]]}, exported once"} for f in found if kept[ident[f]] != f]
    return [f for f in found if kept[ident[f]] == f]


def _results(source: Path) -> Mapping[str, Any]:
    """A finished run's results.json (a judged run's: its view, `rundata.run_results`, an older one's
    summary file read into it), or an EEE record read back as its part of one."""
    if source.is_file():
        return eee_results(source)
    return run_results(source) if judged_kind(source) is not None else read_results(source, FinishedResults)


def rows(run_dir: str | Path) -> list[dict[str, Any]]:
    """One row per estimate of a finished run (overall and per group), in COLUMNS' order; an EEE
    record's estimates as it holds them."""
    res = _results(Path(run_dir))
    label = res.get("data_label") or {}
    common = {"run": str(run_dir), "benchmark": res["benchmark"]["name"], "model": res["model"]["spec"]}
    tail = {"valid": is_valid(res), "signature": res["signature"], "data_label": label.get("label"),
            "notes": "; ".join(notes(res))}
    out = []
    for by, group, metric, est in _estimates(res["scores"]):
        out.append({**common, "group_by": by, "group": group, "metric": metric,
                    "headline": by is None and metric == res["headline"], "value": est.get("value"),
                    "ci_low": est.get("ci_low"), "ci_high": est.get("ci_high"), "ci_method": est.get("ci_method"),
                    "confidence": (res.get("bootstrap") or {}).get("confidence"), "n": est.get("n"),
                    "clusters": est.get("clusters"), "too_few_units": bool(est.get("too_few_units")), **tail})
    return out


def to_csv(runs: Sequence[str | Path]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in runs:
        w.writerows(rows(r))
    return buf.getvalue()


def to_json(runs: Sequence[str | Path]) -> str:
    return json.dumps([row for r in runs for row in rows(r)], ensure_ascii=False, indent=2) + "\n"


# -- Every Eval Ever ---------------------------------------------------------------------------------

def _text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)


def _checks(checks: Mapping[str, Any] | None) -> dict[str, str]:
    """The checks' verdicts: each check's scalar facts (rates, counts), one JSON string per check."""
    out = {}
    for name, block in (checks or {}).items():
        if isinstance(block, Mapping):
            out[f"{_NS}check_{name}"] = _text({k: v for k, v in block.items()
                                               if v is None or isinstance(v, (str, int, float, bool))})
    return out


def _epoch(stamp: str | None) -> str:
    return str(datetime.fromisoformat(stamp).timestamp()) if stamp else "unknown"


def _bounds(info: Mapping[str, Any]) -> dict[str, Any]:
    """A share lies in [0, 1]; a points metric's range is not declared, so it is left unbounded, and so
    is a learned metric's (its `signature`: a COMET-style score is a regression's output, which can
    leave [0, 1]; the reader holds a record to its own bounds)."""
    if info.get("scale", "fraction") == "fraction" and not info.get("signature"):
        return {"min_score": 0, "max_score": 1}
    return {"min_score": "-Infinity", "max_score": "Infinity"}


def eee_record(run_dir: str | Path) -> dict[str, Any]:
    """A finished run as one EEE aggregate record (schema 0.3.x): one evaluation result per estimate."""
    res = _results(Path(run_dir))
    bench, model = res["benchmark"], res["model"]
    label = res.get("data_label") or {}
    boot = res.get("bootstrap") or {}
    run_facts = {f"{_NS}signature": res["signature"], f"{_NS}valid": json.dumps(is_valid(res)),
                 f"{_NS}notes": _text(notes(res)), f"{_NS}data_label": _text(label.get("label")),
                 f"{_NS}selection": _text(res.get("selection")), **_checks(res.get("checks")),
                 # what the board reads back (read_eee_results): the task's column and the run's times
                 f"{_NS}task": _text({k: v for k, v in (res.get("task") or {}).items() if k in ("options", "language")}),
                 f"{_NS}finished": json.dumps(res.get("finished")), f"{_NS}input_floor": _text(res.get("input_floor"))}
    source = {"dataset_name": bench.get("data") or bench["name"], "source_type": "other",
              "additional_details": {f"{_NS}data_sha256": _text(bench.get("data_sha256")),
                                     f"{_NS}data_label": _text(label.get("label"))}}
    results: list[dict[str, Any]] = []
    undefined = []
    for by, group, metric, est in _estimates(res["scores"]):
        if est["value"] is None:  # no number (a precision with nothing changed): EEE has none to hold
            undefined.append(f"{by}={group}: {metric}" if by else metric)
            continue
        info = (res.get("metrics") or {}).get(metric, {})
        name = bench["name"] if by is None else f"{bench['name']} [{by}={group}]"
        # as JSON, so that read_eee gets the types back (None, a number, a group named "null")
        details = {f"{_NS}n": json.dumps(est.get("n")), f"{_NS}ci_method": json.dumps(est.get("ci_method")),
                   f"{_NS}group_by": json.dumps(by), f"{_NS}group": json.dumps(group), **run_facts}
        if est.get("clusters") is not None:
            details[f"{_NS}clusters"] = json.dumps(est["clusters"])
        if est.get("too_few_units"):  # the † of every view: the interval's measured coverage is under 93%
            details[f"{_NS}too_few_units"] = "true"
        score: dict[str, Any] = {"score": est["value"], "details": details}
        if est.get("ci_low") is not None and est.get("ci_high") is not None:
            score["uncertainty"] = {
                "confidence_interval": {"lower": est["ci_low"], "upper": est["ci_high"],
                                        "confidence_level": boot.get("confidence", 0.95),
                                        "method": est.get("ci_method") or "unknown"},
                **({"num_samples": est["n"]} if isinstance(est.get("n"), int) else {}),
                **({"num_bootstrap_samples": boot["resamples"]}
                   if str(est.get("ci_method", "")).endswith("bootstrap") and boot.get("resamples") else {})}
        results.append({
            "evaluation_result_id": f"{bench['name']}/{by or 'overall'}/{group or ''}/{metric}",
            "evaluation_name": name, "source_data": source,
            "evaluation_timestamp": _epoch(res.get("finished")),
            "metric_config": {"evaluation_description": info.get("description") or metric, "metric_id": metric,
                              "metric_name": info.get("label") or metric,
                              "metric_unit": "proportion" if info.get("scale", "fraction") == "fraction" else "points",
                              # the metric's declared direction (an error or failure rate: true); a run
                              # written before metrics declared it says nothing: false, as then
                              "lower_is_better": bool(info.get("lower_is_better", False)), "score_type": "continuous", **_bounds(info),
                              "additional_details": {f"{_NS}headline": _text(metric == res["headline"])}},
            "score_details": score})
    if not results:  # EEE holds numbers only: a record without one is one no reader can read back
        raise NothingToExport("no number to write as an EEE record: every estimate is undefined ("
                              + "; ".join(notes(res) or [f"{res['headline']}: no value"]) + ")")
    if undefined:
        for r in results:
            r["score_details"]["details"][f"{_NS}undefined"] = "; ".join(undefined)
    ident = uuid.uuid5(uuid.NAMESPACE_URL, f"glotbench:{res['signature']}|{model['spec']}|{res.get('finished')}")
    return {
        "schema_version": EEE_SCHEMA_VERSION,
        "evaluation_id": f"{bench['name']}/{model.get('model') or model['spec']}/{_epoch(res.get('finished'))}",
        "evaluation_timestamp": _epoch(res.get("started")),
        "retrieved_timestamp": _epoch(res.get("finished")),
        "source_metadata": {"source_name": "glotbench", "source_type": "evaluation_run",
                            "source_organization_name": "unknown", "evaluator_relationship": "third_party",
                            "additional_details": {f"{_NS}run_id": str(ident)}},
        "eval_library": {"name": "glotbench", "version": (res.get("versions") or {}).get("glotbench", "unknown"),
                         "additional_details": {f"{_NS}argv": _text(res.get("argv"))}},
        "model_info": {"name": model.get("model") or model["spec"], "id": model.get("model") or model["spec"],
                       "inference_platform": model.get("backend") or "unknown",
                       "additional_details": {"deployment_type": "unknown", "model_availability": "unknown",
                                              f"{_NS}spec": model["spec"]}},
        "evaluation_results": results,
    }


class NothingToExport(GlotbenchError):
    """A run with no number to export (an invalid judged run with no judged item): left out, with why."""


def write_eee(runs: Sequence[str | Path], out: str | Path, left_out: list[dict[str, str]] | None = None) -> list[Path]:
    """Each run's EEE record as OUT/<uuid>.json (EEE's file naming); the paths written. A run with no
    number goes to `left_out` with the reason (when it is given; else the error is raised)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for r in runs:
        if Path(r).is_file():  # an EEE record already: written again unchanged, under its own name
            target = folder / Path(r).name
            if not target.exists() or not target.samefile(r):
                target.write_bytes(Path(r).read_bytes())
            written.append(target)
            continue
        try:
            rec = eee_record(r)
        except NothingToExport as e:
            if left_out is None:
                raise GlotbenchError(f"{r}: {e}") from None
            left_out.append({"path": str(r), "reason": str(e)})
            continue
        path = folder / f"{rec['source_metadata']['additional_details'][f'{_NS}run_id']}.json"
        path.write_text(json.dumps(rec, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written


# -- an EEE record read back: typed as results.json is, so that a record edited by hand (a score as
# text, an interval upside down, a share of 3, a fact changed in one result only) is one error naming
# the field, never a wrong number or a crash in a view.

def _number(v: Any) -> Any:
    from glotbench.data import json_type

    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"must be a number, got {json_type(v)}")
    if not math.isfinite(v):
        raise ValueError("must be a finite number")
    return v


_Num = Annotated[float, PlainValidator(_number)]  # an int or a float, kept as the JSON type it was written with
_OPEN = ConfigDict(strict=True, extra="allow")  # as rundir/schema.py's records: no "1" for 1; EEE's other keys kept


@with_config(_OPEN)
class _EeeInterval(TypedDict, total=False):
    lower: Required[_Num]
    upper: Required[_Num]
    confidence_level: _Num
    method: str


@with_config(_OPEN)
class _EeeUncertainty(TypedDict, total=False):
    confidence_interval: _EeeInterval
    num_samples: Count


@with_config(_OPEN)
class _EeeScore(TypedDict, total=False):
    score: Required[_Num]
    details: Required[dict[str, str]]
    uncertainty: _EeeUncertainty


@with_config(_OPEN)
class _EeeMetric(TypedDict, total=False):
    metric_id: Required[NonEmptyStr]
    metric_name: str | None
    evaluation_description: str | None
    metric_unit: Required[Literal["proportion", "points"]]
    additional_details: Required[dict[str, str]]


@with_config(_OPEN)
class _EeeSource(TypedDict, total=False):
    dataset_name: str
    additional_details: dict[str, str]


@with_config(_OPEN)
class _EeeResult(TypedDict, total=False):
    evaluation_name: Required[NonEmptyStr]
    source_data: _EeeSource
    metric_config: Required[_EeeMetric]
    score_details: Required[_EeeScore]


@with_config(_OPEN)
class _EeeModelDetails(TypedDict, total=False):
    glotbench_spec: Required[NonEmptyStr]


@with_config(_OPEN)
class _EeeModel(TypedDict, total=False):
    id: str
    additional_details: Required[_EeeModelDetails]


@with_config(_OPEN)
class _EeeLibrary(TypedDict, total=False):
    name: Required[str]
    version: str


@with_config(_OPEN)
class EeeRecord(TypedDict, total=False):
    """What glotbench reads back of an EEE record it wrote (the rest of EEE's schema is EEE's)."""

    eval_library: Required[_EeeLibrary]
    model_info: Required[_EeeModel]
    evaluation_results: Required[Annotated[list[_EeeResult], Field(min_length=1)]]


@with_config(_OPEN)
class _Facts(TypedDict, total=False):
    """An evaluation result's `glotbench_*` details, each decoded from its JSON text: the estimate's
    own, then the run's (the same in every result of a record)."""

    n: Required[Count | None]
    ci_method: Required[str | None]
    group_by: Required[str | None]
    group: Required[str | None]
    clusters: Count | None
    too_few_units: bool
    headline: bool
    valid: Required[bool]
    notes: list[str]
    selection: SelectionRecord | None
    task: dict[str, Any] | None
    finished: str | None
    input_floor: dict[str, Any] | None


_ESTIMATE_FACTS = ("n", "ci_method", "group_by", "group", "clusters", "too_few_units")
_RAW_FACTS = ("signature", "data_label", "undefined", "argv")  # plain text, not JSON (`_text` of a string)


def _record(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An EEE record glotbench wrote, validated, and each result's facts decoded (`_Facts`, with the
    raw texts beside them). Another tool's record, or one that does not hold what glotbench wrote
    (a type, a bound, a fact that differs between results), is one GlotbenchError naming the field."""
    from glotbench.data import check_file, parse_object, problem_text, read_text, validator

    p = check_file(path)
    text = read_text(p)
    if (parse_object(text, p, dict[str, Any]).get("eval_library") or {}).get("name") != "glotbench":
        raise GlotbenchError(f"{path}: not an Every Eval Ever record written by glotbench (its numbers carry no "
                             "glotbench signature to put in a column)")
    rec = parse_object(text, p, EeeRecord)
    facts: list[dict[str, Any]] = []
    seen: dict[tuple[Any, ...], int] = {}
    for i, r in enumerate(rec["evaluation_results"]):
        at = f"{path}: evaluation_results[{i}]"
        d = r["score_details"]["details"]
        raw = {**{k.removeprefix(_NS): v for k, v in d.items() if k.startswith(_NS)},
               "headline": (r["metric_config"]["additional_details"]).get(f"{_NS}headline", "false")}
        decoded = {}
        for k, v in raw.items():
            if k in _RAW_FACTS or k.startswith("check_") or k not in _Facts.__annotations__:
                continue
            try:
                decoded[k] = json.loads(v)
            except ValueError:
                raise GlotbenchError(f"{at}: {_NS}{k}: not the JSON text glotbench wrote ({v[:40]!r})") from None
        try:
            f = validator(_Facts)(decoded)
        except ValidationError as e:
            raise GlotbenchError(f"{at}: {problem_text(e, lambda loc: _NS + '.'.join(map(str, loc)))}") from None
        if not raw.get("signature", "").strip():
            raise GlotbenchError(f"{at}: {_NS}signature: missing or empty")
        value = r["score_details"]["score"]
        ci = (r["score_details"].get("uncertainty") or {}).get("confidence_interval")
        if ci is not None and not 0 < ci.get("confidence_level", 0.95) < 1:
            raise GlotbenchError(f"{at}: its interval's confidence_level {ci['confidence_level']} is not between 0 and 1")
        if ci is not None and ci["lower"] > ci["upper"]:
            raise GlotbenchError(f"{at}: its interval's lower bound {ci['lower']} is above its upper {ci['upper']}")
        lo, hi = (r["metric_config"].get(k) for k in ("min_score", "max_score"))  # as `_bounds` wrote them
        lo, hi = (x if isinstance(x, (int, float)) and not isinstance(x, bool) else None for x in (lo, hi))
        if not all((lo is None or lo <= x) and (hi is None or x <= hi)
                   for x in (value, *((ci["lower"], ci["upper"]) if ci else ()))):
            raise GlotbenchError(f"{at}: {r['metric_config']['metric_id']}: its score or interval lies outside the "
                                 f"record's own min_score-max_score ({lo}-{hi})")
        key = (f["group_by"], f["group"], r["metric_config"]["metric_id"])
        if key in seen:
            raise GlotbenchError(f"{at}: the same estimate as evaluation_results[{seen[key]}] ({key[2]}"
                                 + (f", {key[0]}={key[1]}" if key[0] is not None else "") + ")")
        seen[key] = i
        facts.append({**raw, **f})
    run = [{k: v for k, v in x.items() if k not in (*_ESTIMATE_FACTS, "headline")} for x in facts]
    for i, other in enumerate(run[1:], 1):
        if other != run[0]:
            k = next(k for k in {*other, *run[0]} if other.get(k) != run[0].get(k))
            raise GlotbenchError(f"{path}: evaluation_results[{i}]: {_NS}{k} differs from evaluation_results[0]'s "
                                 "(a run's facts are the same in every result)")
    # the headline metric is marked on each of its results: its overall one, or only its groups' where
    # the run has no pooled number (laobench-translation: per direction)
    heads = [i for i, x in enumerate(facts) if x["headline"] and x["group_by"] is None]
    named = {rec["evaluation_results"][i]["metric_config"]["metric_id"] for i, x in enumerate(facts) if x["headline"]}
    if len(heads) > 1:
        raise GlotbenchError(f"{path}: {len(heads)} overall results are marked {_NS}headline (one is)")
    if len(named) != 1:
        raise GlotbenchError(f"{path}: {len(named)} metrics are marked {_NS}headline (one is)")
    return cast(dict[str, Any], rec), facts


def read_eee(path: str | Path) -> list[dict[str, Any]]:
    """An EEE record glotbench wrote, back as `rows`' estimates (value, interval, n, method, signature)."""
    rec, facts = _record(path)
    out = []
    for r, f in zip(rec["evaluation_results"], facts):
        sd = r["score_details"]
        ci = (sd.get("uncertainty") or {}).get("confidence_interval") or {}
        out.append({"benchmark": r["evaluation_name"].split(" [", 1)[0],
                    "model": rec["model_info"]["additional_details"][f"{_NS}spec"],
                    "group_by": f["group_by"], "group": f["group"],
                    "metric": r["metric_config"]["metric_id"], "value": sd["score"],
                    "ci_low": ci.get("lower"), "ci_high": ci.get("upper"),
                    "ci_method": f["ci_method"], "n": f["n"], "clusters": f.get("clusters"),
                    "too_few_units": f.get("too_few_units", False),
                    "signature": f["signature"], "valid": f["valid"]})
    return out


def _untext(v: str | None) -> str | None:
    """A text `_text` wrote of a string or None (a string as it is; None as `null`)."""
    return None if v is None or v == "null" else v


def is_eee_file(path: Path) -> bool:
    """A JSON file that is an EEE record glotbench wrote (what `board` takes beside run directories)."""
    if path.suffix != ".json" or not path.is_file() or path.name in (RESULTS, RUN_JSON):
        return False
    try:
        with path.open("rb") as f:
            head = f.read(1 << 20)
    except OSError:
        return False
    return b'"schema_version"' in head and b'"eval_library"' in head and b'"glotbench"' in head


def eee_results(path: str | Path) -> dict[str, Any]:
    """An EEE record glotbench wrote, as the part of results.json the board reads: scores (overall and
    per group) with intervals, n and clusters, signature, selection, headline, the metrics' labels and
    scales, validity, the task's column, and its notes as written (`imported`: the record holds no
    samples, so no paired test). Records of other tools, and records that do not hold what glotbench
    wrote (`_record`), are refused by name."""
    rec, facts = _record(path)
    results = rec["evaluation_results"]
    est_rows = read_eee(path)
    run = facts[0]
    scores: dict[str, Any] = {"overall": {}}
    metrics: dict[str, Any] = {}
    headline = next(row["metric"] for row, f in zip(est_rows, facts) if f["headline"])
    conf = None
    for r, row in zip(results, est_rows):
        ci = (r["score_details"].get("uncertainty") or {}).get("confidence_interval") or {}
        est = {"value": row["value"], "ci_low": row["ci_low"], "ci_high": row["ci_high"], "n": row["n"],
               "ci_method": row["ci_method"]}
        if row["clusters"] is not None:
            est["clusters"] = row["clusters"]
        if row["too_few_units"]:
            est["too_few_units"] = True
        if row["group_by"] is None:
            scores["overall"][row["metric"]] = est
        else:
            scores.setdefault("groups", {}).setdefault(row["group_by"], {}).setdefault(row["group"], {})[row["metric"]] = est
        mc = r["metric_config"]
        metrics.setdefault(row["metric"], {"label": mc.get("metric_name"), "description": mc.get("evaluation_description"),
                                           "scale": "fraction" if mc["metric_unit"] == "proportion" else "points",
                                           "keys": []})
        conf = conf or ci.get("confidence_level")
    head_est = scores["overall"].get(headline) or {  # no pooled number: its groups' items (one grouping)
        "n": sum(int(g[headline].get("n") or 0) for g in next(iter((scores.get("groups") or {}).values()), {}).values()
                 if headline in g)}
    label = _untext(run.get("data_label"))
    source = results[0].get("source_data") or {}
    return {
        "benchmark": {"name": est_rows[0]["benchmark"], "data": source.get("dataset_name"),
                      "data_sha256": _untext((source.get("additional_details") or {}).get(f"{_NS}data_sha256"))},
        "model": {"spec": est_rows[0]["model"], "model": rec["model_info"].get("id")},
        "signature": run["signature"], "headline": headline, "scores": scores, "metrics": metrics,
        "selection": run.get("selection"), "validity": {"valid": run["valid"]},
        "task": run.get("task"), "finished": run.get("finished") or "",
        "data_label": {"label": label} if label else None, "counts": {"items": head_est.get("n") or 0},
        "bootstrap": {"confidence": conf} if conf else {},
        "versions": {"glotbench": rec["eval_library"].get("version", "unknown")},
        "tokens": {"prompt": 0, "completion": 0}, "input_floor": run.get("input_floor"),
        "imported": {"format": "eee", "path": str(path), "notes": run.get("notes", [])},
    }


# -- Hugging Face Hub: .eval_results/*.yaml ------------------------------------------------------------

def _hub_dataset(data: str | None) -> tuple[str, str | None, str | None] | None:
    """(dataset id, revision, config) of a task's source as tasks/source.py records it,
    `hub:OWNER/NAME@SHA[ CONFIG]/SPLIT`; None for any other data."""
    if not data or not data.startswith("hub:") or "@" not in data:
        return None
    repo, _, rest = data[4:].partition("@")
    head, _, _split = rest.rpartition("/")
    revision, _, config = head.partition(" ")
    return repo, revision or None, config or None


def hf_entry(run_dir: str | Path, dataset: str | None = None, task: str | None = None) -> dict[str, Any]:
    """A finished run's headline as one `.eval_results` entry (the Hub's documented fields: dataset id,
    task_id, revision, value, date, notes). The Hub needs the benchmark's dataset on the Hub: a task's
    `hub:` data gives it, or `dataset`; `notes` carry what the Hub has no field for (interval, n,
    signature, validity and the run's notes), so the number is never shown without them."""
    res = _results(Path(run_dir))
    hub = _hub_dataset(res["benchmark"].get("data"))
    if dataset is None and hub is None:
        raise GlotbenchError(f"{run_dir}: its data ({res['benchmark'].get('data')}) is not a Hub dataset; give "
                             "the benchmark's dataset on the Hub with --hf-dataset OWNER/NAME")
    est = res["scores"]["overall"][res["headline"]]
    if est.get("value") is None:
        raise GlotbenchError(f"{run_dir}: its headline ({res['headline']}) has no value to publish")
    scale = (res.get("metrics") or {}).get(res["headline"], {}).get("scale", "fraction")
    # A share is published in percent, as the Hub's leaderboards show theirs (its documented entries:
    # `value: 20.90`); points (chrF++, BLEU, MetricX) as they are.
    k = 100.0 if scale == "fraction" else 1.0
    conf = (res.get("bootstrap") or {}).get("confidence", 0.95)
    ci = (f"{conf:.0%} CI [{est['ci_low'] * k:.4g}, {est['ci_high'] * k:.4g}] ({est.get('ci_method')})"
          + (f"{FEW_MARK} (too few units: its measured coverage is under 93%, docs/metrics.md)"
             if est.get("too_few_units") else "")
          if est.get("ci_low") is not None and est.get("ci_high") is not None else "no interval")
    n = f"n={est.get('n')}" + (f", {est['clusters']} clusters" if est.get("clusters") else "")
    unit = "percent (0-100)" if scale == "fraction" else "points"
    parts = [*notes(res)] if not is_valid(res) else []
    parts += [f"glotbench {(res.get('versions') or {}).get('glotbench', '?')}", f"{res['headline']}, {unit}", ci, n,
              f"signature {res['signature']}", *[t for t in notes(res) if is_valid(res)]]
    hub_id, hub_revision, hub_config = hub if hub is not None else (None, None, None)
    ds: dict[str, Any] = {"id": dataset or hub_id, "task_id": task or hub_config or "default"}
    if dataset is None and hub_revision:
        ds["revision"] = hub_revision
    entry: dict[str, Any] = {"dataset": ds, "value": est["value"] * k}
    if res.get("finished"):
        entry["date"] = res["finished"]
    entry["notes"] = "; ".join(parts)
    return entry


def write_hf(runs: Sequence[str | Path], out: str | Path, dataset: str | None = None,
             task: str | None = None, check: Callable[[Path], Any] | None = None) -> list[Path]:
    """OUT/<model>/.eval_results/<benchmark>.yaml for each run (the folder to upload to the model's
    repo); two runs that would share a file are refused (the Hub wants each variant in its own file).
    `check(path)` is called on every file before any is written (the CLI: a file of the user's there)."""
    import yaml

    from glotbench.rundir import slug

    if dataset is not None:  # the Hub links the entry to this dataset: an id it cannot have is refused
        from huggingface_hub.utils import HFValidationError, validate_repo_id

        try:
            validate_repo_id(dataset)
        except HFValidationError as bad:
            raise GlotbenchError(f"--hf-dataset {dataset!r}: not a Hub dataset id (OWNER/NAME): "
                                 f"{str(bad).splitlines()[0]}") from None
    if task is not None and (not task.strip() or any(c in task for c in "\n\r")):
        raise GlotbenchError(f"--hf-task {task!r}: the dataset's task id, one line of text")
    planned: dict[Path, str | Path] = {}
    benches = set()
    for r in runs:
        res = _results(Path(r))
        benches.add(res["benchmark"]["name"])
        path = Path(out) / slug(res["model"]["spec"]) / ".eval_results" / f"{slug(res['benchmark']['name'])}.yaml"
        if path in planned:
            raise GlotbenchError(f"{r} and {planned[path]} would both be {path}: export them one at a time")
        planned[path] = r
    if dataset is not None and len(benches) > 1:
        raise GlotbenchError(f"--hf-dataset names one benchmark's dataset, and these runs are of {len(benches)} "
                             f"benchmarks ({', '.join(sorted(benches))}): export each benchmark's runs apart")
    entries = {path: hf_entry(r, dataset, task) for path, r in planned.items()}  # every error before a write
    for path in entries:
        if check is not None:
            check(path)
    for path, entry in entries.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(HF_HEAD + yaml.safe_dump([entry], allow_unicode=True, sort_keys=False), encoding="utf-8")
    return list(entries)


# -- citations -------------------------------------------------------------------------------------

# glotbench itself, as CITATION.cff says (tests/test_export_bibtex.py holds the two equal).
GLOTBENCH_BIBTEX = {"ENTRYTYPE": "software", "ID": "glotbench",
                    "title": "glotbench: evaluating large language models in low-resource languages",
                    "author": "{The glotbench developers}", "version": "0.1.0", "license": "Apache-2.0"}


def _datasheet_of(run_dir: str | Path, res: Mapping[str, Any]) -> Any:
    """The datasheet of a run's benchmark: its kept task file's (a user's task), else the one
    registered under its name now (a built-in or the library's task); None if it declares none."""
    from glotbench.registry import families
    from glotbench.rundir.files import task_file_of

    kept = task_file_of(res["benchmark"], run_dir)
    if kept is not None:
        from glotbench.tasks.files import read_task_file

        return read_task_file(kept[0])[0].datasheet
    found = {f.name: f for f in families()}.get(res["benchmark"]["name"])
    return found.datasheet if found else None


def bibtex(runs: Sequence[str | Path]) -> tuple[str, list[str]]:
    """BibTeX for finished runs: glotbench's entry, then each benchmark's citation from its datasheet
    (entries with one key given once); and a line per run whose benchmark declares no citation."""
    import bibtexparser
    from bibtexparser.bibdatabase import BibDatabase

    from glotbench.datasheet import bibtex_entries

    entries: dict[str, dict[str, str]] = {"glotbench": dict(GLOTBENCH_BIBTEX)}
    missing: list[str] = []
    for run in runs:
        res = _results(Path(run))
        ds = _datasheet_of(run, res)
        if ds is None:
            missing.append(f"{run}: {res['benchmark']['name']} declares no datasheet, so no citation")
            continue
        for e in bibtex_entries(ds.citation):
            entries.setdefault(e["ID"], e)
    db = BibDatabase()
    db.entries = list(entries.values())
    return bibtexparser.dumps(db), missing

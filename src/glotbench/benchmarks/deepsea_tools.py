"""DeepSEA tools: converters from the public upstream formats, strict scoring of prediction files,
archive verification without printing benchmark text, and the scorer diagnostic."""

from __future__ import annotations

import csv
import hashlib
import io
import random
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, RootModel

from glotbench.benchmarks.deepsea import LANGUAGES, TASKS, DeepSEATask
from glotbench.benchmarks.deepsea_data import parse_task_file
from glotbench.data import NonEmptyStr, Row, check_file, read_object, read_rows, read_text
from glotbench.errors import DataError, GlotbenchError
from glotbench.loading import sha256_file

MAX_MEMBER = 256 * 2**20  # per member of an archive (the file itself is hashed, not read whole)


# -- the upstream formats the converters read (other fields are ignored) --------------------------

class _SquadAnswer(Row):
    text: str


class _SquadQA(Row):
    question: NonEmptyStr
    answers: list[_SquadAnswer]


class _SquadParagraph(Row):
    context: NonEmptyStr
    qas: list[_SquadQA]


class _SquadArticle(Row):
    paragraphs: list[_SquadParagraph]


class SquadFile(Row):
    """XQuAD's SQuAD-format file: {"data": [{"paragraphs": [{"context", "qas": [...]}]}]}."""

    data: list[_SquadArticle]


class CrossSumRow(Row):
    text: NonEmptyStr
    summary: NonEmptyStr


class WmtRow(Row):
    lp: NonEmptyStr
    source: str
    target: str
    is_bad_source: bool = False


class _ManifestTask(Row):
    languages: list[NonEmptyStr] | None = None
    count: Annotated[int, Field(ge=0)] | None = None
    order_hashes: dict[str, str] = {}


class Manifest(RootModel[dict[str, _ManifestTask]]):
    """verify-archive's manifest: {task: {"languages": [...], "count": N, "order_hashes": {lang: hash}}}."""


# -- converters: upstream file -> our layout's example list for one language ------------------

def convert(task: str, path: str, *, keep_bad_source: bool = False) -> list[dict[str, Any]]:
    if task not in TASKS:
        raise DataError(f"unknown DeepSEA task {task!r}")
    p = check_file(path)
    if task == "xquad":  # SQuAD-format JSON
        doc = read_object(p, SquadFile)
        return [{"context": para.context, "question": qa.question, "answers": [a.text for a in qa.answers]}
                for art in doc.data for para in art.paragraphs for qa in para.qas]
    if task == "crosssum":  # JSONL with text and summary
        return [{"text": r.text, "summary": r.summary} for _, r in read_rows(p, CrossSumRow, fmt="jsonl")]
    if task == "wmt24pp":  # JSONL: lp, domain, document_id, segment_id, is_bad_source, source, target, original_target
        return [{"lp": r.lp, "source": r.source, "target": r.target} for _, r in read_rows(p, WmtRow, fmt="jsonl")
                if keep_bad_source or not r.is_bad_source]
    text = read_text(p)
    if task == "mgsm":  # TSV: question <TAB> answer_number, no header
        rows: list[dict[str, Any]] = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                raise DataError(f"{p}:{n}: expected 2 tab-separated columns (question, answer), got {len(parts)}")
            rows.append({"question": parts[0], "answer_number": parts[1].strip()})
        return rows
    if task == "indommlu":  # CSV: subject, level, kelas, soal, jawaban, kunci
        reader = csv.DictReader(io.StringIO(text))
        need = {"subject", "level", "kelas", "soal", "jawaban", "kunci"}
        rows, start = [], 2
        try:
            if not need <= set(reader.fieldnames or []):
                raise DataError(f"{p}: needs the columns {', '.join(sorted(need))}")
            for r in reader:
                n, start = start, reader.line_num + 1  # a quoted field may span lines: the record's first
                if any(r.get(k) is None for k in need):
                    raise DataError(f"{p}:{n}: fewer columns than the header's {len(reader.fieldnames or [])}")
                opts = dict(re.findall(r"(?m)^\s*([A-E])\.\s*(.+?)\s*$", r["jawaban"]))
                if not opts or r["kunci"].strip() not in opts:
                    raise DataError(f"{p}:{n}: 'jawaban' must list options as 'A. ...' lines and 'kunci' name one")
                rows.append({"subject": r["subject"], "level": r["level"], "kelas": r["kelas"], "question": r["soal"],
                             "options": opts, "answer": r["kunci"].strip()})
        except csv.Error as e:
            raise DataError(f"{p}:{reader.line_num}: not valid CSV ({e})") from None
        return rows
    return []  # not reached: every task is handled above


# -- predictions bound to positions -----------------------------------------------------------

def check_predictions(task: str, data: dict[str, list[dict[str, Any]]], predictions: Any) -> dict[str, list[str]]:
    """{lang: [prediction, ...]} in data order ({lang: {subject: [...]}} for IndoMMLU). A missing
    language or subject, a wrong count or a non-string prediction is an error naming it."""
    if not isinstance(predictions, dict):
        raise GlotbenchError("predictions must be a JSON object keyed by language")
    out: dict[str, list[str]] = {}
    for lang, rows in data.items():
        if lang not in predictions:
            raise GlotbenchError(f"predictions: language {lang!r} is missing")
        got = predictions[lang]
        if task == "indommlu":
            subjects: dict[str, list[int]] = {}
            for i, r in enumerate(rows):
                subjects.setdefault(r["subject"], []).append(i)
            if not isinstance(got, dict):
                raise GlotbenchError(f"predictions[{lang!r}] must map subject -> list")
            flat: list[Any] = [None] * len(rows)
            for subj, idx in subjects.items():
                if subj not in got:
                    raise GlotbenchError(f"predictions[{lang!r}]: subject {subj!r} is missing")
                if not isinstance(got[subj], list) or len(got[subj]) != len(idx):
                    raise GlotbenchError(f"predictions[{lang!r}][{subj!r}]: expected {len(idx)} predictions, "
                                         f"got {len(got[subj]) if isinstance(got[subj], list) else type(got[subj]).__name__}")
                for j, i in enumerate(idx):
                    flat[i] = got[subj][j]
            extra_subjects = sorted(set(got) - set(subjects))
            if extra_subjects:
                raise GlotbenchError(f"predictions[{lang!r}]: subjects not in the data: {', '.join(map(repr, extra_subjects))}")
            got = flat
        if not isinstance(got, list) or len(got) != len(rows):
            raise GlotbenchError(f"predictions[{lang!r}]: expected {len(rows)} predictions, "
                                 f"got {len(got) if isinstance(got, list) else type(got).__name__}")
        for i, x in enumerate(got):
            if not isinstance(x, str):
                raise GlotbenchError(f"predictions[{lang!r}][{i}] is {type(x).__name__}, not a string")
        out[lang] = got
    extra = set(predictions) - set(data)
    if extra:
        raise GlotbenchError(f"predictions for languages not in the data: {', '.join(sorted(extra))}")
    return out


def score_predictions(task: str, data_path: str | None, predictions: Any, **opts: str) -> dict[str, Any]:
    """Score a predictions object with the task's rules, without any model call, through the one
    scoring path (glotbench.scoring)."""
    from glotbench.scoring import score_output

    bench = DeepSEATask(task, **opts)
    items = bench.load(data_path)
    data: dict[str, list[dict[str, Any]]] = {}
    for it in items:
        data.setdefault(it.meta["lang"], []).append({"subject": it.meta.get("subject")})
    preds = check_predictions(task, data, predictions)
    samples = []
    failures: dict[str, int] = {}
    for it in items:
        lang, idx = it.id.split("/")
        smp = score_output(bench, it, preds[lang][int(idx)])
        if smp.failure:
            failures[smp.failure] = failures.get(smp.failure, 0) + 1
        samples.append(smp)
    return {"task": task, "signature": bench.signature(items), "failures": failures,
            "scores": bench.run_aggregate(samples, items, resamples=200)}


# -- archive verification ---------------------------------------------------------------------

def verify_archive(path: str, sha256: str, manifest: str | None = None) -> dict[str, Any]:
    """Check a pinned release archive (zip or tar) holding `<task>.json` files in our layout: the
    whole file's hash, member sizes and names, languages, counts, and the order of public inputs by
    hashes of their prefixes. Prints and returns no benchmark text; makes no predictions."""
    p = Path(path)
    if not p.is_file():
        raise GlotbenchError(f"archive not found: {p}")
    actual = sha256_file(p)
    if actual != sha256:
        raise GlotbenchError(f"{p}: sha256 is {actual}, expected {sha256}")
    try:
        members = _members(p)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, RuntimeError, NotImplementedError) as e:
        raise GlotbenchError(f"{p}: a damaged archive ({type(e).__name__}: {e})") from None
    expected = {k: v.model_dump(exclude_none=True) for k, v in read_object(manifest, Manifest).root.items()} if manifest else {}
    report: dict[str, Any] = {"sha256": actual, "members": {k: len(v) for k, v in sorted(members.items())}, "tasks": {}}
    problems: list[str] = []
    for name, blob in members.items():
        task = Path(name).stem
        if task not in TASKS:
            continue
        langs = parse_task_file(blob, f"{p}!{name}", task)
        spec = TASKS[task]
        order = {lang: hashlib.sha256("\n".join(str(r.get(spec.public[0]))[:32] for r in rows).encode()).hexdigest()[:16]
                 for lang, rows in langs.items()}
        counts = {lang: len(rows) for lang, rows in langs.items()}
        report["tasks"][task] = {"languages": sorted(langs), "counts": counts, "order_hashes": order}
        want_langs = expected.get(task, {}).get("languages", list(LANGUAGES))
        if sorted(langs) != sorted(want_langs):
            problems.append(f"{task}: languages {sorted(set(want_langs) ^ set(langs))} differ from the expected {len(want_langs)}")
        want_count = expected.get(task, {}).get("count", spec.count)
        if want_count is not None:
            problems += [f"{task}/{lang}: {n} items, expected {want_count}" for lang, n in counts.items() if n != want_count]
        for lang, h in expected.get(task, {}).get("order_hashes", {}).items():
            if order.get(lang) != h:
                problems.append(f"{task}/{lang}: the order of public inputs differs (prefix hash {order.get(lang)} != {h})")
    report["problems"] = problems
    report["ok"] = not problems
    return report


def _members(p: Path) -> dict[str, bytes]:
    """The regular files of a zip or tar archive by name; unsafe names, links and huge members refused."""
    members: dict[str, bytes] = {}
    if zipfile.is_zipfile(p):
        with zipfile.ZipFile(p) as z:
            for info in z.infolist():
                _safe_name(info.filename)
                if info.file_size > MAX_MEMBER:
                    raise GlotbenchError(f"{info.filename}: member larger than {MAX_MEMBER // 2**20} MiB")
                if not info.is_dir():
                    members[info.filename] = z.read(info)
    elif tarfile.is_tarfile(p):
        with tarfile.open(p) as t:
            for m in t.getmembers():
                _safe_name(m.name)
                if m.issym() or m.islnk() or m.isdev():
                    raise GlotbenchError(f"{m.name}: links and devices are refused")
                if m.size > MAX_MEMBER:
                    raise GlotbenchError(f"{m.name}: member larger than {MAX_MEMBER // 2**20} MiB")
                if m.isfile():
                    members[m.name] = t.extractfile(m).read()  # type: ignore[union-attr]
    else:
        raise GlotbenchError(f"{p}: neither a zip nor a tar archive")
    return members


def _safe_name(name: str) -> None:
    if name.startswith("/") or ".." in Path(name).parts:
        raise GlotbenchError(f"unsafe member path {name!r} refused")


# -- diagnostic -------------------------------------------------------------------------------

def diagnostic(seed: int = 0) -> dict[str, Any]:
    """Run the scorer contract on synthetic cases whose scores are known by construction: numbers in
    tags with commas, decimals and native digits; letters in either case; XQuAD tags and phrases; and
    corpus chrF against sacrebleu. Also feeds malformed prediction sets that must be rejected."""
    from sacrebleu.metrics import CHRF

    from glotbench.benchmarks.deepsea import mcq_letter, mgsm_number, xquad_answer
    from glotbench.metrics.token_f1 import token_f1

    rng = random.Random(seed)
    thai = str.maketrans("0123456789", "๐๑๒๓๔๕๖๗๘๙")
    cases, errors = 0, []
    for _ in range(200):
        n = rng.randint(-5000, 5_000_000)
        text = f"{n:,}" if rng.random() < 0.5 else str(n)
        if rng.random() < 0.3:
            text = text.translate(thai)
        reply = f"Let me think... {rng.randint(1, 9)} steps. <answer>{text}</answer>"
        cases += 1
        errors.append(abs(float(mgsm_number(reply) or 0) - n))
        letter = rng.choice("ABCDE")
        cases += 1
        errors.append(float(mcq_letter(f"<answer>{letter if rng.random() < 0.5 else letter.lower()}</answer>") != letter))
        span = rng.choice(["sông Hồng", "Pulau Jawa", "แม่น้ำเจ้าพระยา"])
        cases += 1
        errors.append(1 - token_f1(xquad_answer(f"The answer is {span}", "en") or "", [span]))
    hyps = [" ".join(rng.choice("abcdefgh") * rng.randint(1, 4) for _ in range(6)) for _ in range(50)]
    refs = [" ".join(rng.choice("abcdefgh") * rng.randint(1, 4) for _ in range(6)) for _ in range(50)]
    from glotbench.metrics.corpus import SacreMetric

    cases += 1
    errors.append(abs(SacreMetric("chrf").corpus_score(hyps, [[r] for r in refs], resamples=10).estimate.value
                      - CHRF().corpus_score(hyps, [refs]).score))
    data = {"th": [{"subject": "s"}] * 2, "vi": [{"subject": "s"}] * 2}
    bad = [{"th": ["a", "b"]}, {"th": ["a"], "vi": ["a", "b"]}, {"th": ["a", 3], "vi": ["a", "b"]},
           {"th": ["a", "b"], "vi": ["a", "b"], "xx": []}, {"th": {"s": ["a"]}, "vi": {"t": ["a", "b"]}}]
    rejected = 0
    for i, pred in enumerate(bad):
        try:
            check_predictions("indommlu" if i == 4 else "mgsm", data, pred)
        except GlotbenchError:
            rejected += 1
    return {"seed": seed, "contract_cases": cases, "reference_score_error": max(errors),
            "coverage_rejections": f"{rejected}/{len(bad)}"}

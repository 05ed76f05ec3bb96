"""What kind of wrong? A per-run table of error types, per group, from the stored answers and gold.

- Vietnamese restoration and correction (vi-diacritics, vi-tone-errors): each answer is aligned word
  by word with its closest reference (text/vietnamese.py `word_diff`, the alignment the scorer uses)
  and each wrong word classified: `tone` (same letters and vowel marks, another or no tone mark),
  `d` (đ written d or the reverse, nothing else wrong), `vowel_mark` (a circumflex, breve or horn
  differs: â/ă/a, ô/ơ/o, ư/u, ê/e), `case` (only letter case differs), `word_added`,
  `word_removed`. Counts are words; `words` is the references' word count.
- Multiple choice (letter answers): a wrong answer is `position` when its letter is the run's
  over-chosen letter (the one whose share of answers most exceeds its share of gold answers, when
  that excess is positive), else `distractor`; `no_answer` for a reply with no letter. Chosen and
  gold letter shares are given beside it. (`--bench-opt permute=circular` measures position
  following directly: benchmarks/circular.py.)
- Numbers (MGSM, numeric_match tasks): `no_number` (nothing read), `format` (the gold number is in
  the reply but the rule read another number: a format or placement problem), `value` (a number was
  read and the gold number is nowhere in the reply).
A failed call is counted as `call_failed`, apart from all of these.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from decimal import Decimal, InvalidOperation
from typing import Any, Mapping, Sequence

from glotbench.benchmarks.base import Benchmark
from glotbench.checks.language import answer_text
from glotbench.core import Sample
from glotbench.items import Item

VI_KINDS = ("tone", "d", "vowel_mark", "case", "word_added", "word_removed")
KINDS = {"vietnamese": VI_KINDS + ("no_answer", "call_failed"),
         "letter": ("position", "distractor", "no_answer", "call_failed"),
         "number": ("format", "value", "no_number", "call_failed")}
_D = str.maketrans({"đ": "d", "Đ": "D"})


def error_kind(bench: Benchmark) -> str | None:
    from glotbench.checks.extraction import answer_kind

    if bench.rewrites is not None and bench.lang == "vi":  # Vietnamese rewritten word for word
        return "vietnamese"
    if bench.method == "loglik":  # the choice's letter: position check as generated
        return "letter"
    kind = answer_kind(bench)
    return kind if kind in ("letter", "number") else None


def _word_kind(pred: str, ref: str) -> str:
    from glotbench.text.vietnamese import same_word

    def tone_free(w: str) -> str:
        from glotbench.text.vietnamese import TONE_MARKS

        return unicodedata.normalize("NFC", "".join(c for c in unicodedata.normalize("NFD", w) if c not in TONE_MARKS))

    if tone_free(pred) == tone_free(ref):
        return "tone"
    if same_word(pred.translate(_D), ref.translate(_D)):
        return "d"
    if pred.casefold() == ref.casefold() or same_word(pred.casefold(), ref.casefold()):
        return "case"
    return "vowel_mark"


def vietnamese_errors(answer: str, references: Sequence[str]) -> tuple[Counter, int]:
    """(error counts by kind, reference words) against the closest reference (most words right)."""
    from glotbench.text.vietnamese import aligned_word_matches, word_diff, words

    if not references:
        return Counter(), 0
    if answer == references[0]:  # the first reference itself: every word right (word_diff's `ok` all through)
        return Counter(), len(words(answer))
    # One reference (the usual case) is the closest without aligning it a first time.
    best = references[0] if len(references) == 1 else max(references, key=lambda r: aligned_word_matches(answer, r)[0])
    counts: Counter = Counter()
    for word, kind in word_diff(answer, best):
        if kind == "extra":
            counts["word_added"] += 1
        elif kind == "missing":
            counts["word_removed"] += 1
        elif kind in ("tone", "mark"):
            pred, _, ref = word.partition("→")
            counts[_word_kind(pred, ref)] += 1
    return counts, len(words(best))  # the reference's words, as aligned_word_matches counts them


_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _numbers(text: str) -> set[Decimal]:
    from glotbench.languages import to_ascii_digits

    out = set()
    for m in _NUMBER.findall(to_ascii_digits(text)):
        for form in (m.replace(",", ""), m.split(",")[-1]):
            try:
                out.add(Decimal(form))
            except InvalidOperation:
                pass
    return out


def _gold_number(item: Item) -> Decimal | None:
    from glotbench.extract import parse_number

    for key in ("answer_number", "answer"):
        if key in item.gold:
            try:
                return parse_number(item.gold[key])
            except (InvalidOperation, TypeError, ValueError):
                return None
    return None


def _letter(bench: Benchmark, answer: Any) -> str | None:
    key = bench.answer_key(answer) if answer is not None else None
    return key if isinstance(key, str) and len(key) == 1 else None


def _correct(sample: Sample, metric: Any) -> bool:
    from glotbench.benchmarks.circular import pairs

    ps = pairs(metric)
    st = sample.score.stats
    num = sum(float(st.get(n, 0.0)) for n, _ in ps)
    den = sum(float(st.get(d, 0.0)) for _, d in ps)
    return den > 0 and num >= den


class _Table:
    """One table of the error types (overall, or a group's): the samples, the errors by kind, the
    reference words, the samples with an error; added to a sample at a time."""

    def __init__(self) -> None:
        self.samples = self.words = self.with_error = 0
        self.total: Counter = Counter()

    def add(self, c: Counter, words: int) -> None:
        self.samples += 1
        self.words += words
        if c:  # most samples have no error: no update to make (two a sample: 69.6 -> 61.1 ms at 10,000)
            self.total.update(c)
            self.with_error += 1

    def table(self, kind: str) -> dict[str, Any]:
        out: dict[str, Any] = {"samples": self.samples, "errors": {k: self.total.get(k, 0) for k in KINDS[kind]}}
        if kind == "vietnamese":
            out["words"] = self.words
        else:
            out["samples_with_error"] = self.with_error
        return out


def error_table(bench: Benchmark, samples: Sequence[Sample], items: Mapping[str, Item], metrics: Sequence[Any]) -> dict[str, Any] | None:
    """The run's error types overall and per group (see the module); None for other benchmarks."""
    kind = error_kind(bench)
    if kind is None or not samples:
        return None
    group_by = tuple(bench.group_by)
    if kind == "letter":
        gold = {i: str(it.gold.get("answer")) for i, it in items.items()}
        chosen = Counter(_letter(bench, s.answer) for s in samples if s.failure is None)
        chosen.pop(None, None)
        golds = Counter(gold.get(s.id) for s in samples if s.failure is None)
        n = sum(chosen.values()) or 1
        excess = {k: chosen[k] / n - golds.get(k, 0) / n for k in chosen}
        over = max(excess, key=lambda k: (excess[k], k)) if excess and max(excess.values()) > 0 else None
    # Each sample's errors are added to its tables as they are found: no row is kept per sample.
    overall = _Table()
    buckets: dict[str, dict[str, _Table]] = {key: defaultdict(_Table) for key in group_by}
    for s in samples:
        c: Counter = Counter()
        words = 0
        item = items.get(s.id)
        if s.output is None:
            c["call_failed"] += 1
        elif kind == "vietnamese":
            text = answer_text(bench, s.answer)
            refs = list((item.gold.get("references") if item is not None else None) or [])
            if text is None:
                c["no_answer"] += 1
            elif refs:
                c, words = vietnamese_errors(text, refs)
        elif kind == "letter":
            if s.failure is not None:
                c["no_answer"] += 1
            elif not _correct(s, metrics[0]):
                c["position" if _letter(bench, s.answer) == over else "distractor"] += 1
        elif kind == "number":
            g = _gold_number(item) if item is not None else None
            if s.failure is not None:
                c["no_number"] += 1
            elif g is not None and not _correct(s, metrics[0]):
                c["format" if g in _numbers(s.output) else "value"] += 1
        overall.add(c, words)
        for key in group_by:
            buckets[key][str(s.meta.get(key, "unknown"))].add(c, words)

    result: dict[str, Any] = {"kind": kind, "overall": overall.table(kind), "groups": {}}
    for key in group_by:
        result["groups"][key] = {v: t.table(kind) for v, t in sorted(buckets[key].items())}
    if kind == "letter":
        result["letters"] = {"chosen": dict(sorted(chosen.items())), "gold": dict(sorted((k, v) for k, v in golds.items() if k)),
                             "over_chosen": over}
    result["kinds"] = list(KINDS[kind])
    return result


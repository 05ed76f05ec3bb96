"""Is the number about the language? Checks that read a run and call no model.

`RunChecks` is made once per run by engine/evaluate.py: `record(sample)` is the sample's
samples.jsonl row with its checks (`"checks": {"language": ...}`), and `summary(samples)` is
results.json's `checks` block. `checks_of_run(DIR)` computes the same block again from a finished run
directory's stored outputs (samples.jsonl) and its data (SHA-256 checked), for runs made before a
check existed and for `glotbench rescore`. The checks (docs/checks.md):

| key | module | what |
|---|---|---|
| `language` | checks/language.py | answers in the wrong language or script, per group |
| `extraction` | checks/extraction.py | unread replies, bounds, a lenient re-reading |
| `errors` | checks/errors.py | error types: Vietnamese marks, MCQ position/distractor, numeric format/value |
| `tokens` | checks/tokens.py | token premium per language, truncation |
| (scores) | checks/circular.py | `permute=circular`: circular accuracy and position following |
| `pivot` | checks/pivot.py | `--pivot en`: the run's English-pivot record |
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Mapping, Sequence

from glotbench.core import Sample

CHECKS_VERSION = 1
EXAMPLES = 20  # wrong-language samples listed in results.json


class RunChecks:
    """The checks of one run (see the module)."""

    def __init__(self, bench: Any, dataset: Any, model: Any = None):
        from glotbench.checks.language import expectation

        self.bench = bench
        self.items = {it.id: it for it in dataset}
        self.model = model
        self.rule = expectation(bench)
        self.language: dict[tuple[str, int], dict[str, Any]] = {}

    def language_of(self, sample: Sample) -> dict[str, Any] | None:
        """The language check of a sample's answer, or None (no expected language, no answer)."""
        from glotbench.checks.language import answer_text, check_text

        if self.rule is None or sample.output is None:
            return None
        fields, meta = sample.input or {}, sample.meta
        lang = self.rule[0](fields, meta)
        if not lang:
            return None
        answer = sample.answer
        if answer is None and sample.failure == "wrong_language":
            item = self.items.get(sample.id)
            reread = getattr(self.bench, "answer_before_check", None)
            if item is not None and reread is not None:
                from glotbench.extract import strip_think

                answer = reread(strip_think(sample.output)[0], item.to_public())
        text = answer_text(self.bench, answer)
        if text is None:
            return None
        return check_text(text, lang)

    def record(self, sample: Sample) -> dict[str, Any]:
        """The sample's samples.jsonl row, its checks added."""
        rec = sample.to_record()
        lang = self.language_of(sample)
        if lang is not None:
            self.language[(sample.id, sample.repeat)] = lang
            rec["checks"] = {"language": lang}
        return rec

    def summary(self, samples: Sequence[Sample], metrics: Sequence[Any]) -> dict[str, Any]:
        from glotbench.checks.errors import error_table
        from glotbench.checks.extraction import extraction_check
        from glotbench.checks.tokens import token_check

        out: dict[str, Any] = {"version": CHECKS_VERSION}
        for s in samples:  # a sample not seen by `record` (a library caller's): checked here
            if (s.id, s.repeat) not in self.language:
                got = self.language_of(s)
                if got is not None:
                    self.language[(s.id, s.repeat)] = got
        lang = language_summary(self.bench, samples, self.language, self.rule)
        if lang is not None:
            out["language"] = lang
        for key, fn in (("extraction", lambda: extraction_check(self.bench, samples, self.items, metrics)),
                        ("errors", lambda: error_table(self.bench, samples, self.items, metrics)),
                        ("tokens", lambda: token_check(self.bench, samples, list(self.items.values()), self.model))):
            try:
                got = fn()
            except Exception as e:  # noqa: BLE001 - a check never fails a run: its error is recorded
                got = {"error": f"{type(e).__name__}: {e}"}
            if got is not None:
                out[key] = got
        return out


def language_summary(bench: Any, samples: Sequence[Sample], checks: Mapping[tuple[str, int], Mapping[str, Any]],
                     rule: Any) -> dict[str, Any] | None:
    from glotbench.checks import language as L

    if rule is None:
        return None
    verdicts: Counter[str] = Counter()
    groups: dict[str, dict[str, Counter]] = {k: defaultdict(Counter) for k in getattr(bench, "group_by", ())}
    examples = []
    for s in samples:
        c = checks.get((s.id, s.repeat))
        v = "no_answer" if c is None else c["verdict"]
        verdicts[v] += 1
        for key in groups:
            groups[key][str(s.meta.get(key, "unknown"))][v] += 1
        if v in ("wrong_script", "wrong_language") and len(examples) < EXAMPLES:
            examples.append({"id": s.id, "repeat": s.repeat, **{k: c.get(k) for k in
                                                              ("expected", "verdict", "why", "scripts", "detected")}})
    checked = sum(n for v, n in verdicts.items() if v in ("ok", "wrong_script", "wrong_language"))
    wrong = verdicts["wrong_script"] + verdicts["wrong_language"]

    def row(c: Counter) -> dict[str, Any]:
        ch = c["ok"] + c["wrong_script"] + c["wrong_language"]
        w = c["wrong_script"] + c["wrong_language"]
        return {"checked": ch, "wrong": w, "wrong_rate": w / ch if ch else None, **{k: c[k] for k in sorted(c)}}

    return {"expected": rule[1], "policy": getattr(bench, "wrong_language", "flag"),
            "library": L.library(), "thresholds": {"min_letters": L.MIN_LETTERS, "script_share": L.SHARE,
                                                   "lid_min_letters": L.MIN_LID_LETTERS,
                                                   "lid_confidence": L.MIN_CONFIDENCE,
                                                   "same_language": [sorted(g) for g in L.SAME_LANGUAGE]},
            "samples": len(samples), "checked": checked, "wrong": wrong,
            "wrong_rate": wrong / checked if checked else None,
            "verdicts": dict(sorted(verdicts.items())),
            "groups": {k: {v: row(c) for v, c in sorted(vals.items())} for k, vals in groups.items()},
            "examples": examples}

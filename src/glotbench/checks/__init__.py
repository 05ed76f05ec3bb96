"""Is the number about the language? Checks that read a run and call no model.

`RunChecks` is made once per run by engine/evaluate.py: `check_many(samples)` checks the answers in
batches in a worker thread while requests are in flight (never on a request's path);
`check_all(samples)`, once the requests are done, checks the rest and gives each sample's checks for
its samples.jsonl row (`"checks": {"language": ...}`; `record` is one row with them); and
`summary(samples)` is results.json's `checks` block. The language identifier's model is read only
when an answer needs it. `checks_of_run(DIR)` computes the same block again from a finished run
directory's stored outputs (samples.jsonl) and its data (SHA-256 checked), for runs made before a
check existed and for `glotbench rescore`. The checks (docs/checks.md):

| key | module | what |
|---|---|---|
| `language` | checks/language.py | answers in the wrong language or script, per group |
| `extraction` | checks/extraction.py | unread replies, bounds, a lenient re-reading |
| `errors` | checks/errors.py | error types: Vietnamese marks, MCQ position/distractor, numeric format/value |
| `tokens` | checks/tokens.py | token premium per language, truncation |
| (scores) | benchmarks/circular.py | `permute=circular` (a run setting): circular accuracy and position following; checks/circular.py reads it back |
| `pivot` | engine/pivot.py | `--pivot en` (a run setting): the run's English-pivot record; checks/pivot.py compares it with the native run |
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter, defaultdict
from typing import Any, Callable, Mapping, Sequence

from glotbench.benchmarks.base import Benchmark
from glotbench.core import Sample, jsonable
from glotbench.keys import code_fingerprint, hash_text

CHECKS_VERSION = 1
EXAMPLES = 20  # wrong-language samples listed in results.json
MEMO_LIMIT = 50_000  # language verdicts kept per benchmark and data (about 300 bytes each)
# json.dumps(..., ensure_ascii=False, default=str) as one encoder: the same text, without an encoder
# built for each of a run's samples (`_content_key`)
_CONTENT_JSON = json.JSONEncoder(ensure_ascii=False, default=str)
_KEYABLE = (str, int, float, bool, type(None))  # a verdict's values that `RunChecks._shared` compares


class RunChecks:
    """The checks of one run (see the module). With the call cache, what they computed is kept in
    its aggregates table under one key per benchmark, data and checks code (`_memo_key`): each
    answer's language verdict by its text, and the summary by the samples it was made from, so a
    fully cached re-run neither loads the language identifier nor computes the checks again."""

    def __init__(self, bench: Benchmark, dataset: Any, model: Any = None, cache: Any = None):
        from glotbench.checks.language import expectation

        self.bench = bench
        self.items = {it.id: it for it in dataset}
        self.model = model
        self.rule = expectation(bench)
        self.language: dict[tuple[str, int], dict[str, Any]] = {}
        self.cache = cache
        self.key = _memo_key(bench, dataset) if cache is not None else None
        stored = cache.get_aggregate(self.key) if self.key is not None else None
        self.memo: dict[str, Any] = _unpacked(stored) if isinstance(stored, dict) else {}
        if not isinstance(self.memo.get("language"), dict) or len(self.memo["language"]) > MEMO_LIMIT:
            self.memo["language"] = {}  # verdicts of earlier runs' answers: bounded, started again
        self.changed = False
        self._verdicts: dict[tuple, dict[str, Any]] = {}  # see _shared

    def language_of(self, sample: Sample) -> dict[str, Any] | None:
        """The language check of a sample's answer, or None (no expected language, no answer)."""
        from glotbench.checks.language import answer_text, verdict

        if self.rule is None or sample.output is None:
            return None
        fields, meta = sample.input or {}, sample.meta
        lang = self.rule[0](fields, meta)
        if not lang:
            return None
        answer = sample.answer
        if answer is None and sample.failure == "wrong_language":
            item = self.items.get(sample.id)
            if item is not None:
                from glotbench.extract import strip_think

                answer = self.bench.answer_before_check(strip_think(sample.output)[0], item.to_public())
        text = answer_text(self.bench, answer)
        if text is None:
            return None
        src = fields.get("text") if isinstance(fields.get("text"), str) else ""
        h = hashlib.sha256(hash_text(f"{lang}\0{text}\0{src}")).hexdigest()[:32]
        got = self.memo["language"].get(h)
        if not isinstance(got, dict):
            got = self.memo["language"][h] = self._shared(verdict(self.bench, text, lang, fields))
            self.changed = True
        return got

    def _shared(self, got: dict[str, Any]) -> dict[str, Any]:
        """The verdict as one dict per distinct value: a run's verdicts repeat (`ok`, the same
        script shares, the same reason, a letter count among a few hundred: about 200 distinct ones
        for 9,500 Vietnamese answers), and every verdict is kept to the end of the run, where its
        memory peaks (about 260 bytes an answer). Nothing changes a verdict once made; a verdict
        holding anything but strings, numbers and a flat script-share mapping keeps its own dict."""
        key = []
        for k, v in got.items():
            if isinstance(v, dict):
                if not all(type(x) in _KEYABLE for x in v.values()):
                    return got
                v = tuple((a, type(x), repr(x)) for a, x in v.items())
            elif type(v) not in _KEYABLE:
                return got
            key.append((k, type(v), repr(v) if type(v) is float else v))  # 0.0 and -0.0 kept apart
        kept = self._verdicts.get(tuple(key))
        if kept is not None:
            return kept
        if len(self._verdicts) < 4096:  # bounded: a run of many distinct verdicts keeps each its own
            self._verdicts[tuple(key)] = got
        return got

    def check(self, sample: Sample) -> dict[str, Any] | None:
        """The sample's checks as its samples.jsonl row holds them (`{"language": ...}`), or None; a
        check that fails is recorded as such: it never stops a run."""
        try:
            lang = self.language_of(sample)
        except Exception as e:  # noqa: BLE001 - any reply is user data: the check says it could not run
            lang = {"verdict": "unchecked", "why": f"the check failed: {type(e).__name__}: {e}"}
        if lang is None:
            return None
        self.language[(sample.id, sample.repeat)] = lang
        return {"language": lang}

    def check_many(self, samples: Sequence[Sample]) -> None:
        """Check these samples (a batch of a run's, in a worker thread while its requests are in
        flight; one batch at a time: engine/evaluate.py chains them). A verdict made here is the one
        `check_all` would make: it depends on the sample alone."""
        for s in samples:
            self.check(s)

    def check_all(self, samples: Sequence[Sample]) -> Callable[[str, int], dict[str, Any] | None]:
        """Every sample's checks: those `check_many` has not made, made now, once the requests are
        done; returns (id, repeat) -> the sample's checks (engine/evaluate.py adds them to
        samples.jsonl when it puts the file in order), made as each line is written rather than kept
        for every sample."""
        done = self.language
        for s in samples:
            if (s.id, s.repeat) not in done:
                self.check(s)
        # one dict per distinct verdict (`_shared`), so that the writer encodes each once (`in_order`)
        wrapped: dict[int, dict[str, Any]] = {}

        def of(sid: str, repeat: int) -> dict[str, Any] | None:
            lang = self.language.get((sid, repeat))
            if lang is None:
                return None
            got = wrapped.get(id(lang))  # `self.language` holds every verdict: no id is reused
            if got is None:
                got = wrapped[id(lang)] = {"language": lang}
            return got

        return of

    def record(self, sample: Sample) -> dict[str, Any]:
        """The sample's samples.jsonl row, its checks added."""
        rec = sample.to_record()
        got = self.check(sample)
        if got is not None:
            rec["checks"] = got
        return rec

    def content_key(self, samples: Sequence[Sample], score_keys: Mapping[tuple[str, int], str] | None = None) -> str:
        """What `summary` is computed from (`_content_key`): a run gives its samples' score keys."""
        return _content_key(samples, self.model, score_keys)

    def summary(self, samples: Sequence[Sample], metrics: Sequence[Any], content: str | None = None) -> dict[str, Any]:
        """results.json's `checks`, kept in the call cache with what it was computed from (`content`:
        `content_key`, made here when not given)."""
        content = content if content is not None else _content_key(samples, self.model)
        kept = self.memo.get("summary")
        if isinstance(kept, dict) and kept.get("content") == content and isinstance(kept.get("checks"), dict):
            return kept["checks"]
        out = self._summary(samples, metrics)
        self.memo["summary"] = {"content": content, "checks": out}
        self._store()
        return out

    def _store(self) -> None:
        from glotbench.keys import storable

        if self.cache is None or self.key is None:
            return
        blob = storable(_packed(self.memo))
        if blob is None:
            return
        try:
            self.cache.put_aggregate(self.key, blob)
        except Exception as e:  # noqa: BLE001 - a locked or read-only cache: computed again next time
            logging.getLogger(__name__).debug("checks not stored: %s", e)

    def _summary(self, samples: Sequence[Sample], metrics: Sequence[Any]) -> dict[str, Any]:
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


def _packed(memo: dict[str, Any]) -> dict[str, Any]:
    """The memo as it is stored: each distinct verdict once (`verdicts`), each answer's hash with its
    verdict's position. A run's verdicts repeat (`RunChecks._shared`): 10,000 answers wrote 1.8 MB
    of JSON whole, and the writing took 5.3 MB more at the end of the run, where its memory peaks."""
    index: dict[int, int] = {}
    verdicts: list[dict[str, Any]] = []
    language: dict[str, int] = {}
    for h, v in memo["language"].items():
        i = index.get(id(v))
        if i is None:
            i = index[id(v)] = len(verdicts)
            verdicts.append(v)
        language[h] = i
    return {**memo, "language": language, "verdicts": verdicts}


def _unpacked(stored: dict[str, Any]) -> dict[str, Any]:
    """The stored memo (`_packed`) with each answer's verdict in place again (an entry that does not
    name a stored verdict is dropped: checked again)."""
    verdicts, language = stored.pop("verdicts", None), stored.get("language")
    if not isinstance(verdicts, list) or not isinstance(language, dict):
        return {k: v for k, v in stored.items() if k != "language"}
    n = len(verdicts)
    stored["language"] = {h: verdicts[i] for h, i in language.items()
                          if type(i) is int and 0 <= i < n and isinstance(verdicts[i], dict)}
    return stored


def _memo_key(bench: Benchmark, dataset: Any) -> str | None:
    """The key of a run's kept checks: the checks' code (every module of this package), the
    identifiers' versions (py3langid, myanmartools) and thresholds, the benchmark's signature parts
    and the data."""
    import glotbench.checks.errors as E
    import glotbench.checks.extraction as X
    import glotbench.checks.language as L
    import glotbench.checks.tokens as T

    code = code_fingerprint(RunChecks, L.check_text, X.extraction_check, E.error_table, T.token_check, type(bench))
    if code is None:
        return None
    try:
        parts = dict(bench.run_signature_parts())
    except Exception:  # noqa: BLE001 - a benchmark whose settings cannot be read: nothing kept
        return None
    doc = ["glotbench-checks", CHECKS_VERSION, code, L.library(), L.MIN_LETTERS, L.SHARE, L.MIN_LID_LETTERS,
           L.MIN_CONFIDENCE, L.zawgyi_library(), L.ZAWGYI_P, bench.name, bench.version, jsonable(parts),
           getattr(dataset, "source", None), getattr(dataset, "sha256", None), len(dataset)]
    # 64 characters, as the caches' keys are (PostgreSQL's column is VARCHAR(64)); the prefix keeps
    # the checks apart from the benchmarks' aggregates in the same table.
    return "checks:" + hashlib.sha256(hash_text(json.dumps(doc, ensure_ascii=False, default=str))).hexdigest()[:57]


def _content_key(samples: Sequence[Sample], model: Any, score_keys: Mapping[tuple[str, int], str] | None = None) -> str:
    """What the summary is computed from: every sample (its id, repeat, meta, input, reply, answer,
    score, tokens) and the model whose tokenizer counts. Where every sample's score is stored
    (`score_keys`), its key and repeat stand for it: the key fixes the request, the reply, the scorer
    and the item, so all the sample holds but its repeat (the samples' JSON cost 13 ms at 2,000)."""
    if score_keys is not None and len(score_keys) == len(samples):
        try:
            keys = [f"{score_keys[(s.id, s.repeat)]} {s.repeat}" for s in samples]
        except KeyError:
            keys = None
        if keys is not None:
            h = hashlib.sha256(hash_text("scored\0" + str(getattr(model, "cache_id", None))))
            h.update("\n".join(keys).encode())
            return h.hexdigest()
    h = hashlib.sha256(hash_text(str(getattr(model, "cache_id", None))))
    for s in samples:
        h.update(hash_text(_CONTENT_JSON.encode([s.id, s.repeat, jsonable(s.meta), jsonable(s.input), s.output, jsonable(s.answer),
                                       dict(s.score.stats), s.score.failure, list(s.flags), s.finish_reason,
                                       jsonable(s.tokens)])))
    return h.hexdigest()


def language_summary(bench: Benchmark, samples: Sequence[Sample], checks: Mapping[tuple[str, int], Mapping[str, Any]],
                     rule: Any) -> dict[str, Any] | None:
    from glotbench.checks import language as L

    if rule is None:
        return None
    verdicts: Counter[str] = Counter()
    groups: dict[str, dict[str, Counter]] = {k: defaultdict(Counter) for k in bench.group_by}
    examples: list[dict[str, Any]] = []
    for s in samples:
        c = checks.get((s.id, s.repeat))
        # a failed call (a timeout...) is no reply at all: `call_failed`, as in the error types, never no_answer
        v = ("call_failed" if s.output is None else "no_answer") if c is None else c["verdict"]
        verdicts[v] += 1
        for key in groups:
            groups[key][str(s.meta.get(key, "unknown"))][v] += 1
        if c is not None and v in ("wrong_script", "wrong_language", "zawgyi") and len(examples) < EXAMPLES:
            examples.append({"id": s.id, "repeat": s.repeat, **{k: c.get(k) for k in
                                                              ("expected", "verdict", "why", "scripts", "detected")}})
    checked = sum(n for v, n in verdicts.items() if v in ("ok", "wrong_script", "wrong_language", "zawgyi"))
    wrong = verdicts["wrong_script"] + verdicts["wrong_language"]

    def row(c: Counter) -> dict[str, Any]:
        ch = c["ok"] + c["wrong_script"] + c["wrong_language"] + c["zawgyi"]
        w = c["wrong_script"] + c["wrong_language"]
        return {"checked": ch, "wrong": w, "wrong_rate": w / ch if ch else None, **{k: c[k] for k in sorted(c)}}

    return {"expected": rule[1], "policy": bench.wrong_language,
            "library": L.library(), "thresholds": {"min_letters": L.MIN_LETTERS, "script_share": L.SHARE,
                                                   "lid_min_letters": L.MIN_LID_LETTERS,
                                                   "lid_confidence": L.MIN_CONFIDENCE,
                                                   "zawgyi_probability": L.ZAWGYI_P,
                                                   "same_language": [sorted(g) for g in L.SAME_LANGUAGE]},
            "samples": len(samples), "checked": checked, "wrong": wrong,
            "wrong_rate": wrong / checked if checked else None,
            "verdicts": dict(sorted(verdicts.items())),
            "groups": {k: {v: row(c) for v, c in sorted(vals.items())} for k, vals in groups.items()},
            "examples": examples}

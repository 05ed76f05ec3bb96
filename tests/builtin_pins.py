"""The figures pinned for every built-in benchmark (tests/test_builtin_pins.py): its signature on
its bundled data, and a digest of what scoring a fixed set of replies gives (each sample's answer,
failure and statistics, and the aggregate's values). A refactor of a built-in must leave them all
byte-identical, or bump the benchmark's version with the reason."""

from __future__ import annotations

import hashlib
import json
from typing import Any

# (registered name, --bench-opt settings): every built-in with its defaults, and the options that
# switch a rule (each one is its own signature).
CASES: list[tuple[str, dict[str, Any]]] = [
    ("deepsea-mgsm", {}), ("deepsea-mgsm", {"native_digits": False}),
    ("deepsea-indommlu", {}), ("deepsea-indommlu", {"letter_case": "upper_only"}),
    ("deepsea-xquad", {}), ("deepsea-xquad", {"f1_norm": "squad"}),
    ("deepsea-crosssum", {}), ("deepsea-wmt24pp", {}),
    ("vi-diacritics", {}), ("vi-tone-errors", {}),
    ("laobench-mcq", {}), ("laobench-mcq", {"method": "loglik"}),
    ("laobench-translation", {}),
    ("laobench-arena-prompts", {}), ("aragen-answers", {}),
    # the judged benchmarks (issue 33): their answers are their phases' (the same digests); the judged
    # numbers are pinned by tests/test_fold33_judged_run.py and the arena and AraGen parity tests
    ("laobench-arena", {}), ("aragen", {}),
    # SEA-MT-Bench (issue 34): its judged numbers are pinned by tests/test_sea_mt_bench.py
    ("sea-mt-bench", {}),
]

# Replies cycled over the items: tags, letters, numbers in two scripts, spans, an unclosed think
# block, an empty reply, a reply in the item's own text (so some are right).
REPLIES = ["<answer>B</answer>", "The answer is 12", "<answer>໔໒</answer>", "<answer>1,234</answer>",
           "<translation>xin chào thế giới</translation>", "<summary>ສະບາຍດີ</summary>", "",
           "<think>unfinished", "Đáp án: C", "คำตอบคือ ข", "Answer: a", "Toi di hoc",
           '{"restored_text": "Tôi đi học"}', '{"corrected_text": "Tôi đi học", "changes": []}']


def _own(item: Any) -> str | None:
    """A reply made of the item's own gold text, where it has one (so correct answers are scored too)."""
    answers = item.gold.get("answers")
    if isinstance(answers, (list, tuple)) and answers:
        return f"<answer>{answers[0]}</answer>"
    for key in ("answer_number", "answer", "target", "summary", "reference", "corrected", "text"):
        v = item.gold.get(key)
        if isinstance(v, (str, int, float)) and str(v):
            if key == "answer_number":
                return f"<answer>{v}</answer>"
            if key == "target":
                return f"<translation>{v}</translation>"
            if key == "summary":
                return f"<summary>{v}</summary>"
            return str(v)
    return None


def figures(name: str, opts: dict[str, Any]) -> dict[str, str]:
    from glotbench.scoring import score_output
    from glotbench.registry import get_benchmark

    bench = get_benchmark(name, **opts)
    dataset = bench.load()
    samples, rows = [], []
    for i, item in enumerate(dataset):
        for j, reply in enumerate([REPLIES[i % len(REPLIES)], REPLIES[(i + 5) % len(REPLIES)], _own(item)]):
            if reply is None:
                continue
            s = score_output(bench, item, reply, repeat=j)
            samples.append(s)
            rows.append([s.id, j, s.failure, s.answer_key, sorted((k, round(v, 9)) for k, v in s.score.stats.items())])
        s = score_output(bench, item, None, model_failure="timeout", repeat=9)
        rows.append([s.id, 9, s.failure, sorted(s.score.stats.items())])
    agg = bench.aggregate(samples, dataset, resamples=0)

    def values(block: dict[str, Any]) -> dict[str, Any]:
        return {m: (None if e.get("value") is None else round(e["value"], 9)) for m, e in block.items()}

    scores = {"overall": values(agg.get("overall", {})), "resource_groups": agg.get("resource_groups"),
              "groups": {g: {k: values(v) for k, v in sorted(b.items())} for g, b in sorted(agg.get("groups", {}).items())}}
    digest = lambda x: hashlib.sha256(json.dumps(x, ensure_ascii=False, default=str).encode()).hexdigest()[:16]
    facts = {"metrics": [(m.name, m.description) for m in bench.metrics_for(dataset)], "group_by": list(bench.group_by),
             "extra": bench.extra_results(dataset), "config": repr(bench.default_config), "data_label": bench.data_label(dataset)}
    return {"signature": bench.signature(dataset), "samples": digest(rows), "scores": digest(scores), "facts": digest(facts)}

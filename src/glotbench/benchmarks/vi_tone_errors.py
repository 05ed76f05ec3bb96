"""vi-tone-errors: find and fix wrong Vietnamese tone and vowel marks (the reverse of vi-diacritics).

The input is a correct sentence into which typing errors were put by tools/make_vi_tone_errors.py
(wrong tone, hỏi/ngã, missing tone, ơ/ô/o, ư/u, ă/â/a, đ/d; about 20% of the sentences have none).
The model answers `{"corrected_text": "...", "changes": [{"original": "...", "corrected": "..."}]}`.
Headline: the share of sentences corrected exactly (tone placement ignored; any valid reference).
Also word-level detection precision/recall/F1 (the words the corrected text changed, aligned to the
input, against the words that were wrong), correction recall, the false-alarm rate on sentences
without errors and the agreement of the `changes` field with the text. docs/benchmarks/vi-tone-errors.md.
"""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from typing import Any

from glotbench.benchmarks.base import Benchmark
from glotbench.benchmarks.vi_diacritics import GLOTBENCH_CITATION
from glotbench.core import Dataset
from glotbench.datasheet import Datasheet
from glotbench.errors import DataError
from glotbench.extract import Extraction, json_object
from glotbench.items import Item, PublicItem
from glotbench.languages import foreign_script
from glotbench.loading import field, read_jsonl, sha256_file
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.core import GenerateConfig, Prompt
from glotbench.plugins import register_benchmark
from glotbench.text.vietnamese import align, comparison_key, letter_keys, normalize_space, same_word, words

TEXT, CHANGES = "corrected_text", "changes"

INSTRUCTION = (
    "The Vietnamese text below may contain typing errors in tone marks (sắc, huyền, hỏi, ngã, nặng) or "
    "vowel marks (ơ/ô/o, ư/u, ă/â/a, ê/e, đ/d); it may also have none. Correct only those errors. Change "
    "nothing else: keep every word, English word, slang, name, number, punctuation mark and letter case "
    "as it is. Answer only with JSON: {\"corrected_text\": \"...\", \"changes\": [{\"original\": \"...\", "
    "\"corrected\": \"...\"}]}, where changes lists each word you changed (an empty list if none)."
)

# Few-shot examples for base models (written for this benchmark; none of them is a test item).
FEWSHOT = (
    ("Chiều nay tôi đi boi ở hồ.", "Chiều nay tôi đi bơi ở hồ.", (("boi", "bơi"),)),
    ("Cảm ơn bạn rất nhiều.", "Cảm ơn bạn rất nhiều.", ()),
    ("Anh ấy push code lên GitHub rồi mới đi ăn trua.", "Anh ấy push code lên GitHub rồi mới đi ăn trưa.",
     (("trua", "trưa"),)),
)

JSON_SCHEMA = {
    "name": "correction",
    "strict": True,
    "schema": {
        "type": "object",
        "properties": {
            TEXT: {"type": "string"},
            CHANGES: {"type": "array", "items": {
                "type": "object", "properties": {"original": {"type": "string"}, "corrected": {"type": "string"}},
                "required": ["original", "corrected"], "additionalProperties": False}},
        },
        "required": [TEXT, CHANGES],
        "additionalProperties": False,
    },
}


def _json_answer(text: str, changes: tuple[tuple[str, str], ...]) -> str:
    return json.dumps({TEXT: text, CHANGES: [{"original": a, "corrected": b} for a, b in changes]}, ensure_ascii=False)


_FEWSHOT_BLOCK = INSTRUCTION + "\n\n" + "\n\n".join(
    f"Input: {src}\nOutput: {_json_answer(out, ch)}" for src, out, ch in FEWSHOT)


def error_positions(source: str, reference: str) -> list[int]:
    """Word positions where the input differs from a reference under the scoring comparison."""
    return [i for i, (a, b) in enumerate(zip(words(source), words(reference))) if not same_word(a, b)]


def _changes_field(value: Any) -> Counter | None:
    """The model's `changes` as a multiset of (original, corrected) word keys; entries that are no
    change under the rules (hòa -> hoà) are left out. None when the field is malformed."""
    if not isinstance(value, list):
        return None
    out: Counter = Counter()
    for entry in value:
        if not (isinstance(entry, dict) and isinstance(entry.get("original"), str)
                and isinstance(entry.get("corrected"), str)):
            return None
        a, b = comparison_key(entry["original"]), comparison_key(entry["corrected"])
        if a != b:
            out[(a, b)] += 1
    return out


@register_benchmark("vi-tone-errors")
class VietnameseToneErrors(Benchmark):
    name = "vi-tone-errors"
    # glotbench's own set (no published data set): the project's licence, glotbench's citation
    datasheet = Datasheet(licence="Apache-2.0", commercial=True, origin="native",
                          source="glotbench: src/glotbench/benchmarks/data/vi_tone_errors.jsonl (written by the glotbench authors; errors by tools/make_vi_tone_errors.py)",
                          citation=GLOTBENCH_CITATION, languages={"vi": {}})
    bundled_data = "own"  # written by the glotbench authors; no published set exists for this task
    input_answer = "text"  # the input left as it is: a correction that changes nothing
    answer_kind, rewrites, lang = "text", "text", "vi"
    output_language_rule = "Vietnamese (corrected text)"
    version = "1.0"
    description = "Vietnamese tone and vowel-mark error correction (the reverse of vi-diacritics)"
    metrics = (
        RatioMetric("sentence_exact", "exact", "texts", "share of sentences corrected exactly", label="exact"),
        RatioMetric("detection_precision", "detected", "changed", "changed words that were errors", label="det P"),
        RatioMetric("detection_recall", "detected", "errors", "errors whose word was changed", label="det R"),
        RatioMetric("detection_f1", "f1_num", "f1_den", "2·detected / (changed + errors)", label="det F1"),
        RatioMetric("correction_recall", "corrected", "errors", "errors fixed to the right word", label="fixed"),
        RatioMetric("false_alarm_rate", "false_alarm", "clean", "error-free sentences not returned unchanged",
                    label="false alarm", lower_is_better=True),
        RatioMetric("changes_field_agreement", "field_agree", "texts",
                    "replies whose `changes` list equals what the text changed", label="field agr"),
        RatioMetric("rewritten_rate", "rewritten", "texts", "share of replies that changed the words",
                    show_ci=False, label="rewritten", lower_is_better=True),
        RatioMetric("format_failure_rate", "format_failure", "texts", "share of replies with no parseable JSON",
                    show_ci=False, label="no JSON", lower_is_better=True),
    )
    group_by = ("category", "has_errors")
    default_config = GenerateConfig(temperature=0.0, max_tokens=1024)

    def load(self, path: str | None = None) -> Dataset:
        if path is None:
            ref = resources.files("glotbench.benchmarks").joinpath("data/vi_tone_errors.jsonl")
            with resources.as_file(ref) as p:
                return self.dataset(self._load_file(str(p)), "bundled:vi_tone_errors.jsonl", sha256_file(p))
        return self.dataset(self._load_file(path), str(path), sha256_file(path))

    def _load_file(self, path: str) -> list[Item]:
        items: list[Item] = []
        seen: set[str] = set()
        for n, rec in read_jsonl(path):
            where = f"{path}:{n}"
            item_id = str(field(rec, "id", (str, int), where))
            if item_id in seen:
                raise DataError(f"{where}: duplicate id {item_id!r}")
            seen.add(item_id)
            source = normalize_space(field(rec, "input", str, where))
            if not source:
                raise DataError(f"{where}: field 'input' is empty")
            script = foreign_script(source, "vi")
            if script:
                raise DataError(f"{where}: the text is written in {script} script, not in Vietnamese")
            refs = field(rec, "references", list, where)
            if not refs or not all(isinstance(r, str) and r.strip() for r in refs):
                raise DataError(f"{where}: field 'references' must be a non-empty list of non-empty strings")
            for r in refs:
                if letter_keys(r) != letter_keys(source):
                    raise DataError(f"{where}: reference {r!r} differs from the input in more than tone and "
                                    "vowel marks")
            errors = error_positions(source, refs[0])
            if "errors" in rec:
                self._check_errors(rec["errors"], errors, source, refs[0], where)
            category = field(rec, "category", str, where, required=False, default="uncategorised")
            items.append(Item.create(item_id, {"text": source}, {"references": list(refs)},
                                     {"category": category, "has_errors": "yes" if errors else "no"}))
        if not items:
            raise DataError(f"{path}: no items")
        return items

    @staticmethod
    def _check_errors(listed: Any, derived: list[int], source: str, reference: str, where: str) -> None:
        """A file's own error list must be exactly the words that differ (nothing more, nothing less)."""
        if not isinstance(listed, list) or not all(isinstance(e, dict) and isinstance(e.get("index"), int)
                                                   for e in listed):
            raise DataError(f"{where}: field 'errors' must be a list of objects with an integer 'index'")
        src, ref = words(source), words(reference)
        marked = sorted(e["index"] for e in listed)
        if marked != derived:
            raise DataError(f"{where}: 'errors' marks word positions {marked} but the input differs from the "
                            f"first reference at {derived}")
        for e in listed:
            i = e["index"]
            if e.get("input", src[i]) != src[i] or e.get("gold", ref[i]) != ref[i]:
                raise DataError(f"{where}: error at word {i} names {e.get('input')!r} -> {e.get('gold')!r}, "
                                f"but the words are {src[i]!r} -> {ref[i]!r}")

    def render(self, item: PublicItem) -> Prompt:
        text = item["text"]
        return Prompt(
            messages=({"role": "user", "content": f"{INSTRUCTION}\n\nText: {text}"},),
            text=f"{_FEWSHOT_BLOCK}\n\nInput: {text}\nOutput:",
            text_stop=("\n",),
            json_schema=JSON_SCHEMA,
            # The corrected text twice (text and changes) plus the JSON wrapper.
            text_max_tokens=48 + 2 * len(text),
        )

    def extract(self, text: str, item: PublicItem) -> Extraction:
        obj, failure = json_object(text, TEXT)
        if obj is None:
            return Extraction(None, failure)
        return Extraction({TEXT: obj[TEXT], CHANGES: obj.get(CHANGES)})  # type: ignore[arg-type]

    def score(self, answer: dict | str, item: Item) -> ItemScore:  # type: ignore[override]
        """`answer` is the extracted object; a plain string (an answer submitted as text, e.g. to the
        scoring service) is the corrected text with no `changes` list."""
        if isinstance(answer, str):
            answer = {TEXT: answer, CHANGES: None}
        text, source = answer[TEXT], item.public["text"]
        src_w, out_w = words(source), words(text)
        pairs = dict(align(letter_keys(source), letter_keys(text)))
        rewritten = letter_keys(text) != letter_keys(source)
        changed = {i for i in range(len(src_w)) if i not in pairs or not same_word(src_w[i], out_w[pairs[i]])}
        aligned_out = set(pairs.values())
        inserted = [j for j in range(len(out_w)) if j not in aligned_out]
        diff = Counter((comparison_key(src_w[i]), comparison_key(out_w[pairs[i]]) if i in pairs else "")
                       for i in changed)
        diff.update(("", comparison_key(out_w[j])) for j in inserted)
        listed = _changes_field(answer.get(CHANGES))
        key = comparison_key(text)
        best: tuple | None = None
        for ref in item.gold["references"]:
            errs = set(error_positions(source, ref))
            ref_w = words(ref)
            exact = not rewritten and key == comparison_key(ref)
            corrected = sum(1 for i in errs if i in pairs and same_word(out_w[pairs[i]], ref_w[i]))
            detected = len(changed & errs)
            cand = (exact, corrected, detected, -len(changed - errs), len(errs))
            if best is None or cand[:4] > best[:4]:
                best = cand
        exact, corrected, detected, _, n_errors = best  # type: ignore[misc]
        n_changed = len(changed) + len(inserted)
        clean = n_errors == 0
        flags = tuple(f for f, on in (("rewritten", rewritten), ("changes_malformed", listed is None)) if on)
        return ItemScore(
            {"exact": float(exact), "texts": 1.0, "errors": float(n_errors), "detected": float(detected),
             "changed": float(n_changed), "corrected": float(corrected), "f1_num": 2.0 * detected,
             "f1_den": float(n_changed + n_errors), "clean": float(clean),
             "false_alarm": float(clean and n_changed > 0), "field_agree": float(listed is not None and listed == diff),
             "rewritten": float(rewritten), "format_failure": 0.0},
            flags=flags,
        )

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        """No answer: every error missed, nothing detected; on an error-free sentence it counts as a
        false alarm (the sentence did not come back unchanged)."""
        n_errors = len(error_positions(item.public["text"], item.gold["references"][0]))
        clean = float(n_errors == 0)
        return ItemScore(
            {"exact": 0.0, "texts": 1.0, "errors": float(n_errors), "detected": 0.0, "changed": 0.0, "corrected": 0.0,
             "f1_num": 0.0, "f1_den": float(n_errors), "clean": clean, "false_alarm": clean, "field_agree": 0.0,
             "rewritten": 0.0, "format_failure": float(failure in ("format", "think_unclosed"))},
            failure=failure,
        )

    def answer_key(self, answer: dict | str | None) -> str | None:  # type: ignore[override]
        if answer is None:
            return None
        return comparison_key(answer if isinstance(answer, str) else answer[TEXT])

    def signature_parts(self) -> dict[str, Any]:
        return {"metric": "sentence_exact", "norm": "nfc+space+tone_position", "refs": "best",
                "extract": f"json.{TEXT}+{CHANGES}", "align": "rapidfuzz-indel", "rewrite": "zero",
                "failure": "false_alarm"}

"""vi-diacritics: Vietnamese diacritic restoration, modelled on "Dấu or Die".

The input is a Vietnamese text with every diacritic stripped by code; the model puts them back and
answers as JSON `{"restored_text": "..."}`. Headline: the share of texts restored exactly (against
any valid reference). Also micro word accuracy, per category. A reply whose stripped form is not the
input (the model rewrote, added or dropped words) is flagged `rewritten` and its exact score is 0.
Rules and choices: docs/benchmarks/vi-diacritics.md.
"""

from __future__ import annotations

from importlib import resources
from typing import Annotated, Any, Mapping

from pydantic import Field

from glotbench.benchmarks.base import Benchmark, RescorePlan
from glotbench.core import Dataset
from glotbench.datasheet import Datasheet, Declared
from glotbench.data import ItemId, NonEmptyStr, Row, read_rows
from glotbench.errors import DataError
from glotbench.extract import Extraction, json_field
from glotbench.items import Item, PublicItem
from glotbench.languages import foreign_script
from glotbench.loading import sha256_file
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.core import GenerateConfig, Prompt
from glotbench.plugins import register_benchmark
from glotbench.text.vietnamese import (
    aligned_word_matches,
    comparison_key,
    normalize_space,
    same_letters,
    strip,
    words,
)

# CITATION.cff as BibTeX (the year: the project's first commit)
GLOTBENCH_CITATION = """@misc{glotbench,
  title = {glotbench: evaluating large language models in low-resource languages},
  author = {{The glotbench developers}},
  year = {2026},
  version = {0.1.0},
  note = {CITATION.cff}
}"""

ANSWER_FIELD = "restored_text"

INSTRUCTION = (
    "Restore the Vietnamese diacritics (tone marks, vowel marks and đ) in the text below. "
    "Change nothing else: keep every word, English word, name, number, punctuation mark and letter case "
    "as it is. Answer only with JSON: {\"restored_text\": \"...\"}"
)

# Few-shot examples for base models (written for this benchmark; none of them is a test item).
FEWSHOT = (
    ("Hôm nay trời nắng đẹp, chúng tôi đi dạo ở công viên.",),
    ("Mẹ bảo con nhớ mang áo mưa vì chiều nay có thể mưa to.",),
    ("Anh ấy push code lên GitHub rồi mới đi ăn trưa.",),
)

JSON_SCHEMA = {
    "name": "restoration",
    "strict": True,
    "schema": {
        "type": "object",
        "properties": {ANSWER_FIELD: {"type": "string"}},
        "required": [ANSWER_FIELD],
        "additionalProperties": False,
    },
}


def _json_answer(text: str) -> str:
    import json

    return json.dumps({ANSWER_FIELD: text}, ensure_ascii=False)


_FEWSHOT_BLOCK = INSTRUCTION + "\n\n" + "\n\n".join(
    f"Input: {normalize_space(strip(ex[0]))}\nOutput: {_json_answer(ex[0])}" for ex in FEWSHOT)


class ViRow(Row):
    """One data row: `{"id", "references": [restored text, ...], "category"?}`."""

    id: ItemId
    references: Annotated[list[NonEmptyStr], Field(min_length=1)]
    category: str | None = None


@register_benchmark("vi-diacritics")
class VietnameseDiacritics(Benchmark):
    name = "vi-diacritics"
    # glotbench's own set (no published data set): the project's licence, glotbench's citation
    datasheet = Declared(lambda: Datasheet(
        licence="Apache-2.0", commercial=True, origin="native",
        source="glotbench: src/glotbench/benchmarks/data/vi_diacritics.jsonl (written by the glotbench authors, modelled on Dau or Die; not its data)",
        citation=GLOTBENCH_CITATION, languages={"vi": {}}))
    bundled_data = "own"  # written by the glotbench authors, modelled on Dấu or Die (docs)
    modelled_on = "Dấu or Die"
    input_answer = "text"  # the stripped text is itself a restoration (of a text that needs no marks)
    answer_kind, rewrites, lang = "text", "text", "vi"
    output_language_rule = "Vietnamese (restored text)"
    version = "1.0"
    description = "Vietnamese diacritic restoration (Dấu or Die style)"
    metrics = (
        RatioMetric("sentence_exact", "exact", "texts", "share of texts restored exactly", label="exact"),
        RatioMetric("word_accuracy", "words_correct", "words", "micro word accuracy, edit-distance aligned",
                    label="word acc"),
        RatioMetric("rewritten_rate", "rewritten", "texts", "share of replies that changed the words",
                    show_ci=False, label="rewritten", lower_is_better=True),
        RatioMetric("format_failure_rate", "format_failure", "texts",
                    "share of replies with no parseable JSON", show_ci=False, label="no JSON", lower_is_better=True),
    )
    group_by = ("category",)
    default_config = GenerateConfig(temperature=0.0, max_tokens=1024)

    def load(self, path: str | None = None) -> Dataset:
        if path is None:
            ref = resources.files("glotbench.benchmarks").joinpath("data/vi_diacritics.jsonl")
            with resources.as_file(ref) as p:
                return self.dataset(self._load_file(str(p)), "bundled:vi_diacritics.jsonl", sha256_file(p))
        return self.dataset(self._load_file(path), str(path), sha256_file(path))

    def _load_file(self, path: str) -> list[Item]:
        items: list[Item] = []
        seen: set[str] = set()
        for n, row in read_rows(path, ViRow):
            where = f"{path}:{n}"
            item_id, refs = row.id, row.references
            if item_id in seen:
                raise DataError(f"{where}: id: duplicate {item_id!r}")
            seen.add(item_id)
            category = row.category or "uncategorised"
            source = normalize_space(strip(refs[0]))
            script = foreign_script(source, "vi")
            if script:
                raise DataError(f"{where}: the text is written in {script} script, not in Vietnamese")
            for r in refs[1:]:
                if normalize_space(strip(r)) != source:
                    raise DataError(f"{where}: references: they differ once stripped: {r!r} is not a "
                                    f"restoration of {source!r}")
            items.append(Item.create(item_id, {"text": source}, {"references": list(refs)},
                                     {"category": category}))
        if not items:
            raise DataError(f"{path}: no items")
        return items

    def render(self, item: PublicItem) -> Prompt:
        text = item["text"]
        plain = f"{_FEWSHOT_BLOCK}\n\nInput: {text}\nOutput:"
        return Prompt(
            messages=({"role": "user", "content": f"{INSTRUCTION}\n\nText: {text}"},),
            text=plain,
            text_stop=("\n",),
            json_schema=JSON_SCHEMA,
            # JSON wrapper plus the text; Vietnamese with marks rarely needs more than a token a char.
            text_max_tokens=24 + len(text),
        )

    def extract(self, text: str, item: PublicItem) -> Extraction:
        return json_field(text, ANSWER_FIELD)

    def score(self, answer: str, item: Item) -> ItemScore:
        refs = item.gold["references"]
        source = item.public["text"]
        rewritten = not same_letters(answer, source)
        key = comparison_key(answer)
        # a reply identical to a reference is that restoration: its key is not made (most replies of a
        # good model; the reference's key made afresh for each item was 2% of a run's CPU)
        exact = (not rewritten) and any(answer == r or key == comparison_key(r) for r in refs)
        correct, total = max(aligned_word_matches(answer, r) for r in refs)
        return ItemScore(
            {"exact": float(exact), "texts": 1.0, "words_correct": float(correct), "words": float(total),
             "rewritten": float(rewritten), "format_failure": 0.0},
            flags=("rewritten",) if rewritten else (),
        )

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore(
            {"exact": 0.0, "texts": 1.0, "words_correct": 0.0, "words": float(len(words(item.public["text"]))),
             "rewritten": 0.0, "format_failure": float(failure in ("format", "think_unclosed"))},
            failure=failure,
        )

    def answer_key(self, answer: str | None) -> str | None:
        return None if answer is None else comparison_key(answer)

    def word_diff(self, answer: str, gold: Mapping[str, Any]) -> list[tuple[str, str]]:
        """Against the reference the scorer matched best (most aligned words right); wrong tones marked."""
        from glotbench.text.vietnamese import aligned_word_matches, word_diff

        refs = gold.get("references") or []
        if not refs:
            return []
        best = refs[0] if len(refs) == 1 else max(refs, key=lambda r: aligned_word_matches(answer, r)[0])
        return word_diff(answer, best)

    def rescore_plan(self) -> RescorePlan:
        return RescorePlan(("exact",), ("references",), names={"exact": self.metrics[0].name}, per_item_language=False)

    def signature_parts(self) -> dict[str, Any]:
        return {"metric": "sentence_exact", "norm": "nfc+space+tone_position", "refs": "any",
                "extract": f"json.{ANSWER_FIELD}", "rewrite": "zero"}

"""DeepSEA: five Southeast-Asian tasks with the release's scoring rules, gold kept from the model.

Data layout (one JSON file per task; docs/benchmarks/deepsea.md):
    {"task": "mgsm", "languages": {"th": [{...example...}, ...], ...}}
Each example's fields are named in TASKS below, in one place, so the real release's schema can be
dropped in. Public inputs are rebuilt from a whitelist of fields; answers, chain-of-thought answers,
metadata and few-shot examples never reach a prompt; gold is deep-copied into each item's private part.
"""

from __future__ import annotations

import copy
import hashlib
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from glotbench.benchmarks.base import Benchmark
from glotbench.benchmarks.deepsea_data import TASKS, TaskSpec, load_official_json, read_groups  # noqa: F401 - public names
from glotbench.core import Dataset
from glotbench.errors import DataError, GlotbenchError
from glotbench.extract import Extraction, extract_tag, last_number, mc_letter, parse_number, strip_think
from glotbench.languages import answer_is_pattern
from glotbench.items import Item, PublicItem
from glotbench.loading import sha256_file
from glotbench.metrics import ItemScore, MacroMetric, RatioMetric
from glotbench.metrics.corpus import CorpusMetric, SacreMetric
from glotbench.metrics.token_f1 import NORMS as F1_NORMS
from glotbench.metrics.token_f1 import token_f1
from glotbench.models.base import GenerateConfig, Prompt

MAX_BYTES = 256 * 2**20
LANGUAGES = ("en", "id", "ms", "th", "vi", "tl", "my", "km", "lo", "jv", "su", "ceb", "ta")
# Resource groups: data, not code; override with --bench-opt groups=FILE.json ({"high": [...], ...}).
RESOURCE_GROUPS = {"high": ["id", "th", "vi", "ms"], "low": ["tl", "my", "km", "lo", "jv", "su", "ceb", "ta"]}


PROMPTS = {
    "mgsm": "Solve the problem step by step, then give the final answer as a number between <answer> and </answer>.\n\n{question}",
    "indommlu": "Answer the multiple-choice question. Give the letter of the correct option between <answer> and </answer>.\n\n{question}\n{options}",
    "xquad": "Read the passage and answer the question with a short span from the passage, between <answer> and </answer>.\n\nPassage: {context}\n\nQuestion: {question}",
    "crosssum": "Summarise the text in one or two sentences in the same language, between <summary> and </summary>.\n\n{text}",
    "wmt24pp": "Translate the text from {src} to {tgt}. Give only the translation, between <translation> and </translation>.\n\n{source}",
}


def mgsm_number(text: str, native_digits: bool = True) -> Decimal | None:
    """The release's order: content of the last <answer> tag; thousands commas removed; then, in
    order, (1) the whole content as a number, (2) the last number in it (a content that is one
    number is also its last number, so glotbench.extract.last_number does both). Native digits are
    mapped to ASCII first when `native_digits` (our default; the rules leave it open)."""
    content, state = extract_tag(text, "answer")
    if content is None or state != "closed":
        return None
    return last_number(content, native_digits=native_digits, commas="between_digits")


def mcq_letter(text: str, case: str = "upper_first") -> str | None:
    """IndoMMLU, the release's rule (`first_standalone` in glotbench.extract): the first standalone
    upper-case A-E (inside the answer tag when there is one, else in the whole reply), then, with
    case="upper_first", a standalone lower-case a-e. Standalone: no letter of any script next to it."""
    return mc_letter(text, rule="first_standalone", case=case).answer


def xquad_answer(text: str, lang: str) -> str | None:
    """The answer tag's content; else the text after the last "the answer is" phrase of the item's
    language profile (or English's): noun + copula or colon, the one phrase rule of
    glotbench.languages; with neither, no answer (the whole text is not accepted)."""
    content, state = extract_tag(text, "answer")
    if state == "closed":
        return content
    for code in dict.fromkeys((lang, "en")):
        pattern = answer_is_pattern(code)
        if pattern is not None:
            found = list(pattern.finditer(text))
            if found:
                return text[found[-1].end():].strip().strip(":：").strip()
    return None


class DeepSEATask(Benchmark):
    """One DeepSEA task; the task name selects fields, prompt, extraction and metric."""

    version = "1.1"  # 1.1: rows validated, Unicode letter boundaries, profile phrases (XQuAD)
    bundled_data = "sample"  # a few items per language written for glotbench, not DeepSEA data
    group_by = ("lang",)
    pooled_overall = False  # reported per language; resource groups are means of languages
    answers_are_outputs = True  # submitted predictions are model outputs, extracted by the task's rule
    default_config = GenerateConfig(temperature=0.0, max_tokens=1024)

    def __init__(self, task: str, native_digits: bool = True, letter_case: str = "upper_first",
                 groups: str | None = None, metric: str | None = None, f1_norm: str = "unicode"):
        if task not in TASKS:
            raise DataError(f"unknown DeepSEA task {task!r}")
        if metric is not None and "metricx" in metric.lower():
            raise GlotbenchError("MetricX-24, DeepSEA's headline translation metric, needs its own neural model, "
                                 "which the public scorer does not run; glotbench reports corpus chrF2, named "
                                 "corpus_chrf2_not_metricx24")
        if letter_case not in ("upper_first", "upper_only"):
            raise DataError("letter_case must be upper_first or upper_only")
        if f1_norm not in F1_NORMS:
            raise DataError(f"f1_norm must be one of {', '.join(F1_NORMS)}, got {f1_norm!r}")
        self.f1_norm = f1_norm
        self.task, self.name = task, f"deepsea-{task}"
        self.description = f"DeepSEA {task}"
        self.native_digits = native_digits
        self.letter_case = letter_case
        self.resource_groups = RESOURCE_GROUPS if groups is None else read_groups(groups)
        # XQuAD's questions share contexts: a cluster per context (and language), for the intervals.
        self.cluster_by = "context" if task == "xquad" else None
        self.metrics = self._metrics(())
        names = [m.name for m in self.metrics]
        if metric is not None and metric not in names:
            raise DataError(f"deepsea-{task} has no metric {metric!r}; its metric: {', '.join(names)}")

    def _metrics(self, subjects: tuple[str, ...]) -> tuple[Any, ...]:
        t = self.task
        if t == "mgsm":
            return (RatioMetric("numeric_em", "correct", "n", "numeric exact match", scale="points"),)
        if t == "indommlu":
            return (MacroMetric("accuracy_macro_subjects", subjects, description="mean over subjects of accuracy"),
                    RatioMetric("accuracy_pooled", "correct", "n", "pooled accuracy (not the headline)",
                                scale="points", show_ci=False))
        if t == "xquad":
            return (RatioMetric("token_f1_first_ref", "f1", "n", "token F1 against the first reference", scale="points"),)
        if t == "crosssum":
            return (CorpusMetric("corpus_chrf2", "chrf", "corpus chrF2, sacrebleu defaults", label="chrF2"),)
        return (CorpusMetric("corpus_chrf2_not_metricx24", "chrf", "corpus chrF2 (the paper's MetricX-24 is not computed)",
                             label="chrF2"),)

    def facts(self, items: Sequence[Item]) -> dict[str, Any]:
        if self.task == "indommlu":
            return {"subjects": tuple(sorted({it.meta["subject"] for it in items}))}
        return {}

    def metrics_for(self, dataset: Dataset | None) -> tuple[Any, ...]:
        """IndoMMLU's macro average runs over the dataset's subjects."""
        if self.task == "indommlu" and dataset is not None:
            return self._metrics(tuple(dataset.facts.get("subjects", ())))
        return self.metrics

    def load(self, path: str | None = None) -> Dataset:
        if path is None:
            ref = resources.files("glotbench.benchmarks").joinpath(f"data/deepsea_{self.task}.json")
            with resources.as_file(ref) as p:
                langs = load_official_json(p, self.task)
                source, digest = f"bundled:deepsea_{self.task}.json (written by glotbench)", sha256_file(p)
        else:
            langs = load_official_json(path, self.task)
            source, digest = str(path), sha256_file(path)
        spec, items = TASKS[self.task], []
        for lang, rows in langs.items():
            for i, row in enumerate(rows):
                iid = f"{lang}/{i:05d}"
                public = {f: copy.deepcopy(row[f]) for f in spec.public}  # the whitelist: nothing else
                public["lang"] = lang
                if self.task == "wmt24pp":
                    public["lp"] = row["lp"]
                meta = {"lang": lang, **{f: row[f] for f in spec.meta}}
                if self.cluster_by == "context":  # SHA-256 (12 hex) of the passage, not the passage itself
                    meta["context"] = hashlib.sha256(f"{lang}\n{row['context']}".encode("utf-8", "surrogatepass")).hexdigest()[:12]
                gold = {f: copy.deepcopy(row[f]) for f in spec.gold}
                items.append(Item.create(iid, public, gold, meta))
        return self.dataset(items, source, digest)

    def render(self, item: PublicItem) -> Prompt:
        f = dict(item.fields)
        if self.task == "indommlu":
            f["options"] = "\n".join(f"{k}. {v}" for k, v in f["options"].items())
        if self.task == "wmt24pp":
            src, _, tgt = f["lp"].partition("-")
            f.update(src=src, tgt=tgt.split("_")[0])
        text = PROMPTS[self.task].format(**f)
        return Prompt(messages=({"role": "user", "content": text},), text=text + "\n", text_max_tokens=256)

    def extract(self, text: str, item: PublicItem) -> Extraction:
        """The task's rule on the think-stripped reply: MGSM a Decimal, IndoMMLU a letter, XQuAD a
        span (with the item's language's "answer is" phrase), CrossSum/WMT the tag's content."""
        body, ok = strip_think(text)
        if not ok:
            return Extraction(None, "think_unclosed")
        if self.task == "mgsm":
            got = mgsm_number(body, self.native_digits)
            return Extraction(None, "no_number") if got is None else Extraction(got)
        if self.task == "indommlu":
            letter = mcq_letter(body, self.letter_case)
            return Extraction(None, "no_letter") if letter is None else Extraction(letter)
        if self.task == "xquad":
            span = xquad_answer(body, item["lang"])
            return Extraction(None, "no_answer") if span is None else Extraction(span)
        tag = "summary" if self.task == "crosssum" else "translation"
        content, state = extract_tag(body, tag)
        return Extraction(body.strip() if state == "missing" else content)  # unclosed -> ""

    def score(self, answer: Any, item: Item) -> ItemScore:
        gold, lang = item.gold, item.meta["lang"]
        if self.task == "mgsm":
            return ItemScore({"correct": float(Decimal(answer) == parse_number(gold["answer_number"])), "n": 1.0})
        if self.task == "indommlu":
            ok = float(answer == gold["answer"])
            s = item.meta["subject"]
            return ItemScore({"correct": ok, "n": 1.0, f"correct:{s}": ok, f"n:{s}": 1.0})
        if self.task == "xquad":
            return ItemScore({"f1": token_f1(answer, list(gold["answers"]), lang, refs="first", norm=self.f1_norm),
                              "n": 1.0})
        ref = gold["summary"] if self.task == "crosssum" else gold["target"]
        cm = self.metrics[0]
        return ItemScore(cm.item_stats(SacreMetric("chrf").stats([answer], [[ref]])[0]))  # type: ignore[union-attr]

    def answer_key(self, answer: Any) -> str | None:
        return None if answer is None else str(answer)

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        if self.task in ("crosssum", "wmt24pp"):
            return ItemScore(self.score("", item).stats, failure=failure)
        stats = {"correct": 0.0, "n": 1.0} if self.task in ("mgsm", "indommlu") else {"f1": 0.0, "n": 1.0}
        if self.task == "indommlu":
            s = item.meta["subject"]
            stats.update({f"correct:{s}": 0.0, f"n:{s}": 1.0})
        return ItemScore(stats, failure=failure)

    def aggregate(self, samples: Sequence[Any], dataset: Dataset | None = None, **kw: Any) -> dict[str, Any]:
        out = super().aggregate(samples, dataset, **kw)
        per_lang = out["groups"]["lang"]
        head = self.metrics[0].name
        groups: dict[str, Any] = {}
        named = {**self.resource_groups, "southeast_asia": sorted({x for v in self.resource_groups.values() for x in v} - {"en"})}
        for g, members in named.items():
            missing = [m for m in members if m not in per_lang or per_lang[m][head]["value"] is None]
            groups[g] = ({"value": None, "missing": missing} if missing else
                         {"value": sum(per_lang[m][head]["value"] for m in members) / len(members), "languages": list(members)})
        out["resource_groups"] = groups
        return out

    def signature_parts(self) -> dict[str, str]:
        parts = {"task": self.task, "metric": self.metrics[0].name}
        if self.task == "mgsm":
            parts["native_digits"] = str(self.native_digits).lower()
        if self.task == "indommlu":
            parts["letter_case"] = self.letter_case
        if self.task == "xquad":
            parts["refs"] = "first"
            parts["f1_norm"] = self.f1_norm
            parts["f1_empty"] = "v1.1"  # SQuAD v1.1's script, XQuAD's: two empty answers score F1 0
        return parts

"""DeepSEA: five Southeast-Asian tasks with the release's scoring rules, gold kept from the model.

Data layout (one JSON file per task; docs/benchmarks/deepsea.md):
    {"task": "mgsm", "languages": {"th": [{...example...}, ...], ...}}
Each example's fields are named in TASKS (deepsea_data.py), in one place, so the real release's schema
can be dropped in. Public inputs are rebuilt from a whitelist of fields; answers, chain-of-thought
answers, metadata and few-shot examples never reach a prompt; gold is deep-copied into each item's
private part.

`DeepSEA` holds what the five tasks share (the data layout, the per-language report and resource
groups, the think-block rule, the signature's shape); each task is one small definition below it
(`MGSM`, `IndoMMLU`, `XQuAD`, `CrossSum`, `WMT24pp`): its prompt, its extraction rule, its score, its
metric and the options that change them. `DeepSEATask("mgsm", ...)` builds a task by its name.
"""

from __future__ import annotations

import copy
import hashlib
from abc import abstractmethod
from decimal import Decimal
from importlib import resources
from typing import Any, ClassVar, Sequence

from glotbench.benchmarks.base import Benchmark, RescorePlan, target_of_pair
from glotbench.benchmarks.deepsea_data import TASKS, TaskSpec, load_official_json, read_groups  # noqa: F401 - public names
from glotbench.core import Dataset
from glotbench.datasheet import Datasheet, Declared
from glotbench.errors import DataError, GlotbenchError
from glotbench.extract import READING_VERSION, Extraction, extract_tag, last_number, mc_letter, parse_number, strip_think
from glotbench.items import Item, PublicItem
from glotbench.languages import answer_is_pattern, foreign_script, profile, resolve_code
from glotbench.loading import sha256_file
from glotbench.metrics import ItemScore, MacroMetric, RatioMetric
from glotbench.metrics.corpus import CorpusMetric, SacreMetric
from glotbench.metrics.token_f1 import NORMS as F1_NORMS
from glotbench.metrics.token_f1 import token_f1
from glotbench.core import GenerateConfig, Prompt

MAX_BYTES = 256 * 2**20
LANGUAGES = ("en", "id", "ms", "th", "vi", "tl", "my", "km", "lo", "jv", "su", "ceb", "ta")
# Resource groups: data, not code; override with --bench-opt groups=FILE.json ({"high": [...], ...}).
RESOURCE_GROUPS = {"high": ["id", "th", "vi", "ms"], "low": ["tl", "my", "km", "lo", "jv", "su", "ceb", "ta"]}

# DeepSEA's datasheets. DeepSEA's release (and its licence) could not be read here: each task cites
# the public data set it is built on (BibTeX as lm-eval's mgsm and xquad READMEs, fajri91/IndoMMLU's
# README and a CrossSum loader give it; WMT24++'s entry is assembled from its arXiv reference as
# cited elsewhere, no BibTeX of it was found) and lists DeepSEA's thirteen languages (LANGUAGES, our
# reading of the paper: all of them in one run, reported per language, so no option selects one).
# The bundled samples are glotbench's own text in en, id, th, vi (Apache-2.0), not DeepSEA data.
_CITATIONS = {
    "MGSM": """@misc{shi2022language,
    title={Language Models are Multilingual Chain-of-Thought Reasoners},
    author={Freda Shi and Mirac Suzgun and Markus Freitag and Xuezhi Wang and Suraj Srivats and Soroush Vosoughi and Hyung Won Chung and Yi Tay and Sebastian Ruder and Denny Zhou and Dipanjan Das and Jason Wei},
    year={2022},
    eprint={2210.03057},
    archivePrefix={arXiv},
    primaryClass={cs.CL}
}""",
    "IndoMMLU": """@inproceedings{koto-etal-2023-indommlu,
    title = "Large Language Models Only Pass Primary School Exams in {I}ndonesia: A Comprehensive Test on {I}ndo{MMLU}",
    author = "Fajri Koto and Nurul Aisyah and Haonan Li and Timothy Baldwin",
    booktitle = "Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing (EMNLP)",
    month = dec,
    year = "2023",
    address = "Singapore",
    publisher = "Association for Computational Linguistics",
}""",
    "XQuAD": """@article{Artetxe:etal:2019,
      author    = {Mikel Artetxe and Sebastian Ruder and Dani Yogatama},
      title     = {On the cross-lingual transferability of monolingual representations},
      journal   = {CoRR},
      volume    = {abs/1910.11856},
      year      = {2019},
      archivePrefix = {arXiv},
      eprint    = {1910.11856}
}""",
    "CrossSum": """@article{Hasan2021CrossSumBE,
  title={CrossSum: Beyond English-Centric Cross-Lingual Abstractive Text Summarization for 1500+ Language Pairs},
  author={Tahmid Hasan and Abhik Bhattacharjee and Wasi Uddin Ahmad and Yuan-Fang Li and Yong-Bin Kang and Rifat Shahriyar},
  journal={ArXiv},
  year={2021},
  volume={abs/2112.08804}
}""",
    "WMT24pp": """@misc{deutsch2025wmt24pp,
  title = {WMT24++: Expanding the Language Coverage of WMT24 to 55 Languages \\& Dialects},
  author = {D. Deutsch and E. Briakou and I. Caswell and M. Finkelstein and R. Galor and J. Juraska and G. Kovacs and A. Lui and R. Rei and J. Riesa and S. Rijhwani and P. Riley and E. Salesky and F. Trabelsi and S. Winkler and B. Zhang and M. Freitag},
  year = {2025},
  eprint = {2502.12404},
  archivePrefix = {arXiv}
}""",
}
_SOURCES = {
    "MGSM": "https://huggingface.co/datasets/juletxara/mgsm",
    "IndoMMLU": "https://github.com/fajri91/IndoMMLU",
    "XQuAD": "https://github.com/google-deepmind/xquad",
    "CrossSum": "https://github.com/csebuetnlp/CrossSum",
    "WMT24pp": "https://huggingface.co/datasets/google/wmt24pp",
}


# The languages of each bundled sample (tests/test_datasheet.py holds them to the files): the others
# run only with DeepSEA's release given by --data.
BUNDLED_LANGUAGES = {"MGSM": ("en", "id", "th", "vi"), "IndoMMLU": ("id", "th", "vi"), "XQuAD": ("en", "id", "th", "vi"),
                     "CrossSum": ("en", "id", "th", "vi"), "WMT24pp": ("id", "th", "vi")}


def deepsea_datasheet(upstream: str) -> Declared:
    """DeepSEA's datasheet for `upstream`'s data, made when first read (datasheet.Declared)."""
    return Declared(lambda: Datasheet(
        licence="unknown (DeepSEA's release not read); bundled samples: Apache-2.0, glotbench's own",
        commercial=None,
        licence_note=f"DeepSEA's own licence was not checked; its {upstream} data keeps the upstream set's licence",
        origin="mixed", source=f"DeepSEA's release; upstream data: {_SOURCES[upstream]}",
        citation=_CITATIONS[upstream], languages={code: {} for code in LANGUAGES},
        data_only=[c for c in LANGUAGES if c not in BUNDLED_LANGUAGES[upstream]]))




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


class DeepSEA(Benchmark):
    """What the five DeepSEA tasks share; a task sets `task`, `prompt` and the stations below."""

    version = "1.1"  # 1.1: rows validated, Unicode letter boundaries, profile phrases (XQuAD)
    bundled_data = "sample"  # a few items per language written for glotbench, not DeepSEA data
    group_by = ("lang",)
    pooled_overall = False  # reported per language; resource groups are means of languages
    answers_are_outputs = True  # submitted predictions are model outputs, extracted by the task's rule
    default_config = GenerateConfig(temperature=0.0, max_tokens=1024)
    task: ClassVar[str]
    prompt: ClassVar[str]

    def __init__(self, *, groups: str | None = None, metric: str | None = None):
        self.name = f"deepsea-{self.task}"
        self.description = f"DeepSEA {self.task}"
        self.resource_groups = RESOURCE_GROUPS if groups is None else read_groups(groups)
        # XQuAD's questions share contexts: a cluster per context (and language), for the intervals.
        self.cluster_by = "context" if self.task == "xquad" else None
        self.metrics = self._metrics(())
        names = [m.name for m in self.metrics]
        if metric is not None and metric not in names:
            raise DataError(f"deepsea-{self.task} has no metric {metric!r}; its metric: {', '.join(names)}")

    # A task defines: `task`, `prompt` (a str.format template over `prompt_fields`), `_metrics`,
    # `answer` (its rule on the think-stripped reply), `score`, `zero` (the statistics of an item with no
    # answer) and `rules` (its settings in the signature, after task and metric).
    shown_meta: ClassVar[tuple[str, ...]] = ()  # meta fields the prompt also shows (WMT24++'s pair)

    def item_language(self, item: PublicItem) -> str | None:
        """The item's language: the `output_language` of the tasks whose answers are in it."""
        return resolve_code(item.meta.get("lang"))

    @abstractmethod
    def _metrics(self, subjects: tuple[str, ...]) -> tuple[Any, ...]: ...

    @abstractmethod
    def answer(self, body: str, item: PublicItem) -> Extraction: ...

    @abstractmethod
    def zero(self, item: Item) -> dict[str, float]: ...

    def prompt_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        return fields

    def rules(self) -> dict[str, str]:
        return {}

    # -- shared stations ----------------------------------------------------------------------------

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
                script = foreign_script(str(row[spec.in_language]), lang) if spec.in_language else None
                if script:  # Khmer examples listed under "lo": scored, signed and reported as Lao
                    named = f" ({prof.name})" if (prof := profile(resolve_code(lang))) else ""
                    raise DataError(f"{source}: {lang} example {i}.{spec.in_language}: written in {script} script, "
                                    f"but listed under {lang!r}{named}")
                public = {f: copy.deepcopy(row[f]) for f in spec.public}  # the whitelist: nothing else
                public["lang"] = lang
                public.update({f: row[f] for f in self.shown_meta})
                meta = {"lang": lang, **{f: row[f] for f in spec.meta}}
                if self.cluster_by == "context":  # SHA-256 (12 hex) of the passage, not the passage itself
                    meta["context"] = hashlib.sha256(f"{lang}\n{row['context']}".encode("utf-8", "surrogatepass")).hexdigest()[:12]
                gold = {f: copy.deepcopy(row[f]) for f in spec.gold}
                items.append(Item.create(f"{lang}/{i:05d}", public, gold, meta))
        return self.dataset(items, source, digest)

    def render(self, item: PublicItem) -> Prompt:
        text = self.prompt.format(**self.prompt_fields(dict(item.fields)))
        return Prompt(messages=({"role": "user", "content": text},), text=text + "\n", text_max_tokens=256)

    def extract(self, text: str, item: PublicItem) -> Extraction:
        body, ok = strip_think(text)
        return self.answer(body, item) if ok else Extraction(None, "think_unclosed")

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore(self.zero(item), failure=failure)

    def answer_key(self, answer: Any) -> str | None:
        return None if answer is None else str(answer)

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
        return {"task": self.task, "metric": self.metrics[0].name, **self.rules()}


class MGSM(DeepSEA):
    """Math word problems: the number in the last answer tag, numeric exact match."""

    task = "mgsm"
    datasheet = deepsea_datasheet("MGSM")
    answer_kind = "number"
    prompt = "Solve the problem step by step, then give the final answer as a number between <answer> and </answer>.\n\n{question}"

    def __init__(self, *, native_digits: bool = True, groups: str | None = None, metric: str | None = None):
        self.native_digits = native_digits
        super().__init__(groups=groups, metric=metric)

    def _metrics(self, subjects: tuple[str, ...]) -> tuple[Any, ...]:
        return (RatioMetric("numeric_em", "correct", "n", "numeric exact match", scale="points"),)

    def answer(self, body: str, item: PublicItem) -> Extraction:
        got = mgsm_number(body, self.native_digits)
        return Extraction(None, "no_number") if got is None else Extraction(got)

    def score(self, answer: Any, item: Item) -> ItemScore:
        return ItemScore({"correct": float(Decimal(answer) == parse_number(item.gold["answer_number"])), "n": 1.0})

    def zero(self, item: Item) -> dict[str, float]:
        return {"correct": 0.0, "n": 1.0}

    def rules(self) -> dict[str, str]:
        return {"native_digits": str(self.native_digits).lower(), "read": f"r{READING_VERSION}"}


class IndoMMLU(DeepSEA):
    """Subject MCQ: the release's first standalone letter, accuracy macro-averaged over subjects."""

    task = "indommlu"
    datasheet = deepsea_datasheet("IndoMMLU")
    answer_kind = "letter"
    prompt = "Answer the multiple-choice question. Give the letter of the correct option between <answer> and </answer>.\n\n{question}\n{options}"

    def __init__(self, *, letter_case: str = "upper_first", groups: str | None = None, metric: str | None = None):
        if letter_case not in ("upper_first", "upper_only"):
            raise DataError("letter_case must be upper_first or upper_only")
        self.letter_case = letter_case
        super().__init__(groups=groups, metric=metric)

    def _metrics(self, subjects: tuple[str, ...]) -> tuple[Any, ...]:
        return (MacroMetric("accuracy_macro_subjects", subjects, description="mean over subjects of accuracy"),
                RatioMetric("accuracy_pooled", "correct", "n", "pooled accuracy (not the headline)",
                            scale="points", show_ci=False))

    def facts(self, items: Sequence[Item]) -> dict[str, Any]:
        return {"subjects": tuple(sorted({it.meta["subject"] for it in items}))}

    def metrics_for(self, dataset: Dataset | None) -> tuple[Any, ...]:
        """The macro average runs over the dataset's subjects."""
        return self.metrics if dataset is None else self._metrics(tuple(dataset.facts.get("subjects", ())))

    def prompt_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        return {**fields, "options": "\n".join(f"{k}. {v}" for k, v in fields["options"].items())}

    def answer(self, body: str, item: PublicItem) -> Extraction:
        letter = mcq_letter(body, self.letter_case)
        return Extraction(None, "no_letter") if letter is None else Extraction(letter)

    def score(self, answer: Any, item: Item) -> ItemScore:
        ok, s = float(answer == item.gold["answer"]), item.meta["subject"]
        return ItemScore({"correct": ok, "n": 1.0, f"correct:{s}": ok, f"n:{s}": 1.0})

    def zero(self, item: Item) -> dict[str, float]:
        s = item.meta["subject"]
        return {"correct": 0.0, "n": 1.0, f"correct:{s}": 0.0, f"n:{s}": 1.0}

    def rules(self) -> dict[str, str]:
        return {"letter_case": self.letter_case, "read": f"r{READING_VERSION}"}


class XQuAD(DeepSEA):
    """Extractive QA: the answer tag or the language's "the answer is" phrase, token F1 (first reference)."""

    task = "xquad"
    datasheet = deepsea_datasheet("XQuAD")
    answer_kind = "text"
    output_language_rule = "the passage's language (a span of it)"
    output_language = DeepSEA.item_language
    prompt = "Read the passage and answer the question with a short span from the passage, between <answer> and </answer>.\n\nPassage: {context}\n\nQuestion: {question}"

    def __init__(self, *, f1_norm: str = "unicode", groups: str | None = None, metric: str | None = None):
        if f1_norm not in F1_NORMS:
            raise DataError(f"f1_norm must be one of {', '.join(F1_NORMS)}, got {f1_norm!r}")
        self.f1_norm = f1_norm
        super().__init__(groups=groups, metric=metric)

    def _metrics(self, subjects: tuple[str, ...]) -> tuple[Any, ...]:
        return (RatioMetric("token_f1_first_ref", "f1", "n", "token F1 against the first reference", scale="points"),)

    def answer(self, body: str, item: PublicItem) -> Extraction:
        span = xquad_answer(body, item["lang"])
        return Extraction(None, "no_answer") if span is None else Extraction(span)

    def score(self, answer: Any, item: Item) -> ItemScore:
        f1 = token_f1(answer, list(item.gold["answers"]), item.meta["lang"], refs="first", norm=self.f1_norm)
        return ItemScore({"f1": f1, "n": 1.0})

    def zero(self, item: Item) -> dict[str, float]:
        return {"f1": 0.0, "n": 1.0}

    def rescore_plan(self) -> RescorePlan:
        return RescorePlan(("token_f1",), ("answers",), "lang", f1=("first", self.f1_norm),
                           names={"token_f1": self.metrics[0].name})

    def rules(self) -> dict[str, str]:
        # f1_empty: SQuAD v1.1's script, XQuAD's: two empty answers score F1 0; phrase: the answer
        # phrase read through word breaks (glotbench.languages.breakable)
        return {"refs": "first", "f1_norm": self.f1_norm, "f1_empty": "v1.1", "phrase": "breaks",
                "read": f"r{READING_VERSION}"}


class _Generation(DeepSEA):
    """CrossSum and WMT24++: the tag's content (the whole reply without one, "" when unclosed), corpus chrF2."""

    tag: ClassVar[str]
    reference: ClassVar[str]

    def answer(self, body: str, item: PublicItem) -> Extraction:
        content, state = extract_tag(body, self.tag)
        return Extraction(body.strip() if state == "missing" else content)  # unclosed -> ""

    def score(self, answer: Any, item: Item) -> ItemScore:
        cm = self.metrics[0]
        assert isinstance(cm, CorpusMetric)  # `_metrics` makes one
        return ItemScore(cm.item_stats(SacreMetric("chrf").stats([answer], [[item.gold[self.reference]]])[0]))

    def zero(self, item: Item) -> dict[str, float]:
        return dict(self.score("", item).stats)

    def rescore_plan(self) -> RescorePlan:
        return RescorePlan(("chrf",), (self.reference,), "lang", names={"chrf": self.metrics[0].name})


class CrossSum(_Generation):
    task, tag, reference = "crosssum", "summary", "summary"
    datasheet = deepsea_datasheet("CrossSum")
    output_language_rule = "the article's language (a summary in the same language)"
    output_language = DeepSEA.item_language
    prompt = "Summarise the text in one or two sentences in the same language, between <summary> and </summary>.\n\n{text}"

    def _metrics(self, subjects: tuple[str, ...]) -> tuple[Any, ...]:
        return (CorpusMetric("corpus_chrf2", "chrf", "corpus chrF2, sacrebleu defaults", label="chrF2"),)


class WMT24pp(_Generation):
    task, tag, reference, shown_meta = "wmt24pp", "translation", "target", ("lp",)
    datasheet = deepsea_datasheet("WMT24pp")
    input_language = "en"  # WMT24++ translates English sources
    output_language_rule = "the language pair's target"

    def output_language(self, item: PublicItem) -> str | None:
        return target_of_pair(item.meta.get("lp") or item.fields.get("lp", ""))
    input_answer = "source"  # the source copied is a possible translation (names, numbers, shared script)
    prompt = "Translate the text from {src} to {tgt}. Give only the translation, between <translation> and </translation>.\n\n{source}"

    def __init__(self, *, groups: str | None = None, metric: str | None = None):
        if metric is not None and "metricx" in metric.lower():
            raise GlotbenchError("MetricX-24, DeepSEA's headline translation metric, needs its own neural model, "
                                 "which the public scorer does not run; glotbench reports corpus chrF2, named "
                                 "corpus_chrf2_not_metricx24")
        super().__init__(groups=groups, metric=metric)

    def _metrics(self, subjects: tuple[str, ...]) -> tuple[Any, ...]:
        return (CorpusMetric("corpus_chrf2_not_metricx24", "chrf", "corpus chrF2 (the paper's MetricX-24 is not computed)",
                             label="chrF2"),)

    def prompt_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        src, _, tgt = fields["lp"].partition("-")
        return {**fields, "src": src, "tgt": tgt.split("_")[0]}


TASK_CLASSES: dict[str, type[DeepSEA]] = {c.task: c for c in (MGSM, IndoMMLU, XQuAD, CrossSum, WMT24pp)}


def DeepSEATask(task: str, **options: Any) -> DeepSEA:  # noqa: N802 - reads as the benchmark it builds
    """The DeepSEA task called `task` (mgsm, indommlu, xquad, crosssum, wmt24pp) with its options."""
    if task not in TASK_CLASSES:
        raise DataError(f"unknown DeepSEA task {task!r}")
    return TASK_CLASSES[task](**options)

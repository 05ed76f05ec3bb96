"""LaoBench: Lao multiple choice and Lao<->Chinese<->English translation.

Data: the open set's columns — `data_type` ("K12 Foundational Education", "Knowledge Application",
"Bilingual Translation"), `question`, `A`-`D`, `answer` (a letter, or the reference translation for
translation rows) — and, when present, `id`, `subdomain`, `lang`, `direction` ("lo-en", ...). Read
from a local .parquet or .jsonl file, or from the hub with a pinned revision and hash
(`hub:OWNER/NAME@REVISION#sha256=HEX`). The bundled sample is written by the glotbench authors for
tests and demos: it is not LaoBench data. Rules and choices: docs/benchmarks/laobench.md.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

from glotbench.benchmarks.base import Benchmark, RescorePlan, target_of_pair
from glotbench.core import Dataset
from glotbench.data import ItemId, NonEmptyStr, Row, read_rows
from glotbench.datasheet import Datasheet
from glotbench.errors import DataError
from glotbench.extract import READING_VERSION, Extraction, mc_letter, strip_think
from glotbench.items import Item, PublicItem
from glotbench.languages import foreign_script
from glotbench.loading import sha256_file
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.metrics.corpus import BLEU_TOKENIZE_SEGMENTED, CorpusMetric, SacreMetric, is_spm, spm_model
from glotbench.core import GenerateConfig, Prompt
from glotbench.plugins import register_benchmark
from glotbench.signature import Signature
from glotbench.text.segment import LaoSegmenter, installed_laonlp

DATA_TYPES = ("K12 Foundational Education", "Knowledge Application", "Bilingual Translation")
LETTERS = ("A", "B", "C", "D")
_LAO = re.compile("[\u0e80-\u0eff]")
_CJK = re.compile("[\u4e00-\u9fff]")

LANGUAGES = ("lo", "en", "zh")  # LaoBench's: Lao, and the English and Chinese of its translation pairs
MCQ_PROMPTS = {
    "lo": ("ຈົ່ງເລືອກຄຳຕອບທີ່ຖືກຕ້ອງພຽງຂໍ້ດຽວ (A, B, C ຫຼື D).\n\n{question}\n{options}\n\n"
           "ຕອບໃນຮູບແບບ: ຄຳຕອບ: X", "ຄຳຕອບ:"),
    "en": ("Choose the one correct answer (A, B, C or D).\n\n{question}\n{options}\n\n"
           "Reply in the form: Answer: X", "Answer:"),
}
TRANSLATION_SYSTEM = "Translate the text as asked. Reply with the translation only."
_WRAPPERS = {('"', '"'), ("“", "”"), ("«", "»"), ("「", "」"), ("『", "』"), ("'", "'")}


def _wrapped(text: str) -> bool:
    """The whole text in one pair of quotation marks, with no other such mark inside (a translation
    that starts or ends with a quotation of its own keeps it)."""
    if len(text) < 2 or (text[0], text[-1]) not in _WRAPPERS:
        return False
    inner = text[1:-1]
    return text[0] not in inner and text[-1] not in inner


_LABEL = re.compile(r"^\s*(?:translation|ຄຳແປ|ຄໍາແປ|译文|翻译)\s*[:：]\s*", re.IGNORECASE)


def detect_lang(text: str) -> str:
    """lo when Lao script is present, zh for Han characters, else en."""
    if _LAO.search(text):
        return "lo"
    if _CJK.search(text):
        return "zh"
    return "en"


_QUOTED = re.compile(r"[\"“«「『]([^\"”»」』]+)[\"”»」』]")


def source_text(question: str) -> str:
    """The text a translation question asks to translate, for the input-unchanged floor: what follows
    the instruction's first colon (`ແປເປັນພາສາອັງກິດ: ...`, `翻译成老挝语：...`), else the first quoted
    span, else the whole question."""
    after = re.match(r"[^:：]*[:：]\s*(\S.*)", question, re.DOTALL)
    if after:
        return after.group(1).strip()
    m = _QUOTED.search(question)
    return m.group(1).strip() if m else question.strip()


def infer_direction(question: str, reference: str, where: str) -> str:
    """A translation row's direction from its scripts, for rows without `direction`: the target is
    the reference's language; the source is the other script in the question (Lao, Han), or English
    when the question has neither. A row where that is ambiguous (the question holds both other
    scripts, or English would be both sides) is an error asking for `direction`."""
    tgt = detect_lang(reference)
    found = {lang for lang, rx in (("lo", _LAO), ("zh", _CJK)) if rx.search(question)} - {tgt}
    if len(found) == 1:
        return f"{found.pop()}-{tgt}"
    if not found and tgt != "en":
        return f"en-{tgt}"
    raise DataError(f"{where}: cannot infer the translation direction from the scripts (target {tgt}, question "
                    f"in {', '.join(sorted(found)) or 'Latin script only'}); give the row a `direction` (lo-en, ...)")


# LaoBench's datasheet (arXiv 2511.11334; the BibTeX as arxivlens.com's page for the paper gives it).
# The hub card (BAAI/LaoBench) was not reachable from here, so its licence is not known; the bundled
# sample (laobench_sample.jsonl, and the arena's 8 prompts) is glotbench's own text, Apache-2.0.
LAOBENCH_CITATION = """@article{qin2025laobench,
  title = {LaoBench: A Large-Scale Multidimensional Lao Benchmark for Large Language Models},
  author = {Qin, Bowen and Li, Changjin and Liao, Dingshi and others},
  year = {2025},
  eprint = {2511.11334},
  archivePrefix = {arXiv},
  primaryClass = {cs.CL},
}"""


def laobench_datasheet(languages: tuple[str, ...]) -> Datasheet:
    return Datasheet(
        licence="unknown (LaoBench's card not read); the bundled sample: Apache-2.0, glotbench's own",
        commercial=None,
        licence_note="LaoBench's own licence was not checked (its hub card was out of reach); the bundled "
                     "sample is written by the glotbench authors, not LaoBench data",
        origin="native", source="https://arxiv.org/abs/2511.11334 (data: huggingface.co/datasets/BAAI/LaoBench)",
        citation=LAOBENCH_CITATION, languages={code: {} for code in languages})


# -- data ------------------------------------------------------------------------------------

class LaoBenchRow(Row):
    """One row of LaoBench's test split (parquet) or a JSONL file of the same columns; the rules
    that tie columns together (letters need options, translation directions) are in `parse_rows`."""

    id: ItemId | None = None
    data_type: NonEmptyStr
    question: NonEmptyStr
    answer: NonEmptyStr
    A: str | None = None
    B: str | None = None
    C: str | None = None
    D: str | None = None
    subdomain: str | None = None
    lang: str | None = None
    direction: str | None = None


def _validated(path: Path, fmt: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(where, row) pairs of a file read through its schema (glotbench.data)."""
    return [(f"{path}:{n}", row.model_dump()) for n, row in read_rows(path, LaoBenchRow, fmt=fmt)]


def _from_hub(spec: str) -> Path:
    """hub:OWNER/NAME@REVISION#sha256=HEX -> the test split's parquet file, checked against its hash."""
    m = re.fullmatch(r"hub:([\w.-]+/[\w.-]+)@([\w.-]+)(?:#sha256=([0-9a-f]{64}))?", spec)
    if not m:
        raise DataError(f"hub data must be hub:OWNER/NAME@REVISION#sha256=HEX (a pinned revision), got {spec!r}")
    repo, revision, digest = m.groups()
    if not digest:
        raise DataError(f"{spec}: pin the file's sha256 (#sha256=...) so the data cannot change under you")
    try:
        from huggingface_hub import snapshot_download

        folder = Path(snapshot_download(repo, repo_type="dataset", revision=revision, allow_patterns=["*test*.parquet"]))
    except Exception as e:  # noqa: BLE001 - offline, missing repo, bad revision
        raise DataError(f"cannot fetch {repo}@{revision} from the hub: {type(e).__name__}: {str(e).splitlines()[0]}") from None
    files = sorted(folder.rglob("*test*.parquet"))
    if len(files) != 1:
        raise DataError(f"{repo}@{revision}: expected one test parquet file, found {len(files)}")
    actual = sha256_file(files[0])
    if actual != digest:
        raise DataError(f"{files[0]}: sha256 is {actual}, expected {digest}")
    return files[0]


def load_rows(source: str | None) -> tuple[list[tuple[str, dict[str, Any]]], str, str]:
    """(where, row) pairs, a description of the source, and its sha256."""
    if source is None:
        ref = resources.files("glotbench.benchmarks").joinpath("data/laobench_sample.jsonl")
        with resources.as_file(ref) as p:
            return _validated(Path(p)), "bundled:laobench_sample.jsonl (not LaoBench data)", sha256_file(p)
    path = _from_hub(source) if source.startswith("hub:") else Path(source)
    return _validated(path), str(source), sha256_file(path)


def _text(row: dict[str, Any], key: str, where: str, rid: str) -> str:
    v = row.get(key)
    if not isinstance(v, str) or not v.strip():
        raise DataError(f"{where} (id {rid}): field '{key}' must be a non-empty string")
    return v


def parse_rows(rows: list[tuple[str, dict[str, Any]]]) -> tuple[list[Item], list[Item]]:
    """Validate rows; split them into multiple-choice items and translation items."""
    mcq, trans, seen = [], [], set()
    for n, (where, row) in enumerate(rows):
        rid = str(row.get("id") if row.get("id") is not None else n)
        if rid in seen:
            raise DataError(f"{where}: duplicate id {rid!r}")
        seen.add(rid)
        dtype = _text(row, "data_type", where, rid)
        if dtype not in DATA_TYPES:
            raise DataError(f"{where} (id {rid}): unknown data_type {dtype!r}; expected one of {', '.join(DATA_TYPES)}")
        question = _text(row, "question", where, rid)
        answer = _text(row, "answer", where, rid).strip()
        sub = str(row.get("subdomain") or "unspecified")
        has_options = any(isinstance(v := row.get(k), str) and v.strip() for k in LETTERS)
        if answer in LETTERS and has_options:
            options = {k: _text(row, k, where, rid) for k in LETTERS}
            lang = str(row.get("lang") or detect_lang(question))
            if lang not in LANGUAGES:
                raise DataError(f"{where} (id {rid}): lang {lang!r} is not one of LaoBench's languages "
                                f"({', '.join(LANGUAGES)})")
            script = foreign_script(question, lang)
            if script:  # a declared lang the question is not written in, or a script LaoBench has no prompt for
                raise DataError(f"{where} (id {rid}): " + (f"lang is {lang!r}, but the question" if row.get("lang") else
                                                         "the question") + f" is written in {script} script; LaoBench's "
                                f"rows are in {', '.join(LANGUAGES)}")
            mcq.append(Item.create(rid, {"question": question, "options": options, "lang": lang},
                                   {"answer": answer}, {"dimension": dtype, "subdomain": sub, "lang": lang,
                                                        "dimension_subdomain": f"{dtype}/{sub}"}))
        elif dtype == "Bilingual Translation" and not has_options:
            direction = row.get("direction")
            how = "given"
            if direction is None:
                direction, how = infer_direction(question, answer, f"{where} (id {rid})"), "inferred"
            if not re.fullmatch(r"(lo|en|zh)-(lo|en|zh)", str(direction)) or direction[:2] == direction[3:]:
                raise DataError(f"{where} (id {rid}): direction {direction!r} is not one of lo/en/zh-lo/en/zh "
                                "(two different languages)")
            script = foreign_script(answer, direction[3:])
            if script:  # the reference is the target language's text
                raise DataError(f"{where} (id {rid}): direction {direction} translates into {direction[3:]!r}, but the "
                                f"reference is written in {script} script")
            trans.append(Item.create(rid, {"question": question, "direction": direction, "source": source_text(question)},
                                     {"reference": answer},
                                     {"direction": direction, "subdomain": sub, "direction_source": how,
                                      "direction_subdomain": f"{direction}/{sub}"}))
        else:
            raise DataError(f"{where} (id {rid}): answer {answer[:20]!r} is neither a letter A-D with options "
                            "A-D nor a reference translation of a Bilingual Translation row")
    return mcq, trans


class _LaoBenchData(Benchmark):
    bundled_data = "sample"  # laobench_sample.jsonl: written for glotbench, not LaoBench data

    def _dataset(self, path: str | None, part: int, what: str) -> Dataset:
        rows, source, digest = load_rows(path)
        items = parse_rows(rows)[part]
        if not items:
            raise DataError(f"{source}: no {what} rows")
        return self.dataset(items, source, digest)


# -- multiple choice -------------------------------------------------------------------------

@register_benchmark("laobench-mcq")
class LaoBenchMCQ(_LaoBenchData):
    """Zero-shot multiple choice; generative answers reduced to a letter, or (`method="loglik"`,
    local models) the option letter with the highest log-likelihood, reported as a separate score."""

    name = "laobench-mcq"
    version = "1.2"  # 1.1: symmetric phrase rules, Unicode letter boundaries; 1.2: phrases read through word breaks
    description = "LaoBench multiple choice: accuracy by dimension and subdomain"
    group_by = ("dimension", "dimension_subdomain")  # a subdomain name is only unique within its dimension
    datasheet = laobench_datasheet(("lo",))
    default_config = GenerateConfig(temperature=0.0, max_tokens=1024)
    answer_kind = "letter"
    random_baseline = 0.25

    def __init__(self, method: str = "generate") -> None:
        if method not in ("generate", "loglik"):
            raise DataError(f"laobench-mcq method must be generate or loglik, got {method!r}")
        self.method = method
        metric = "accuracy" if method == "generate" else "accuracy_loglik"
        self.metrics = (
            RatioMetric(metric, "correct", "items", f"share of items answered correctly ({method})", label=metric),
            RatioMetric("extraction_failure_rate", "no_letter", "items", "share of replies with no letter",
                        show_ci=False, label="no letter", lower_is_better=True),
        )

    def load(self, path: str | None = None) -> Dataset:
        return self._dataset(path, 0, "multiple-choice")

    def render(self, item: PublicItem) -> Prompt:
        lang = item["lang"] if item["lang"] in MCQ_PROMPTS else "en"
        template, cue = MCQ_PROMPTS[lang]
        options = "\n".join(f"{k}. {v}" for k, v in item["options"].items())
        body = template.format(question=item["question"], options=options)
        plain = body.rsplit("\n\n", 1)[0] + f"\n{cue}"
        return Prompt(messages=({"role": "user", "content": body},), text=plain, text_stop=("\n",),
                      text_max_tokens=8, choices=tuple(f" {k}" for k in LETTERS))

    def extract(self, text: str, item: PublicItem) -> Extraction:
        """The letter; failing that, the one option whose text the reply names (the item's options)."""
        return mc_letter(text, dict(item["options"]))

    def score(self, answer: str, item: Item) -> ItemScore:
        return ItemScore({"correct": float(answer == item.gold["answer"]), "items": 1.0, "no_letter": 0.0})

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"correct": 0.0, "items": 1.0, "no_letter": float(failure in ("no_letter", "think_unclosed"))},
                         failure=failure)

    def signature_parts(self) -> dict[str, str]:
        return {"metric": self.metrics[0].name, "method": self.method, "extract": f"mc_letter:answer_phrase:v{READING_VERSION}+options", "shots": "0"}

    def extra_results(self, dataset: Dataset) -> dict[str, Any]:
        return {"random_baseline": self.random_baseline}


# -- translation -----------------------------------------------------------------------------

@register_benchmark("laobench-translation")
class LaoBenchTranslation(_LaoBenchData):
    """Translation rows: BLEU after LaoNLP segmentation of Lao (sacrebleu's zh tokenizer for Chinese)
    and chrF++, per direction and per direction/subdomain; each direction has its own signature.
    The input-unchanged floor: the question's source text (`source_text`) scored as the reply."""

    name = "laobench-translation"
    version = "1.1"  # 1.1: a quotation that opens the translation is kept
    description = "LaoBench translation: BLEU (Lao segmented) and chrF++ per direction"
    metrics = (
        CorpusMetric("bleu", "bleu", "corpus BLEU, Lao segmented with LaoNLP", label="BLEU"),
        CorpusMetric("chrf++", "chrf++", "corpus chrF++ (Lao segmented for the word n-grams)", label="chrF++"),
    )
    group_by = ("direction", "direction_subdomain")
    datasheet = laobench_datasheet(LANGUAGES)  # Lao, and the English and Chinese of its pairs
    pooled_overall = False  # different segmenters per target language: never one pooled number
    output_language_rule = "the direction's target"

    def output_language(self, item: PublicItem) -> str | None:
        return target_of_pair(item.fields.get("direction", ""))
    default_config = GenerateConfig(temperature=0.0, max_tokens=512)
    input_answer = "source"  # the source copied is a possible translation (names, numbers): the do-nothing floor

    def __init__(self, bleu_tokenize: str = BLEU_TOKENIZE_SEGMENTED[0], laonlp: str | None = None,
                 lao_segmenter: LaoSegmenter | None = None) -> None:
        """`bleu_tokenize`: sacrebleu's tokenizer over the LaoNLP words of a Lao target (`none`, the
        default, or `13a`), or `spm:PATH`: spBLEU in every direction, the text as written cut by the
        local SentencePiece model file at PATH (FLORES-200's; signed by its SHA-256). `laonlp`: the
        LaoNLP version the run must use (e.g. `0.7`); an error unless the installed one matches. `lao_segmenter`: another segmenter (Python API)."""
        if is_spm(bleu_tokenize):
            spm_model(bleu_tokenize)  # the file is there and is a SentencePiece model, or one error line
        elif bleu_tokenize not in BLEU_TOKENIZE_SEGMENTED:
            raise DataError(f"laobench-translation bleu_tokenize must be one of {', '.join(BLEU_TOKENIZE_SEGMENTED)} "
                            f"or spm:PATH (spBLEU), got {bleu_tokenize!r}")
        if lao_segmenter is not None and not isinstance(lao_segmenter, LaoSegmenter):
            raise DataError("lao_segmenter is a Python-API setting (a LaoSegmenter); choose the LaoNLP version "
                            "by installing it, and check it with laonlp=VERSION")
        self.bleu_tokenize = bleu_tokenize
        self.lao = lao_segmenter
        if laonlp is not None:
            have = (lao_segmenter or installed_laonlp()).version
            if have != laonlp and not have.startswith(laonlp + "."):
                raise DataError(f"laobench-translation asks for LaoNLP {laonlp} but {have} is installed; "
                                f"install it in its own environment (pip install \"glotbench[laonlp07]\" for 0.7)")
        self._sacre: dict[tuple[str, str], SacreMetric] = {}

    def load(self, path: str | None = None) -> Dataset:
        return self._dataset(path, 1, "translation")

    def _metric(self, kind: str, lang: str) -> SacreMetric:
        if (kind, lang) not in self._sacre:
            spbleu = kind == "bleu" and is_spm(self.bleu_tokenize)
            opts = {"tokenize": self.bleu_tokenize} if kind == "bleu" and (lang == "lo" or spbleu) else {}
            self._sacre[(kind, lang)] = SacreMetric(kind, lang, lao=self.lao, **opts)
        return self._sacre[(kind, lang)]

    def render(self, item: PublicItem) -> Prompt:
        return Prompt(messages=({"role": "system", "content": TRANSLATION_SYSTEM},
                                {"role": "user", "content": item["question"]}),
                      text=f"{item['question']}\n", text_stop=("\n",), text_max_tokens=128)

    def extract(self, text: str, item: PublicItem) -> Extraction:
        body, ok = strip_think(text)
        if not ok:
            return Extraction(None, "think_unclosed")
        body = _LABEL.sub("", body.strip()).strip()
        if _wrapped(body):
            body = body[1:-1].strip()  # the whole reply wrapped in one pair of quotation marks
        return Extraction(body) if body else Extraction(None, "empty")

    def score(self, answer: str, item: Item) -> ItemScore:
        tgt = item.public["direction"].split("-")[1]
        refs = [[item.gold["reference"]]]
        stats: dict[str, float] = {}
        for cm in self.metrics:
            stats.update(cm.item_stats(self._metric(cm.kind, tgt).stats([answer], refs)[0]))  # type: ignore[union-attr]
        return ItemScore(stats)

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        s = self.score("", item)  # an empty hypothesis: no credit, the reference length still counts
        return ItemScore(s.stats, failure=failure)

    def extra_results(self, dataset: Dataset) -> dict[str, Any]:
        inferred = sorted(it.id for it in dataset if it.meta.get("direction_source") == "inferred")
        return {"metric_signatures": self.direction_signatures(),
                "directions_inferred": {"items": len(inferred), "ids": inferred[:50],
                                        "rule": "target: the reference's script; source: the other script in "
                                                "the question, else English"}}

    def direction_signatures(self) -> dict[str, str]:
        out = {}
        for d in ("lo", "en", "zh"):
            for cm in self.metrics:
                m = self._metric(cm.kind, d)  # type: ignore[union-attr]
                m.stats(["a"], [["a"]])
                out[f"{cm.name}:{d}"] = m.signature()
        return out

    def rescore_plan(self) -> RescorePlan:
        return RescorePlan(("bleu", "chrf++"), ("reference",), "direction", bleu_tokenize=self.bleu_tokenize)

    def signature_parts(self) -> dict[str, str]:
        if is_spm(self.bleu_tokenize):  # spBLEU: one tokenizer, no segmenter, in every direction
            seg_lo = Signature.parse(self._metric("chrf++", "lo").signature()).get("seg") or "none"
            return {"metrics": "spbleu+chrf++", "seg_lo": seg_lo, "bleu_tok": spm_model(self.bleu_tokenize).tag}
        return {"metrics": "bleu+chrf++", "seg_lo": Signature.parse(self._metric("bleu", "lo").signature()).get("seg") or "none",
                "bleu_tok_lo": self.bleu_tokenize, "tok_zh": "zh"}

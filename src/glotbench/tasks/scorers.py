"""Scorers of a task: per-item statistics for each extraction pipeline, and the metrics over them.

Every pipeline `p` scores into its own statistics (`p:correct`, `p:items`, `p:no_answer`, or
sacrebleu's `p:chrf++.0`...), so pipelines are reported side by side from one set of replies; the
headline pipeline's metrics carry the plain names (`accuracy`, `chrf++`), the others `NAME[p]`.
A pipeline that found no answer scores as the failure does (0, the reference still counted by the
corpus metrics) and counts in its `no_answer_rate`. The parts reused: glotbench.metrics (ratio
metrics, sacrebleu with the language's segmenter, token F1, numeric matching) and languages.py.
"""

from __future__ import annotations

import re
import string
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Any, Sequence

from glotbench.items import Item
from glotbench.metrics import RatioMetric

MODEL_FAILURES = frozenset({"rate_limited", "server_error", "timeout", "connection", "bad_response", "client_error",
                            "auth", "exception", "no_output", "scorer_error"})


def metric_name(base: str, pipeline: str, headline: bool) -> str:
    return base if headline else f"{base}[{pipeline}]"


def _gold(item: Item, *keys: str) -> Any:
    for k in keys:
        if k in item.gold:
            return item.gold[k]
    raise KeyError(f"the item has no gold {' or '.join(keys)} (fields.gold)")


class Scorer:
    """Per-pipeline statistics and metrics; `stats(None, ...)` is the no-answer score (same keys)."""

    base = "accuracy"
    description = ""
    gold_keys: tuple[str, ...] = ("answer",)  # the gold it reads, the first present

    def __init__(self, spec: Any, lang: str | None):
        self.spec = spec
        self.lang = lang

    def check_gold(self, item: Item) -> str | None:
        """What is wrong with an item's gold for this scorer, or None. Checked when the data is
        loaded: a gold the scorer cannot read would make every such item a scorer error or a miss
        nobody could avoid, in a run that looks valid."""
        if self.gold_keys and not any(k in item.gold for k in self.gold_keys):
            return (f"fields.gold: no {' or '.join(self.gold_keys)} (the {self.spec.kind} scorer reads it; "
                    f"the item's gold has: {', '.join(item.gold) or 'nothing'})")
        return None

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        ok = 0.0 if answer is None else float(self.correct(answer, item))
        return {f"{p}:correct": ok, f"{p}:items": 1.0, f"{p}:no_answer": float(answer is None)}

    def correct(self, answer: str, item: Item) -> bool:
        raise NotImplementedError

    def metrics(self, p: str, headline: bool) -> list[Any]:
        return [RatioMetric(metric_name(self.base, p, headline), f"{p}:correct", f"{p}:items",
                            f"{self.description} ({p})", label=metric_name(self.base, p, headline)),
                RatioMetric(metric_name("no_answer_rate", p, headline), f"{p}:no_answer", f"{p}:items",
                            f"share of replies the {p} pipeline found no answer in", show_ci=False,
                            label=metric_name("no answer", p, headline))]

    def signature(self) -> str:
        return self.spec.kind


class OptionAccuracy(Scorer):
    description = "share of items whose chosen option is the gold one"

    def correct(self, answer: str, item: Item) -> bool:
        return answer == _gold(item, "answer")

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        out = super().stats(answer, item, p)
        if self.spec.balanced:  # the gold class's pair, for the class-balanced metrics
            gold = _gold(item, "answer")
            out.update({f"{p}:class_correct:{gold}": out[f"{p}:correct"], f"{p}:class_items:{gold}": 1.0})
        return out

    def metrics(self, p: str, headline: bool) -> list[Any]:
        from glotbench.metrics import MacroMetric
        from glotbench.tasks.template import LETTERS

        plain = super().metrics(p, headline)
        if not self.spec.balanced:
            return plain
        balanced = [MacroMetric(metric_name(name, p, headline), tuple(LETTERS), f"{p}:class_correct",
                                f"{p}:class_items", f"{what} ({p})", label=metric_name(name, p, headline),
                                scale="fraction", normalised=normalised)
                    for name, normalised, what in (
                        ("normalized_accuracy", True, "SEA-HELM's normalised accuracy: balanced accuracy "
                                                      "against the 1/k floor of its k gold classes"),
                        ("balanced_accuracy", False, "mean recall over the gold classes"))]
        return balanced + plain

    def signature(self) -> str:
        return "option_accuracy(balanced)" if self.spec.balanced else "option_accuracy"


def normalise(text: str, steps: Sequence[str]) -> str:
    from glotbench.languages import remove_zero_width, to_ascii_digits

    for s in steps:
        if s == "strip":
            text = text.strip()
        elif s == "lower":
            text = text.lower()
        elif s == "casefold":
            text = text.casefold()
        elif s == "nfkc":
            text = unicodedata.normalize("NFKC", text)
        elif s == "collapse_spaces":
            text = " ".join(text.split())
        elif s == "remove_punct":
            text = "".join(c for c in text if not unicodedata.category(c).startswith("P"))
        elif s == "ascii_digits":
            text = to_ascii_digits(text)
        elif s == "remove_zero_width":
            text = remove_zero_width(text)
        elif s == "remove_ascii_punct":  # Python's string.punctuation, as lm-eval's ignore_punctuation
            text = text.translate(_ASCII_PUNCT)
        elif s == "remove_ascii_digits":  # string.digits, as lm-eval's ignore_numbers
            text = text.translate(_ASCII_DIGITS)
    return text


_ASCII_PUNCT = str.maketrans("", "", string.punctuation)
_ASCII_DIGITS = str.maketrans("", "", string.digits)


class ExactMatch(Scorer):
    base = "exact_match"
    gold_keys = ("answer", "answers")
    description = "share of answers equal to a gold answer after the named normalisation"

    def correct(self, answer: str, item: Item) -> bool:
        gold = _gold(item, "answer", "answers")
        golds = [gold] if isinstance(gold, str) else list(gold)
        return self._norm(answer) in {self._norm(str(g)) for g in golds}

    def _norm(self, text: str) -> str:
        for pattern in self.spec.ignore:
            text = re.sub(pattern, "", text)
        return normalise(text, self.spec.normalise)

    def signature(self) -> str:
        ignore = "".join(f";ignore={p}" for p in self.spec.ignore).replace("|", "%7C")
        from glotbench.extract import READING_VERSION

        steps = [f"{n}@r{READING_VERSION}" if n == "remove_zero_width" else n for n in self.spec.normalise]
        return f"exact_match({'+'.join(steps) or 'none'}{ignore})"


class NumericMatch(Scorer):
    base = "numeric_em"
    description = "share of answers numerically equal to the gold number (native digits read)"

    def check_gold(self, item: Item) -> str | None:
        from glotbench.extract import parse_number

        problem = super().check_gold(item)
        if problem is None:
            gold = item.gold["answer"]
            try:
                if isinstance(gold, (list, dict, bool)) or not parse_number(gold).is_finite():
                    raise InvalidOperation
            except InvalidOperation:
                problem = f"fields.gold.answer: {gold!r} is not a number (the numeric_match scorer compares numbers)"
        return problem

    def correct(self, answer: str, item: Item) -> bool:
        from glotbench.extract import parse_number

        try:
            return Decimal(answer) == parse_number(_gold(item, "answer"))
        except InvalidOperation:
            return False

    def signature(self) -> str:
        from glotbench.extract import READING_VERSION

        return f"numeric_em(to_ascii_digits@r{READING_VERSION})"


class TokenF1(Scorer):
    base = "token_f1"
    gold_keys = ("answers", "answer")
    description = "token F1 against the references"

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        from glotbench.metrics.token_f1 import token_f1

        gold = _gold(item, "answers", "answer")
        refs = [gold] if isinstance(gold, str) else [str(g) for g in gold]
        f1 = 0.0 if answer is None else token_f1(answer, refs, self.lang, refs=self.spec.refs, norm=self.spec.norm)
        return {f"{p}:f1": f1, f"{p}:items": 1.0, f"{p}:no_answer": float(answer is None)}

    def metrics(self, p: str, headline: bool) -> list[Any]:
        first = RatioMetric(metric_name("token_f1", p, headline), f"{p}:f1", f"{p}:items",
                            f"mean token F1 ({p})", scale="fraction", label=metric_name("token F1", p, headline))
        return [first, super().metrics(p, headline)[1]]

    def signature(self) -> str:
        from glotbench.metrics.token_f1 import token_f1_signature

        return token_f1_signature(self.lang, self.spec.refs, self.spec.norm).replace("|", ";")


class Corpus(Scorer):
    """BLEU / chrF / chrF++ through sacrebleu, the text segmented with the target language's segmenter
    (glotbench.metrics.corpus); the item stores the sufficient statistics."""

    gold_keys = ("reference", "answer")

    def __init__(self, spec: Any, lang: str | None):
        super().__init__(spec, lang)
        self._sacre: dict[str, Any] = {}

    def _metric(self, kind: str) -> Any:
        from glotbench.metrics.corpus import SacreMetric, needs_segmentation

        if kind not in self._sacre:
            lang = self.lang if self.spec.segment else None  # None: sacrebleu's defaults on the text as written
            opts = {"tokenize": self.spec.bleu_tokenize} if kind == "bleu" and needs_segmentation(lang) else {}
            self._sacre[kind] = SacreMetric(kind, lang, **opts)
        return self._sacre[kind]

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        ref = str(_gold(item, "reference", "answer"))
        out: dict[str, float] = {f"{p}:items": 1.0, f"{p}:no_answer": float(answer is None)}
        for kind in self.spec.metrics:
            vector = self._metric(kind).stats([answer or ""], [[ref]])[0]
            out.update({f"{p}:{kind}.{i}": float(v) for i, v in enumerate(vector)})
        return out

    def metrics(self, p: str, headline: bool) -> list[Any]:
        from glotbench.metrics.corpus import CorpusMetric

        out: list[Any] = []
        for kind in self.spec.metrics:
            label = {"chrf++": "chrF++", "chrf": "chrF", "bleu": "BLEU"}[kind]
            out.append(_Prefixed(CorpusMetric(metric_name(kind, p, headline), kind,
                                              f"corpus {label} ({p}), " + (f"segmented for {self.lang or 'none'}"
                                                                           if self.spec.segment else "not segmented"),
                                              label=metric_name(label, p, headline)), f"{p}:{kind}"))
        return out + [super().metrics(p, headline)[1]]

    def signature(self) -> str:
        parts = []
        for kind in self.spec.metrics:
            m = self._metric(kind)
            m.stats(["a"], [["a"]])
            parts.append(m.signature().replace("|", ";"))
        return "+".join(parts)


class Rouge(Scorer):
    """ROUGE-L per item (glotbench.metrics.rouge: rouge_score with the language's segmenter, or SEA-HELM's
    tokenizer); the metric is the mean of item F1s, precision and recall beside it."""

    base = "rougeL"
    gold_keys = ("reference", "answer")

    def __init__(self, spec: Any, lang: str | None):
        from glotbench.metrics.rouge import RougeL

        super().__init__(spec, lang)
        self._rouge = RougeL(lang, spec.tokenize)

    def stats(self, answer: str | None, item: Item, p: str) -> dict[str, float]:
        prf = (0.0, 0.0, 0.0) if answer is None else self._rouge.score(answer, str(_gold(item, "reference", "answer")))
        return {f"{p}:rougeL_p": prf[0], f"{p}:rougeL_r": prf[1], f"{p}:rougeL_f": prf[2], f"{p}:items": 1.0,
                f"{p}:no_answer": float(answer is None)}

    def metrics(self, p: str, headline: bool) -> list[Any]:
        return [RatioMetric(metric_name(name, p, headline), f"{p}:{key}", f"{p}:items", f"mean ROUGE-L {what} ({p})",
                            label=metric_name(label, p, headline))
                for name, key, what, label in (("rougeL", "rougeL_f", "F1", "ROUGE-L"),
                                               ("rougeL_precision", "rougeL_p", "precision", "ROUGE-L P"),
                                               ("rougeL_recall", "rougeL_r", "recall", "ROUGE-L R"))
                ] + [super().metrics(p, headline)[1]]

    def signature(self) -> str:
        return self._rouge.signature().replace("|", ";")


class _Prefixed:
    """A CorpusMetric whose statistics carry the pipeline's prefix (`p:chrf++.0`...)."""

    def __init__(self, inner: Any, prefix: str):
        self.inner = inner
        self.prefix = prefix
        self.name, self.description, self.show_ci = inner.name, inner.description, inner.show_ci
        self.label, self.scale = inner.label, inner.scale

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(f"{self.prefix}.{i}" for i in range(self.inner.width))

    def score(self, row: Any) -> float:
        return self.inner.score(row)

    def sentence_mean(self) -> Any:
        from glotbench.metrics.corpus import sentence_mean

        return sentence_mean(self, self.prefix)

    def __repr__(self) -> str:
        return f"CorpusMetric({self.name!r}, {self.inner.kind!r}, keys={self.prefix}.*)"


class Answered(Scorer):
    """A judged task's generation phase: the rubric scores come from the judges (engine/judged_task)."""

    base = "answered_rate"
    description = "share of items with an answer to judge"
    gold_keys = ()  # the judges read the reference (engine/judged_task)

    def correct(self, answer: str, item: Item) -> bool:
        return True

    def signature(self) -> str:
        return "rubric(judged separately)"


SCORERS = {"option_accuracy": OptionAccuracy, "exact_match": ExactMatch, "numeric_match": NumericMatch,
           "token_f1": TokenF1, "corpus": Corpus, "rouge": Rouge, "rubric": Answered}


def make_scorer(spec: Any, lang: str | None) -> Scorer:
    return SCORERS[spec.kind](spec, lang)

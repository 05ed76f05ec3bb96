"""Corpus BLEU, chrF and chrF++ through sacrebleu, as per-segment sufficient statistics.

The corpus score is sacrebleu's own `_compute_score_from_stats` on the summed statistics that
sacrebleu's own `_extract_corpus_statistics` produced, so it equals `corpus_score` exactly (`==`).
No normalisation happens inside the metric: text is scored as given. For languages written without
spaces (lo, th, km, my) the text is segmented first (glotbench.text.segment) and the words joined with
spaces; BLEU then tokenizes with `none` by default (the segmenter's words are the tokens; `13a` would
split them again, e.g. the abbreviation ກ.ພ.), or `13a` when asked (`BLEU_TOKENIZE_SEGMENTED`). For zh
and ja, BLEU uses sacrebleu's `zh` and `ja-mecab` tokenizers instead.
spBLEU (`tokenize="spm:PATH"`): BLEU over the pieces of a local SentencePiece model file (FLORES-200's
`flores200sacrebleuspm`, given by path: sacrebleu's own `flores200` tokenizer downloads it), by
sacrebleu's own `TokenizerSPM`; the text is not segmented first (the model splits every script), and
the signature names the file by its SHA-256 (`tok:spm-<12 hex>`), never its path.
Bootstrap CIs resample the statistic rows (glotbench.stats), never re-tokenise.
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from glotbench.errors import GlotbenchError
from glotbench.languages import segmenter_of
from glotbench.metrics.ratio import Scale
from glotbench.signature import Signature
from glotbench.stats import Estimate, bootstrap_many
from glotbench.text.segment import LaoSegmenter, needs_segmentation, segment, segmenter_signature

if TYPE_CHECKING:  # numpy is imported where it is used: a run imports this module before its first
    import numpy as np  # request, numpy (40-70 ms) in the worker thread that prepares the end of the run

METRICS = ("bleu", "chrf", "chrf++")
# BLEU's tokenizer over segmented text (lo, th, km, my): the named settings; the first is the default.
BLEU_TOKENIZE_SEGMENTED = ("none", "13a")
# BLEU's tokenizer for a language whose profile segments into characters: sacrebleu's own for zh and
# ja, its `char` tokenizer for any other such profile.
CHAR_SCRIPT_TOKENIZERS = {"zh": "zh", "ja": "ja-mecab"}
# BLEU's tokenizer `spm:PATH`: spBLEU with the SentencePiece model file at PATH.
SPM_PREFIX = "spm:"


@dataclass(frozen=True)
class SpmModel:
    """A local SentencePiece model file: its path as given and the SHA-256 of the bytes loaded."""

    path: str
    sha256: str

    @property
    def tag(self) -> str:
        """How signatures name it (sacrebleu's `tok:` value): `spm-` and the SHA-256's first 12 hex digits."""
        return f"spm-{self.sha256[:12]}"


def is_spm(tokenize: str | None) -> bool:
    return isinstance(tokenize, str) and tokenize.startswith(SPM_PREFIX)


def absolute_spm(tokenize: Any) -> Any:
    """`spm:PATH` with PATH made absolute (as a run records it: read again from any folder); any other
    value unchanged."""
    if not is_spm(tokenize) or not tokenize[len(SPM_PREFIX):]:
        return tokenize
    return SPM_PREFIX + os.path.abspath(os.path.expanduser(tokenize[len(SPM_PREFIX):]))


def check_spm_of_run(tokenize: Any, signature: str) -> None:
    """A run's own `spm:PATH` read again (rescore, compare, checks): the file must still be the model
    the run's signature names (`spm-<12 hex>`), or one error line; a changed file is never used in silence."""
    if not is_spm(tokenize):
        return
    try:
        tag = spm_model(tokenize).tag
    except GlotbenchError as e:
        raise GlotbenchError(f"the run's SentencePiece model is not readable ({e}); put the file the run "
                             "used back at that path") from None
    if tag not in signature:
        raise GlotbenchError(f"the run's SentencePiece model {tokenize[len(SPM_PREFIX):]} has changed since the "
                             f"run: it is now {tag}, not the model its signature names")


def spm_model(tokenize: str) -> SpmModel:
    """The model of `spm:PATH`, loaded once per file version; a missing file or one that is not a
    SentencePiece model is a GlotbenchError (one `error:` line)."""
    return _spm_tokenizer(tokenize).model


def tokenize_tag(tokenize: str | None) -> str | None:
    """A BLEU tokenizer as signatures name it: `spm:PATH` by its model's SHA-256, any other as given."""
    return spm_model(tokenize).tag if tokenize is not None and is_spm(tokenize) else tokenize


def _spm_tokenizer(tokenize: str) -> Any:
    path = tokenize[len(SPM_PREFIX):]
    if not path:
        raise GlotbenchError("spm: needs the SentencePiece model file's path (bleu_tokenize=spm:PATH)")
    try:
        st = os.stat(path)
    except OSError as e:
        raise GlotbenchError(f"SentencePiece model {path}: {e.strerror or e}") from None
    from glotbench.data import MAX_FILE_BYTES

    if not stat.S_ISREG(st.st_mode):  # a device or a pipe (/dev/zero, <(...)) would be read without end
        raise GlotbenchError(f"SentencePiece model {path}: " + ("Is a directory" if stat.S_ISDIR(st.st_mode)
                                                                else "not a regular file (a device or a pipe)"))
    if st.st_size > MAX_FILE_BYTES:  # read whole to be hashed: the one size limit of every file read
        raise GlotbenchError(f"SentencePiece model {path}: {st.st_size} bytes, over the {MAX_FILE_BYTES}-byte limit")
    return _load_spm(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _load_spm(path: str, size: int, mtime_ns: int) -> Any:
    """sacrebleu's own `TokenizerSPM` (its `__call__`: the pieces joined by spaces), its processor
    loaded from the bytes that were hashed instead of the file sacrebleu would download."""
    import hashlib

    try:
        from sacrebleu.tokenizers.tokenizer_spm import TokenizerSPM
        import sentencepiece
    except ImportError as e:
        raise GlotbenchError(f"spBLEU needs sentencepiece: pip install \"glotbench[spbleu]\" ({e})") from None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise GlotbenchError(f"SentencePiece model {path}: {e.strerror or e}") from None
    model = SpmModel(path, hashlib.sha256(data).hexdigest())

    class LocalSPM(TokenizerSPM):
        def __init__(self) -> None:  # TokenizerSPM's own would download its model
            self.name = model.tag
            self.model = model
            self.sp = sentencepiece.SentencePieceProcessor()
            try:
                self.sp.LoadFromSerializedProto(data)
            except Exception as e:  # sentencepiece raises RuntimeError/OSError with its parser's text
                why = " ".join(str(e).split()) or type(e).__name__  # one line, whatever sentencepiece says
                raise GlotbenchError(f"{path}: not a SentencePiece model ({why})") from None

    return LocalSPM()


@dataclass(frozen=True)
class CorpusScore:
    metric: str
    estimate: Estimate
    signature: str

    def __str__(self) -> str:
        e = self.estimate
        return (f"{self.metric} = {e.value:.2f} (95% CI {e.ci_low:.2f}–{e.ci_high:.2f}, n={e.n})  "
                f"{self.signature}")


class SacreMetric:
    """BLEU / chrF / chrF++ with optional segmentation; `lang` is an ISO 639-1 code or None; `lao`
    replaces the installed LaoNLP as the Lao segmenter."""

    def __init__(self, name: str, lang: str | None = None, lao: LaoSegmenter | None = None, **sacrebleu_args: Any):
        from sacrebleu.metrics import BLEU, CHRF

        name = name.lower()
        if name not in METRICS:
            raise ValueError(f"unknown metric {name!r}; choose one of {', '.join(METRICS)}")
        self.name = name
        self.lang = lang
        self.lao = lao
        self._metric: BLEU | CHRF
        if name == "bleu" and is_spm(sacrebleu_args.get("tokenize")):
            spm = _spm_tokenizer(sacrebleu_args.pop("tokenize"))
            self._metric = BLEU(tokenize="none", **sacrebleu_args)
            self._metric.tokenizer, self._metric.tokenizer_signature = spm, spm.signature()
            words = False  # spBLEU: the model's pieces of the text as written, never the segmenter's words
        elif name == "bleu":
            if needs_segmentation(lang):
                sacrebleu_args.setdefault("tokenize", BLEU_TOKENIZE_SEGMENTED[0])
                if sacrebleu_args["tokenize"] not in BLEU_TOKENIZE_SEGMENTED:
                    raise ValueError(f"BLEU over {lang} segmentation tokenizes with one of "
                                     f"{', '.join(BLEU_TOKENIZE_SEGMENTED)}, not {sacrebleu_args['tokenize']!r}")
            elif sacrebleu_args.get("tokenize", "13a") not in BLEU.TOKENIZERS:
                raise ValueError(f"unknown BLEU tokenizer {sacrebleu_args['tokenize']!r}; sacrebleu has "
                                 f"{', '.join(BLEU.TOKENIZERS)}")
            elif segmenter_of(lang) == "char":  # zh, ja: sacrebleu's own; another such profile: characters
                sacrebleu_args.setdefault("tokenize", CHAR_SCRIPT_TOKENIZERS.get(lang or "", "char"))
            self._metric = BLEU(**sacrebleu_args)
            words = True
        else:
            sacrebleu_args.setdefault("word_order", 2 if name == "chrf++" else 0)
            chrf = self._metric = CHRF(**sacrebleu_args)
            words = name != "chrf" or chrf.word_order > 0
        self._segment = needs_segmentation(lang) and words

    def preprocess(self, text: str) -> str:
        return " ".join(segment(text, self.lang, self.lao)) if self._segment else text

    def stats(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> list[list[int]]:
        """Per-segment statistics. `references[i]` holds segment i's references (one or more)."""
        if len(hypotheses) != len(references):
            raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} reference lists")
        width = max((len(r) for r in references), default=1)
        streams = [[self.preprocess(refs[j]) if j < len(refs) else None for refs in references]
                   for j in range(width)]
        hyps = [self.preprocess(h) for h in hypotheses]
        # sacrebleu's hint says str, its docstring (`_cache_references`) takes None: no reference there
        return self._metric._extract_corpus_statistics(hyps, streams)  # type: ignore[arg-type]

    def score_from_stats(self, summed: Sequence[float] | np.ndarray) -> float:
        """The corpus score from summed statistics: sacrebleu's own formula."""
        # sacrebleu's hint says List[int]; its formulas take any numbers (summed rows arrive as floats)
        return float(self._metric._compute_score_from_stats(list(summed)).score)  # type: ignore[arg-type]

    def corpus_score(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]], *,
                     resamples: int = 1000, seed: int = 12345) -> CorpusScore:
        return self.score_stats(self.stats(hypotheses, references), resamples=resamples, seed=seed)

    def score_stats(self, stats: Sequence[Sequence[float]], *, resamples: int = 1000,
                    seed: int = 12345) -> CorpusScore:
        """Corpus score and bootstrap CI from stored per-segment statistics (no text needed)."""
        rows = [list(r) for r in stats]
        # as sacrebleu sums (its hint says int rows; stored statistics read back as floats)
        value = float(self._metric._aggregate_and_compute(rows).score) if rows else 0.0  # type: ignore[arg-type]
        import numpy as np

        arr = np.asarray(rows, dtype=np.float64).reshape(len(rows), -1)
        est = bootstrap_many(arr, {self.name: self.score_from_stats}, resamples=resamples, seed=seed,
                             values={self.name: value})[self.name]
        return CorpusScore(self.name, est, self.signature(resamples=resamples, seed=seed))

    def signature(self, *, resamples: int | None = None, seed: int | None = None) -> str:
        try:
            sb = self._metric.get_signature().format()
        except ValueError:  # sacrebleu knows the reference count only after scoring
            sb = "unscored"
        return Signature.build(("glotbench", self.name), *self._unsigned(),
                               Signature.parse(sb).under("sacrebleu"),
                               ("seg", segmenter_signature(self.lang, self.lao) if self._segment else "none"),
                               ("lang", self.lang) if self.lang else None,
                               ("boot", f"{resamples},seed:{seed}") if resamples else None).format()

    def _unsigned(self) -> list[tuple[str, object]]:
        """Settings that change the number but that sacrebleu's signature leaves out, when not its
        defaults: chrF's β (sacrebleu puts it in the score's name, chrF2), BLEU's maximum n-gram
        order, and a smoothing value more precise than the two decimals sacrebleu prints."""
        from sacrebleu.metrics import BLEU  # loaded already: self._metric is one

        m = self._metric
        out: list[tuple[str, object]] = []
        if isinstance(m, BLEU):
            if m.max_ngram_order != 4:
                out.append(("ngram", m.max_ngram_order))
            if m.smooth_value is not None and float(f"{m.smooth_value:.2f}") != m.smooth_value:
                out.append(("smooth_value", repr(m.smooth_value)))
        elif m.beta != 2:
            out.append(("beta", m.beta))
        return out


def sacrebleu_version() -> str:
    return metadata.version("sacrebleu")


@dataclass(frozen=True)
class CorpusMetric:
    """A sacrebleu corpus metric on the benchmark interface: per-item statistics stored under
    `keys` (name.0, name.1, ...), scored by sacrebleu's own formula on their sums (0-100 points).
    The statistics' layout is the same whatever the tokenizer or segmenter, so one CorpusMetric
    scores items that were segmented differently (per language); their signatures are recorded apart."""

    name: str
    kind: str  # "bleu", "chrf" or "chrf++"
    description: str = ""
    show_ci: bool = True
    label: str = ""
    scale: Scale = "points"
    lower_is_better: bool = False

    @property
    def width(self) -> int:
        return _width(self.kind)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(f"{self.name}.{i}" for i in range(self.width))

    def score(self, row: np.ndarray) -> float:
        return _formula(self.kind).score_from_stats([float(x) for x in row])

    def sentence_mean(self) -> Any:
        return sentence_mean(self, self.name)

    def credit(self, stats: Mapping[str, float]) -> tuple[str, ...]:
        """None of a corpus metric's statistics is a sample's credit alone (`zero_credit` scores its
        `sentence_mean` instead)."""
        return ()

    def item_stats(self, vector: Sequence[float]) -> dict[str, float]:
        return {k: float(v) for k, v in zip(self.keys, vector)}


def sentence_mean(metric: Any, prefix: str) -> Any:
    """`metric` (a corpus metric whose statistics are `prefix`.0, .1, ...) as the mean of its
    sentence scores: EuroEval's chrF (the mean over sentences of sacrebleu's `sentence_score`,
    each times 1 or 0 for the language: euroeval/metrics/sacrebleu.py). Items carry the sentence
    score as a fraction (`sentence_stats`) under `prefix`.sentence, and `prefix`.sentences = 1."""
    from glotbench.metrics.ratio import RatioMetric

    return RatioMetric(metric.name, f"{prefix}.sentence", f"{prefix}.sentences",
                       f"mean sentence {metric.name} (EuroEval's rule: 0 for a wrong-language reply)",
                       metric.show_ci, metric.label, "points")


def sentence_stats(metric: Any, prefix: str, stats: Any) -> dict[str, float]:
    """One item's sentence score of `metric` (its own statistics scored by sacrebleu's formula, which
    is what `sentence_score` computes), as the statistics `sentence_mean` reads."""
    import numpy as np

    row = np.asarray([float(stats[k]) for k in metric.keys])
    return {f"{prefix}.sentence": metric.score(row) / 100.0, f"{prefix}.sentences": 1.0}


_FORMULAS: dict[str, SacreMetric] = {}


def _formula(kind: str) -> SacreMetric:
    if kind not in _FORMULAS:
        _FORMULAS[kind] = SacreMetric(kind)
    return _FORMULAS[kind]


def _width(kind: str) -> int:
    return len(_formula(kind).stats(["a"], [["a"]])[0])

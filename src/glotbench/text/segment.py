"""Word segmentation for scripts written without spaces, applied before BLEU, chrF++ and token F1.

| language | segmenter | signature |
|---|---|---|
| lo (Lao) | LaoNLP `word_tokenize`, after repairing decomposed AM (U+0ECD [tone] U+0EB2 -> [tone] U+0EB3) | `laonlp-<version>` |
| th (Thai) | PyThaiNLP `word_tokenize`, engine newmm, whitespace dropped | `pythainlp-<version>-newmm` |
| km (Khmer), my (Burmese) | character clusters: a base character with its combining marks, and a consonant after a coeng/virama joined to it | `charcluster` |
| km, my (when asked: `rescore --variant segmenter=khmercut` / `pyidaungsu`, or a profile naming it) | words: khmercut's CRF `tokenize`; pyidaungsu's CRF `tokenize(form="word")` (the `words` extra) | `khmercut-<version>`, `pyidaungsu-<version>` |
| zh, ja | BLEU uses sacrebleu's own `zh` / `ja-mecab` tokenizers; token F1 uses single characters | `sacrebleu-zh`, `char` |
| anything else | none (whitespace) | `none` |

LaoNLP 1.3 splits ambiguous spans that 0.7 (used by LaoBench) kept whole. The Lao segmenter is a
`LaoSegmenter` (name, version, tokenize function): by default the installed LaoNLP, imported lazily,
its version read from the installed package's metadata; `pip install "glotbench[laonlp07]"` installs
0.7 instead. Callers may pass another `LaoSegmenter`; its name and version go into every signature.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from importlib import metadata
from typing import Callable

from glotbench.errors import GlotbenchError
from glotbench.languages import PROFILES, SEGMENTER_LANGUAGE, segmenter_of

_LAO_AM = re.compile("\u0ecd([\u0ec8-\u0ecb]?)\u0eb2([\u0ec8-\u0ecb]?)")
_KHMER_COENG = "\u17d2"
_MYANMAR_VIRAMA = "\u1039"

# The segmenter of each language is named in its profile (glotbench.languages), looked up at each
# call, so a profile registered at run time is honoured. These segmenters give the words that BLEU,
# chrF++ and token F1 count (zh and ja: BLEU uses sacrebleu's own tokenizers, see metrics/corpus.py).
WORD_SEGMENTERS = ("laonlp", "pythainlp-newmm", "khmercut", "pyidaungsu", "charcluster")
# The CRF word segmenters of the `words` extra: (import, the package whose version is signed).
_CRF_PACKAGES = {"khmercut": "khmercut", "pyidaungsu": "pyidaungsu"}


def repair_lao_am(text: str) -> str:
    """Compose Lao AM: NIGGAHITA (U+0ECD) + AA (U+0EB2) -> AM (U+0EB3), moving a tone mark found
    between or after them in front of AM. NFC does not do this (U+0EB3 has only a compatibility
    decomposition), and LaoNLP's dictionary only knows the composed form."""
    return _LAO_AM.sub(lambda m: m.group(1) + m.group(2) + "\u0eb3", text)


def char_clusters(text: str) -> list[str]:
    """Character-level fallback: each base character with its combining marks; a character after a
    Khmer coeng or a Myanmar virama stays in the same cluster (a subscript consonant). No spaces."""
    out: list[str] = []
    for ch in text:
        if ch.isspace():
            out.append("")
            continue
        if out and out[-1] and (unicodedata.category(ch).startswith("M") or out[-1][-1] in (_KHMER_COENG, _MYANMAR_VIRAMA)):
            out[-1] += ch
        else:
            out.append(ch)
    return [c for c in out if c]


@dataclass(frozen=True)
class LaoSegmenter:
    """A Lao word segmenter and what identifies it in a signature (`<name>-<version>`)."""

    name: str
    version: str
    tokenize: Callable[[str], list[str]]

    @property
    def signature(self) -> str:
        return f"{self.name}-{self.version}"


@functools.lru_cache(maxsize=1)
def installed_laonlp() -> LaoSegmenter:
    """The installed LaoNLP's `word_tokenize`, its version from the package metadata (what pip installed)."""
    try:
        from laonlp.tokenize import word_tokenize
    except ImportError as e:  # pragma: no cover - laonlp is a dependency
        raise RuntimeError("Lao segmentation needs laonlp: pip install laonlp") from e
    return LaoSegmenter("laonlp", metadata.version("laonlp"), word_tokenize)


@functools.lru_cache(maxsize=1)
def _thai_tokenize():
    from pythainlp.tokenize import word_tokenize

    return functools.partial(word_tokenize, engine="newmm", keep_whitespace=False)


@functools.lru_cache(maxsize=2)
def crf_words(name: str) -> Callable[[str], list[str]]:
    """The installed CRF word segmenter `name` (khmercut, pyidaungsu), imported on first use; a
    readable error when the `words` extra is not installed."""
    try:
        if name == "khmercut":
            from khmercut import tokenize as khmer

            return khmer
        import pyidaungsu  # its package imports fasttext for its language detector; only the CRF is used

        return functools.partial(pyidaungsu.tokenize, form="word")
    except ImportError as e:
        raise GlotbenchError(f"the {name} segmenter is not installed: pip install \"glotbench[words]\" ({e})") from e


def segment_with(text: str, kind: str, lao: LaoSegmenter | None = None) -> list[str]:
    """Words of `text` by the segmenter `kind` (languages.SEGMENTERS)."""
    if kind == "laonlp":
        tokenize = (lao or installed_laonlp()).tokenize
        words: list[str] = []
        for chunk in repair_lao_am(text).split():
            words.extend(w for w in tokenize(chunk) if w.strip())
        return words
    if kind == "pythainlp-newmm":
        return [w for w in _thai_tokenize()(text) if w.strip()]
    if kind in _CRF_PACKAGES:  # each space-separated chunk on its own (the models drop spaces)
        words = []
        for chunk in text.split():
            words.extend(w for w in crf_words(kind)(chunk) if w.strip())
        return words
    if kind == "charcluster":
        return char_clusters(text)
    if kind == "char":
        return [c for c in text if not c.isspace()]
    return text.split()


def segment(text: str, lang: str | None, lao: LaoSegmenter | None = None) -> list[str]:
    """Words of `text` for language `lang` (ISO 639-1); whitespace splitting where no segmenter applies.
    The segmenter is named in the language's profile; `lao` replaces the installed LaoNLP for Lao."""
    return segment_with(text, segmenter_of(lang), lao)


def segment_as(text: str, lang: str | None, segmenter: str) -> list[str]:
    """Words of `text` for `lang` by `segmenter` where that segmenter is for `lang` (khmercut for km,
    pyidaungsu for my, ...) or is language-free (charcluster, char, whitespace); the profile's own
    segmenter otherwise (a Khmer segmenter leaves Lao text to LaoNLP)."""
    own = SEGMENTER_LANGUAGE.get(segmenter)
    return segment_with(text, segmenter) if own is None or own == lang else segment(text, lang)


def signature_of(kind: str, lao: LaoSegmenter | None = None) -> str:
    """The segmenter `kind` as signatures name it, with its version where it has one."""
    if kind == "laonlp":
        return (lao or installed_laonlp()).signature
    if kind == "pythainlp-newmm":
        return f"pythainlp-{metadata.version('pythainlp')}-newmm"
    if kind in _CRF_PACKAGES:
        try:
            return f"{kind}-{metadata.version(_CRF_PACKAGES[kind])}"
        except metadata.PackageNotFoundError:
            return f"{kind}-not-installed"
    if kind in ("charcluster", "char"):
        return kind
    return "none"


def segmenter_signature(lang: str | None, lao: LaoSegmenter | None = None) -> str:
    return signature_of(segmenter_of(lang), lao)


def needs_segmentation(lang: str | None) -> bool:
    """Whether text in `lang` is segmented into words before BLEU and chrF++ (its profile's segmenter)."""
    return segmenter_of(lang) in WORD_SEGMENTERS


def segmented_languages() -> set[str]:
    """The languages whose profile (as registered now) names a word segmenter."""
    return {c for c in PROFILES if needs_segmentation(c)}

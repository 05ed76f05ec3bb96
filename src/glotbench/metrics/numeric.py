"""Numeric exact match: the last number after the answer marker, compared as a number.

Rules, in order:
1. Every Unicode decimal digit (category Nd: Thai ๐-๙, Lao ໐-໙, Khmer, Myanmar, Arabic-Indic,
   Devanagari, fullwidth...) is read as its ASCII digit (glotbench.languages.to_ascii_digits); the
   Arabic decimal separator (٫) becomes '.', the Arabic thousands separator (٬) a comma, and the
   minus sign U+2212 '-'.
2. If a marker is given (e.g. "####", "answer is") and occurs, only the text after its last
   occurrence is searched; otherwise the whole text.
3. The last number there is taken: an optional '-', digits with optional thousands commas
   (1,234,567), an optional decimal part. Thousands commas are removed.
4. Prediction and gold are compared as exact decimals: 1.50 == 1.5, -3 == -3.0, 1,000 == 1000.
No number found is an extraction failure, counted apart from a wrong number. The number is read
by glotbench.extract.last_number, the one number extractor (DeepSEA's MGSM uses it with its own
comma rule).
"""

from __future__ import annotations

from decimal import Decimal

from glotbench.extract import last_number, parse_number
from glotbench.languages import to_ascii_digits  # noqa: F401 - rule 1, where callers have read it


def extract_number(text: str, marker: str | None = None) -> Decimal | None:
    """Rules 1-3 above: glotbench.extract.last_number with grouped thousands commas."""
    return last_number(text, marker=marker, commas="grouped")


def parse_gold(value: str | int | float) -> Decimal:
    return parse_number(value)


def numeric_match(prediction: str, gold: str | int | float, marker: str | None = None) -> bool | None:
    """True/False for a right/wrong number; None when the prediction holds no number."""
    got = extract_number(prediction, marker)
    if got is None:
        return None
    return got == parse_gold(gold)

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
No number found is an extraction failure, counted apart from a wrong number.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from glotbench.languages import to_ascii_digits

_NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?")


def extract_number(text: str, marker: str | None = None) -> Decimal | None:
    text = to_ascii_digits(text)
    if marker:
        pos = text.rfind(marker)
        if pos != -1:
            text = text[pos + len(marker):]
    found = _NUMBER.findall(text)
    if not found:
        return None
    try:
        return Decimal(found[-1].replace(",", ""))
    except InvalidOperation:  # pragma: no cover - the regex only admits valid decimals
        return None


def parse_gold(value: str | int | float) -> Decimal:
    return Decimal(to_ascii_digits(str(value)).replace(",", "").strip())


def numeric_match(prediction: str, gold: str | int | float, marker: str | None = None) -> bool | None:
    """True/False for a right/wrong number; None when the prediction holds no number."""
    got = extract_number(prediction, marker)
    if got is None:
        return None
    return got == parse_gold(gold)

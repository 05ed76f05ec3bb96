"""Log-likelihood choice with a named normalisation (lm-eval #3278: which length a choice's
log-probability is divided by decides which choice wins once the choices differ in length).

The runner asks the model for the log-probability of each continuation (`delimiter + choice`) after
the prompt, and how many tokens each took; the reply holds them as JSON (`reply_text`), so every
normalisation is scored from one set of model calls, side by side. For choice i with summed
log-probability L_i, the score is L_i / d_i with d_i:

    sum       1 (lm-eval's `acc`)
    token     the continuation's tokens as the model tokenised them after the prompt
    char      Unicode code points of the choice text (lm-eval's `acc_norm` divides by the same length)
    byte      UTF-8 bytes of the choice text (lm-eval's `acc_bytes`)
    grapheme  extended grapheme clusters of the choice text (regex `\\X`)

The choice text is the continuation without its delimiter. A Lao, Thai or Khmer choice is about
three times as many UTF-8 bytes as code points (each character is 3 bytes), and its vowel and tone
marks are code points but not graphemes, so `char`, `byte` and `grapheme` rank choices differently
from a Latin-script language; the headline norm is named in the signature. The first maximum wins
(as numpy's argmax, lm-eval's rule).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

NORMS = ("sum", "token", "char", "byte", "grapheme")


def reply_text(continuations: Sequence[str], logprobs: Sequence[float], tokens: Sequence[int] | None) -> str:
    """The runner's reply for a log-likelihood request: everything a normalisation needs."""
    return json.dumps({"continuations": list(continuations), "logprob": [float(x) for x in logprobs],
                       "tokens": None if tokens is None else [int(t) for t in tokens]}, ensure_ascii=False)


def length(text: str, norm: str) -> int:
    if norm == "char":
        return len(text)
    if norm == "byte":
        return len(text.encode("utf-8"))
    if norm == "grapheme":
        import regex

        return len(regex.findall(r"\X", text))
    raise ValueError(f"unknown normalisation {norm!r}")


def choose(reply: str, texts: Sequence[str], norm: str) -> tuple[int | None, str | None]:
    """(index of the chosen choice, None) or (None, failure kind) for one normalisation."""
    try:
        data: Any = json.loads(reply)
        logprobs = [float(x) for x in data["logprob"]]
        tokens = data.get("tokens")
    except (ValueError, KeyError, TypeError):
        return None, "not_loglik"
    if len(logprobs) != len(texts) or not texts:
        return None, "not_loglik"
    if norm == "sum":
        scores = logprobs
    elif norm == "token":
        if not tokens or len(tokens) != len(texts):
            return None, "no_token_counts"
        scores = [lp / max(1, int(n)) for lp, n in zip(logprobs, tokens)]
    else:
        scores = [lp / max(1, length(t, norm)) for lp, t in zip(logprobs, texts)]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    return best, None

"""Entity-level precision, recall and F1 over tag sequences, as seqeval (1.2.2) computes them in its
default mode: chunks read by `seqeval.metrics.sequence_labeling.get_entities` (conlleval's rule: a
chunk starts at B or S, at an I/E after O, E or S, or where the type changes; an I- without a B-
starts a chunk), an entity is (type, first, last), and the corpus figures are micro: correct over
predicted, correct over true, F1 = 2·correct / (predicted + true). Summing the three counts per
sentence gives the corpus figures exactly, so each item keeps its counts and the metric is a ratio.
"""

from __future__ import annotations

from typing import Sequence

SEQEVAL_VERSION = "1.2.2"


def _end_of_chunk(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    if prev_tag in ("E", "S"):
        return True
    if prev_tag == "B" and tag in ("B", "S", "O"):
        return True
    if prev_tag == "I" and tag in ("B", "S", "O"):
        return True
    return prev_tag not in ("O", ".") and prev_type != type_


def _start_of_chunk(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    if tag in ("B", "S"):
        return True
    if prev_tag in ("E", "S", "O") and tag in ("E", "I"):
        return True
    return tag not in ("O", ".") and prev_type != type_


def entities(tags: Sequence[str]) -> set[tuple[str, int, int]]:
    """The chunks of one sentence's tags (IOB1/IOB2/IOBES prefixes), as seqeval's get_entities reads them."""
    chunks: set[tuple[str, int, int]] = set()
    prev_tag, prev_type, begin = "O", "", 0
    for i, chunk in enumerate([*tags, "O"]):
        tag = chunk[0] if chunk else "O"
        type_ = chunk[1:].split("-", maxsplit=1)[-1] or "_"
        if _end_of_chunk(prev_tag, tag, prev_type, type_):
            chunks.add((prev_type, begin, i - 1))
        if _start_of_chunk(prev_tag, tag, prev_type, type_):
            begin = i
        prev_tag, prev_type = tag, type_
    return chunks


def entity_counts(pred: Sequence[str] | None, gold: Sequence[str]) -> tuple[int, int, int]:
    """(correct, predicted, true) entities of one sentence; `pred` None (no reply, or one whose tags
    are not one per token) predicts nothing: its true entities still count against recall."""
    true = entities(gold)
    if pred is None:
        return 0, 0, len(true)
    found = entities(pred)
    return len(found & true), len(found), len(true)

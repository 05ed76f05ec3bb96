"""Which items a run scores, and whether two runs scored the same ones.

A run scores the whole dataset, a named subset of it (`--subset quick`), its first N items
(`--limit N`), or the first N of a subset. What it scored is recorded in results.json as
`selection`: the options, n, of how many, and a SHA-256 of the sorted item ids. Two numbers are
comparable only when their signatures AND their item sets match (`comparability`): `compare`
refuses runs on different item sets and `board` never puts them in one column.

The signature of a run on the whole dataset is what it always was; a run on fewer items gets a
`|subset:NAME,NofM,SHA12` part (NAME: `quick`, `limit5`, `quick+limit5`), so a smoke test never
looks like the benchmark's number.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from glotbench.core import Dataset
from glotbench.signature import SEP, Signature
from glotbench.errors import GlotbenchError
from glotbench.items import Item

if TYPE_CHECKING:
    from glotbench.rundir.schema import SelectionRecord

QUICK_SHARE = 0.2  # the quick subset: 20% of the items ...
QUICK_MAX = 30     # ... at most 30, and at least one item of every group


def _id_order(item: Item) -> str:
    """A fixed pseudo-random order within a group: the SHA-256 of the id (stable when the file is
    reordered; not the file's first rows, which are often the easiest or one source)."""
    return hashlib.sha256(item.id.encode("utf-8")).hexdigest()


def quick(full: Dataset, group_by: Sequence[str]) -> Dataset:
    """The `quick` subset: stratified over the benchmark's groups (every `group_by` value
    combination is a stratum), `ceil(20%)` of the items but at most 30, at least one per stratum;
    the rest allocated in proportion to the strata's sizes (largest remainder). Deterministic."""
    strata: dict[tuple[str, ...], list[Item]] = defaultdict(list)
    for it in full:
        strata[tuple(str(it.meta.get(k, "unknown")) for k in group_by)].append(it)
    n = len(full)
    target = min(n, max(min(math.ceil(n * QUICK_SHARE), QUICK_MAX), len(strata)))
    take = {key: 1 for key in strata}
    spare = target - len(strata)
    room = {key: len(v) - 1 for key, v in strata.items()}
    total_room = sum(room.values())
    if spare > 0 and total_room > 0:
        exact = {key: spare * r / total_room for key, r in room.items()}
        for key in strata:
            take[key] += int(exact[key])
        left = spare - sum(int(x) for x in exact.values())
        for key in sorted(strata, key=lambda k: (-(exact[k] - int(exact[k])), k))[:left]:
            take[key] += 1
    chosen = {it.id for key, its in strata.items() for it in sorted(its, key=_id_order)[:take[key]]}
    return dataclasses.replace(full, items=tuple(it for it in full if it.id in chosen))


SUBSETS: dict[str, tuple[Callable[[Dataset, Sequence[str]], Dataset], str]] = {
    "quick": (quick, "20% of the items (at most 30, at least one per group), stratified over the "
                     "benchmark's groups"),
}


def item_set_sha256(ids: Sequence[str]) -> str:
    """SHA-256 of the sorted item ids (as a JSON list): the identity of an item set."""
    return hashlib.sha256(json.dumps(sorted(ids), ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Selection:
    """The items a run scores and how they were chosen."""

    items: Dataset
    limit: int | None
    subset: str | None
    of: int
    repeats: int

    @property
    def full(self) -> bool:
        return len(self.items) == self.of

    @property
    def name(self) -> str:
        parts = ([self.subset] if self.subset else []) + ([f"limit{self.limit}"] if self.limit is not None else [])
        return "+".join(parts) or "all"

    @functools.cached_property
    def items_sha256(self) -> str:
        return item_set_sha256([it.id for it in self.items])

    def record(self) -> SelectionRecord:
        """results.json's `selection`; for data a filter cut (a task's `data.where`), the rows it left
        out and the rows read (`of` counts the items of the rows kept)."""
        rec: SelectionRecord = {"full": self.full, "subset": self.subset, "limit": self.limit, "n": len(self.items),
                                "of": self.of, "repeats": self.repeats, "items_sha256": self.items_sha256}
        if self.items.rows_left_out is not None:
            rec["where_left_out"] = self.items.rows_left_out
            rec["rows_read"] = self.of + self.items.rows_left_out
        return rec

    def signed(self, signature: str) -> str:
        """`signature` (the scorer's) with this item set's `subset:` part, for a run on fewer items
        than the dataset's; unchanged for a full run."""
        return signed(signature, self.record())

    def signature_part(self) -> str:
        """`|subset:...` for a run on fewer items than the dataset's; empty for a full run (`signed`
        adds it to a signature)."""
        return signature_part(self.record())


def first(ids: Sequence[str], of: int, limit: int | None) -> dict[str, Any]:
    """The selection record of a judged run's first `limit` items (`ids`, already cut) of `of`: the
    arena's prompts and AraGen's entries, which take `--limit` only."""
    return {"full": len(ids) == of, "subset": None, "limit": limit, "n": len(ids), "of": of, "repeats": 1,
            "items_sha256": item_set_sha256(ids)}


def signed(signature: str, record: Mapping[str, Any]) -> str:
    """`signature` with the part `subset:NAME,NofM,SHA12` of a selection record; unchanged for a
    run on every item."""
    return signature if record["full"] else Signature.parse(signature).plus(subset=_subset(record)).format()


def signature_part(record: Mapping[str, Any]) -> str:
    """`|subset:NAME,NofM,SHA12` of a selection record, empty for a run on every item: what `signed`
    adds (kept for callers that append it to a signature's text)."""
    return "" if record["full"] else SEP + Signature.build(subset=_subset(record)).format()


def _subset(record: Mapping[str, Any]) -> str:
    name = "+".join(([record["subset"]] if record.get("subset") else [])
                    + ([f"limit{record['limit']}"] if record.get("limit") is not None else [])) or "all"
    return f"{name},{record['n']}of{record['of']},{record['items_sha256'][:12]}"


def select(full: Dataset, group_by: Sequence[str], *, limit: int | None = None, subset: str | None = None,
           repeats: int = 1) -> Selection:
    """The items of a run: the named subset (if any), then its first `limit` items."""
    items = full
    if subset is not None:
        if subset not in SUBSETS:
            raise GlotbenchError(f"unknown subset {subset!r}; available: {', '.join(SUBSETS)}")
        items = SUBSETS[subset][0](full, group_by)
    if limit is not None:
        items = items[:limit]
    return Selection(items, limit, subset, len(full), repeats)


# -- what readers make of a results.json ----------------------------------------------------------

def selection_of(results: Mapping[str, Any]) -> dict[str, Any]:
    """A run's selection record; for a results.json written before selections were recorded, what
    its config says (`--limit N` with N items run: the first N, of an unknown total)."""
    sel = results.get("selection")
    if isinstance(sel, Mapping):
        return dict(sel)
    cfg = results.get("config") or {}
    n = (results.get("counts") or {}).get("items", cfg.get("items"))
    limit = cfg.get("limit")
    full = limit is None or n is None or n < limit
    return {"full": full, "subset": None, "limit": limit, "n": n, "of": n if full else None,
            "repeats": cfg.get("repeats", 1), "items_sha256": None}


def comparability(results: Mapping[str, Any]) -> tuple[str, str]:
    """What must match for two runs' numbers to share a column or be compared: the signature and
    the item set (`full`, the item set's SHA-256, or for an older `--limit` run `first N`)."""
    sel = selection_of(results)
    if sel["full"]:
        key = "full"
    elif sel.get("items_sha256"):
        key = sel["items_sha256"]
    else:
        key = f"first {sel.get('n')}"
    return str(results["signature"]), key


def selection_text(results: Mapping[str, Any]) -> str | None:
    """`subset: quick, 30 of 164 items` (None for a run on the whole dataset)."""
    sel = selection_of(results)
    if sel["full"]:
        return None
    how = []
    if sel.get("subset"):
        how.append(f"--subset {sel['subset']}")
    if sel.get("limit") is not None:
        how.append(f"--limit {sel['limit']}")
    of = f" of {sel['of']}" if sel.get("of") is not None else ""
    return f"subset: {sel.get('n')}{of} items ({' '.join(how)})"


def where_rows_text(results: Mapping[str, Any]) -> str | None:
    """`data.where left out 3 of 9 rows` for a run whose task's filter left rows out (None where it left
    none, or the task has none): what a view that states its own n (the card) says next to it."""
    sel = selection_of(results)
    left = sel.get("where_left_out")
    return f"data.where left out {left} of {sel.get('rows_read')} rows" if left else None


def where_text(results: Mapping[str, Any]) -> str | None:
    """`data.where left out 3 of 9 rows (n counts the 6 kept)` for a run whose task's filter left rows
    out (`n counts 2 of the 6 kept` for a subset of them, `--limit 2`); None where it left none, or the
    task has none."""
    rows = where_rows_text(results)
    if rows is None:
        return None
    sel = selection_of(results)
    n, of = sel.get("n"), sel.get("of")
    return f"{rows} (n counts {f'the {of} kept' if n == of else f'{n} of the {of} kept'})"


def describe_item_set(results: Mapping[str, Any]) -> str:
    """The item set in words, for an error that refuses to compare two runs."""
    return selection_text(results) or f"all {selection_of(results).get('n')} items"

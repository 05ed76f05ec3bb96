"""Near-copies across keys: a submission whose answers differ from another key's in at most two items
is flagged for the operator (`glotbench service flags`).

Probing the Ladder with many keys means submitting one base answer vector again and again with one
or two answers changed; honest teams do not submit the same answers under different keys. Each
submission keeps a fingerprint: per item (in the set's order) 16 bits of a hash of its normalised
answer (its `answer_key`, or the answer), so the Hamming distance between two submissions is the
number of items whose answers differ (two different answers collide with probability 1/65,536).
Finding the close ones does not read every earlier fingerprint: each is cut into three bands, whose
hashes are indexed; two vectors at most two items apart agree on at least one whole band (three
bands, two differences), so only the submissions sharing a band are compared in full. The flag
names the other submission, its key and organisation; nothing is refused for it.

Probing with fresh keys (issue 31) looks different: each key submits a base of its own, then the base
with a few answers changed. A submission whose answers differ from one of its own key's earlier
submissions to the set in at most `probe_distance(m)` items (a tenth of them, at least 2) is flagged
as a probe, and `probing()` counts, per set, the keys and organisations whose submissions were
flagged so in the window: many fresh keys, each of its own organisation, is the pattern.
"""

from __future__ import annotations

import hashlib
import zlib
from datetime import timedelta
from typing import Any, Mapping, Sequence

import numpy as np
from sqlalchemy import func, or_, select

from glotbench.service.db import ApiKey, Submission, TestSet, utcnow

DISTANCE = 2  # flagged at this many differing answers or fewer (three bands make it exact)
WINDOW_DAYS = 30
MAX_CANDIDATES = 500  # submissions sharing a band, compared in full (newest first)
PROBE = "probe: "  # the flag of a near-copy of the key's own earlier submission


def probe_distance(m: int) -> int:
    """At most this many answers changed from the key's own earlier submission: a probe."""
    return max(DISTANCE, m // 10)


def fingerprint(items: Sequence[Any], samples: Mapping[str, Any]) -> bytes:
    """16 bits per item of the set, in order: a hash of the item's normalised answer (0 for none)."""
    out = np.zeros(len(items), dtype="<u2")
    for n, it in enumerate(items):
        smp = samples.get(it.id)
        if smp is None or smp.answer is None:
            continue
        token = smp.answer_key if smp.answer_key is not None else smp.answer
        out[n] = (zlib.crc32(str(token).encode("utf-8", "surrogatepass")) & 0xFFFF) or 1
    return out.tobytes()


def set_bands(sub: Submission) -> None:
    """Store the hashes of the three thirds of `sub.fingerprint` (its band columns)."""
    if sub.fingerprint is None:
        return
    parts = np.array_split(np.frombuffer(sub.fingerprint, dtype="<u2"), DISTANCE + 1)
    sub.band0, sub.band1, sub.band2 = (hashlib.sha256(p.tobytes()).hexdigest()[:16] for p in parts)


def nearest_copy(s: Any, sub: Submission) -> str | None:
    """Set `sub`'s bands and return its flag: when another key's submission to the same set, in the
    last 30 days, has answers differing in at most two items (the closest is named); else when one
    of its own key's earlier submissions there differs in at most `probe_distance` items (a probe);
    else None."""
    if sub.fingerprint is None:
        return None
    set_bands(sub)
    window = Submission.created >= utcnow() - timedelta(days=WINDOW_DAYS)
    rows = s.execute(select(Submission.id, Submission.key_id, ApiKey.org_id, Submission.fingerprint)
                     .join(ApiKey, ApiKey.id == Submission.key_id)
                     .where(Submission.set_id == sub.set_id, Submission.key_id != sub.key_id, window,
                            or_(Submission.band0 == sub.band0, Submission.band1 == sub.band1,
                                Submission.band2 == sub.band2))
                     .order_by(Submission.id.desc()).limit(MAX_CANDIDATES)).all()
    hit = _closest(sub.fingerprint, rows)
    if hit is not None and hit[1] <= DISTANCE:
        r, d = hit
        return f"near-copy of submission {r.id} (key {r.key_id}, organisation {r.org_id}): {d} answer(s) differ"
    own = s.execute(select(Submission.id, Submission.fingerprint).where(
        Submission.set_id == sub.set_id, Submission.key_id == sub.key_id, Submission.id != sub.id, window)
        .order_by(Submission.id.desc()).limit(MAX_CANDIDATES)).all()
    hit = _closest(sub.fingerprint, own)
    m = len(sub.fingerprint) // 2
    if hit is not None and hit[1] <= probe_distance(m):
        return f"{PROBE}{hit[1]} of {m} answer(s) differ from this key's submission {hit[0].id}"
    return None


def _closest(fp: bytes, rows: Sequence[Any]) -> tuple[Any, int] | None:
    """The row whose fingerprint differs from `fp` in the fewest items, with that count."""
    rows = [r for r in rows if r.fingerprint is not None and len(r.fingerprint) == len(fp)]
    if not rows:
        return None
    mine = np.frombuffer(fp, dtype="<u2")
    other = np.frombuffer(b"".join(r.fingerprint for r in rows), dtype="<u2").reshape(len(rows), -1)
    d = (other != mine).sum(axis=1)
    best = int(np.argmin(d))
    return rows[best], int(d[best])


def probing(s: Any) -> list[dict[str, Any]]:
    """Per set, the keys and organisations with submissions flagged as probes in the window: the
    pattern of many fresh keys each probing its own base."""
    rows = s.execute(select(TestSet.name, func.count(func.distinct(Submission.key_id)),
                            func.count(func.distinct(ApiKey.org_id)), func.count(Submission.id))
                     .join(TestSet, TestSet.id == Submission.set_id).join(ApiKey, ApiKey.id == Submission.key_id)
                     .where(Submission.flag.like(PROBE + "%"),
                            Submission.created >= utcnow() - timedelta(days=WINDOW_DAYS))
                     .group_by(TestSet.name).order_by(TestSet.name)).all()
    return [{"set": r[0], "keys": r[1], "organisations": r[2], "submissions": r[3]} for r in rows]

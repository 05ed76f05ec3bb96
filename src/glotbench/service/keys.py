"""Organisations, API keys and the daily limits: who may submit, and how often.

Keys are issued to an organisation; each key has its own daily limit and the organisation's keys
share one more (`--org-daily-limit`, or the organisation's own), so a team that is handed many keys
still has one budget. An organisation may hold at most `max_keys` keys. Each key also carries a
secret (`grid_secret`) from which the Ladder's per-key rounding offsets are drawn (`grid_offset`):
two keys never round on the same grid, so a submission placed on one key's rounding boundary says
nothing about another's (docs/service.md, "Many keys").
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import statistics
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select

from glotbench.errors import GlotbenchError
from glotbench.service.db import ApiKey, Organisation, Submission, utcnow

REVOKED = "the API key was revoked"
_NORMAL = statistics.NormalDist()


class LimitReached(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Caller:
    """An authenticated key: its id, its organisation and its rounding secret."""

    key_id: int
    org_id: int | None
    secret: str


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def create_org(s: Any, name: str, *, daily_limit: int | None = None, max_keys: int = 5) -> Organisation:
    if s.scalar(select(Organisation).where(Organisation.name == name)) is not None:
        raise GlotbenchError(f"an organisation named {name!r} exists already")
    if (daily_limit is not None and daily_limit < 1) or max_keys < 1:
        raise GlotbenchError("an organisation's daily limit and key count must be positive")
    org = Organisation(name=name, daily_limit=daily_limit, max_keys=max_keys)
    s.add(org)
    s.flush()
    return org


def create_key(s: Any, name: str, org_name: str | None) -> tuple[int, str]:
    """A new key for `org_name` (which must exist and have room), or, without one, for a new
    organisation of its own named after the key. The key is returned once and stored as a hash."""
    if org_name is None:
        base, n = f"{name} (own organisation)"[:190], 1
        label = base
        while s.scalar(select(Organisation.id).where(Organisation.name == label)) is not None:
            n += 1
            label = f"{base} {n}"
        org = create_org(s, label, max_keys=1)
    else:
        org = s.scalar(select(Organisation).where(Organisation.name == org_name).with_for_update())
        if org is None:
            raise GlotbenchError(f"no organisation named {org_name!r} (create it: glotbench service create-org)")
        held = s.scalar(select(func.count()).select_from(ApiKey).where(ApiKey.org_id == org.id,
                                                                         ApiKey.revoked.is_(False)))
        if held >= org.max_keys:
            raise GlotbenchError(f"organisation {org_name!r} holds {held} key(s), its limit "
                                 f"(glotbench service create-org --max-keys)")
    key = "gb_" + secrets.token_urlsafe(32)
    k = ApiKey(name=name, key_hash=hash_key(key), org_id=org.id, grid_secret=secrets.token_hex(32))
    s.add(k)
    s.flush()
    return k.id, key


def revoke_key(s: Any, key_id: int) -> int:
    """Revoke a key and fail its queued endpoint runs (their prompts never leave); returns how many.
    Runs already in flight are stopped by the process running them within a heartbeat
    (service/jobs.py), and no run of a revoked key is claimed."""
    k = s.get(ApiKey, key_id)
    if k is None:
        raise GlotbenchError(f"no API key with id {key_id}")
    k.revoked = True
    n = 0
    for sub in s.scalars(select(Submission).where(Submission.key_id == key_id, Submission.status == "queued")):
        sub.status, sub.error, sub.finished = "failed", REVOKED, utcnow()
        sub.charged = sub.prompts_sent_at is not None
        sub.key_holder = sub.lease_owner = sub.lease_until = None
        n += 1
    return n


def authenticate(s: Any, key: str | None) -> Caller:
    from glotbench.service.core import ServiceError

    if not key:
        raise ServiceError(401, "missing API key (Authorization: Bearer KEY)")
    k = s.scalar(select(ApiKey).where(ApiKey.key_hash == hash_key(key)))
    if k is None or k.revoked:
        raise ServiceError(401, "invalid or revoked API key")
    return Caller(k.id, k.org_id, k.grid_secret or k.key_hash)


def key_secret(s: Any, key_id: int) -> str:
    k = s.get(ApiKey, key_id)
    return k.grid_secret or k.key_hash


def key_is_live(s: Any, key_id: int) -> bool:
    return s.scalar(select(ApiKey.revoked).where(ApiKey.id == key_id)) is False


def check_limits(s: Any, key_id: int, key_limit: int, org_limit: int) -> None:
    """Raise LimitReached when the key, or its organisation, has used its submissions of the last
    24 hours (charged ones: refunded submissions do not count)."""
    since = utcnow() - timedelta(days=1)
    recent = (Submission.created >= since, Submission.charged.is_(True))
    n = s.scalar(select(func.count()).select_from(Submission).where(Submission.key_id == key_id, *recent))
    if n >= key_limit:
        raise LimitReached(f"daily submission limit reached ({key_limit} per key per 24 h)")
    row = s.execute(select(ApiKey.org_id, Organisation.daily_limit).join(
        Organisation, Organisation.id == ApiKey.org_id).where(ApiKey.id == key_id)).first()
    if row is None:
        return
    limit = row.daily_limit or org_limit
    n = s.scalar(select(func.count()).select_from(Submission).join(ApiKey, ApiKey.id == Submission.key_id).where(
        ApiKey.org_id == row.org_id, *recent))
    if n >= limit:
        raise LimitReached(f"your organisation's daily submission limit is reached ({limit} per 24 h over all its keys)")


def grid_offset(secret: str, set_id: int, cell: str, what: str = "value") -> float:
    """The key's secret offset for one released number, uniform in [-0.5, 0.5) of a step."""
    return _draw(secret, set_id, cell, what) - 0.5


def _draw(secret: str, *parts: object) -> float:
    digest = hmac.new(secret.encode(), "\0".join(map(str, parts)).encode("utf-8", "surrogatepass"),
                      hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def release_noise(secret: str, set_id: int, cell: str, submission_id: int) -> float:
    """The key's secret standard normal draw for one submission's released value on one number: fresh
    for every submission, independent of `release_margin` (issue 31; service/scoring.py, `noised`)."""
    return _NORMAL.inv_cdf((_draw(secret, set_id, cell, "noise", submission_id) * 2**64 + 0.5) / (2**64 + 1))


def release_margin(secret: str, set_id: int, cell: str, submission_id: int) -> float:
    """The key's secret draw for one submission's release decision on one number, uniform in [0, 1):
    fresh for every submission (issue 31; service/scoring.py, `climb`)."""
    return _draw(secret, set_id, cell, "decide", submission_id)

"""The `glotbench serve` and `glotbench service` commands: the scoring service and its database."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Optional

import typer

from glotbench.cli.options import DEFAULT_DB, Db, ErrorHandlingGroup
from glotbench.errors import GlotbenchError


def _settings(db: str, **kw):
    from glotbench.service.core import Settings

    return Settings(db_url=db, **{k: v for k, v in kw.items() if v is not None})


def _svc(db: str):
    from glotbench.service.core import Service

    return Service(_settings(db))


def _date(s: Optional[str]) -> Optional[datetime]:
    """Aware UTC: an offset is converted; a date or time without one is UTC."""
    from glotbench.service.db import as_utc

    if s is None:
        return None
    try:
        return as_utc(datetime.fromisoformat(s))
    except ValueError:
        raise GlotbenchError(f"dates are ISO 8601 (2027-03-01, 2027-03-01T12:00 UTC or 2027-03-01T12:00+07:00), "
                             f"got {s!r}") from None


Date = Annotated[Optional[str], typer.Option(help="ISO 8601 date or date-time (UTC unless it has an offset).")]
SetName = Annotated[str, typer.Argument(help="The set's name.")]


def serve(
    db: Db = DEFAULT_DB,
    host: str = "127.0.0.1",
    port: int = 8000,
    daily_limit: Annotated[int, typer.Option(help="Submissions per key per 24 hours.")] = 3,
    rate_per_minute: Annotated[int, typer.Option(help="Requests per minute per key and per address.")] = 60,
    min_group: Annotated[int, typer.Option(help="Subdomains with fewer items are not reported.")] = 20,
    round_digits: Annotated[int, typer.Option(help="Decimals of reported scores.")] = 1,
    ladder_step: Annotated[float, typer.Option(help="The Ladder's step in score points; 0 = parameter-free (docs/service.md).")] = 0.0,
    rate_storage: Annotated[str, typer.Option(help="Rate-limit storage: memory:// (one process) or redis://HOST:PORT.")] = "memory://",
    endpoint_workers: Annotated[int, typer.Option(help="Endpoint runs in flight in this process.")] = 4,
    endpoint_per_key: Annotated[int, typer.Option(help="Endpoint runs in flight per key, over all processes.")] = 1,
    endpoint_timeout: Annotated[float, typer.Option(help="Time budget of one endpoint run, in seconds.")] = 900.0,
    lease_seconds: Annotated[float, typer.Option(help="A run whose process stops renewing its lease this long is taken back.")] = 30.0,
    allow_host: Annotated[list[str], typer.Option(help="Endpoint host allowed despite a private address (local testing).")] = [],
) -> None:
    """Run the black-box scoring service and leaderboard (FastAPI on uvicorn)."""
    try:
        import uvicorn

        from glotbench.service.app import create_app
    except ImportError:
        raise GlotbenchError('the service needs its extra: pip install -e ".[service]"') from None
    for name, v in (("--ladder-step", ladder_step), ("--endpoint-timeout", endpoint_timeout)):
        if not v >= 0:
            raise GlotbenchError(f"{name} must be a non-negative number, got {v}")
    if min(endpoint_workers, endpoint_per_key, daily_limit, rate_per_minute) < 1 or not lease_seconds > 0:
        raise GlotbenchError("--endpoint-workers, --endpoint-per-key, --daily-limit, --rate-per-minute and "
                             "--lease-seconds must be positive")
    try:
        app_ = create_app(_settings(db, daily_limit=daily_limit, rate_per_minute=rate_per_minute, min_group=min_group,
                                    round_digits=round_digits, ladder_step=ladder_step, rate_storage=rate_storage,
                                    endpoint_workers=endpoint_workers, endpoint_per_key=endpoint_per_key,
                                    endpoint_timeout_s=endpoint_timeout, lease_s=lease_seconds,
                                    allow_hosts=tuple(allow_host)))
    except Exception as e:  # noqa: BLE001 - limits' ConfigurationError: an unknown storage scheme
        if type(e).__name__ != "ConfigurationError":
            raise
        raise GlotbenchError(f"--rate-storage: {e}") from None
    uvicorn.run(app_, host=host, port=port, log_level="warning", access_log=False, timeout_graceful_shutdown=15)


service_app = typer.Typer(help="Administer the scoring service's database.", no_args_is_help=True, cls=ErrorHandlingGroup)


@service_app.command("load-set")
def service_load_set(
    name: Annotated[str, typer.Argument(help="A name for the set, e.g. laobench-hidden-2027q1.")],
    benchmark: Annotated[str, typer.Option(help="The benchmark whose format and scoring the set uses.")],
    data: Annotated[str, typer.Option(help="The set's data file (items and gold stay in the database).")],
    db: Db = DEFAULT_DB,
    blind_until: Date = None,
    release_date: Date = None,
    current: Annotated[bool, typer.Option(help="Make it the benchmark's current set now (rotating the old one out).")] = False,
    endpoint: Annotated[bool, typer.Option(help="Accept endpoint submissions (they show the questions to the endpoint).")] = True,
) -> None:
    """Load a private test set."""
    svc = _svc(db)
    sid = svc.load_set(name, benchmark, data, blind_until=_date(blind_until), release_date=_date(release_date),
                       endpoint_mode=endpoint)
    typer.echo(f"loaded set {name} (id {sid})")
    if current:
        old = svc.rotate(name)
        typer.echo(f"{name} is now current" + (f"; {old} released" if old else ""))


@service_app.command("create-key")
def service_create_key(name: Annotated[str, typer.Argument(help="Who the key is for.")], db: Db = DEFAULT_DB) -> None:
    """Create an API key; it is printed once and stored only as a hash."""
    kid, key = _svc(db).create_key(name)
    typer.echo(f"key id {kid}: {key}")


@service_app.command("revoke-key")
def service_revoke_key(key_id: Annotated[int, typer.Argument(help="The key's id.")], db: Db = DEFAULT_DB) -> None:
    """Revoke an API key."""
    _svc(db).revoke_key(key_id)
    typer.echo(f"revoked key {key_id}")


@service_app.command("set-window")
def service_set_window(
    name: SetName,
    blind_until: Annotated[Optional[str], typer.Option(help="The leaderboard hides the set's scores until then; 'none' clears.")] = None,
    release_date: Annotated[Optional[str], typer.Option(help="The set is released then; 'none' clears.")] = None,
    endpoint: Annotated[Optional[bool], typer.Option("--endpoint/--no-endpoint", help="Accept endpoint submissions for this set.")] = None,
    db: Db = DEFAULT_DB,
) -> None:
    """Change a set's blind window, release date or endpoint mode; only what is given changes."""
    from glotbench.service.core import UNSET

    def opt(v: Optional[str]):
        return UNSET if v is None else None if v.lower() == "none" else _date(v)

    if blind_until is None and release_date is None and endpoint is None:
        raise GlotbenchError("give --blind-until, --release-date or --endpoint/--no-endpoint")
    _svc(db).set_window(name, opt(blind_until), opt(release_date), UNSET if endpoint is None else endpoint)
    typer.echo(f"{name}: updated")


@service_app.command("rotate")
def service_rotate(new: Annotated[str, typer.Argument(help="The set that takes over.")], db: Db = DEFAULT_DB) -> None:
    """Make NEW its benchmark's current set; the previous one is released (downloadable, scores kept)."""
    old = _svc(db).rotate(new)
    typer.echo(f"{new} is now current" + (f"; {old} released" if old else ""))


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.add_typer(service_app, name="service")

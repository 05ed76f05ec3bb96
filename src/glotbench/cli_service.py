"""The `glotbench serve and service` commands (registered by glotbench.cli)."""

from __future__ import annotations

from typing import Optional

import typer

from glotbench.cli_common import die as _die

DEFAULT_DB = "sqlite:///glotbench-service.sqlite"


def _settings(db: str, **kw):
    from glotbench.service.core import Settings

    return Settings(db_url=db, **{k: v for k, v in kw.items() if v is not None})


def _date(s: Optional[str]):
    from datetime import datetime

    if s is None:
        return None
    from glotbench.service.db import as_utc

    try:
        return as_utc(datetime.fromisoformat(s))  # an offset is converted; no offset means UTC
    except ValueError:
        _die(f"dates are ISO 8601 (2027-03-01, 2027-03-01T12:00 UTC or 2027-03-01T12:00+07:00), got {s!r}")


def serve(
    db: str = typer.Option(DEFAULT_DB, help="SQLAlchemy URL: SQLite file (default) or postgresql+psycopg://..."),
    host: str = typer.Option("127.0.0.1"),
    port: int = typer.Option(8000),
    daily_limit: int = typer.Option(3, help="Submissions per key per 24 hours."),
    rate_per_minute: int = typer.Option(60, help="Requests per minute per key and per address."),
    min_group: int = typer.Option(20, help="Subdomains with fewer items are not reported."),
    round_digits: int = typer.Option(1, help="Decimals of reported scores."),
    ladder_step: float = typer.Option(0.0, help="The Ladder's step in score points; 0 = parameter-free (docs/service.md)."),
    rate_storage: str = typer.Option("memory://", help="Rate-limit storage: memory:// (one process) or redis://HOST:PORT."),
    endpoint_workers: int = typer.Option(4, help="Endpoint runs in flight in this process."),
    endpoint_per_key: int = typer.Option(1, help="Endpoint runs in flight per key, over all processes."),
    endpoint_timeout: float = typer.Option(900.0, help="Time budget of one endpoint run, in seconds."),
    lease_seconds: float = typer.Option(30.0, help="A run whose process stops renewing its lease this long is taken back."),
    allow_host: list[str] = typer.Option([], help="Endpoint host allowed despite a private address (local testing)."),
) -> None:
    """Run the black-box scoring service and leaderboard (FastAPI on uvicorn)."""
    try:
        import uvicorn

        from glotbench.service.app import create_app
    except ImportError:
        _die('the service needs its extra: pip install -e ".[service]"')
    for name, v in (("--ladder-step", ladder_step), ("--endpoint-timeout", endpoint_timeout)):
        if v < 0 or v != v:
            _die(f"{name} must be a non-negative number, got {v}")
    if min(endpoint_workers, endpoint_per_key, daily_limit, rate_per_minute) < 1 or lease_seconds <= 0:
        _die("--endpoint-workers, --endpoint-per-key, --daily-limit, --rate-per-minute and --lease-seconds must be positive")
    try:
        app_ = create_app(_settings(db, daily_limit=daily_limit, rate_per_minute=rate_per_minute, min_group=min_group,
                                    round_digits=round_digits, ladder_step=ladder_step, rate_storage=rate_storage,
                                    endpoint_workers=endpoint_workers, endpoint_per_key=endpoint_per_key,
                                    endpoint_timeout_s=endpoint_timeout, lease_s=lease_seconds,
                                    allow_hosts=tuple(allow_host)))
    except ValueError as e:  # e.g. an unknown rate-limit storage scheme
        _die(str(e))
    uvicorn.run(app_, host=host, port=port, log_level="warning", access_log=False, timeout_graceful_shutdown=15)


service_app = typer.Typer(help="Administer the scoring service's database.", no_args_is_help=True)


def _svc(db: str):
    from glotbench.service.core import Service

    return Service(_settings(db))


@service_app.command("load-set")
def service_load_set(
    name: str = typer.Argument(..., help="A name for the set, e.g. laobench-hidden-2027q1."),
    benchmark: str = typer.Option(..., help="The benchmark whose format and scoring the set uses."),
    data: str = typer.Option(..., help="The set's data file (items and gold stay in the database)."),
    db: str = typer.Option(DEFAULT_DB),
    blind_until: Optional[str] = typer.Option(None), release_date: Optional[str] = typer.Option(None),
    current: bool = typer.Option(False, help="Make it the benchmark's current set now (rotating the old one out)."),
    endpoint: bool = typer.Option(True, help="Accept endpoint submissions (they show the questions to the endpoint)."),
) -> None:
    """Load a private test set."""
    from glotbench.errors import GlotbenchError

    try:
        svc = _svc(db)
        sid = svc.load_set(name, benchmark, data, blind_until=_date(blind_until), release_date=_date(release_date),
                           endpoint_mode=endpoint)
        typer.echo(f"loaded set {name} (id {sid})")
        if current:
            old = svc.rotate(name)
            typer.echo(f"{name} is now current" + (f"; {old} released" if old else ""))
    except GlotbenchError as e:
        _die(str(e))


@service_app.command("create-key")
def service_create_key(name: str = typer.Argument(...), db: str = typer.Option(DEFAULT_DB)) -> None:
    """Create an API key; it is printed once and stored only as a hash."""
    kid, key = _svc(db).create_key(name)
    typer.echo(f"key id {kid}: {key}")


@service_app.command("revoke-key")
def service_revoke_key(key_id: int = typer.Argument(...), db: str = typer.Option(DEFAULT_DB)) -> None:
    """Revoke an API key."""
    from glotbench.errors import GlotbenchError

    try:
        _svc(db).revoke_key(key_id)
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(f"revoked key {key_id}")


@service_app.command("set-window")
def service_set_window(name: str = typer.Argument(...),
                       blind_until: Optional[str] = typer.Option(None, help="Leaderboard hides the set's scores until then; 'none' clears."),
                       release_date: Optional[str] = typer.Option(None, help="The set is released then; 'none' clears."),
                       endpoint: Optional[bool] = typer.Option(None, "--endpoint/--no-endpoint",
                                                               help="Accept endpoint submissions for this set or not."),
                       db: str = typer.Option(DEFAULT_DB)) -> None:
    """Change a set's blind window, release date or endpoint mode; only what is given changes."""
    from glotbench.errors import GlotbenchError
    from glotbench.service.core import UNSET

    def opt(v: Optional[str]):
        return UNSET if v is None else None if v.lower() == "none" else _date(v)

    if blind_until is None and release_date is None and endpoint is None:
        _die("give --blind-until, --release-date or --endpoint/--no-endpoint")
    try:
        _svc(db).set_window(name, opt(blind_until), opt(release_date), UNSET if endpoint is None else endpoint)
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(f"{name}: updated")


@service_app.command("rotate")
def service_rotate(new: str = typer.Argument(..., help="The set that takes over."), db: str = typer.Option(DEFAULT_DB)) -> None:
    """Make NEW its benchmark's current set; the previous one is released (downloadable, scores kept)."""
    from glotbench.errors import GlotbenchError

    try:
        old = _svc(db).rotate(new)
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(f"{new} is now current" + (f"; {old} released" if old else ""))



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
    try:
        return datetime.fromisoformat(s)
    except ValueError:
        _die(f"dates are ISO 8601 (2027-03-01 or 2027-03-01T12:00), got {s!r}")


def serve(
    db: str = typer.Option(DEFAULT_DB, help="SQLAlchemy URL: SQLite file (default) or postgresql+psycopg://..."),
    host: str = typer.Option("127.0.0.1"),
    port: int = typer.Option(8000),
    daily_limit: int = typer.Option(3, help="Submissions per key per 24 hours."),
    rate_per_minute: int = typer.Option(60, help="Requests per minute per key and per address."),
    min_group: int = typer.Option(20, help="Subdomains with fewer items are not reported."),
    round_digits: int = typer.Option(1, help="Decimals of reported scores."),
    allow_host: list[str] = typer.Option([], help="Endpoint host allowed despite a private address (local testing)."),
) -> None:
    """Run the black-box scoring service and leaderboard (FastAPI on uvicorn)."""
    try:
        import uvicorn

        from glotbench.service.app import create_app
    except ImportError:
        _die('the service needs its extra: pip install -e ".[service]"')
    app_ = create_app(_settings(db, daily_limit=daily_limit, rate_per_minute=rate_per_minute, min_group=min_group,
                                round_digits=round_digits, allow_hosts=tuple(allow_host)))
    uvicorn.run(app_, host=host, port=port, log_level="warning")


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
) -> None:
    """Load a private test set."""
    from glotbench.errors import GlotbenchError

    try:
        svc = _svc(db)
        sid = svc.load_set(name, benchmark, data, blind_until=_date(blind_until), release_date=_date(release_date))
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
def service_set_window(name: str = typer.Argument(...), blind_until: Optional[str] = typer.Option(None),
                       release_date: Optional[str] = typer.Option(None), db: str = typer.Option(DEFAULT_DB)) -> None:
    """Set a set's blind window and release date (a set is released once its release date passes)."""
    from glotbench.errors import GlotbenchError

    try:
        _svc(db).set_window(name, _date(blind_until), _date(release_date))
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(f"{name}: blind until {blind_until}, release {release_date}")


@service_app.command("rotate")
def service_rotate(new: str = typer.Argument(..., help="The set that takes over."), db: str = typer.Option(DEFAULT_DB)) -> None:
    """Make NEW its benchmark's current set; the previous one is released (downloadable, scores kept)."""
    from glotbench.errors import GlotbenchError

    try:
        old = _svc(db).rotate(new)
    except GlotbenchError as e:
        _die(str(e))
    typer.echo(f"{new} is now current" + (f"; {old} released" if old else ""))



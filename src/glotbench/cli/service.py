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
    if s is None:
        return None
    try:
        return datetime.fromisoformat(s)
    except ValueError:
        raise GlotbenchError(f"dates are ISO 8601 (2027-03-01 or 2027-03-01T12:00), got {s!r}") from None


Date = Annotated[Optional[str], typer.Option(help="ISO 8601 date or date-time.")]
SetName = Annotated[str, typer.Argument(help="The set's name.")]


def serve(
    db: Db = DEFAULT_DB,
    host: str = "127.0.0.1",
    port: int = 8000,
    daily_limit: Annotated[int, typer.Option(help="Submissions per key per 24 hours.")] = 3,
    rate_per_minute: Annotated[int, typer.Option(help="Requests per minute per key and per address.")] = 60,
    min_group: Annotated[int, typer.Option(help="Subdomains with fewer items are not reported.")] = 20,
    round_digits: Annotated[int, typer.Option(help="Decimals of reported scores.")] = 1,
    allow_host: Annotated[list[str], typer.Option(help="Endpoint host allowed despite a private address (local testing).")] = [],
) -> None:
    """Run the black-box scoring service and leaderboard (FastAPI on uvicorn)."""
    try:
        import uvicorn

        from glotbench.service.app import create_app
    except ImportError:
        raise GlotbenchError('the service needs its extra: pip install -e ".[service]"') from None
    app_ = create_app(_settings(db, daily_limit=daily_limit, rate_per_minute=rate_per_minute, min_group=min_group,
                                round_digits=round_digits, allow_hosts=tuple(allow_host)))
    uvicorn.run(app_, host=host, port=port, log_level="warning")


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
) -> None:
    """Load a private test set."""
    svc = _svc(db)
    sid = svc.load_set(name, benchmark, data, blind_until=_date(blind_until), release_date=_date(release_date))
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
def service_set_window(name: SetName, blind_until: Date = None, release_date: Date = None, db: Db = DEFAULT_DB) -> None:
    """Set a set's blind window and release date (a set is released once its release date passes)."""
    _svc(db).set_window(name, _date(blind_until), _date(release_date))
    typer.echo(f"{name}: blind until {blind_until}, release {release_date}")


@service_app.command("rotate")
def service_rotate(new: Annotated[str, typer.Argument(help="The set that takes over.")], db: Db = DEFAULT_DB) -> None:
    """Make NEW its benchmark's current set; the previous one is released (downloadable, scores kept)."""
    old = _svc(db).rotate(new)
    typer.echo(f"{new} is now current" + (f"; {old} released" if old else ""))


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.add_typer(service_app, name="service")

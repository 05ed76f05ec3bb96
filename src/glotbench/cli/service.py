"""The `glotbench serve` and `glotbench service` commands: the scoring service and its database."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Optional

import typer

from glotbench.cli.options import DEFAULT_DB, BenchOpt, Db, ErrorHandlingGroup
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
    org_daily_limit: Annotated[Optional[int], typer.Option(help="Submissions per organisation (all its keys) per 24 "
                                                                "hours, unless the organisation has its own "
                                                                "[default: twice --daily-limit].")] = None,
    rate_per_minute: Annotated[int, typer.Option(help="Requests per minute per key and per address.")] = 60,
    min_group: Annotated[int, typer.Option(help="Subdomains with fewer items are not reported.")] = 20,
    round_digits: Annotated[int, typer.Option(help="Decimals of reported scores.")] = 1,
    ladder_step: Annotated[float, typer.Option(help="The Ladder's step in score points; 0 = parameter-free (docs/service.md).")] = 0.0,
    release_noise: Annotated[float, typer.Option(help="Released scores carry secret noise of this / sqrt(items) points; "
                                                      "0 = none, only where every key is trusted (docs/service.md).")] = 210.0,
    rate_storage: Annotated[str, typer.Option(help="Rate-limit storage: memory:// (one process) or redis://HOST:PORT.")] = "memory://",
    endpoint_workers: Annotated[int, typer.Option(help="Endpoint runs in flight in this process.")] = 4,
    endpoint_per_key: Annotated[int, typer.Option(help="Endpoint runs in flight per key, over all processes.")] = 1,
    endpoint_per_org: Annotated[int, typer.Option(help="Endpoint runs in flight per organisation, over all processes.")] = 2,
    endpoint_timeout: Annotated[float, typer.Option(help="Time budget of one endpoint run, in seconds.")] = 300.0,
    endpoint_stall: Annotated[float, typer.Option(help="An endpoint run with no reply for this many seconds is stopped.")] = 60.0,
    lease_seconds: Annotated[float, typer.Option(help="A run whose process stops renewing its lease this long is taken back.")] = 30.0,
    scoring_workers: Annotated[int, typer.Option(help="Answers submissions scored at once in this process.")] = 2,
    max_pending: Annotated[int, typer.Option(help="Submissions in progress in this process (body, parsing, scoring); "
                                                  "503 beyond, before the body is read.")] = 8,
    allow_host: Annotated[list[str], typer.Option(help="Endpoint host allowed despite a private address (local testing).")] = [],
    header_timeout: Annotated[float, typer.Option(help="Seconds a request's headers may take to arrive.")] = 10.0,
    body_timeout: Annotated[float, typer.Option(help="Seconds a request's body may take to arrive.")] = 30.0,
    send_timeout: Annotated[float, typer.Option(help="Seconds a reply may wait for a client that makes no progress reading it.")] = 30.0,
    max_connections_per_ip: Annotated[int, typer.Option(help="Connections one address may hold open at once.")] = 32,
    trusted_proxy: Annotated[list[str], typer.Option(help="Address of a reverse proxy whose X-Forwarded-For is "
                                                          "believed (none by default).")] = [],
) -> None:
    """Run the black-box scoring service and leaderboard (FastAPI on uvicorn); prints the URL it listens on."""
    try:
        import uvicorn  # noqa: F401

        from glotbench.service.app import create_app
        from glotbench.service.server import ServerLimits, serve as run_server
    except ImportError:
        raise GlotbenchError('the service needs its extra: pip install -e ".[service]"') from None
    for name, v in (("--ladder-step", ladder_step), ("--endpoint-timeout", endpoint_timeout),
                    ("--release-noise", release_noise)):
        if not v >= 0:
            raise GlotbenchError(f"{name} must be a non-negative number, got {v}")
    if (min(endpoint_workers, endpoint_per_key, endpoint_per_org, daily_limit, 1 if org_daily_limit is None else org_daily_limit,
            rate_per_minute, scoring_workers, max_pending,
            max_connections_per_ip) < 1
            or not min(lease_seconds, endpoint_stall, header_timeout, body_timeout, send_timeout) > 0):
        raise GlotbenchError("--endpoint-workers, --endpoint-per-key, --endpoint-per-org, --daily-limit, "
                             "--org-daily-limit, --rate-per-minute, --scoring-workers, --max-pending, --max-connections-per-ip, --lease-seconds, "
                             "--endpoint-stall, --header-timeout, --body-timeout and --send-timeout must be positive")
    try:
        app_ = create_app(_settings(db, daily_limit=daily_limit, org_daily_limit=org_daily_limit,
                                    rate_per_minute=rate_per_minute, min_group=min_group,
                                    round_digits=round_digits, ladder_step=ladder_step, release_noise=release_noise,
                                    rate_storage=rate_storage,
                                    endpoint_workers=endpoint_workers, endpoint_per_key=endpoint_per_key,
                                    endpoint_per_org=endpoint_per_org, endpoint_timeout_s=endpoint_timeout,
                                    endpoint_stall_s=endpoint_stall, lease_s=lease_seconds,
                                    body_timeout_s=body_timeout, allow_hosts=tuple(allow_host),
                                    scoring_workers=scoring_workers, max_pending=max_pending))
    except Exception as e:  # noqa: BLE001 - limits' ConfigurationError: an unknown storage scheme
        if type(e).__name__ != "ConfigurationError":
            raise
        raise GlotbenchError(f"--rate-storage: {e}") from None
    run_server(app_, host, port, ServerLimits(header_timeout_s=header_timeout, send_timeout_s=send_timeout,
                                              max_connections_per_ip=max_connections_per_ip,
                                              trusted_proxies=tuple(trusted_proxy)))


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
    allow_unused_rows: Annotated[bool, typer.Option(help="Load the set even when rows of the file are not items of "
                                                         "this benchmark (e.g. a LaoBench file's translation rows "
                                                         "in an MCQ set).")] = False,
    bench_opt: BenchOpt = [],
    judge: Annotated[list[str], typer.Option("--judge", help="A judged benchmark's judge (repeatable; default: a task's "
                                                              "scorer.judges): every endpoint run of the set is judged by all of them.")] = [],
) -> None:
    """Load a private test set; says how many items it holds, and refuses a file with rows it cannot use.
    A judged benchmark's set (laobench-arena, aragen, a task scored by a rubric) keeps its judges and
    its options (--bench-opt baseline=SPEC): they are the set's, never a submitter's."""
    from glotbench.cli.options import split_pairs

    svc = _svc(db)
    sid = svc.load_set(name, benchmark, data, blind_until=_date(blind_until), release_date=_date(release_date),
                       endpoint_mode=endpoint, allow_unused_rows=allow_unused_rows,
                       options=dict(split_pairs(list(bench_opt))), judges=tuple(judge))
    n, rows = svc.loaded_last["items"], svc.loaded_last["rows"]
    unused = 0 if rows is None else rows - n
    typer.echo(f"loaded set {name} (id {sid}): {n} {benchmark} items from {data}"
               + (f"; {unused} of the file's {rows} rows were not loaded (not {benchmark} items)" if unused > 0 else ""))
    if unused > 0:
        typer.echo(f"warning: {unused} rows of {data} are not in set {name}", err=True)
    judges = svc.loaded_last["judges"]
    if judges:
        typer.echo(f"judged by {len(judges)} judge(s): {', '.join(judges)}")
    if current:
        old = svc.rotate(name)
        typer.echo(f"{name} is now current" + (f"; {old} released" if old else ""))


@service_app.command("create-org")
def service_create_org(
    name: Annotated[str, typer.Argument(help="The organisation (team, lab) keys are issued to.")],
    daily_limit: Annotated[Optional[int], typer.Option(help="Submissions per 24 hours over all its keys "
                                                            "(default: the server's --org-daily-limit).")] = None,
    max_keys: Annotated[int, typer.Option(help="Keys it may hold.")] = 5,
    db: Db = DEFAULT_DB,
) -> None:
    """Create an organisation: its keys share one daily limit."""
    oid = _svc(db).create_org(name, daily_limit=daily_limit, max_keys=max_keys)
    typer.echo(f"organisation {name} (id {oid})")


@service_app.command("create-key")
def service_create_key(name: Annotated[str, typer.Argument(help="Who the key is for.")],
                       org: Annotated[Optional[str], typer.Option(help="The organisation it belongs to (default: "
                                                                       "a new one of its own).")] = None,
                       db: Db = DEFAULT_DB) -> None:
    """Create an API key; it is printed once and stored only as a hash."""
    kid, key = _svc(db).create_key(name, org)
    typer.echo(f"key id {kid}: {key}")


@service_app.command("revoke-key")
def service_revoke_key(key_id: Annotated[int, typer.Argument(help="The key's id.")], db: Db = DEFAULT_DB) -> None:
    """Revoke an API key; its queued endpoint runs are failed and its running ones stopped."""
    n = _svc(db).revoke_key(key_id)
    typer.echo(f"revoked key {key_id}" + (f"; {n} queued endpoint run(s) failed" if n else ""))


@service_app.command("flags")
def service_flags(db: Db = DEFAULT_DB) -> None:
    """List flagged submissions (near-copies of another key's answers, or probes of the key's own: many
    keys probing one set), then, per set, how many keys and organisations probed in the last 30 days."""
    svc = _svc(db)
    rows = svc.flagged()
    for r in rows:
        typer.echo(f"submission {r['id']} (key {r['key_id']}, set {r['set']}, {r['created']}): {r['flag']}")
    typer.echo(f"{len(rows)} flagged submission(s)")
    for p in svc.probing():
        typer.echo(f"set {p['set']}: {p['keys']} key(s) of {p['organisations']} organisation(s) probed their own "
                   f"submissions ({p['submissions']} probe(s), last 30 days)")


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

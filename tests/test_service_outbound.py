"""The service's outbound requests against hostile endpoints, over real HTTP: the operator's key never
leaves, the submitter's key is used for its run only, every hop (pre-flight, chat, redirects) is
guarded, replies are read whole up to the limit, and no endpoint URL is published."""

from __future__ import annotations

import pytest

from glotbench.benchmarks.laobench import LaoBenchMCQ
from service_helpers import prepare, start, start_hostile

LAO = LaoBenchMCQ().load()
OPERATOR_KEY = "sk-operator-secret-0123456789"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('out')}/db.sqlite"
    keys = prepare(db)
    hostile = start_hostile("127.0.0.1")
    internal = start_hostile("127.0.0.2")  # stands for an internal service: it must never be reached
    s = start(db, "--daily-limit", "1000", "--min-group", "3", "--rate-per-minute", "10000",
              "--allow-host", "127.0.0.1", "--release-noise", "0",  # exact scores; the noise: test_service_collusion.py
              env={"OPENAI_API_KEY": OPERATOR_KEY})
    s.keys.update(keys)
    yield s, hostile, internal
    for x in (s, hostile, internal):
        x.stop()


def submit(s, url, key="alice", **extra):
    r = s.call("POST", "/api/submissions", key, json={"set": "lao-1", "model": "hostile-model", "endpoint": url, **extra})
    assert r.status_code == 202, r.text
    return s.wait(r.json()["id"], key)


def test_operator_key_never_sent_and_submitter_key_used_once(env):
    s, hostile, _ = env
    hostile.control()
    st = submit(s, hostile.url)
    assert st["status"] == "done", st
    auth = {x["authorization"] for x in hostile.seen()}
    assert auth == {None}  # no key given: no Authorization header at all, never the operator's
    hostile.control()
    st = submit(s, hostile.url, api_key="sk-submitter-abc")
    seen = hostile.seen()
    assert st["status"] == "done" and len(seen) == 26  # the pre-flight and 25 chat requests
    assert {x["authorization"] for x in seen} == {"Bearer sk-submitter-abc"}
    # Never shown back or stored in clear.
    everything = "\n".join(s.seen)
    assert "sk-submitter-abc" not in everything and OPERATOR_KEY not in everything
    # An endpoint that echoes the key in its error: the submission's error does not carry it.
    hostile.control(status=401, echo_auth=True)
    st = submit(s, hostile.url, api_key="sk-submitter-abc")
    assert st["status"] == "failed" and "sk-submitter-abc" not in str(st), st
    hostile.control(status=401, echo_auth=True, status_chat_only=True)
    st = submit(s, hostile.url, api_key="sk-submitter-abc")
    assert st["status"] == "failed" and "rejected" in st["error"] and "sk-submitter-abc" not in str(st), st
    everything = "\n".join(s.seen)
    assert "sk-submitter-abc" not in everything
    raw = open(s.db.split("///", 1)[1], "rb").read()
    assert b"sk-submitter-abc" not in raw and b"sk-submitter-abc" not in _wal(s.db)


def _wal(db: str) -> bytes:
    try:
        return open(db.split("///", 1)[1] + "-wal", "rb").read()
    except FileNotFoundError:
        return b""


@pytest.mark.parametrize("target", [
    "http://127.0.0.2:{port}/v1/models", "http://0.0.0.0:{port}/v1/models", "http://[::ffff:127.0.0.2]:{port}/x",
    "http://2130706434:{port}/x", "http://127.1:{port}/x", "http://[::1]:{port}/x", "http://localhost:{port}/x",
    "http://169.254.169.254/latest/meta-data/", "file:///etc/passwd",
])
def test_preflight_redirect_to_internal_is_refused_without_contact(env, target):
    s, hostile, internal = env
    url = target.format(port=internal.port)
    internal.control()
    hostile.control(redirect=url, redirect_models_only=True)
    st = submit(s, hostile.url)
    assert st["status"] == "failed" and "refused" in st["error"], st
    assert internal.seen() == []
    assert "secret-banner" not in st["error"] and str(internal.port) not in st["error"]


def test_chat_redirect_to_internal_is_refused_and_errors_look_alike(env):
    s, hostile, internal = env
    internal.control()
    hostile.control(redirect=f"http://[::ffff:127.0.0.2]:{internal.port}/v1/chat/completions")
    st = submit(s, hostile.url)
    assert internal.seen() == []
    # An open port and a closed port answer the same: nothing about what is listening shows.
    hostile.control(redirect=f"http://127.0.0.2:{internal.port}/v1/models", redirect_models_only=True)
    open_port = submit(s, hostile.url)["error"]
    hostile.control(redirect="http://127.0.0.2:9/v1/models", redirect_models_only=True)
    closed_port = submit(s, hostile.url)["error"]
    assert open_port == closed_port and internal.seen() == []
    assert st["status"] in ("done", "failed")


@pytest.mark.parametrize("url", ["http://127.0.0.2:{port}/v1", "http://0.0.0.0:{port}/v1", "http://[::ffff:7f00:2]:{port}/v1",
                                 "http://[::ffff:127.0.0.1]:{port}/v1", "http://user:pw@127.0.0.5/v1",
                                 "http://100.64.0.1/v1", "http://[fd00::1]/v1", "http://[64:ff9b::7f00:1]/v1"])
def test_literal_internal_addresses_refused_at_submission(env, url):
    s, _, internal = env
    internal.control()
    r = s.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "model": "m", "endpoint": url.format(port=internal.port)})
    assert r.status_code == 400 and set(r.json()) == {"error"}, r.text
    assert internal.seen() == []


def test_refusals_do_not_tell_internal_names_from_unknown_ones(env):
    """An internal name, a name that cannot be resolved (a 64-letter label fails before any DNS
    query) and an internal address get one and the same refusal."""
    s, _, _ = env
    errors = {s.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "model": "m", "endpoint": url}).json()["error"]
              for url in ("http://localhost/v1", "http://" + "a" * 64 + ".example/v1", "http://10.1.2.3/v1")}
    assert len(errors) == 1 and "127.0.0.1" not in next(iter(errors)), errors


def test_chunked_replies_are_read_whole_and_oversized_refused(env):
    s, hostile, _ = env
    hostile.control(chunks=5)
    st = submit(s, hostile.url, key="bob")
    expected = round(100 * sum(it.gold["answer"] == "A" for it in LAO) / 25, 1)
    assert st["status"] == "done" and st["result"]["failed_requests"] == 0, st
    # Within one step: rounded with the key's secret offset (docs/service.md, "Many keys").
    assert st["result"]["coverage"] == 1.0 and abs(st["result"]["score"] - expected) < st["result"]["ladder_step"]
    hostile.control(pad=3 * 2**20, chunks=4)
    st = submit(s, hostile.url, key="bob")
    assert st["status"] == "failed" and st["error"].startswith("invalid: 25 of 25 items failed"), st
    assert st["result"] is None and st["counts_against_limit"] is True  # its prompts were shown


def test_no_url_is_published_only_the_model_name(env):
    s, hostile, _ = env
    hostile.control()
    url = hostile.url + "?token=secret-in-query"
    st = submit(s, url, key="bob")
    assert st["status"] == "done" and st["model"] == "hostile-model", st
    assert {x["query"] for x in hostile.seen()} == {"token=secret-in-query"}  # the query stays a query
    assert {x["path"] for x in hostile.seen()} == {"/v1/models", "/v1/chat/completions"}
    board = s.call("GET", "/api/leaderboard").text + s.call("GET", "/").text + s.call("GET", f"/api/submissions/{st['id']}", "bob").text
    assert "secret-in-query" not in board and str(hostile.port) not in board


def test_endpoint_mode_can_be_disabled_per_set(env):
    from glotbench.service.core import Service, Settings

    s, hostile, _ = env
    Service(Settings(db_url=s.db)).set_window("lao-1", endpoint_mode=False)
    try:
        r = s.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "model": "m", "endpoint": hostile.url})
        assert r.status_code == 403 and "disabled" in r.json()["error"]
    finally:
        Service(Settings(db_url=s.db)).set_window("lao-1", endpoint_mode=True)


def test_reserved_ranges_are_an_explicit_list():
    from glotbench.service.ssrf import RESERVED, forbidden_ip

    assert len(RESERVED) >= 30
    for ip in ("0.1.2.3", "100.64.0.1", "192.0.0.8", "198.18.0.1", "240.0.0.1", "255.255.255.255", "::ffff:10.0.0.1",
               "64:ff9b::a00:1", "2002:7f00:1::", "2001:db8::1", "fe80::1%eth0", "fec0::1", "::", "3fff::1"):
        assert forbidden_ip(ip), ip
    for ip in ("1.1.1.1", "8.8.8.8", "2606:4700:4700::1111", "::ffff:1.1.1.1"):
        assert not forbidden_ip(ip), ip


def test_one_item_endpoint_probe_reveals_nothing(env):
    """An endpoint that answers one item and fails the rest is a partial submission in disguise: its
    known zeros would make that item's answer readable from a release (with any rounding), so such a
    run is invalid and releases nothing, whether the item was right or not."""
    from glotbench.service.core import Service, Settings

    s, hostile, _ = env
    svc = Service(Settings(db_url=s.db))
    bench = LaoBenchMCQ()
    probes = [it for it in LAO if it.gold["answer"] == "A"][:3] + [it for it in LAO if it.gold["answer"] != "A"][:3]
    scores = []
    for n, it in enumerate(probes):
        key = svc.create_key(f"probe-{n}")[1]
        question = bench.render(it.to_public()).messages[-1]["content"]
        hostile.control(only=question, reply="Answer: A")
        st = submit(s, hostile.url, key=key)
        assert st["status"] == "failed" and st["result"] is None, st
        scores.append(st["error"])
    assert len(set(scores)) == 1 and scores[0].startswith("invalid: 24 of 25 items failed"), scores


def test_connection_goes_to_the_checked_address_only(env):
    """DNS rebinding: a name that passed the check but resolves to an internal address when the
    connection is made is refused by the guarding resolver, and the listener is never reached."""
    import asyncio

    from glotbench.models.base import ClientError
    from glotbench.service.ssrf import GuardedClient

    _, listener, _ = env  # on 127.0.0.1, where localhost points
    listener.control()

    async def go() -> None:
        client = GuardedClient()
        client._checked.add("localhost")  # as if it had resolved to a public address a moment ago
        try:
            with pytest.raises(ClientError, match="non-public"):
                await client.request("GET", f"http://localhost:{listener.port}/v1/models")
        finally:
            await client.aclose()

    asyncio.run(go())
    assert listener.seen() == []

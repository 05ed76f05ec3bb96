"""Start the scoring service for tests: a real `glotbench serve` process on a loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import psutil
import requests


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class RunningService:
    base: str
    db: str
    proc: subprocess.Popen
    keys: dict[str, str] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)  # every response body, for the leak test
    log: str = ""  # the file the server's output goes to

    def call(self, method: str, path: str, key: str | None = None, **kw) -> requests.Response:
        headers = kw.pop("headers", {})
        if key:
            headers["Authorization"] = f"Bearer {self.keys.get(key, key)}"
        r = requests.request(method, self.base + path, headers=headers, timeout=60, **kw)
        self.seen.append(r.text + "\n" + "\n".join(f"{k}: {v}" for k, v in r.headers.items()))
        return r

    def stop(self) -> None:
        """SIGTERM; a server still running 30 s later is killed and the test fails with its log's end."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
                raise AssertionError("the service did not stop within 30 s of SIGTERM; its log ends:\n"
                                     + self.output()[-2000:]) from None

    def output(self) -> str:
        """What the server printed (stdout and stderr)."""
        return Path(self.log).read_text(errors="replace") if self.log else ""

    def wait(self, sid: int, key: str = "alice", timeout: float = 60) -> dict:
        """Poll a submission until it is done or failed."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            st = self.call("GET", f"/api/submissions/{sid}", key).json()
            if st.get("status") in ("done", "failed"):
                return st
            time.sleep(0.1)
        raise AssertionError(f"submission {sid} did not finish: {st}")


@dataclass
class Hostile:
    """A hostile endpoint (glotbench.testing.hostile) on a loopback address."""

    proc: subprocess.Popen
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def control(self, **cfg) -> None:
        requests.post(f"http://{self.host}:{self.port}/_reset", timeout=10)
        requests.post(f"http://{self.host}:{self.port}/_control", json=cfg, timeout=10)

    def seen(self) -> list[dict]:
        return requests.get(f"http://{self.host}:{self.port}/_seen", timeout=10).json()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def start_hostile(host: str = "127.0.0.1") -> Hostile:
    proc = subprocess.Popen([sys.executable, "-m", "glotbench.testing.hostile", "--host", host, "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("PORT "), line
    return Hostile(proc, host, int(line.split()[1]))


@pytest.fixture
def hostile():
    """A hostile endpoint on 127.0.0.1 for one test (import the fixture into a test module)."""
    h = start_hostile("127.0.0.1")
    yield h
    h.stop()


def post_endpoint(s: RunningService, key: str, url: str, **extra) -> dict:
    """Submit an endpoint run of lao-1 (202 expected); its reply (id, status, queue position)."""
    r = s.call("POST", "/api/submissions", key, json={"set": "lao-1", "model": "m", "endpoint": url, **extra})
    assert r.status_code == 202, r.text
    return r.json()


def make_mcq_set(path, n: int, seed: int = 0, groups: int = 4) -> dict[str, str]:
    """A LaoBench-format MCQ set of n items with random gold letters; returns id -> gold."""
    import json
    import random

    rng = random.Random(seed)
    gold = {}
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            g = "ABCD"[rng.randrange(4)]
            gold[f"q{i:05d}"] = g
            f.write(json.dumps({"id": f"q{i:05d}", "data_type": "Knowledge Application", "subdomain": f"topic-{i % groups}",
                                "question": f"ຄຳຖາມທີ {i}?", "A": "a", "B": "b", "C": "c", "D": "d", "answer": g},
                               ensure_ascii=False) + "\n")
    return gold


def prepare(db: str, **settings) -> dict[str, str]:
    """Load the test sets and two keys straight into the database (as `glotbench service` does)."""
    from glotbench.service.core import Service, Settings

    svc = Service(Settings(db_url=db, **settings))
    svc.load_set("lao-1", "laobench-mcq", None)
    svc.rotate("lao-1")
    svc.load_set("vi-1", "vi-diacritics", None)
    svc.rotate("vi-1")
    svc.load_set("lao-2", "laobench-mcq", None)
    return {"alice": svc.create_key("alice")[1], "bob": svc.create_key("bob")[1]}


def start(db: str, *flags: str, env: dict[str, str] | None = None, preexec_fn=None) -> RunningService:
    """The server's output goes to a file, never to a pipe no one reads: a server that logs more than
    a pipe holds (64 KiB: a traceback per refused connection) would block on the write, stop
    serving and not stop on SIGTERM."""
    for _attempt in range(5):  # another test process took the free port first: again on another
        port = free_port()
        log = tempfile.NamedTemporaryFile(prefix="glotbench-serve-", suffix=".log", delete=False)
        proc = subprocess.Popen([sys.executable, "-m", "glotbench", "serve", "--db", db, "--port", str(port), *flags],
                                stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
                                preexec_fn=preexec_fn)
        log.close()
        base = f"http://127.0.0.1:{port}"
        end = time.monotonic() + 180  # a deadline, not a count of tries: start-up takes 2 s idle, 20 s and more under load
        while time.monotonic() < end:
            try:
                # the answer must come from this server: between free_port() and the bind, another test
                # process (pytest-xdist's other worker) may have started its own server on that port
                if requests.get(base + "/healthz", timeout=5).ok and _listens(proc, port):
                    return RunningService(base, db, proc, log=log.name)
            except requests.RequestException:
                time.sleep(0.05)
            if proc.poll() is not None:
                text = Path(log.name).read_text(errors="replace")
                if "address already in use" in text.lower():
                    break
                raise RuntimeError(text)
            time.sleep(0.05)
        else:
            proc.kill()
            raise RuntimeError("the service did not start: " + Path(log.name).read_text(errors="replace")[-2000:])
    raise RuntimeError("the service found no free port in 5 tries")


def _listens(proc: subprocess.Popen, port: int) -> bool:
    """Whether `proc` (or a process it started) listens on `port`."""
    try:
        p = psutil.Process(proc.pid)
        return any(c.status == psutil.CONN_LISTEN and c.laddr.port == port
                   for q in (p, *p.children(recursive=True)) for c in q.net_connections("tcp"))
    except psutil.Error:
        return False


def released_big_set(tmp_path) -> str:
    """A database with a released set of 3,000 items with long questions (6.6 MB to download: more
    than the 4 MB a kernel's send buffer takes, so a server's own buffer fills behind a client that
    reads slowly) and a current one; its URL."""
    import json

    from glotbench.service.core import Service, Settings

    with open(tmp_path / "big.jsonl", "w", encoding="utf-8") as f:
        for i in range(3000):
            f.write(json.dumps({"id": f"q{i:05d}", "data_type": "Knowledge Application", "subdomain": "t",
                                "question": f"{i} " + "ຄຳຖາມຍາວ " * 120, "A": "a", "B": "b", "C": "c", "D": "d",
                                "answer": "ABCD"[i % 4]}, ensure_ascii=False) + "\n")
    db = f"sqlite:///{tmp_path}/db.sqlite"
    svc = Service(Settings(db_url=db))
    svc.load_set("old", "laobench-mcq", str(tmp_path / "big.jsonl"))
    svc.rotate("old")
    svc.load_set("new", "laobench-mcq", None)
    svc.rotate("new")
    return db


def reset_by_peer(sock: socket.socket, timeout: float) -> bool:
    """Wait, without reading, until the server closes or resets the connection (a client that
    reads nothing cannot see a close otherwise: its buffer stays full). Polled, not slept: as soon
    as it happens, however loaded the machine."""
    import select

    p = select.poll()
    p.register(sock, select.POLLRDHUP | select.POLLHUP | select.POLLERR)
    end = time.monotonic() + timeout
    while (left := end - time.monotonic()) > 0:
        if p.poll(max(1, min(200, int(left * 1000)))):
            return True
    return False

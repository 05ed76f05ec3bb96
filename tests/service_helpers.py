"""Start the scoring service for tests: a real `glotbench serve` process on a loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

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

    def call(self, method: str, path: str, key: str | None = None, **kw) -> requests.Response:
        headers = kw.pop("headers", {})
        if key:
            headers["Authorization"] = f"Bearer {self.keys.get(key, key)}"
        r = requests.request(method, self.base + path, headers=headers, timeout=60, **kw)
        self.seen.append(r.text + "\n" + "\n".join(f"{k}: {v}" for k, v in r.headers.items()))
        return r

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


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


def start(db: str, *flags: str) -> RunningService:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "glotbench", "serve", "--db", db, "--port", str(port), *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=os.environ.copy())
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if requests.get(base + "/healthz", timeout=1).ok:
                return RunningService(base, db, proc)
        except requests.ConnectionError:
            time.sleep(0.05)
        if proc.poll() is not None:
            raise RuntimeError(proc.stdout.read().decode())
    raise RuntimeError("the service did not start")

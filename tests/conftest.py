"""Shared fixtures: a real OpenAI-compatible server on loopback, started once per session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest


class TestServer:
    def __init__(self, proc: subprocess.Popen, port: int):
        self.proc = proc
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.url = f"{self.base}/v1"

    def spec(self, model: str = "test") -> str:
        return f"openai:{model}@{self.url}"

    def _post(self, path: str, payload: dict) -> dict:
        req = urllib.request.Request(self.base + path, data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def configure(self, **cfg) -> None:
        """Reset the server, then apply cfg (latency, answers, faults, ...)."""
        self._post("/_reset", {})
        self._post("/_control", cfg)

    def requests(self) -> list[dict]:
        with urllib.request.urlopen(self.base + "/_requests", timeout=10) as r:
            return json.loads(r.read())


def start_server(latency: float = 0.0) -> TestServer:
    proc = subprocess.Popen(
        [sys.executable, "-m", "glotbench.testing.server", "--port", "0", "--latency", str(latency)],
        stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("PORT "), line
    return TestServer(proc, int(line.split()[1]))


@pytest.fixture(scope="session", autouse=True)
def results_store(tmp_path_factory) -> str:
    """`glotbench run` indexes each finished run in the results store: the tests' runs go into one
    store of the session's own (GLOTBENCH_STORE_URL, passed on to every `cli()`), not the user's."""
    url = f"sqlite:///{tmp_path_factory.mktemp('store') / 'results.sqlite'}"
    old = os.environ.get("GLOTBENCH_STORE_URL")
    os.environ["GLOTBENCH_STORE_URL"] = url
    yield url
    if old is None:
        os.environ.pop("GLOTBENCH_STORE_URL", None)
    else:
        os.environ["GLOTBENCH_STORE_URL"] = old


@pytest.fixture(scope="session")
def server():
    srv = start_server()
    yield srv
    srv.proc.terminate()
    srv.proc.wait(10)


@pytest.fixture
def srv(server):
    server.configure()
    return server


@pytest.fixture
def cache_path(tmp_path) -> str:
    return str(tmp_path / "calls.sqlite")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return Path(__file__).resolve().parents[1]


def cli(*args: str, env: dict | None = None, cwd: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    # `python:helpers:...` models live beside the tests: make them importable in the child, as pytest's
    # rootdir insertion makes them importable here (CI runs plain `python -m pytest`, no PYTHONPATH).
    tests_dir = str(Path(__file__).resolve().parent)
    parts = [p for p in full_env.get("PYTHONPATH", "").split(os.pathsep) if p]
    full_env["PYTHONPATH"] = os.pathsep.join([tests_dir, *[p for p in parts if p != tests_dir]])
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=timeout)

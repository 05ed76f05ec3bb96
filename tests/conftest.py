"""Shared fixtures: a real OpenAI-compatible server on loopback, started once per session."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

# What the console script sets (glotbench/__main__.py), for the suite's own processes too: a test
# worker's numpy would otherwise spin its OpenBLAS threads after start-up and every shared product,
# on CPU the other worker needs. Read when numpy loads OpenBLAS: here, before any test imports it.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

try:  # tqdm's monitor thread (lm-eval's and datasets' progress bars in the reference tests) would stay
    import tqdm  # alive for the rest of the session, and `cli()` forks only while no other thread runs

    tqdm.tqdm.monitor_interval = 0
except ImportError:
    pass

# A suite started in the background by a shell without job control (`python -m pytest &`) inherits
# SIGINT ignored, and so does every process it starts: the tests that press Ctrl-C on a run then saw
# it finish with 0. The default handler, here and (after exec) in the processes started from here.
import signal  # noqa: E402

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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


class _LazyModule:
    """A module imported on its first attribute read (see `importorskip_lazily`)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        import importlib

        if attr.startswith("__"):  # collection asks every module-level name for `__test__` and the like
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)


def importorskip_lazily(name: str):
    """`pytest.importorskip(name)` for a test module, without importing it while the suite is collected:
    the module is skipped when `name` is not installed, and imported when a test first uses it. A test
    file that imports torch at its top loads torch into the collecting process, and then every `cli()`
    of the whole suite starts a fresh interpreter instead of a fork (see `cli`)."""
    import importlib.util

    if importlib.util.find_spec(name) is None:
        pytest.skip(f"could not import {name!r}", allow_module_level=True)
    return _LazyModule(name)


def start_server(latency: float = 0.0) -> TestServer:
    proc = subprocess.Popen(
        [sys.executable, "-m", "glotbench.testing.server", "--port", "0", "--latency", str(latency)],
        stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("PORT "), line
    return TestServer(proc, int(line.split()[1]))


@contextlib.contextmanager
def registries_kept():
    """What is registered inside (a benchmark, a model scheme, a scorer, a step) is gone after: the
    registries are this process's, and a later test (or `cli()`'s fork of this process, whose `list` and
    error lines name every benchmark) must not see a test's plugin. Restored in place, since
    `plugins._GROUPS` holds the same dicts."""
    from glotbench import plugins

    groups = [reg for _, reg in plugins._GROUPS.values()] + [plugins._SHADOWED]
    saved = [dict(reg) for reg in groups]
    loaded = plugins._entry_points_loaded
    try:
        yield
    finally:
        for reg, was in zip(groups, saved):
            if reg != was:
                reg.clear()
                reg.update(was)
        plugins._entry_points_loaded = loaded


@pytest.fixture(autouse=True)
def _registries_restored():
    with registries_kept():
        yield


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
def embedded_store(tmp_path_factory):
    """The embedded model (Gemma 3 270M GGUF), converted from its GGUF into an empty cache folder of this
    session, once, and loaded from the converted store: (that cache folder, the loaded model). The files
    that need the model share the one conversion (it had been done once per file: 1-2 minutes each)
    and the one load; each sets GLOTBENCH_CACHE_DIR to the folder while its tests run."""
    from glotbench.models.hf import BLOCKS_FILE, HFModel, _converted_root

    folder = tmp_path_factory.mktemp("embedded-cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")  # no network at run time
    mp.setenv("GLOTBENCH_CACHE_DIR", str(folder))
    try:
        assert not _converted_root().exists()  # the conversion below really runs
        model = HFModel.embedded_default()  # batches of up to 16: a 6-item run is one batch
        model._load_sync()  # converts into the empty cache, then loads the stored blocks
        assert [(p / BLOCKS_FILE).is_file() for p in _converted_root().iterdir()] == [True]
    finally:
        mp.undo()
    return folder, model


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return Path(__file__).resolve().parents[1]


def cli(*args: str, env: dict | None = None, cwd: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m glotbench ARGS` as a process of its own, as a user runs it: the exit code, stdout
    and stderr. The process is forked from this one, which has glotbench imported already, instead of
    started afresh (each fresh `python -m glotbench` paid 0.8-2 s of interpreter start and imports):
    the child gets `python -m`'s sys.argv and sys.path[0], the environment with `env` over it, and
    runs `glotbench.cli.app.main` as the console script does; nothing it does reaches this process.
    Once torch is loaded here (its thread pools do not survive a fork) or threads are running (the
    embedded model's scoring pool outlives its tests), the child is forked from this process's twin,
    forked before the first test that loads torch (`_ForkServer`). Where forking is unsafe and there is
    no twin, or `env` sets a variable that a library reads once, at import (see `_IMPORT_TIME_ENV`), a
    fresh interpreter runs it instead."""
    if os.environ.get("GLOTBENCH_TEST_SPAWN") or _sets_import_time_env(env):
        return _cli_spawned(args, env, cwd, timeout)
    if _fork_safe():
        return _cli_forked(args, env, cwd, timeout)
    if _FORK_SERVER:  # torch loaded here, or threads left running: the twin, forked before, forks the child
        try:
            return _FORK_SERVER[0].run([str(a) for a in args], env, cwd, timeout)
        except (EOFError, OSError):  # the twin is gone: a fresh interpreter, as without one
            _FORK_SERVER.pop().close()
    return _cli_spawned(args, env, cwd, timeout)


_PRELOADED: list[bool] = []

# Prefixes of environment variables that libraries read into module constants when first imported:
# huggingface_hub's `constants` (HF_ENDPOINT, HF_HOME, HF_HUB_OFFLINE, HF_TOKEN...), datasets' `config`.
# A forked child keeps the values this process imported with, so a test that points the hub client at
# the loopback hub would reach https://huggingface.co instead, and only when an earlier test happened
# to import the library here: such a call always gets a fresh interpreter.
_IMPORT_TIME_ENV = ("HF_",)


def _sets_import_time_env(env: dict | None) -> bool:
    return any(k.startswith(_IMPORT_TIME_ENV) for k in env or {})


def _fork_safe() -> bool:
    """Whether `cli()` may fork this process: no other thread running and torch not loaded. The first
    time it may, every glotbench module (but `glotbench.testing`, which runs as processes of its own)
    is imported here, once (about 2 s of CPU), so that no forked child imports what its command needs:
    a command's imports had cost each child 0.3-0.5 s of CPU, more than the rest of a small run."""
    import threading

    def safe() -> bool:
        return threading.active_count() == 1 and "torch" not in sys.modules

    if safe() and not _PRELOADED:
        import importlib
        import pkgutil

        import glotbench

        _PRELOADED.append(True)
        for mod in pkgutil.walk_packages(glotbench.__path__, "glotbench."):
            if not mod.name.startswith("glotbench.testing"):
                importlib.import_module(mod.name)
    return safe()


def _cli_spawned(args, env, cwd, timeout) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    # `python:helpers:...` models live beside the tests: make them importable in the child, as pytest's
    # rootdir insertion makes them importable here (CI runs plain `python -m pytest`, no PYTHONPATH).
    tests_dir = str(Path(__file__).resolve().parent)
    parts = [p for p in full_env.get("PYTHONPATH", "").split(os.pathsep) if p]
    full_env["PYTHONPATH"] = os.pathsep.join([tests_dir, *[p for p in parts if p != tests_dir]])
    return subprocess.run([sys.executable, "-m", "glotbench", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=timeout)


def _run_cli_child(argv: list[str], env: dict | None, cwd: str | None, out_fd: int, err_fd: int) -> None:
    """The body of a forked `cli()` child: `python -m glotbench ARGV` with stdout and stderr on the two
    files, then `os._exit` with the command's exit code. Never returns into pytest."""
    def main() -> None:
        sys.argv = [str(Path(sys.modules["glotbench.__main__"].__file__)) if "glotbench.__main__"
                    in sys.modules else "glotbench", *argv]
        sys.path.insert(0, os.getcwd())  # as `python -m` puts the working folder first
        from glotbench.__main__ import main

        main()

    _run_child(main, env, cwd, out_fd, err_fd)


def _run_child(main: Any, env: dict | None, cwd: str | None, out_fd: int, err_fd: int) -> None:
    """A forked child running `main()` with stdout and stderr on the two files, then `os._exit` with its
    exit code (SystemExit's, 0 when it returns, 1 on an exception). Never returns into pytest."""
    code = 1
    try:
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stdin = open(os.devnull)
        if cwd:
            os.chdir(cwd)
        os.environ.update(env or {})
        try:
            main()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if e.code is not None and not isinstance(e.code, int):
                print(e.code, file=sys.stderr)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _completed(cmd: list[str], code: int, out, err) -> subprocess.CompletedProcess:
    out.seek(0)
    err.seek(0)
    return subprocess.CompletedProcess(cmd, code, out.read().decode("utf-8", "replace"),
                                       err.read().decode("utf-8", "replace"))


def _cli_forked(args, env, cwd, timeout) -> subprocess.CompletedProcess:
    argv = [str(a) for a in args]
    return _forked(lambda out, err: _run_cli_child(argv, env, cwd, out, err), ["glotbench", *argv], timeout)


def module_main(module: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m MODULE ARGS` as a process of its own: a reference tool's console script (sacrebleu),
    forked from this process (the tool imported once here, not by every call: a fresh `python -m
    sacrebleu` cost 0.3-0.6 s of CPU, docs/performance.md) where a fork is safe, else a fresh interpreter.
    The child runs the module's `__main__` as `python -m` does, with `python -m`'s argv."""
    argv = [str(a) for a in args]
    if os.environ.get("GLOTBENCH_TEST_SPAWN") or not _fork_safe():
        return subprocess.run([sys.executable, "-m", module, *argv], capture_output=True, text=True, timeout=timeout)

    def main() -> None:
        import runpy

        sys.argv = [module, *argv]
        runpy.run_module(module, run_name="__main__", alter_sys=True)

    return _forked(lambda out, err: _run_child(main, None, None, out, err), [sys.executable, "-m", module, *argv],
                   timeout)


def _forked(child: Any, cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    """Fork; the child runs `child(stdout_fd, stderr_fd)` (which never returns); wait for it at most
    `timeout` s (then kill it: TimeoutExpired); its exit code and output as a CompletedProcess."""
    import tempfile
    import time

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            child(out.fileno(), err.fileno())
        deadline = time.monotonic() + timeout
        delay = 0.001
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(cmd, timeout)
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        return _completed(cmd, os.waitstatus_to_exitcode(status), out, err)


class _ForkServer:
    """A twin of this test process, forked while a fork is safe (before the first test that loads torch),
    that forks `cli()`'s children once torch is loaded here. Under `--dist loadgroup` xdist runs its
    largest groups first, so the worker that holds the embedded-model group loads torch at the start
    and, without the twin, spawned a fresh interpreter for every later `cli()` of its half of the suite.
    A child of the twin gets what a direct fork gets (every glotbench module imported, `python -m`'s argv
    and sys.path) but the environment, working folder and sys.path of this process at the call (sent
    over a socket with the two output files), not the rest of its state: it is forked from the twin."""

    def __init__(self) -> None:
        import socket

        ours, theirs = socket.socketpair()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            ours.close()
            code = 0
            try:
                self._serve(theirs)
            except BaseException:  # noqa: BLE001 - the twin never returns into pytest
                code = 1
            finally:
                os._exit(code)
        theirs.close()
        self.pid, self.sock = pid, ours
        import threading

        self.lock = threading.Lock()  # one call at a time on the socket (a test's threads may share it)

    @staticmethod
    def _recv_exactly(sock, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def _serve(self, sock) -> None:
        import pickle
        import socket

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the suite; the twin ends with its socket
        while True:
            try:
                head, fds, _flags, _addr = socket.recv_fds(sock, 8, 2)
            except OSError:
                return
            if not head:
                return  # this test process ended
            head += self._recv_exactly(sock, 8 - len(head))
            argv, environ, cwd, path = pickle.loads(self._recv_exactly(sock, int.from_bytes(head, "big")))
            pid = os.fork()
            if pid == 0:
                sock.close()
                signal.signal(signal.SIGINT, signal.default_int_handler)
                os.environ.clear()
                os.environ.update(environ)
                sys.path[:] = path
                _run_cli_child(argv, None, cwd, *fds)
            for fd in fds:
                os.close(fd)
            sock.sendall(pid.to_bytes(8, "big"))
            _, status = os.waitpid(pid, 0)
            sock.sendall(os.waitstatus_to_exitcode(status).to_bytes(8, "big", signed=True))

    def run(self, argv: list[str], env: dict | None, cwd: str | None, timeout: float) -> subprocess.CompletedProcess:
        import pickle
        import socket
        import tempfile

        msg = pickle.dumps((argv, {**os.environ, **(env or {})}, cwd or os.getcwd(), list(sys.path)))
        with self.lock, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            self.sock.settimeout(None)
            socket.send_fds(self.sock, [len(msg).to_bytes(8, "big") + msg], [out.fileno(), err.fileno()])
            pid = int.from_bytes(self._recv_exactly(self.sock, 8), "big")
            self.sock.settimeout(timeout)
            try:
                head = self._recv_exactly(self.sock, 8)
            except TimeoutError:
                os.kill(pid, 9)
                self.sock.settimeout(None)
                self._recv_exactly(self.sock, 8)  # the twin has reaped it
                raise subprocess.TimeoutExpired(["glotbench", *argv], timeout) from None
            return _completed(["glotbench", *argv], int.from_bytes(head, "big", signed=True), out, err)

    def close(self) -> None:
        self.sock.close()
        os.waitpid(self.pid, 0)


_FORK_SERVER: list[_ForkServer] = []


def _start_fork_server(item) -> None:
    """Before the first test that loads torch in this process: the twin `cli()` forks from afterwards."""
    if not _FORK_SERVER and "torch" not in sys.modules and not os.environ.get("GLOTBENCH_TEST_SPAWN") \
            and _loads_model(item) and _fork_safe():
        _FORK_SERVER.append(_ForkServer())


@pytest.hookimpl(tryfirst=True)  # before the test's fixtures, which may load the model
def pytest_runtest_setup(item) -> None:
    _start_fork_server(item)


def pytest_unconfigure(config) -> None:
    while _FORK_SERVER:
        _FORK_SERVER.pop().close()


# -- the `process` marker: tests that start a process or a server --------------------------------
# `python -m pytest -m "not process and not slow"` is the fast set a developer runs while working
# (README, "Quick start"); CI runs everything. A test is marked when it, a helper it calls or a fixture it
# uses (directly or through other fixtures) starts a process or a server: `cli()`, `subprocess`,
# `start_server`, a service or endpoint process, a browser, a Ray cluster, a sweep's Slurm jobs.
# Found by reading the test files with `ast` (names, not behaviour: a helper called `cli` anywhere
# counts), so a new test is marked without anyone remembering to. tests/test_markers.py checks the
# rule on its own examples.

PROCESS_CALLS = {"cli", "fork", "start_server", "run_slurm", "Popen", "sync_playwright", "async_playwright", "run_app",
                 "AppRunner", "TCPSite", "create_subprocess_exec", "create_subprocess_shell"}
PROCESS_MODULES = {"subprocess", "multiprocessing", "ray"}  # any call of these: `ray.init()` starts a cluster


def _called(fn, modules: set[str]) -> set[str]:
    """The names a function calls: `f()`, and `mod.f()` where `mod` is a module the file imports
    (`subprocess.run()` counts as `subprocess`, as `ray.init()` does where `ray = importorskip("ray")`); a method call (`runner.run()`) is not a name. A
    fixture's or a test's parameters count too: the fixtures it uses."""
    import ast

    out: set[str] = set()
    if fn.name.startswith("test") or any("fixture" in ast.unparse(d) for d in fn.decorator_list):
        out |= {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name):
                out.add(f.id)
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in modules:
                out.add(f.value.id if f.value.id in PROCESS_MODULES else f.attr)
            elif isinstance(f, ast.Attribute) and f.attr in PROCESS_CALLS:
                out.add(f.attr)
    return out


def process_functions(files) -> set[str]:
    """The names of the functions and fixtures (in `files`) that start a process or a server, directly
    or through another such function or fixture: a fixed point over the names each one calls."""
    import ast

    calls: dict[str, set[str]] = {}
    for path in files:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
        modules = PROCESS_MODULES | {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                                     if isinstance(n, ast.Import) for a in n.names}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                calls.setdefault(node.name, set()).update(_called(node, modules))
    found = {name for name, c in calls.items() if c & (PROCESS_CALLS | PROCESS_MODULES)}
    while True:
        more = {name for name, c in calls.items() if name not in found and c & found}
        if not more:
            return found | PROCESS_CALLS
        found |= more


def _loads_torch(path: Path, seen: dict[Path, bool] = {}) -> bool:  # noqa: B006 - a per-session memo
    """Whether a test file imports torch or transformers (itself, or through importorskip or
    importorskip_lazily: a lazily imported torch is loaded by the file's tests all the same)."""
    import re

    if path not in seen:
        seen[path] = bool(re.search(r"""(?:^\s*(?:import|from)\s+|importorskip(?:_lazily)?\(["'])(?:torch|transformers)\b""",
                                    _text(path), re.M))
    return seen[path]


def _loads_model(item) -> bool:
    """Whether a test loads torch: a `slow` test (a model), or any test of a file that imports torch."""
    return bool(item.get_closest_marker("slow")) or _loads_torch(Path(str(item.fspath)))


def _xdist_group(item) -> str | None:
    """The worker a test must share with others under pytest-xdist's `loadgroup`: the tests of the one
    PostgreSQL database (they create and drop its tables), of a local Ray cluster (each takes a share
    of the shared memory), and those that load the embedded model (one model in memory at a time, one
    writer of its converted cache). Any other test goes to whichever worker is free."""
    path = Path(str(item.fspath))
    if _loads_model(item):
        return "model"
    text = _text(path)
    if "GLOTBENCH_TEST_PG_URL" in text:
        return "postgresql"
    if "ray.init" in text or path.name == "test_sweep_ray.py":
        return "ray"
    return None


def _text(path: Path, seen: dict[Path, str] = {}) -> str:  # noqa: B006 - a per-session memo
    if path not in seen:
        seen[path] = path.read_text(encoding="utf-8")
    return seen[path]


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups marked here into the node ids
def pytest_collection_modifyitems(config, items) -> None:
    # The tests that load torch (a model, the `slow` ones) run last, in their order: `cli()` forks
    # this process only while torch is not loaded here (its thread pools do not survive a fork),
    # and a fork costs a fraction of a fresh interpreter (see `cli`). That holds for `-n 0` only: xdist's
    # loadgroup queues its largest groups first, so the model group starts its worker, and `cli()` forks
    # from the twin that worker forked before loading torch (`_ForkServer`).
    items.sort(key=_loads_model)
    for item in items:  # `-n N --dist loadgroup` (pyproject.toml's addopts): what one machine has one of
        group = _xdist_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    starts = process_functions(Path(__file__).resolve().parent.glob("*.py"))
    for item in items:
        fn = getattr(item, "function", None)
        if fn is None:
            continue
        if (set(getattr(item, "fixturenames", ())) | {fn.__name__}) & starts:
            item.add_marker(pytest.mark.process)

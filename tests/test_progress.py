"""The progress line (engine/progress.py, issue 21): a real ETA from the first completed batch of a
batched backend (it stayed `-:--:--` through a 16-minute CPU run), one word for failed samples
("failures", as in the summary), and at 80 columns the count and the ETA stay while the bar goes.
Batched replies carry their share of the batch's time as latency, not the whole batch's."""

from __future__ import annotations

import asyncio
import io
import re
import time

import pytest

from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.engine.progress import ProgressBar, eta_seconds, hms
from glotbench.engine.runner import RunCounters
from glotbench.models.base import GenerateConfig, ModelBase, Prompt, Response
from glotbench.models.batching import BATCH_LATENCY, MicroBatcher, batch_latency
from glotbench.report.terminal import console

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SPEC = "vi-diacritics · openai:qwen3-32b-instruct@http://localhost:8000/v1"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def frames(text: str) -> list[str]:
    """Every state the live line was drawn in (redraws are separated by cursor moves and CRs)."""
    return [f.strip() for f in re.split(r"[\r\n]", ANSI.sub("\n", text)) if f.strip()]


class SlowBatches(ModelBase):
    """A batched in-process backend: each batch of `concurrency` prompts takes `seconds`, like a
    local model on a CPU (one generate() call per batch)."""

    def __init__(self, seconds: float, concurrency: int):
        super().__init__("slow-batches", spec="python:slow-batches", concurrency=concurrency)
        self.seconds = seconds
        self._batcher = MicroBatcher(lambda _k, reqs: self._batch(reqs), lambda _r: 0, batch_size=concurrency)

    def description(self):
        return {"backend": "test", "latency": BATCH_LATENCY}

    def _batch(self, reqs):
        t0 = time.perf_counter()
        time.sleep(self.seconds)
        latency, raw = batch_latency(time.perf_counter() - t0, len(reqs))
        return [Response(text='{"restored_text": "x"}', finish_reason="stop", latency_s=latency, raw=raw)
                for _ in reqs]

    async def generate(self, prompt: Prompt, config: GenerateConfig, *, item_id: str = "", repeat: int = 0):
        return await self._batcher.submit(prompt)

    async def aclose(self):
        self._batcher.close()


def test_eta_from_the_answered_samples_counts_down_between_batches():
    c = RunCounters(total=160, done=16, first_call_at=100.0, last_answered_at=160.0)
    assert eta_seconds(c, 160.0) == pytest.approx(144 * 60 / 16)  # one 16-item batch a minute: 9 min
    assert eta_seconds(c, 190.0) == pytest.approx(144 * 60 / 16 - 30)  # counts down until the next one
    assert eta_seconds(RunCounters(total=160, first_call_at=100.0), 130.0) is None  # nothing answered yet
    cached = RunCounters(total=100, done=50, cache_hits=50, first_call_at=1.0)
    assert eta_seconds(cached, 5.0) is None  # cache hits say nothing about the model's speed
    cached.done, cached.last_answered_at = 60, 11.0
    assert eta_seconds(cached, 11.0) == pytest.approx(40 * 1.0)  # 10 answered in 10 s
    assert eta_seconds(RunCounters(total=3, done=3), 0.0) == 0.0
    assert (hms(None), hms(0), hms(3725.4)) == ("-:--:--", "0:00:00", "1:02:05")


@pytest.mark.parametrize("width", [80, 60, 44])
def test_a_narrow_line_keeps_its_count_failures_and_eta(width):
    buf = io.StringIO()
    out = console(file=buf, force_terminal=True, width=width, color_system=None)
    now = time.perf_counter()
    c = RunCounters(total=164, done=16, errors=3, retries=2, first_call_at=now - 60, last_answered_at=now)
    with ProgressBar(SPEC, total=164, out=out) as bar:
        bar.update(c)
    last = frames(buf.getvalue())[-1]
    assert len(last) <= width, (last, width)
    assert re.search(r"16/164 failures 3 .*ETA 0:0(9:1\d|8:5\d)$", last), last
    assert "━" not in last and "errors" not in buf.getvalue()  # the bar went first; one word for failures
    assert "vi-" in last  # the description is shortened, not dropped, while it can be


def test_a_wide_line_has_everything():
    buf = io.StringIO()
    out = console(file=buf, force_terminal=True, width=200, color_system=None)
    now = time.perf_counter()
    c = RunCounters(total=164, done=82, errors=1, retries=4, first_call_at=now - 60, last_answered_at=now)
    with ProgressBar(SPEC, total=164, out=out) as bar:
        bar.update(c)
    last = frames(buf.getvalue())[-1]
    assert last.startswith(SPEC) and "━" in last and "82/164 failures 1 retries 4" in last and "/s" in last, last
    assert re.search(r"ETA 0:01:0\d$", last), last


def test_the_plain_line_says_failures(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    with ProgressBar("b · m", total=2) as bar:
        assert bar.plain
        bar.update(RunCounters(total=2, done=2, errors=1))
    assert "2/2 done, failures 1, retries 0" in err.getvalue() and "ETA 0:00:00" in err.getvalue(), err.getvalue()


def test_a_batched_run_shows_an_eta_after_its_first_batch_and_shares_latency(tmp_path, monkeypatch):
    """Through evaluate() with the live line on an 80-column terminal: 4 batches of 4 items, 0.6 s
    each. Before, rich's ETA needed two completions within 30 s: `-:--:--` the whole run."""
    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setenv("COLUMNS", "80")
    model = SlowBatches(0.6, concurrency=4)
    res = evaluate("vi-diacritics", model, RunOptions(limit=16, out=str(tmp_path / "r"), use_cache=False))
    shown = frames(err.getvalue())
    after_first = [f for f in shown if re.search(r"\b(4|8|12)/16\b", f)]
    assert after_first, shown
    assert all("ETA -:--:--" not in f for f in after_first), after_first
    assert all(len(f) <= 80 for f in shown), shown
    lat = [s.latency_s for s in res.samples]
    assert all(0.1 <= x <= 0.6 for x in lat), lat  # a quarter of a 0.6 s batch each (a loaded CPU: more)
    assert res.results["timing"]["latency"] == BATCH_LATENCY


def test_batch_latency_is_shared():
    assert batch_latency(60.8, 16) == (3.8, {"batch": 16, "batch_latency_s": 60.8})
    assert batch_latency(1.0, 0)[0] == 1.0


def test_the_default_latency_rule_is_per_request(srv, tmp_path):
    res = evaluate("vi-diacritics", srv.spec(), RunOptions(limit=1, progress=False, use_cache=False,
                                                           out=str(tmp_path / "r")))
    assert res.results["timing"]["latency"].startswith("per item: from sending its request")


def test_microbatcher_keeps_working_with_the_shared_latency():
    async def go():
        m = SlowBatches(0.05, concurrency=3)
        try:
            return await asyncio.gather(*(m.generate(Prompt(messages=()), GenerateConfig()) for _ in range(3)))
        finally:
            await m.aclose()

    out = asyncio.run(go())
    assert {r.raw["batch"] for r in out} == {3}
    assert all(r.latency_s == pytest.approx(r.raw["batch_latency_s"] / 3, abs=1e-4) for r in out)


def test_ctrl_c_with_no_cache_says_nothing_was_cached(srv, tmp_path):
    """`--no-cache` then Ctrl-C said "resume from the cache": there is none to resume from."""
    import signal
    import subprocess
    import sys

    srv.configure(latency=5.0)
    for no_cache in (True, False):
        out = tmp_path / f"r{no_cache}"
        args = ["run", "vi-diacritics", "--model", srv.spec(), "--limit", "4", "--no-progress", "--out", str(out),
                "--cache-path", str(tmp_path / "c.sqlite")] + (["--no-cache"] if no_cache else [])
        proc = subprocess.Popen([sys.executable, "-m", "glotbench", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while len(srv.requests()) < 4 * (2 - no_cache) and time.time() < deadline:  # the requests are out
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        if no_cache:
            assert err.strip() == "error: interrupted; nothing was cached (--no-cache): the same command starts over"
        else:
            assert "resume from the call cache" in err and "nothing was cached" not in err, err


@pytest.mark.parametrize("browser,says", [("false", True), ("true", False)])
def test_report_open_without_a_browser_says_where_the_page_is(tmp_path, browser, says):
    from conftest import cli

    from glotbench.engine.evaluate import RunOptions, evaluate

    run = evaluate("vi-diacritics", SlowBatches(0.0, 4), RunOptions(limit=2, progress=False, use_cache=False,
                                                                    out=str(tmp_path / "r")))
    r = cli("report", str(run.out_dir), "--html", "--open", env={"BROWSER": browser})
    assert r.returncode == 0, r.stderr
    assert f"report: {run.out_dir / 'report.html'}" in r.stdout
    uri = (run.out_dir / "report.html").resolve().as_uri()
    assert (f"no browser could be started here (set BROWSER to choose one); open {uri}" in r.stderr) == says, r.stderr

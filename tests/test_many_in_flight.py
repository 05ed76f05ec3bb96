"""1,000+ requests in flight need 1,000+ sockets: the runner raises its open-file soft limit instead of
failing connections when started with the common default (here forced down to 256)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys


def test_concurrency_above_the_open_file_soft_limit(srv, tmp_path):
    srv.configure(latency=1.5, record=False)  # slow replies: hundreds of sockets open at once

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "glotbench", "run", "vi-diacritics", "--model", srv.spec(), "--repeats", "4",
         "--concurrency", "600", "--no-progress", "--out", str(out), "--cache-path", str(tmp_path / "c.sqlite")],
        capture_output=True, text=True, preexec_fn=low_limit, timeout=300)
    assert proc.returncode == 0, proc.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["counts"]["samples"] == 164 * 4
    # Without raising the limit: ~1,000 connection errors (EMFILE), retried, and a run twice as long.
    assert res["counts"]["failures"] == {} and res["counts"]["retries"] == 0, res["counts"]
    assert res["counts"]["model_calls"] == 656

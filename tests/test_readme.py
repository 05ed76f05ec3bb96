"""Every glotbench command in the README runs as written (README, "Your first two hours"), against a
loopback OpenAI-compatible server for the model and a loopback hub for the hub download; the README
stays short (issue #35: at most about 150 lines)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from conftest import cli
from test_tasks_hub import hub  # noqa: F401 - the loopback hub fixture, with facebook/belebele's Lao file

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
ENDPOINT = "openai:my-model@http://localhost:8000/v1"
# Commands the README shows that this test does not run, each with where it is run instead.
ELSEWHERE = {
    "pip install": "CI's .ci/run installs the package this way",
    "python -m pytest": "CI runs it",
    "glotbench run vi-diacritics --quick": "needs the embedded model: tests/test_local_model.py runs vi-diacritics on it (slow); the quick selection: tests/test_selection.py",
    "mkdocs": "CI builds the site strictly (.ci/run)",
    "glotbench sweep --language lo --model openai:my-model@http://localhost:8000/v1 --out runs/lo\n":
        "online, every Lao family's hub repository: tests/test_card_suite.py runs a language's suite on loopback",
}


def commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.S)
    out = []
    for block in blocks:
        for line in block.splitlines(keepends=True):
            for part in line.split("&&"):
                part = part.split(" > ")[0].lstrip()
                if part.strip():
                    out.append(part if part.endswith("\n") else part + "\n")
    return out


def test_the_readme_is_short():
    assert len(README.splitlines()) <= 150


def test_every_readme_command_runs(tmp_path, srv, hub):  # noqa: F811 - the fixture imported above
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "Answer: A", "ວຽງຈັນຕັ້ງຢູ່": "Answer: B"})
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "examples").symlink_to(ROOT / "docs" / "examples")
    (tmp_path / "lo-data").mkdir()  # the offline suite: the README's 3-row Belebele file as the family's data
    (tmp_path / "lo-data" / "belebele.jsonl").write_bytes((ROOT / "docs/examples/belebele-lao.jsonl").read_bytes())
    env = {"HF_ENDPOINT": hub, "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
           "HF_HUB_OFFLINE": "0", "BROWSER": "true", "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    runs: list[Path] = []
    ran = []
    for cmd in commands():
        if any(cmd.startswith(k) for k in ELSEWHERE):
            continue
        cmd = cmd.strip()
        args = shlex.split(cmd.replace(ENDPOINT, srv.spec("my-model")))
        assert args[0] == "glotbench", cmd
        args = args[1:]
        if args[0] == "run":
            args += ["--out", str(tmp_path / f"run{len(runs)}"), "--no-progress"]
            runs.append(tmp_path / f"run{len(runs)}")
        if args[0] == "board" and args[1] == "runs/lo":
            args[1] = "runs/lo-offline"  # the online suite is not run here (ELSEWHERE)
        args = [a for b in args for a in ({"RUN_A": [str(runs[0])], "RUN_B": [str(runs[-1])]}.get(b, [b]))]
        args = [str(runs[-1]) if a == "runs/belebele/RUN" else a for a in args]
        args = [str(tmp_path / "run0") if a == "runs/belebele" else a for a in args]
        proc = cli(*args, env=env, cwd=str(tmp_path))
        assert proc.returncode == 0, (cmd, proc.stdout[-2000:], proc.stderr[-2000:])
        ran.append(cmd)
        if args[0] == "run":
            res = json.loads((runs[-1] / "results.json").read_text(encoding="utf-8"))
            assert res["selection"]["n"] == 3 and res["benchmark"]["name"] == "belebele"
        if args[:2] == ["tasks", "list"]:
            assert "belebele" in proc.stdout and "Lao (lo)" in proc.stdout
        if "bibtex" in args:
            assert "@software{glotbench" in proc.stdout
        if args[0] == "sweep":
            assert "belebele" in proc.stdout and "skipped" in proc.stdout + proc.stderr
        if args[0] == "board":
            assert (tmp_path / "card.html").is_file()
    assert len(ran) >= 10, ran  # both runs, the language list, the offline suite and its card, prompt, report,
    # compare, two exports


def test_the_signature_legend_names_real_parts(tmp_path, srv):
    """Each part the README's legend names is a part of a real run's signature (or `subset:`)."""
    legend = README[README.index("| part | what it pins |"):]
    legend = legend[:legend.index("\n\n")]
    named = set(re.findall(r"`([a-z.]+(?:NAME)?):", legend))
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "Answer: A"})
    proc = cli("run", "belebele", "--data", str(ROOT / "docs/examples/belebele-lao.jsonl"), "--model", srv.spec(),
               "--out", str(tmp_path / "r"), "--no-progress", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    sig = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))["signature"]
    parts = {p.split(":")[0] for p in sig.split("|")} | {"subset"}
    parts |= {"opt.NAME" for p in parts if p.startswith("opt.")}
    assert named and named <= parts, (named - parts, sig)

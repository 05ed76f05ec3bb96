"""Every library task through Inspect's eval.yaml and back (issue #35): exported (`tasks check NAME
--eval-yaml`), the file checked by inspect_ai's own loader (`task_create_from_hf`), laid out with the
task's rows in a loopback hub, imported (`glotbench run hf/ORG/NAME/ID@SHA`) and run against the
loopback OpenAI server: the same per-item scores as the library task run directly on the same hub.
A task that cannot be exported is listed, with its reason, in ONE place: the table "Every library
task as an eval.yaml" in docs/tasks.md; each such task's reason is its one `error:` line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import cli
from test_tasks_hub import _parquet, serve_hub

from glotbench.tasks import task_names

ROOT = Path(__file__).resolve().parent.parent
FX = ROOT / "tests" / "fixtures" / "tasks"
TABLE_HEAD = "### Every library task as an eval.yaml"
# the fixture rows (the hub's schema) each exported task runs on
ROWS = {"global-piqa": "global_piqa_tha_thai.jsonl", "include": "include_vietnamese.jsonl",
        "seaexam": "seaexam_m3exam_thai.jsonl", "xcopa": "xcopa_th.jsonl"}


def library_table() -> dict[str, str | None]:
    """docs/tasks.md's table: task -> None (it exports) or the reason its error line gives."""
    text = (ROOT / "docs" / "tasks.md").read_text(encoding="utf-8")
    section = text.split(TABLE_HEAD, 1)[1].split("\n#", 1)[0]
    out: dict[str, str | None] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 3 or cells[0] in ("task", "---"):
            continue
        assert cells[1] in ("yes", "no"), line
        reason = re.search(r"`([^`]+)`", cells[2])
        assert (cells[1] == "no") == (reason is not None), line  # a refusal names its reason; an export none
        out[cells[0]] = reason.group(1).replace("\\|", "|") if reason else None
    return out


TABLE = library_table()


def test_the_table_lists_every_library_task_once():
    assert sorted(TABLE) == sorted(task_names())
    assert set(ROWS) == {n for n, why in TABLE.items() if why is None}  # each export has rows to run on


def _hub_layout(root: Path, bench, text: str) -> str:
    """The task's rows at its pinned revision, a dataset card declaring its config's split, eval.yaml at
    the root (as a dataset repository that declares its own Inspect task). The path the card names."""
    repo, sha, config, split = bench.data.hub, bench.data.revision, bench.data.config or "default", bench.data.split
    files, _ = bench._files(bench.data.config, split)
    path = files if isinstance(files, str) else f"data/{config}/{split}.jsonl"
    rows = [json.loads(x) for x in (FX / ROWS[bench.name]).read_text(encoding="utf-8").splitlines() if x.strip()]
    base = root / repo / sha
    target = base / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if path.endswith(".parquet"):
        _parquet(rows, target)
    elif path.endswith(".json"):
        target.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    else:
        target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    card = (f"---\nconfigs:\n- config_name: {config}\n  data_files:\n  - split: {split}\n    path: {path}\n---\n"
            f"# {bench.name} rows for a test\n")
    (base / "README.md").write_text(card, encoding="utf-8")
    (base / "eval.yaml").write_text(text, encoding="utf-8")
    (root / repo / "repo.json").write_text(json.dumps({"refs": {"main": sha}}))
    return path


def _inspect_loads(text: str, bench, tmp_path: Path) -> list:
    """inspect_ai's own loader of a hub eval.yaml (`task_create_from_hf`: HFTask validation, its
    solvers and scorers built from their specs, the records made samples), on this file and the
    fixture rows: the hub download and the datasets library are the two parts replaced."""
    import huggingface_hub
    import inspect_ai._eval.task.hf as hf
    from inspect_ai.dataset import MemoryDataset

    rows = [json.loads(x) for x in (FX / ROWS[bench.name]).read_text(encoding="utf-8").splitlines() if x.strip()]
    (tmp_path / "inspect-eval.yaml").write_text(text, encoding="utf-8")
    saved = huggingface_hub.hf_hub_download, hf.hf_dataset
    huggingface_hub.hf_hub_download = lambda **kw: str(tmp_path / "inspect-eval.yaml")
    hf.hf_dataset = lambda path, revision, name, split, sample_fields: MemoryDataset([sample_fields(r) for r in rows])
    try:
        tasks = hf.task_create_from_hf(f"hf/{bench.data.hub}/{bench.name}@{bench.data.revision}")
    finally:
        huggingface_hub.hf_hub_download, hf.hf_dataset = saved
    assert len(tasks) == 1 and len(tasks[0].dataset) == len(rows)
    return list(tasks[0].dataset)


def _scores(out: Path) -> dict[str, tuple[str, dict]]:
    """Each sample's reply -> (its id, its per-item score)."""
    got = {}
    for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        assert s["output"] not in got  # replies are told apart by their text
        got[s["output"]] = (s["id"], s["score"])
    return got


@pytest.mark.parametrize("name", sorted(TABLE))
def test_library_task_round_trips_through_the_hub_or_its_reason_is_one_error_line(name, tmp_path, srv):
    import yaml

    from glotbench.registry import get_benchmark
    from glotbench.tasks.inspect_yaml import export_text

    why = TABLE[name]
    out = tmp_path / "eval.yaml"
    if why is not None:
        proc = cli("tasks", "check", name, "--eval-yaml", str(out))
        errors = [x for x in proc.stderr.splitlines() if x.strip()]
        assert proc.returncode == 2 and len(errors) == 1 and errors[0].startswith(f"error: {name}: "), proc.stderr
        assert why in errors[0], (why, errors[0])
        assert not out.exists()
        return

    bench = get_benchmark(name)
    proc = cli("tasks", "check", name, "--eval-yaml", str(out))
    assert proc.returncode == 0 and out.is_file(), proc.stderr
    text = out.read_text(encoding="utf-8")
    assert text == export_text(bench)[0]
    task = yaml.safe_load(text)["tasks"][0]
    pytest.importorskip("inspect_ai")
    samples = _inspect_loads(text, bench, tmp_path)

    root = tmp_path / "hub"
    _hub_layout(root, bench, text)
    items = bench.load(str(FX / ROWS[name]))
    answers = {}
    for i, (item, sample) in enumerate(zip(items, samples)):
        assert item.gold["answer"] == sample.target  # Inspect's target is glotbench's gold letter
        letters = "ABCDEFGHIJ"[:len(item.public["choices"])]
        wrong = next(x for x in letters if x != item.gold["answer"])
        key = max((str(v) for v in item.public.values() if isinstance(v, str)), key=len)
        # right, wrong and no answer in turn, each reply its own text; both parsers read them alike
        reply = [f"Because of reason {'x' * (i + 1)}.\nANSWER: {item.gold['answer']}",
                 f"Hmm {'y' * (i + 1)}.\n\nANSWER: {wrong}", f"I cannot tell {'z' * (i + 1)}."][i % 3]
        assert key not in answers
        answers[key] = reply
    srv.configure(answers=answers)
    gen = serve_hub(root)
    hub = next(gen)
    try:
        env = {"HF_ENDPOINT": hub, "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
               "HF_HUB_OFFLINE": "0", "HF_TOKEN": "", "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}
        common = ("--model", srv.spec(), "--no-progress", "--no-cache")
        direct = cli("run", name, *common, "--out", str(tmp_path / "direct"), env=env)
        assert direct.returncode == 0, direct.stderr
        back = cli("run", f"hf/{bench.data.hub}/{task['id']}@{bench.data.revision}", *common,
                   "--out", str(tmp_path / "back"), env=env)
        assert back.returncode == 0, back.stderr
    finally:
        next(gen, None)
    a, b = _scores(tmp_path / "direct"), _scores(tmp_path / "back")
    assert sorted(a) == sorted(b) == sorted(answers.values())  # every item asked in both runs, each its reply
    correct = {reply: (a[reply][1]["letter:correct"], b[reply][1]["letter:correct"]) for reply in a}
    assert all(x == y for x, y in correct.values()), correct
    assert sorted({x for x, _ in correct.values()}) == [0.0, 1.0]  # right and wrong replies among them
    ra = json.loads((tmp_path / "direct" / "results.json").read_text())
    rb = json.loads((tmp_path / "back" / "results.json").read_text())
    assert ra["scores"]["overall"]["accuracy"]["value"] == rb["scores"]["overall"]["accuracy"]["value"]

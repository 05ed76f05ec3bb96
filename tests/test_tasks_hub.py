"""Hub datasets through the real loading code (huggingface_hub) against a loopback server laid out as
the hub lays out dataset repositories (glotbench.testing.hub): a pinned revision, the hub's own
cache, HF_HUB_OFFLINE=1 reading the cache only, and one `error:` line for a gated dataset without a
token, a revision or repository that does not exist, a cache without the files, a changed file."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from conftest import cli

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"
BELEBELE = "c25c4d7bfbc5de244583947ba230fc4ee93d4a89"
FLORES = "5fec6c13f9e5a4db2f745d4ec0d7c9721ddc4f06"
CARDS = "1111111111111111111111111111111111111111"


def _parquet(rows: list[dict], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


def _repo(root: Path, repo: str, sha: str, files: dict[str, str | list[dict]], **meta) -> None:
    base = root / repo / sha
    for name, content in files.items():
        p = base / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            p.write_text(content, encoding="utf-8")
        else:
            _parquet(content, p)
    (root / repo / "repo.json").write_text(json.dumps({"refs": {"main": sha}, **meta}))


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("hub")
    _repo(root, "facebook/belebele", BELEBELE, {
        "data/lao_Laoo.jsonl": (FX / "belebele_lao_Laoo.jsonl").read_text(encoding="utf-8"),
        "data/khm_Khmr.jsonl": (FX / "belebele_khm_Khmr.jsonl").read_text(encoding="utf-8")})
    flores = [json.loads(x) for x in (FX / "flores_plus_devtest.jsonl").read_text(encoding="utf-8").splitlines()]
    _repo(root, "openlanguagedata/flores_plus", FLORES,
          {f"devtest/{c}.parquet": [r for r in flores if f"{r['iso_639_3']}_{r['iso_15924']}" == c]
           for c in ("eng_Latn", "lao_Laoo")}, gated=True, token="hf_glotbench_test")
    card = "---\nconfigs:\n- config_name: lo\n  data_files:\n  - split: test\n    path: lo/test-*.jsonl\n---\n# cards\n"
    _repo(root, "glotbench-test/cards", CARDS, {
        "README.md": card, "lo/test-00000-of-00001.jsonl": '{"q": "ໜຶ່ງ ບວກ ໜຶ່ງ", "a": "2"}\n{"q": "ສອງ ບວກ ສອງ", "a": "4"}\n'})
    yield from serve_hub(root)


def serve_hub(root: Path):
    """The loopback hub over `root` (a generator for a fixture: yields its address, then stops it)."""
    proc = subprocess.Popen([sys.executable, "-m", "glotbench.testing.hub", "--root", str(root), "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("PORT "), line
    yield f"http://127.0.0.1:{line.split()[1]}"
    proc.terminate()
    proc.wait(10)


def seen(hub: str) -> list[str]:
    with urllib.request.urlopen(f"{hub}/_requests", timeout=10) as r:
        return json.loads(r.read())


def glot(tmp_path, hub, *args, offline=False, token=None, out="r"):
    env = {"HF_ENDPOINT": hub, "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1"}
    env["HF_HUB_OFFLINE"] = "1" if offline else "0"
    env["HF_TOKEN"] = token or ""
    return cli("run", *args, "--out", str(tmp_path / out), "--no-progress", "--no-cache", env=env)


def one_error(proc) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    return proc.stderr


def pinned_run(tmp_path, hub, srv, task: str, opts: tuple[str, ...], answers: dict[str, str], data: str,
               metric: str, expected: float) -> None:
    """`glotbench run TASK` against the loopback hub and the scripted model passes, reads `data` (the pinned
    revision, config and split) and scores `metric` as `expected` (the test's number by hand)."""
    srv.configure(answers=answers)
    proc = glot(tmp_path, hub, task, *opts, "--model", srv.spec())
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["benchmark"]["data"] == data
    assert res["scores"]["overall"][metric]["value"] == pytest.approx(expected)


def test_pinned_download_then_offline_from_the_cache(tmp_path, hub, srv):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ": "ຄຳຕອບ: ກ"})
    proc = glot(tmp_path, hub, "belebele", "--bench-opt", "config=lao_Laoo", "--model", srv.spec())
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["benchmark"]["data"] == f"hub:facebook/belebele@{BELEBELE} lao_Laoo/test"
    import hashlib

    assert res["benchmark"]["data_sha256"] == hashlib.sha256((FX / "belebele_lao_Laoo.jsonl").read_bytes()).hexdigest()
    assert res["counts"]["items"] == 3 and res["scores"]["overall"]["accuracy"]["value"] == pytest.approx(1 / 3)
    cached = tmp_path / "hf-home" / "hub" / "datasets--facebook--belebele" / "snapshots" / BELEBELE / "data"
    assert (cached / "lao_Laoo.jsonl").is_file() and not (cached / "khm_Khmr.jsonl").exists()  # only the config asked
    before = len(seen(hub))
    proc = glot(tmp_path, hub, "belebele", "--bench-opt", "config=lao_Laoo", "--model", srv.spec(), offline=True,
                out="r2")
    assert proc.returncode == 0, proc.stderr
    assert len(seen(hub)) == before  # HF_HUB_OFFLINE=1: the cache only, no request to the hub
    assert json.loads((tmp_path / "r2" / "results.json").read_text())["benchmark"]["data_sha256"] == res["benchmark"]["data_sha256"]
    err = one_error(glot(tmp_path, hub, "belebele", "--bench-opt", "config=khm_Khmr", "--model", srv.spec(),
                         offline=True, out="r3"))
    assert "is not in the hub cache" in err and "HF_HUB_OFFLINE=1" in err and "--data FILE" in err


def test_gated_dataset_needs_a_token_then_joins_two_configs(tmp_path, hub, srv):
    err = one_error(glot(tmp_path, hub, "flores-plus", "--model", srv.spec()))
    assert "openlanguagedata/flores_plus is gated" in err and "HF_TOKEN" in err
    srv.configure(answers={"The river flows": "ແມ່ນ້ຳໄຫຼຜ່ານນະຄອນຫຼວງ."})
    proc = glot(tmp_path, hub, "flores-plus", "--model", srv.spec(), token="hf_glotbench_test", out="ok")
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "ok" / "results.json").read_text())
    assert res["counts"]["items"] == 3 and res["task"]["data"]["roles"] == {"source": "eng_Latn", "target": "lao_Laoo"}
    assert res["benchmark"]["data"].startswith(f"source=hub:openlanguagedata/flores_plus@{FLORES} eng_Latn/devtest")
    assert srv.requests()[0]["messages"][1]["content"].endswith("The river flows through the capital.")


def test_revision_and_repository_that_do_not_exist(tmp_path, hub, srv):
    err = one_error(glot(tmp_path, hub, "belebele", "--bench-opt", "revision=" + "0" * 40, "--model", srv.spec()))
    assert f"facebook/belebele has no revision {'0' * 40}" in err and "--bench-opt revision=SHA" in err
    err = one_error(glot(tmp_path, hub, "belebele", "--bench-opt", "revision=main", "--model", srv.spec()))
    assert "is not a commit hash" in err
    task = tmp_path / "none.yaml"
    task.write_text((FX.parent.parent.parent / "src/glotbench/tasks/library/belebele.yaml").read_text()
                    .replace("hub: facebook/belebele", "hub: nobody/nothing"))
    err = one_error(glot(tmp_path, hub, str(task), "--model", srv.spec()))
    assert "nobody/nothing: no such dataset on the hub" in err


def test_files_from_the_dataset_card_and_a_sha256_pin(tmp_path, hub, srv):
    task = tmp_path / "cards.yaml"
    body = f"""name: cards
version: "1.0"
language: lo
data: {{hub: glotbench-test/cards, config: lo, split: test, revision: "{CARDS}"}}
fields: {{public: {{q: q}}, gold: {{answer: a}}}}
prompt: {{user: "{{{{ q }}}} = ?"}}
extract: {{number: [number]}}
scorer: numeric_match
"""
    task.write_text(body, encoding="utf-8")
    srv.configure(answers={"ໜຶ່ງ ບວກ ໜຶ່ງ": "໒", "ສອງ ບວກ ສອງ": "5"})
    proc = glot(tmp_path, hub, str(task), "--model", srv.spec())
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["scores"]["overall"]["numeric_em"]["value"] == 0.5  # Lao digit ໒ read as 2
    task.write_text(body.replace("config: lo,", "config: km,"), encoding="utf-8")
    err = one_error(glot(tmp_path, hub, str(task), "--model", srv.spec(), out="r2"))
    assert "declares no config 'km' (it has: lo)" in err
    pinned = body.replace(f'revision: "{CARDS}"}}', f'revision: "{CARDS}", sha256: {{"lo/test-00000-of-00001.jsonl": "{"ab" * 32}"}}}}')
    task.write_text(pinned, encoding="utf-8")
    err = one_error(glot(tmp_path, hub, str(task), "--model", srv.spec(), out="r3"))
    assert "lo/test-00000-of-00001.jsonl: SHA-256 is" in err and "the task pins" in err


def test_an_unreachable_hub_is_one_line(tmp_path, srv):
    err = one_error(glot(tmp_path, "http://127.0.0.1:9", "belebele", "--model", srv.spec()))
    assert "cannot reach the hub" in err and "HF_HUB_OFFLINE=1" in err

"""Every bad input file or option value of the file-reading commands is one `error:` line and exit 2.

Each case builds a malformed input of its own (not JSON, not UTF-8, missing fields, wrong types, a
missing file, a directory where a file is expected) and runs the real command in a subprocess.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import cli


def _one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


# ---- builders: each writes one malformed input under tmp and returns the command's arguments ----

def _run_dir(tmp: Path, name: str, content: str | bytes | None, *, as_dir: bool = False) -> str:
    d = tmp / "run"
    d.mkdir()
    f = d / name
    if as_dir:
        f.mkdir()
    elif isinstance(content, bytes):
        f.write_bytes(content)
    elif content is not None:
        f.write_text(content, encoding="utf-8")
    return str(d)


ARAGEN_OK = {"model": "m", "per_judge": {}, "item_scores": {}}
ARENA_OK = {"candidate": "c", "scores": {"judges": {"j": {"value": 0.5}}}}

FILE_CASES = {
    "not json": "{not json",
    "not utf-8": b"\xff\xfe\x00garbage",
    "a list": "[1, 2]",
    "a string": '"text"',
    "empty object": "{}",
}


def _audit(kind):
    def make(tmp: Path) -> list[str]:
        return ["report", "--judges", _run_dir(tmp, "aragen.json", FILE_CASES[kind])]
    return make


def _arena_report(kind):
    def make(tmp: Path) -> list[str]:
        return ["report", "--judges", _run_dir(tmp, "arena.json", FILE_CASES[kind])]
    return make


def _write(path: Path, content: str | bytes) -> str:
    path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content, encoding="utf-8")
    return str(path)


def _with_human(command: str, name: str, ok: dict, human: str | None, *, human_dir: bool = False):
    def make(tmp: Path) -> list[str]:
        d = _run_dir(tmp, name, json.dumps(ok))
        h = tmp / "human.jsonl"
        if human_dir:
            h.mkdir()
        elif human is not None:
            h.write_text(human, encoding="utf-8")
        return [*command.split(), d, "--human", str(h)]
    return make


def _convert(task: str, content: str | bytes | None, *, as_dir: bool = False, out_dir: bool = False):
    def make(tmp: Path) -> list[str]:
        f = tmp / f"in.{task}"
        if as_dir:
            f.mkdir()
        elif isinstance(content, bytes):
            f.write_bytes(content)
        elif content is not None:
            f.write_text(content, encoding="utf-8")
        out = tmp / "outdir"
        if out_dir:
            out.mkdir()
        return ["deepsea", "convert", task, f"th={f}", "--out", str(out if out_dir else tmp / "out.json")]
    return make


def _archive(members: dict[str, str | bytes] | None, *, raw: bytes | None = None, manifest: str | None = None,
             manifest_dir: bool = False, as_dir: bool = False):
    def make(tmp: Path) -> list[str]:
        a = tmp / "release.zip"
        if as_dir:
            a.mkdir()
            return ["deepsea", "verify-archive", str(a), "--sha256", "0" * 64]
        if raw is not None:
            a.write_bytes(raw)
        else:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w") as z:
                for name, text in (members or {}).items():
                    z.writestr(name, text)
            a.write_bytes(buf.getvalue())
        args = ["deepsea", "verify-archive", str(a), "--sha256", hashlib.sha256(a.read_bytes()).hexdigest()]
        if manifest is not None or manifest_dir:
            m = tmp / "manifest.json"
            m.mkdir() if manifest_dir else m.write_text(manifest, encoding="utf-8")
            args += ["--manifest", str(m)]
        return args
    return make


GOOD_MGSM = json.dumps({"task": "mgsm", "languages": {"th": [{"question": "1+1?", "answer_number": "2"}]}})

CASES = {
    # judge-audit: the run's aragen.json, and the human labels file
    **{f"judge-audit aragen.json {k}": _audit(k) for k in FILE_CASES},
    "judge-audit per_judge not an object": lambda tmp: ["report", "--judges", _run_dir(tmp, "aragen.json", json.dumps({"per_judge": 5}))],
    "judge-audit verdicts wrong type": lambda tmp: ["report", "--judges", _run_dir(tmp, "aragen.json", json.dumps(
        {"model": "m", "item_scores": {}, "per_judge": {"j": {"first_verdicts": [1], "consistency_std": "x"}}}))],
    "judge-audit aragen.json is a directory": lambda tmp: ["report", "--judges", _run_dir(tmp, "aragen.json", None, as_dir=True)],
    "judge-audit missing run dir": lambda tmp: ["report", "--judges", str(tmp / "nope")],
    "judge-audit human not json": _with_human("report --judges", "aragen.json", ARAGEN_OK, "{oops\n"),
    "judge-audit human wrong types": _with_human("report --judges", "aragen.json", ARAGEN_OK, '{"model": "m", "sn": "1", "Correct": "yes", "Complete": 1, "score": 1}\n'),
    "judge-audit human missing": _with_human("report --judges", "aragen.json", ARAGEN_OK, None),
    "judge-audit human is a directory": _with_human("report --judges", "aragen.json", ARAGEN_OK, None, human_dir=True),
    # arena-report: the arena's arena.json, and the human verdicts file
    **{f"arena-report arena.json {k}": _arena_report(k) for k in FILE_CASES},
    "arena-report judges not an object": lambda tmp: ["report", "--judges", _run_dir(tmp, "arena.json", json.dumps({"candidate": "c", "scores": {"judges": [1, 2]}}))],
    "arena-report score not a number": lambda tmp: ["report", "--judges", _run_dir(tmp, "arena.json", json.dumps({"candidate": "c", "scores": {"judges": {"j": {"value": "high"}, "k": {"value": 1}}}}))],
    "arena-report arena.json is a directory": lambda tmp: ["report", "--judges", _run_dir(tmp, "arena.json", None, as_dir=True)],
    "arena-report human not json": _with_human("report --judges", "arena.json", ARENA_OK, "nope\n"),
    "arena-report human row a list": _with_human("report --judges", "arena.json", ARENA_OK, "[1]\n"),
    "arena-report human missing fields": _with_human("report --judges", "arena.json", ARENA_OK, '{"candidate": "c"}\n'),
    "arena-report human missing": _with_human("report --judges", "arena.json", ARENA_OK, None),
    "arena-report human is a directory": _with_human("report --judges", "arena.json", ARENA_OK, None, human_dir=True),
    # deepsea convert: upstream files of each format
    "convert mgsm wrong columns": _convert("mgsm", "a question without an answer column\n"),
    "convert mgsm not utf-8": _convert("mgsm", b"\xff\xfe\tx\n"),
    "convert indommlu missing columns": _convert("indommlu", "subject,soal\nmath,1+1?\n"),
    "convert indommlu bad options": _convert("indommlu", "subject,level,kelas,soal,jawaban,kunci\nm,1,1,q,no options,A\n"),
    "convert xquad not json": _convert("xquad", "{"),
    "convert xquad wrong shape": _convert("xquad", json.dumps({"data": [{"paragraphs": "text"}]})),
    "convert xquad missing fields": _convert("xquad", json.dumps({"data": [{"paragraphs": [{"context": "c", "qas": [{"answers": []}]}]}]})),
    "convert xquad a list": _convert("xquad", json.dumps([1, 2])),
    "convert crosssum bad line": _convert("crosssum", '{"text": "a"}\nnot json\n'),
    "convert crosssum missing fields": _convert("crosssum", '{"unrelated": 1}\n'),
    "convert wmt24pp wrong types": _convert("wmt24pp", '{"source": 5, "target": ["x"]}\n'),
    "convert wmt24pp a list row": _convert("wmt24pp", '[1, 2]\n'),
    "convert missing file": _convert("mgsm", None),
    "convert input is a directory": _convert("mgsm", None, as_dir=True),
    "convert out is a directory": _convert("mgsm", "q\t1\n", out_dir=True),
    "convert unknown task": lambda tmp: ["deepsea", "convert", "nosuchtask", f"th={tmp}", "--out", str(tmp / "o.json")],
    "convert input not LANG=FILE": lambda tmp: ["deepsea", "convert", "mgsm", str(tmp / "x.tsv"), "--out", str(tmp / "o.json")],
    # deepsea verify-archive: the archive, its members and the manifest
    "verify missing archive": lambda tmp: ["deepsea", "verify-archive", str(tmp / "nope.zip"), "--sha256", "0" * 64],
    "verify archive is a directory": _archive(None, as_dir=True),
    "verify neither zip nor tar": _archive(None, raw=b"plain bytes, no archive"),
    "verify wrong sha256": lambda tmp: (_archive({"mgsm.json": GOOD_MGSM})(tmp)[:4] + ["f" * 64]),
    "verify member not json": _archive({"mgsm.json": "{broken"}),
    "verify member a list": _archive({"xquad.json": "[]"}),
    "verify member not utf-8": _archive({"mgsm.json": b"\xff\xfe{}"}),
    "verify member languages wrong type": _archive({"mgsm.json": json.dumps({"languages": [1, 2]})}),
    "verify member rows wrong type": _archive({"mgsm.json": json.dumps({"languages": {"th": [1, 2]}})}),
    "verify unsafe member name": _archive({"../evil/mgsm.json": GOOD_MGSM}),
    "verify manifest not json": _archive({"mgsm.json": GOOD_MGSM}, manifest="{"),
    "verify manifest wrong shape": _archive({"mgsm.json": GOOD_MGSM}, manifest="[1]"),
    "verify manifest task wrong type": _archive({"mgsm.json": GOOD_MGSM}, manifest=json.dumps({"mgsm": "all"})),
    # deepsea score: the predictions file
    "score predictions not json": lambda tmp: ["deepsea", "score", "mgsm", _write(tmp / "p.json", "{nope")],
    "score predictions not utf-8": lambda tmp: ["deepsea", "score", "mgsm", _write(tmp / "p.json", b"\xff{}")],
    "score predictions a list": lambda tmp: ["deepsea", "score", "mgsm", _write(tmp / "p.json", "[]")],
    "score predictions wrong count": lambda tmp: ["deepsea", "score", "mgsm", _write(tmp / "p.json", '{"th": ["1"]}')],
    "score predictions missing": lambda tmp: ["deepsea", "score", "mgsm", str(tmp / "nope.json")],
    "score predictions is a directory": lambda tmp: ["deepsea", "score", "mgsm", str(tmp)],
    "verify manifest is a directory": _archive({"mgsm.json": GOOD_MGSM}, manifest_dir=True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_file_is_one_error_line(tmp_path, case):
    args = CASES[case](tmp_path)
    _one_error_line(cli(*args))


def test_bench_opt_boolean_must_parse(tmp_path):
    line = _one_error_line(cli("run", "deepsea-mgsm", "--bench-opt", "native_digits=maybe",
                               "--model", "python:helpers:async_echo", "--no-cache", "--out", str(tmp_path / "r")))
    assert "native_digits" in line and "'maybe'" in line
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("opt, fragment", [
    ("native_digits", "KEY=VALUE"),              # no '='
    ("=true", "KEY=VALUE"),                      # no key
    ("no_such_option=1", "has no option 'no_such_option'"),
])
def test_bench_opt_shape_and_name(opt, fragment):
    line = _one_error_line(cli("run", "deepsea-mgsm", "--bench-opt", opt, "--model", "python:helpers:async_echo"))
    assert fragment in line


def test_debug_env_shows_the_traceback(tmp_path):
    d = _run_dir(tmp_path, "arena.json", "[1]")
    proc = cli("report", "--judges", d, env={"GLOTBENCH_DEBUG": "1"})
    assert proc.returncode != 0 and "Traceback" in proc.stderr


def test_help_imports_no_heavy_module():
    code = ("import sys, glotbench.cli\n"
            "heavy = [m for m in ('numpy', 'aiohttp', 'sacrebleu', 'torch', 'sqlalchemy', 'fastapi', 'glotbench.engine',"
            " 'glotbench.benchmarks', 'glotbench.service') if m in sys.modules]\n"
            "print(heavy)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr

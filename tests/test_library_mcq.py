"""Datasheets of the shipped families (the six first library tasks and every built-in benchmark) and
the multiple-choice families added for issue #34, each run on a fixture in its hub schema against the
loopback OpenAI-compatible server, with hand-computed scores and its reference's rule re-derived."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli
from glotbench.benchmarks.base import Benchmark
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.languages import resolve_code
from glotbench.plugins import import_path
from glotbench.registry import families, get_benchmark

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"
LIBRARY = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "tasks" / "library"

# every built-in benchmark class, listed or a phase of a command (arena, aragen)
BUILTINS = {
    "laobench-mcq": "glotbench.benchmarks.laobench:LaoBenchMCQ",
    "laobench-translation": "glotbench.benchmarks.laobench:LaoBenchTranslation",
    "laobench-arena-prompts": "glotbench.benchmarks.arena:ArenaPrompts",
    "deepsea-mgsm": "glotbench.benchmarks.deepsea:MGSM",
    "deepsea-indommlu": "glotbench.benchmarks.deepsea:IndoMMLU",
    "deepsea-xquad": "glotbench.benchmarks.deepsea:XQuAD",
    "deepsea-crosssum": "glotbench.benchmarks.deepsea:CrossSum",
    "deepsea-wmt24pp": "glotbench.benchmarks.deepsea:WMT24pp",
    "vi-diacritics": "glotbench.benchmarks.vi_diacritics:VietnameseDiacritics",
    "vi-tone-errors": "glotbench.benchmarks.vi_tone_errors:VietnameseToneErrors",
    "aragen-answers": "glotbench.benchmarks.aragen:AraGenAnswers",
    "aragen": "glotbench.benchmarks.aragen:AraGenJudging",
}


def run(tmp_path, srv, task: str, data: str, answers: dict[str, str], **opts: str):
    srv.configure(answers=answers)
    res = evaluate(task, srv.spec(), RunOptions(data=str(FX / data), bench_options=tuple(opts.items()), progress=False,
                                                out=str(tmp_path / "r"), cache_path=str(tmp_path / "c.sqlite")))
    return res.results, [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]


# -- datasheets of what exists ----------------------------------------------------------------

@pytest.mark.parametrize("name,target", sorted(BUILTINS.items()))
def test_every_builtin_benchmark_declares_a_datasheet(name, target):
    cls = import_path(target)
    assert issubclass(cls, Benchmark) and cls.datasheet is not None, name
    ds = cls.datasheet
    assert ds.languages and ds.citation.lstrip().startswith("@")
    if getattr(cls, "bundled_data", None) in ("sample", "own"):  # glotbench's own text says so
        assert "glotbench" in (ds.licence + ds.source + ds.licence_note)


def test_every_library_task_has_a_datasheet_whose_options_select_its_languages():
    """Each covered language's options build the task, and the task's language is that language: a
    datasheet cannot claim Lao for a config that runs Khmer."""
    names = sorted(p.stem for p in LIBRARY.glob("*.yaml"))
    by_name = {f.name: f for f in families()}
    for name in names:
        ds = by_name[name].datasheet
        assert ds is not None, f"{name} has no datasheet"
        for code, opts in ds.languages.items():
            bench = get_benchmark(name, **{k: str(v) for k, v in opts.items()})
            assert resolve_code(bench.language) == code, (name, code, opts, bench.language)


def test_non_commercial_and_unclear_licences_show_in_tasks_list():
    r = cli("tasks", "list", "--language", "th")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    xnli = next(ln for ln in out.splitlines() if ln.strip().startswith("xnli "))
    assert "CC-BY-NC-4.0, non-commercial" in xnli and "config=th" in xnli
    mgsm = next(ln for ln in out.splitlines() if ln.strip().startswith("deepsea-mgsm"))
    assert "commercial use unclear" in mgsm


@pytest.mark.parametrize("code,must", [
    ("lo", {"belebele", "sib200", "flores-plus", "laobench-mcq", "laobench-translation"}),
    ("km", {"belebele", "sib200", "flores-plus"}),
    ("my", {"belebele", "sib200", "flores-plus"}),
    ("th", {"belebele", "sib200", "flores-plus", "xnli", "xcopa"}),
    ("vi", {"belebele", "xnli", "xcopa", "global-mmlu", "vi-diacritics", "vi-tone-errors"}),
    ("id", {"belebele", "xcopa", "global-mmlu"}),
    ("tl", {"belebele", "sib200", "flores-plus", "global-mmlu"}),
])
def test_each_language_lists_the_families_covering_it(code, must):
    got = {f.name for f in families(code)}
    assert must <= got, must - got
    assert "xnli" not in got or code in ("th", "vi")  # XNLI has no lo, km, my, id or tl

"""Seeing what was sent (issue 21): every sample keeps its rendered prompt in the run directory (the
run's template in run.json and results.json, each sample's fill: engine/prompts.py), the exact
prompt comes back from the run directory alone, and `glotbench prompt` prints it without a model."""

from __future__ import annotations

import json
import os

import pytest
from conftest import cli

from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.engine.prompts import PromptTemplate, join, probes, whole
from glotbench.models.base import ModelBase, Prompt, Response
from glotbench.registry import get_benchmark


def chat(*contents: str, roles: tuple[str, ...] | None = None) -> Prompt:
    roles = roles or ("system", "user", "assistant", "user")[-len(contents):]
    return Prompt(messages=tuple({"role": r, "content": c} for r, c in zip(roles, contents)))


def roundtrip(prompts: list[Prompt], form: str) -> list[dict]:
    tpl = PromptTemplate.learn(prompts, form)
    tj = json.loads(json.dumps(tpl.to_json()))  # as run.json holds it
    recs = [json.loads(json.dumps(tpl.record(p))) for p in prompts]
    for p, rec in zip(prompts, recs):
        assert join(tj, rec) == whole(p, form), (p, rec)
    return recs


def test_the_template_holds_the_shared_part_and_each_sample_its_fill():
    lao = [chat("ແປເປັນພາສາອັງກິດ.", f"ຂໍ້ຄວາມ: {t}\nຄຳຕອບ:") for t in ("ຂ້ອຍໄປໂຮງຮຽນ", "ສະບາຍດີ", "ກິນເຂົ້າ")]
    recs = roundtrip(lao, "chat")
    assert [r["fill"] for r in recs] == [["", "ຂ້ອຍໄປໂຮງຮຽນ"], ["", "ສະບາຍດີ"], ["", "ກິນເຂົ້າ"]]
    text = [Prompt(messages=(), text=f"Q: 1+1?\nA: 2\n\nQ: {q}\nA:") for q in ("2+2?", "ស្រី?", "")]
    assert [r["fill"] for r in roundtrip(text, "text")] == [["2+2?"], ["ស្រី?"], [""]]


@pytest.mark.parametrize("prompts,form", [
    ([chat("x", "aXa"), chat("x", "aa")], "chat"),  # head and tail would overlap in the shorter one
    ([chat("x", "same"), chat("x", "same")], "chat"),  # no fill at all
    ([chat("one")], "chat"),  # a single item: the template is the whole prompt
    ([chat("s", "u1"), chat("u2"), chat("s", "u3", roles=("user", "user"))], "chat"),  # other shapes
    ([Prompt(messages=(), text="abcabc"), Prompt(messages=(), text="abc")], "text"),
])
def test_any_prompts_come_back_exactly(prompts, form):
    roundtrip(prompts, form)


def test_a_prompt_that_does_not_fit_is_kept_whole():
    tpl = PromptTemplate.learn([chat("sys", "Text: a."), chat("sys", "Text: b.")], "chat")
    assert tpl.record(chat("sys", "Other: c.")) == whole(chat("sys", "Other: c."), "chat")
    assert tpl.record(chat("other system", "Text: c.")) == whole(chat("other system", "Text: c."), "chat")
    odd = Prompt(messages=({"role": "user", "content": [{"type": "text", "text": "hi"}]},))
    assert PromptTemplate.learn([odd], "chat") is None and tpl.record(odd) == whole(odd, "chat")
    assert tpl.record(chat("sys", "Text: c."), ("A", "B")) == {"fill": ["", "c"], "choices": ["A", "B"]}


def test_probes_spread_over_the_items():
    assert probes(list(range(5))) == [0, 1, 2, 3, 4]
    got = probes(list(range(1000)), 5)
    assert got[0] == 0 and got[-1] == 999 and len(got) == 5


def test_a_chat_run_keeps_exactly_what_the_server_received(srv, tmp_path):
    out = tmp_path / "r"
    r = cli("run", "laobench-translation", "--model", srv.spec(), "--no-cache", "--no-progress", "--out", str(out))
    assert r.returncode == 0, r.stderr
    tpl = json.loads((out / "run.json").read_text(encoding="utf-8"))["prompt_template"]
    assert tpl == json.loads((out / "results.json").read_text(encoding="utf-8"))["prompt_template"]
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    received = sorted(json.dumps(q["messages"], ensure_ascii=False) for q in srv.requests())
    kept = sorted(json.dumps(join(tpl, s["prompt"])["messages"], ensure_ascii=False) for s in samples)
    assert kept == received and len(kept) == 8


class BaseModel(ModelBase):
    """A base model (plain-text prompts) that answers nothing useful and records what it got."""

    def __init__(self):
        super().__init__("base", spec="python:base-model")
        self.got: dict[str, str] = {}

    def prompt_form(self):
        return "text"

    async def generate(self, prompt, config, *, item_id="", repeat=0):
        self.got[item_id] = prompt.text
        return Response(text="Sure! Here is", finish_reason="stop", latency_s=0.0)


def test_a_base_models_zero_is_debuggable_from_the_run_directory(tmp_path):
    """The text form with its few-shot part: the run directory alone gives every prompt back, and
    the cached re-run (scores read from the cache) keeps them too."""
    model = BaseModel()
    opts = dict(limit=20, progress=False, cache_path=str(tmp_path / "c.sqlite"))
    res = evaluate("vi-diacritics", model, RunOptions(out=str(tmp_path / "r"), **opts))
    assert res.results["scores"]["overall"]["sentence_exact"]["value"] == 0.0
    for run in ("r", "again"):
        if run == "again":
            evaluate("vi-diacritics", BaseModel(), RunOptions(out=str(tmp_path / run), **opts))
        d = tmp_path / run
        tpl = json.loads((d / "run.json").read_text(encoding="utf-8"))["prompt_template"]
        assert tpl["form"] == "text" and "Output: {" in tpl["parts"][0]["head"]  # the few-shot part, once
        samples = [json.loads(x) for x in (d / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
        assert {s["id"]: join(tpl, s["prompt"])["text"] for s in samples} == model.got
        assert all(len(s["prompt"]["fill"][0]) < 200 for s in samples)


def test_glotbench_prompt_prints_what_a_run_sends(srv, tmp_path):
    bench = get_benchmark("vi-diacritics")
    item = bench.load()[7]
    r = cli("prompt", "vi-diacritics", "--item", item.id, "--form", "text")
    assert r.returncode == 0, r.stderr
    assert r.stdout == bench.render(item.to_public()).text + "\n"
    assert f"item {item.id} · text form" in r.stderr and "stop" in r.stderr
    srv.configure()
    run = cli("run", "vi-diacritics", "--model", srv.spec(), "--limit", "8", "--no-cache", "--no-progress",
              "--out", str(tmp_path / "r"))
    assert run.returncode == 0, run.stderr
    sent = next(q["messages"] for q in srv.requests() if item.public["text"] in q["messages"][-1]["content"])
    j = cli("prompt", "vi-diacritics", "--item", item.id, "--json")
    assert j.returncode == 0 and json.loads(j.stdout) == {"messages": sent}, j.stdout


def test_glotbench_prompt_takes_the_form_of_a_model_without_torch(tmp_path):
    """`--model local`: the embedded base model gets the text form; no weights, no torch (a torch
    that cannot be imported is put first on the path)."""
    fake = tmp_path / "fake"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text("raise ImportError('torch was imported')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(fake), os.environ.get("PYTHONPATH", "")])}
    r = cli("prompt", "vi-diacritics", "--model", "local", env=env)
    assert r.returncode == 0, r.stderr
    assert "text form" in r.stderr and "for local" in r.stderr and r.stdout.rstrip().endswith("Output:")
    loglik = cli("prompt", "laobench-mcq", "--bench-opt", "method=loglik", "--json", env=env)
    assert loglik.returncode == 0 and json.loads(loglik.stdout)["choices"] == [" A", " B", " C", " D"], loglik.stdout


@pytest.mark.parametrize("args,fragment", [
    (["vi-diacritics", "--item", "no-such-item"], "no item 'no-such-item'"),
    (["vi-diacritics", "--form", "html"], "--form must be chat or text"),
    (["vi-diacritics", "--form", "chat", "--model", "local"], "not both"),
    (["no-such-benchmark"], "no-such-benchmark"),
    (["vi-diacritics", "--data", "/nonexistent.jsonl"], "nonexistent.jsonl"),
])
def test_glotbench_prompt_bad_input_is_one_line(args, fragment):
    r = cli("prompt", *args)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and fragment in lines[0], r.stderr

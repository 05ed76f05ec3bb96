"""Fixes found by the type check (mypy in .ci/run, issue 33): each test is a case mypy flagged as a
real fault, not only a missing annotation."""

from __future__ import annotations

import dataclasses
import json

from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.engine.prompts import whole
from glotbench.models.base import ModelBase, Prompt, Response
from glotbench.registry import get_benchmark


class Echo(ModelBase):
    def __init__(self) -> None:
        super().__init__("echo", spec="python:echo")

    async def generate(self, prompt, config, *, item_id="", repeat=0):
        return Response(text="ສະບາຍດີ", finish_reason="stop", latency_s=0.0)


def test_a_run_whose_prompts_fit_no_template_keeps_each_prompt_whole(tmp_path):
    """Chat messages with a part that is not text (a list content, an extra key): no template is
    learnt, and each sample keeps its prompt whole (the fallback was called with its arguments swapped
    and every sample failed)."""
    base = get_benchmark("laobench-translation")

    class Named(type(base)):  # type: ignore[misc]
        def render(self, item):
            p = super().render(item)
            return dataclasses.replace(p, messages=tuple({**m, "name": "glot"} for m in p.messages))

    bench = Named()
    res = evaluate(bench, Echo(), RunOptions(out=str(tmp_path / "r"), limit=3, progress=False, use_cache=False))
    assert res.results["counts"]["failed"] == 0
    run = json.loads((tmp_path / "r" / "run.json").read_text(encoding="utf-8"))
    assert run["prompt_template"] is None
    samples = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    items = {it.id: it for it in bench.load()}
    assert len(samples) == 3
    for s in samples:
        assert s["prompt"] == whole(bench.render(items[s["id"]].to_public()), "chat")
        assert s["prompt"]["messages"][0]["name"] == "glot"


def test_a_pairwise_verdict_with_a_number_over_pythons_digit_limit_is_a_malformed_verdict():
    """json.loads raises a plain ValueError (no `msg`) for an integer over 4,300 digits: the reply is a
    malformed verdict (asked again, then counted), not an AttributeError."""
    import pytest

    from glotbench.judges.pairwise import VerdictError, parse_verdict

    for reply in ("1" * 5000, '{"winner": "A", "notes": {"x": ' + "9" * 5000 + "}}"):
        with pytest.raises(VerdictError, match="not a JSON object"):
            parse_verdict(reply)
    with pytest.raises(VerdictError, match=r"not a JSON object \(Expecting value\)"):
        parse_verdict("nope")

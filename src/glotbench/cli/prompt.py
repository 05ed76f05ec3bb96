"""`glotbench prompt`: the exact prompt of one item of a benchmark, without calling a model."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from glotbench.cli.options import BenchOpt, Data


def prompt(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name (see `glotbench list`).")],
    item: Annotated[Optional[str], typer.Option("--item", help="The item's id (default: the first item).")] = None,
    data: Data = None,
    bench_opt: BenchOpt = [],
    form: Annotated[Optional[str], typer.Option("--form", help="chat (what a chat model gets) or text (a base model's plain prompt).")] = None,
    model: Annotated[Optional[str], typer.Option("--model", "-m", help="Take the form this model spec gets (loads no weights).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the prompt as JSON (messages or text), exactly as sent.")] = False,
) -> None:
    """Print the prompt a run sends for one item (chat messages, or the plain text with its few-shot
    part); its form, stops and reply cap go to stderr. No model is called."""
    import json

    from glotbench.cli.options import split_pairs
    from glotbench.engine.prompts import item_prompt, show
    from glotbench.errors import GlotbenchError

    if form is not None and model is not None:
        raise GlotbenchError("give --form or --model, not both")
    if form is not None and form not in ("chat", "text"):
        raise GlotbenchError(f"--form must be chat or text, got {form!r}")
    chosen = form or "chat"
    if model is not None:
        from glotbench.registry import load_model

        chosen = load_model(model).prompt_form()  # from the spec and the model's files: no weights, no torch
    p = item_prompt(benchmark, item, data=data, form=chosen, bench_options=split_pairs(list(bench_opt)))
    how = "a chat model's messages" if p.form == "chat" else "a base model's plain text"
    sent = (" · the choices are scored by log-likelihood" if "choices" in p.prompt else
            f" · stop {json.dumps(list(p.stop), ensure_ascii=False)} · max_tokens {p.max_tokens}")
    typer.echo(f"# {p.benchmark} v{p.version} · item {p.item_id} · {p.form} form ({how})"
               + (f" for {model}" if model else "") + sent, err=True)
    if as_json:
        typer.echo(json.dumps(p.prompt, ensure_ascii=False, indent=2))
    else:
        typer.echo(show(p.prompt))


def register(app: typer.Typer) -> None:
    app.command()(prompt)

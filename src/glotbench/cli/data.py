"""`glotbench build contamination` (hidden alias `contamination`): checks on benchmark data rather than on models."""

from __future__ import annotations

from typing import Annotated

import typer

from glotbench.cli.options import Data, alias


def contamination(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name.")],
    corpus: Annotated[list[str], typer.Argument(help="Reference corpus text files.")],
    data: Data = None,
    char_n: Annotated[int, typer.Option(help="Character n-gram length for scripts without spaces (Lao, Thai, ...).")] = 50,
    word_n: Annotated[int, typer.Option(help="Word n-gram length for other scripts.")] = 13,
) -> None:
    """Share of items that share a long n-gram with a corpus, and the overlapping item ids."""
    import json

    from glotbench.registry import get_benchmark
    from glotbench.contamination import check

    res = check(get_benchmark(benchmark).load(data), corpus, char_n=char_n, word_n=word_n)
    typer.echo(f"{res['overlapping']} of {res['items']} items ({100 * res['share']:.1f}%) share an n-gram "
               f"with the corpus (chars {char_n}, words {word_n})")
    typer.echo(json.dumps(res["overlapping_ids"], ensure_ascii=False))


def register(app: typer.Typer) -> None:
    alias(app, "contamination", contamination)

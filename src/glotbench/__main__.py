"""`python -m glotbench`, and the `glotbench` console script (pyproject: `glotbench.__main__:main`).

The cyclic collector is off while the command starts: typer, pydantic (typer builds a pydantic
adapter for every option; rows are read through pydantic schemas) and glotbench make module
objects, not garbage, yet at the tuned threshold those imports alone set off several full-size young
collections. `cli.app.main` freezes what start-up made and turns the collector on, tuned."""

import gc


def main() -> None:
    gc.disable()
    import pydantic  # noqa: F401 - see the module docstring
    from pydantic import BaseModel, TypeAdapter  # noqa: F401 - pydantic's lazily imported core

    from glotbench.cli.app import main as run_command

    run_command()


if __name__ == "__main__":
    main()

"""`python -m glotbench`, and the `glotbench` console script (pyproject: `glotbench.__main__:main`).

The cyclic collector is off while the command starts: typer, pydantic (typer builds a pydantic
adapter for every option; rows are read through pydantic schemas) and glotbench make module
objects, not garbage, yet at the tuned threshold those imports alone set off several full-size young
collections. `cli.app.main` freezes what start-up made and turns the collector on, tuned.

OpenBLAS, numpy's linear algebra, starts a thread per core when numpy is imported, and each thread
spins for about 2^28 cycles (OPENBLAS_THREAD_TIMEOUT's default, 28) before it sleeps, after start-up
and after every call it shares: on 2 cores, 100 ms of CPU for nothing in every command that imports
numpy, a tenth of a 2,000-request run's (docs/performance.md). The command sets the shortest wait (4:
2^4 cycles) unless the user set one; the threads still share large products (the build toolkit's)."""

import gc
import os


def main() -> None:
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # read when numpy loads OpenBLAS: before any import
    gc.disable()
    import pydantic  # noqa: F401 - see the module docstring
    from pydantic import BaseModel, TypeAdapter  # noqa: F401 - pydantic's lazily imported core

    from glotbench.cli.app import main as run_command

    run_command()


if __name__ == "__main__":
    main()

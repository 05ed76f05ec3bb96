"""The `glotbench` command line (`app`, `main`; the console script and `python -m glotbench` run `glotbench.__main__:main`)."""

from glotbench.cli.app import app, main

__all__ = ["app", "main"]

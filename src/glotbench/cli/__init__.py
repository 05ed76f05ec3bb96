"""The `glotbench` command line (entry point `glotbench.cli:main`, also `python -m glotbench`)."""

from glotbench.cli.app import app, main

__all__ = ["app", "main"]

"""A pytest plugin that loads torch before the first test, as on the xdist worker that ran the
embedded-model group first (issue 32): every later `cli()` of that process spawned a fresh
interpreter. With TORCHMODE=twin the test process forks its twin first (tests/conftest.py
`_ForkServer`), and `cli()` forks from it. docs/performance.md, "The worker that holds the model":

    PYTHONPATH=src:bench TORCHMODE=spawn /usr/bin/time python -m pytest -n 0 -q -p suite_torch_loaded tests/test_cli_inputs.py
    PYTHONPATH=src:bench TORCHMODE=twin  /usr/bin/time python -m pytest -n 0 -q -p suite_torch_loaded tests/test_cli_inputs.py
"""

from __future__ import annotations

import os

_STARTED: list[bool] = []


def pytest_runtest_setup(item) -> None:
    if _STARTED:
        return
    _STARTED.append(True)
    import conftest  # tests/conftest.py, imported by pytest before any test runs

    if os.environ.get("TORCHMODE") == "twin":
        assert conftest._fork_safe(), "a thread is running or torch is loaded already"
        conftest._FORK_SERVER.append(conftest._ForkServer())
    import torch  # noqa: F401 - what the model tests leave loaded in the worker

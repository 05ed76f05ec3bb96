"""`--bench-opt` values: one typed conversion for every benchmark (benchmarks/options.py)."""

from __future__ import annotations

from typing import Optional

import pytest

from glotbench.benchmarks.options import build, convert_options, parse_bool, parse_value
from glotbench.registry import get_benchmark
from glotbench.errors import SpecError


@pytest.mark.parametrize("text, value", [("true", True), ("YES", True), ("1", True), (" On ", True),
                                         ("false", False), ("No", False), ("0", False), ("off", False)])
def test_parse_bool_accepts_the_usual_spellings(text, value):
    assert parse_bool(text) is value


@pytest.mark.parametrize("text", ["maybe", "", "2", "tru", "nein", "ຈິງ"])
def test_parse_bool_rejects_everything_else(text):
    with pytest.raises(SpecError, match="must be true or false"):
        parse_bool(text, "flag")


@pytest.mark.parametrize("text, value", [("true", True), ("no", False), ("42", 42), ("-3", -3), ("0.25", 0.25),
                                         ("1e3", 1000.0), ("loglik", "loglik"), ("ພາສາລາວ", "ພາສາລາວ"), ("", "")])
def test_parse_value_of_undeclared_type(text, value):
    got = parse_value(text)
    assert got == value and type(got) is type(value)


class _Toy:
    def __init__(self, task: str, flag: bool = False, n: int = 3, ratio: float = 0.5, name: str = "x",
                 maybe_n: Optional[int] = None, free=None):
        self.kw = dict(task=task, flag=flag, n=n, ratio=ratio, name=name, maybe_n=maybe_n, free=free)


def test_values_follow_the_declared_types():
    toy = build(_Toy, {"flag": "yes", "n": "7", "ratio": "2", "name": "007", "maybe_n": "5", "free": "1.5"}, "t")
    assert toy.kw == dict(task="t", flag=True, n=7, ratio=2.0, name="007", maybe_n=5, free=1.5)
    assert type(toy.kw["ratio"]) is float and type(toy.kw["name"]) is str


@pytest.mark.parametrize("options, fragment", [
    ({"flag": "maybe"}, "flag must be true or false"),
    ({"n": "3.5"}, "n must be an integer"),
    ({"ratio": "half"}, "ratio must be a number"),
    ({"maybe_n": "none"}, "maybe_n must be an integer"),
    ({"colour": "red"}, "has no option 'colour'; its options: flag, free, maybe_n, n, name, ratio"),
])
def test_bad_values_and_unknown_names_are_errors(options, fragment):
    with pytest.raises(SpecError, match="toy") as e:
        convert_options(_Toy, options, name="toy")
    assert fragment in str(e.value)


def test_typed_values_pass_through():
    assert convert_options(_Toy, {"flag": False, "n": 9}, name="toy") == {"flag": False, "n": 9}


def test_registered_benchmarks_use_it():
    assert get_benchmark("deepsea-mgsm", native_digits="false").native_digits is False
    assert get_benchmark("deepsea-mgsm", native_digits="1").native_digits is True
    assert get_benchmark("deepsea-mgsm").native_digits is True
    with pytest.raises(SpecError, match="native_digits must be true or false"):
        get_benchmark("deepsea-mgsm", native_digits="maybe")
    with pytest.raises(SpecError, match="vi-diacritics has no option 'method'"):
        get_benchmark("vi-diacritics", method="loglik")
    assert get_benchmark("laobench-mcq", method="loglik").method == "loglik"

"""rev33d (issue #33 review): `RunOptions.model_prices` from Python (`glotbench.evaluate(...)`) took a
spec priced twice, and the budget kept the last silently (engine/cost.py `RunBudget` keys them by
spec), where `--price-of` refuses it; `model_prices=None` was a TypeError. Both are one error now."""

from __future__ import annotations

import pytest

from glotbench.engine.options import RunOptions
from glotbench.errors import GlotbenchError


@pytest.mark.parametrize(("prices", "says"), [
    ((("openai:j@http://h/v1", 1, 2), ("openai:j@http://h/v1", 3, 4)), "--price-of openai:j@http://h/v1 is given twice"),
    ([["ollama:ກ", 1, 2], ["x", 0, 0], ["ollama:ກ", 1, 2]], "--price-of ollama:ກ is given twice"),
    (None, "model_prices must be (SPEC, PRICE_IN, PRICE_OUT) triples, got None"),
    (7, "model_prices must be (SPEC, PRICE_IN, PRICE_OUT) triples, got 7"),
])
def test_bad_model_prices_are_one_error(prices, says):
    with pytest.raises(GlotbenchError) as e:
        RunOptions(model_prices=prices)
    assert says in str(e.value), str(e.value)


def test_distinct_specs_are_kept_in_order():
    got = RunOptions(model_prices=[("b", 1, 2), ("a", 3, 4)]).model_prices
    assert got == (("b", 1, 2), ("a", 3, 4))

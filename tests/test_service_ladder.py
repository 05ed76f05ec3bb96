"""Differencing attacks against the running service, with the daily limit lifted: partial
submissions, single-answer flips and the boosting attack of Blum & Hardt (ICML 2015, section 6).
Each attacker turns what the service releases into guessed gold answers; the guesses must be no
better than chance (a one-sided binomial test at 0.1%)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy.stats import binom

from service_helpers import make_mcq_set, start

N = 400


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    from glotbench.service.core import Service, Settings

    tmp = tmp_path_factory.mktemp("ladder")
    gold = make_mcq_set(tmp / "hidden.jsonl", N, seed=7)
    db = f"sqlite:///{tmp}/db.sqlite"
    svc = Service(Settings(db_url=db))
    svc.load_set("hidden", "laobench-mcq", str(tmp / "hidden.jsonl"))
    svc.rotate("hidden")
    keys = {name: svc.create_key(name)[1] for name in ("partial", "flip", "boost")}
    s = start(db, "--daily-limit", "100000", "--rate-per-minute", "100000", "--min-group", "20")
    s.keys.update(keys)
    yield s, gold
    s.stop()


def chance_bound(n: int, p: float = 0.25) -> float:
    """The accuracy a pure guesser exceeds with probability < 0.1%."""
    return binom.ppf(0.999, n, p) / n


def released(s, key, answers):
    r = s.call("POST", "/api/submissions", key, json={"set": "hidden", "model": "m", "answers": answers})
    assert r.status_code == 200, r.text
    res = r.json()["result"]
    return res["score"], res["subdomains"]


def accuracy(guess: dict[str, str], gold: dict[str, str]) -> tuple[int, int]:
    return sum(guess[i] == gold[i] for i in guess), len(guess)


def test_partial_submission_attack(board):
    s, gold = board
    ids = sorted(gold)[:40]
    guess = {}
    for i in ids:
        r = s.call("POST", "/api/submissions", "partial", json={"set": "hidden", "model": "m", "answers": {i: "C"}})
        assert r.status_code == 400 and "answers every item" in r.json()["error"]
        guess[i] = "C"  # what the attacker would conclude from a score of 100; refused, it only has its guess
    r = s.call("GET", "/api/submissions/1", "partial")
    assert r.status_code == 404  # nothing stored, nothing charged
    k, n = accuracy(guess, gold)
    assert k / n <= chance_bound(n)


def test_single_flip_attack(board):
    s, gold = board
    ids = sorted(gold)
    base = {i: "A" for i in ids}
    head0, cells0 = released(s, "flip", base)
    guess = {}
    for i in ids[:80]:
        head, cells = released(s, "flip", {**base, i: "B"})
        ups = [head > head0] + [cells.get(g, 0) > v for g, v in cells0.items()]
        downs = [head < head0] + [cells.get(g, 0) < v for g, v in cells0.items()]
        guess[i] = "B" if any(ups) else "A" if any(downs) else "C"  # unchanged: neither A nor B
    k, n = accuracy(guess, gold)
    assert k / n <= chance_bound(n), (k, n)


def test_boosting_attack(board):
    """Random complete submissions; each one's released score weights its answers' votes."""
    s, gold = board
    ids = sorted(gold)
    rng = random.Random(3)
    subs, scores = [], []
    for _ in range(150):
        a = {i: "ABCD"[rng.randrange(4)] for i in ids}
        subs.append(a)
        scores.append(released(s, "boost", a)[0])
    w = np.asarray(scores) - np.mean(scores)
    votes = {i: dict.fromkeys("ABCD", 0.0) for i in ids}
    for a, wi in zip(subs, w):
        for i, v in a.items():
            votes[i][v] += wi
    guess = {i: max("ABCD", key=lambda c: (votes[i][c], c == "A")) for i in ids}
    k, n = accuracy(guess, gold)
    assert k / n <= chance_bound(n), (k, n)

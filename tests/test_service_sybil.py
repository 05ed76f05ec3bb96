"""Many keys against one private set (issue 22, item 3), over real HTTP: each fresh key's first release
is a yes/no test of one item when every key rounds on the same public grid. The attack of the issue:
find two answer vectors one item apart whose releases differ (a rounding boundary), then, one fresh
key per test, change one more answer and watch whether the release crosses. With a secret rounding
offset per key (service/keys.py) the boundary found with some keys is not where any other key's
lies: the labels the attack recovers are no better than chance, and a key's release moves with one
answer for a fraction `item weight / step` of keys only. Near-copies across keys are flagged.

Figures (docs/service.md, "Many keys"): `python -m pytest tests/test_service_sybil.py -s` prints them.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from scipy.stats import binom

from service_helpers import make_mcq_set, start

N = 200  # items: one item is 0.5 points; a key's first release has a step of 5
ATTACK_KEYS = 100  # the attack recovered 41 of 200 answers with 97 keys
VOTE_KEYS = 100  # keys per arm of the distinguishing measurement


def _hidden_board(tmp_path_factory, name: str, n: int, seed: int):
    """A served set of n random-gold MCQ items with limits no attack meets: (service, Service, gold)."""
    from glotbench.service.core import Service, Settings

    tmp = tmp_path_factory.mktemp(name)
    gold = make_mcq_set(tmp / "hidden.jsonl", n, seed=seed, groups=1)
    db = f"sqlite:///{tmp}/db.sqlite"
    svc = Service(Settings(db_url=db))
    svc.load_set("hidden", "laobench-mcq", str(tmp / "hidden.jsonl"))
    svc.rotate("hidden")
    s = start(db, "--daily-limit", "100000", "--rate-per-minute", "100000", "--min-group", "1000")
    yield s, svc, gold
    s.stop()


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    yield from _hidden_board(tmp_path_factory, "sybil", N, 11)


class Attacker:
    """Submits each answer vector with a fresh key (its own organisation: the operator would have
    to hand out that many organisations) and reads the released headline."""

    def __init__(self, s, svc):
        self.s, self.svc, self.keys = s, svc, 0

    def fresh(self, answers: dict[str, str]) -> float:
        from glotbench.service.db import ApiKey

        kid, key = self.svc.create_key(f"sybil-{self.keys}")
        with self.svc.Session.begin() as ss:  # a fixed secret per key: the same figures on every run
            ss.get(ApiKey, kid).grid_secret = hashlib.sha256(f"sybil-{kid}".encode()).hexdigest()
        self.keys += 1
        r = self.s.call("POST", "/api/submissions", key, json={"set": "hidden", "model": "m", "answers": answers})
        assert r.status_code == 200, r.text
        return r.json()["result"]["score"]


def find_boundary(att: Attacker, ids: list[str]) -> tuple[dict[str, str], float, int]:
    """Two vectors one answer apart with different releases: (the lower one, the higher release, the
    item where they differ). Vectors: the first t items answered `lo`, the rest `hi`; bisect on t."""
    for lo, hi in (("A", "B"), ("A", "C"), ("B", "D"), ("C", "D"), ("A", "D"), ("B", "C")):
        def vec(t: int) -> dict[str, str]:
            return {i: (lo if n < t else hi) for n, i in enumerate(ids)}
        a, b = 0, len(ids)
        ra, rb = att.fresh(vec(a)), att.fresh(vec(b))
        if ra == rb:
            continue
        while b - a > 1:
            m = (a + b) // 2
            rm = att.fresh(vec(m))
            if rm != ra:
                b, rb = m, rm
            else:
                a, ra = m, rm
        low, high = (vec(a), rb) if rb > ra else (vec(b), ra)
        return low, high, a
    raise AssertionError("no two letter pairs gave different releases")


def boundary_attack(att: Attacker, ids: list[str], budget: int) -> dict[str, str]:
    """The issue's attack: labels read from whether one changed answer moves a fresh key's release
    from the boundary's lower side to its higher one."""
    base, high, pivot = find_boundary(att, ids)
    labels: dict[str, str] = {}
    for n, i in enumerate(ids):
        if n == pivot:
            continue
        for letter in "ABCD":
            if letter == base[i]:
                continue
            if att.keys >= budget:
                return labels
            if att.fresh({**base, i: letter}) >= high:  # moved up: `letter` is this item's answer
                labels[i] = letter
                break
        else:
            labels[i] = base[i]  # none of the others moved it: the base's letter, by elimination
    return labels


def chance_bound(n: int, p: float = 0.25) -> float:
    """The accuracy a guesser exceeds with probability < 0.1%."""
    return binom.ppf(0.999, n, p) / n


def test_the_boundary_attack_recovers_no_more_than_chance(board):
    s, svc, gold = board
    ids = sorted(gold)
    att = Attacker(s, svc)
    labels = boundary_attack(att, ids, ATTACK_KEYS)
    right = sum(labels[i] == gold[i] for i in labels)
    print(f"\nboundary attack: {att.keys} keys, {len(labels)} labels, {right} right "
          f"(chance {len(labels) / 4:.1f}, 0.1% bound {chance_bound(len(labels)) * len(labels):.0f})")
    assert labels and right / len(labels) <= chance_bound(len(labels)), (right, len(labels))
    # Every test vector of the attack is one answer away from another key's: flagged for the operator.
    flagged = svc.flagged()
    assert len(flagged) >= 0.9 * (att.keys - 20), (len(flagged), att.keys)
    assert all("near-copy of submission" in f["flag"] for f in flagged)


def test_one_answer_moves_a_fresh_keys_release_for_few_keys(board):
    """The quantity the attack lives on: for one item, the same base with its right answer and with a
    wrong one, each on fresh keys; how far apart are the two distributions of releases (total
    variation)? 1 when all keys share a grid and the base sits on a boundary; here about the item's
    weight over the step (0.5 / 5 = 0.1). A majority vote needs about (z_0.95 + z_0.95)^2 p(1 - p) / d^2
    keys to tell one label at 95% confidence each way: that is the keys per recovered label."""
    s, svc, gold = board
    ids = sorted(gold)
    att = Attacker(s, svc)
    base, _, pivot = find_boundary(att, ids)
    target = next(i for n, i in enumerate(ids) if n != pivot and base[i] != gold[i])
    wrong = next(x for x in "ABCD" if x not in (gold[target], base[target]))
    arms = {}
    for name, letter in (("right", gold[target]), ("wrong", wrong)):
        arms[name] = [att.fresh({**base, target: letter}) for _ in range(VOTE_KEYS)]
    values = set(arms["right"]) | set(arms["wrong"])
    tv = 0.5 * sum(abs(arms["right"].count(v) - arms["wrong"].count(v)) / VOTE_KEYS for v in values)
    se = (0.5 / VOTE_KEYS) ** 0.5  # about the sampling error of one arm's share
    print(f"\none-answer distinguishability over HTTP: TV {tv:.3f} with {VOTE_KEYS} keys per arm "
          f"(the offsets' own: 0.100); keys per recovered label at 95%/95%: {keys_per_label(0.1):.0f}")
    assert tv <= 0.1 + 3 * se, arms


def keys_per_label(tv: float) -> float:
    """Keys a vote needs to tell a label with 5% error each way when one key's release differs between
    the two answers with probability `tv`: ((z_0.95 + z_0.95) * 0.5 / tv)^2."""
    return (2 * 1.645 * 0.5 / tv) ** 2


@pytest.mark.parametrize("items, step", [(200, 5.0), (50, 10.0)])  # a 200-item headline; a 50-item cell
def test_the_offsets_make_one_release_differ_for_a_weight_over_step_share_of_keys(items, step):
    """The mechanism itself, without sampling: over offsets spread evenly on [-0.5, 0.5), two scores
    one item apart (100/m points) round to different multiples of the step for exactly a share
    (100/m)/step of keys (0.1 for 200 items and a step of 5, the figure behind 271 keys per label;
    0.2 for a 50-item cell, step 10: 68), wherever the scores lie; with one shared grid, 0 or 1."""
    from glotbench.service.scoring import rounded

    w = 100 / items
    offsets = (np.arange(10_000) + 0.5) / 10_000 - 0.5
    for score in (20.0, 22.5, 23.0, 24.5, 61.5, 97.5 - w):
        a = np.array([rounded(score, step, 1, o) for o in offsets])
        b = np.array([rounded(score + w, step, 1, o) for o in offsets])
        assert abs((a != b).mean() - w / step) < 0.002, score
        assert abs(a.mean() - score) < 0.01  # unbiased over keys
    print(f"\n{items} items, step {step:g}: share {w / step:.2f}, keys per recovered label {keys_per_label(w / step):.0f}")
    assert {rounded(22.5, 5.0, 1) != rounded(23.0, 5.0, 1), rounded(20.0, 5.0, 1) != rounded(20.5, 5.0, 1)} == {True, False}


@pytest.fixture(scope="module")
def board_100(tmp_path_factory):
    """A 100-item set: one where 50/sqrt(m) is itself a step (5), so the sample standard deviation of a
    score near 50% (ddof 1: 50.25/sqrt(m) for 46-54 right answers) lies above it."""
    yield from _hidden_board(tmp_path_factory, "sybil100", 100, 5)


def test_a_first_releases_step_tells_nothing_about_the_score(board_100):
    """Every key's first release must be made on a grid that does not depend on the answers: the
    released `ladder_step` is the same for every submission, whatever its exact score. (A step taken
    from the submission's own standard error was 10 instead of 5 for exactly 46 to 54 right answers
    of 100 — a boundary shared by every key, whatever its secret offset: one fresh key per label.)
    The attack: an attacker whose model knows 70% of the answers mixes its answers with a filler
    letter to walk the score across 45.5 right answers, then tests one letter per fresh key."""
    import random

    s, svc, gold = board_100
    ids = sorted(gold)
    rng = random.Random(7)
    model = {i: gold[i] if rng.random() < 0.7 else rng.choice([x for x in "ABCD" if x != gold[i]]) for i in ids}
    att = Attacker(s, svc)
    steps: dict[int, float] = {}

    def step_of(answers: dict[str, str]) -> float:
        r = s.call("POST", "/api/submissions", _fresh_key(att), json={"set": "hidden", "answers": answers})
        assert r.status_code == 200, r.text
        return r.json()["result"]["ladder_step"]

    def vec(t: int) -> dict[str, str]:
        return {i: model[i] if n < t else "A" for n, i in enumerate(ids)}

    for t in range(0, 101, 5):
        steps[t] = step_of(vec(t))
    labels: dict[str, str] = {}
    low = next((t for t in range(0, 100, 5) if steps[t + 5] > steps[t] == steps[0]), None)
    if low is not None:  # a step boundary crossed between t and t + 5: find the item that crosses it
        t = low
        while t + 1 < low + 5 and step_of(vec(t + 1)) == steps[low]:
            t += 1
        base = vec(t)  # one answer short of the larger step
        for i in ids[t + 1:t + 1 + 12]:
            for letter in "BCD":
                if step_of({**base, i: letter}) > steps[low]:
                    labels[i] = letter
                    break
            else:
                labels[i] = "A"
    right = sum(labels[i] == gold[i] for i in labels)
    print(f"\nstep attack: {att.keys} keys, steps seen {sorted(set(steps.values()))}, {len(labels)} labels, {right} right")
    assert len(set(steps.values())) == 1, steps
    assert not labels or right / len(labels) <= chance_bound(len(labels)), (right, len(labels))


def _fresh_key(att: Attacker) -> str:
    att.keys += 1
    return att.svc.create_key(f"step-{att.keys}")[1]

"""Colluding keys against the release decision (issue 31). Before: a later submission was released
when `new > best + step`, with the step computed from the two submissions' paired difference — the
same function for every key, and the reply carried `improved` and `ladder_step`. The issue's attack
(60 fresh keys, each its own organisation: a random base, then two submissions differing from it in
a few items) read 49 of 49 labels of a 200-item set, 1.22 keys per label; with two labels known
beforehand, one fresh key read one label. Now the step depends on m alone and the decision is
randomised per key and per submission (service/scoring.py, `climb`; service/keys.py,
`release_margin`).

Here: the issue's attack over HTTP (60 keys, 200 items) and offline at 200 and 10,000 items; the
stronger known-labels attack offline (the decision placed mid-margin with known labels, one test
item per key), its keys per label measured from the total variation between its transcripts. Every
figure is printed (`python -m pytest tests/test_service_collusion.py -s`; docs/service.md, "Many keys").
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter

import numpy as np
import pytest

from service_helpers import make_mcq_set, start

ISSUE_KEYS = 60
CHANGED = 3  # items changed per probe, as in the issue ("a few")


def keys_per_label(tv: float) -> float:
    """Keys a vote needs to tell one label with 5% error each way when one key's transcript differs
    between the two answers with probability `tv`: ((z_0.95 + z_0.95) * 0.5 / tv)^2."""
    return math.inf if tv <= 0 else (2 * 1.645 * 0.5 / tv) ** 2


class Board:
    """The service's release path (scoring.release with the keys' real secrets and draws) on score
    values alone: what a key is told, without HTTP. Per-item vectors only size the step."""

    def __init__(self, m: int, noise: float | None = None):
        from glotbench.service.core import Settings
        from glotbench.service.scoring import Step

        self.m, self.w, st = m, 100.0 / m, Settings()
        self.step = Step(0.0, st.release_noise if noise is None else noise)
        self.digits, self.zeros = st.round_digits, np.zeros(m)
        self.sub = 0

    def key(self, rng: random.Random) -> "KeyState":
        return KeyState(self, "%064x" % rng.getrandbits(256))


class KeyState:
    def __init__(self, board: Board, secret: str):
        self.b, self.secret, self.rungs = board, secret, {}

    def submit(self, score: float) -> dict:
        from glotbench.service import keys as keys_
        from glotbench.service.scoring import Aggregate, Number, release

        b = self.b
        b.sub += 1
        sid = b.sub
        half = 1.96 * math.sqrt(max(score * (100 - score), 1.0) / b.m)
        agg = Aggregate("accuracy", b.m, b.m, Number(score, b.zeros, (score - half, score + half)), {})
        out, self.rungs = release(agg, self.rungs, step=b.step, min_group=10**9, digits=b.digits,
                                  offsets=lambda cell, what: keys_.grid_offset(self.secret, 1, cell, what),
                                  decide=lambda cell: keys_.release_margin(self.secret, 1, cell, sid),
                                  noise=lambda cell: keys_.release_noise(self.secret, 1, cell, sid))
        return out


def issue_attack_offline(m: int, keys: int, seed: int) -> tuple[int, int]:
    """The issue's attack on the release path: per key a random base, then two probes, each the base
    with CHANGED items given another letter. A probe whose reply differs from the base's (improved,
    another step, another score) is read as 'the new letters are right'. Returns (labels, right)."""
    rng = random.Random(seed)
    gold = [rng.randrange(4) for _ in range(m)]
    b = Board(m)
    labels: dict[int, int] = {}
    for _ in range(keys):
        k = b.key(rng)
        base = [rng.randrange(4) for _ in range(m)]
        first = k.submit(100.0 * sum(x == g for x, g in zip(base, gold)) / m)
        for _probe in range(2):
            changed = {i: (base[i] + rng.randrange(1, 4)) % 4 for i in rng.sample(range(m), CHANGED)}
            vec = [changed.get(i, x) for i, x in enumerate(base)]
            out = k.submit(100.0 * sum(x == g for x, g in zip(vec, gold)) / m)
            if (out["improved"], out["ladder_step"], out["score"]) != (False, first["ladder_step"], first["score"]):
                labels.update(changed)
    return len(labels), sum(gold[i] == x for i, x in labels.items())


@pytest.mark.parametrize("m", [200, 10_000])
def test_the_issues_attack_offline_reads_no_label(m):
    labels, right = issue_attack_offline(m, ISSUE_KEYS, seed=m)
    print(f"\nissue's attack offline, {m} items, {ISSUE_KEYS} keys: {labels} labels, {right} right")
    assert labels == 0, (labels, right)


def known_labels_transcripts(m: int, keys: int, delta: float, seed: int) -> Counter:
    """The strongest use of the decision we found: the attacker knows enough labels to move a score
    by exact amounts. Base (first release): the known items wrong. Probe: the known items that place
    the gain mid-margin (1 + DECISION_NOISE/2 steps) made right, plus the test item moved by `delta`
    (+w if the candidate letter is right, 0 if not); sent twice while not released (fresh draws).
    A key's transcript: (released?, released change in steps) per probe."""
    from glotbench.service.scoring import DECISION_NOISE

    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    b = Board(m)
    s = b.step.size(m)
    gain = b.w * round(s * (1 + DECISION_NOISE / 2) / b.w)
    out: Counter = Counter()
    for _ in range(keys):
        k = b.key(rng)
        base = 100.0 * int(nrng.binomial(m, 0.25)) / m
        r1 = k.submit(base)["score"]
        seen = []
        for _probe in range(2):
            o = k.submit(base + gain + delta)
            seen.append((o["improved"], round((o["score"] - r1) / s)))
            if o["improved"]:
                break
        out[tuple(seen)] += 1
    return out


@pytest.mark.parametrize("m, keys", [(200, 4000), (10_000, 4000)])
def test_the_known_labels_attack_needs_over_50_keys_per_label(m, keys):
    """Before: one fresh key per label (the issue: 20 of 20 with two labels known). Now each key's
    transcript differs between 'candidate right' and 'candidate wrong' by a total variation of about
    w / (DECISION_NOISE * step) per probe plus the released value's rounding (w / step when released):
    measured here, with its keys per label (at least 50 asserted, one test item per key)."""
    b = Board(m)
    right = known_labels_transcripts(m, keys, b.w, seed=1)
    wrong = known_labels_transcripts(m, keys, 0.0, seed=2)
    tv = 0.5 * sum(abs(right[t] - wrong[t]) / keys for t in set(right) | set(wrong))
    noise = math.sqrt(len(set(right) | set(wrong)) / keys)  # about the sampling error of the estimate
    print(f"\nknown-labels attack, {m} items: TV {tv:.3f} over {keys} keys per arm (sampling error about "
          f"{noise:.3f}); keys per label at 95%/95%: {keys_per_label(tv):.0f}, at least "
          f"{keys_per_label(tv + noise):.0f} taking the TV at its estimate plus its error; labels per key "
          f"{1 / keys_per_label(tv):.4f}")
    assert keys_per_label(tv + noise) >= 50, (tv, right, wrong)


@pytest.fixture(scope="module")
def board200(tmp_path_factory):
    """A served 200-item set in four 50-item subdomains (released cells), default daily limits."""
    from glotbench.service.core import Service, Settings

    tmp = tmp_path_factory.mktemp("collusion")
    gold = make_mcq_set(tmp / "hidden.jsonl", 200, seed=31, groups=4)
    db = f"sqlite:///{tmp}/db.sqlite"
    svc = Service(Settings(db_url=db))
    svc.load_set("hidden", "laobench-mcq", str(tmp / "hidden.jsonl"))
    svc.rotate("hidden")
    s = start(db, "--rate-per-minute", "100000")
    yield s, svc, gold
    s.stop()


def test_the_issues_attack_over_http_reads_nothing_and_every_probe_is_flagged(board200):
    """60 fresh keys, each its own organisation (the daily limits as shipped: 3 per key), each a
    random base then two probes of CHANGED items. Before: 49 of 49 labels, 1.22 keys per label, no
    key flagged. Now: every reply field of a probe (improved, ladder_step, score, subdomains, CI) is
    the base's, so the decoder reads no label; every probe is flagged, and the pattern counted."""
    from glotbench.service.db import ApiKey

    s, svc, gold = board200
    ids = sorted(gold)
    rng = random.Random(31)
    labels: dict[str, str] = {}
    steps, noise = set(), set()
    for n in range(ISSUE_KEYS):
        kid, key = svc.create_key(f"colluder-{n}")  # no --org: an organisation of its own
        with svc.Session.begin() as ss:  # a fixed secret per key: the same figures on every run
            ss.get(ApiKey, kid).grid_secret = hashlib.sha256(f"colluder-{kid}".encode()).hexdigest()

        def post(answers: dict[str, str]) -> dict:
            r = s.call("POST", "/api/submissions", key, json={"set": "hidden", "model": "m", "answers": answers})
            assert r.status_code == 200, r.text
            return r.json()["result"]

        base = {i: rng.choice("ABCD") for i in ids}
        first = post(base)
        steps.add(first["ladder_step"])
        noise.add(first["noise_sd"])
        for _probe in range(2):
            changed = {i: rng.choice([x for x in "ABCD" if x != base[i]]) for i in rng.sample(ids, CHANGED)}
            out = post({**base, **changed})
            steps.add(out["ladder_step"])
            told = (out["improved"], out["score"], out["subdomains"], out["ci95"])
            if told != (False, first["score"], first["subdomains"], first["ci95"]):
                labels.update(changed)
    right = sum(gold[i] == x for i, x in labels.items())
    probes = [f for f in svc.flagged() if f["flag"].startswith("probe: ")]
    pattern = svc.probing()
    print(f"\nissue's attack over HTTP: {ISSUE_KEYS} keys, {len(labels)} labels, {right} right; "
          f"steps told {sorted(steps)}; {len(probes)} probes flagged; pattern {pattern}")
    assert steps == {5.0}  # from m alone
    assert noise == {21.0}  # 210 * sqrt(2 / 200): the cells are shown, each item is in two numbers
    assert not labels, (len(labels), right)
    assert len(probes) == 2 * ISSUE_KEYS
    assert pattern == [{"set": "hidden", "keys": ISSUE_KEYS, "organisations": ISSUE_KEYS, "submissions": 2 * ISSUE_KEYS}]


def first_releases(b: Board, scores: np.ndarray, seed: int, *, whole_path: bool) -> np.ndarray:
    """Each score's first release by a fresh key of its own: through `release` (whole_path), or
    through the function that computes a released value (`noised`, with the key's secret draws and
    the noise the release path sizes, `noise_sd` for a set with no cells shown) — the same value,
    ten times faster, for the 10,000-item runs."""
    from glotbench.service import keys as keys_
    from glotbench.service.scoring import HEADLINE, noised

    rng = random.Random(seed)
    if whole_path:
        return np.array([b.key(rng).submit(float(x))["score"] for x in scores])
    s, sd = b.step.size(b.m), b.step.noise_sd(b.m, b.m, 1)
    out = np.empty(len(scores))
    for j, x in enumerate(scores):
        secret = "%064x" % rng.getrandbits(256)
        out[j] = noised(float(x), sd, keys_.release_noise(secret, 1, HEADLINE, 1), s, b.digits,
                        keys_.grid_offset(secret, 1, HEADLINE))
    return out


def regression_attack(m: int, keys: int, seed: int, block: int = 200, noise: float | None = None) -> dict:
    """Reconstruction by regression (Dinur-Nissim), knowing the mechanism (Kerckhoffs: the noise's
    size, the step). `block` items (all of them at 200) get a uniformly random letter per fresh key;
    the others are anchored (the same answer for every key, as with known labels: their share of the
    score is a constant). Each key's first release is regressed on its letters: least squares on the
    item-by-letter indicators (n x 3·block) at 200 items; at 10,000 the per-item least squares (the
    letter means), the others' variance being 0.2% of the noise there. Each item's posterior over its
    four letters follows from the known noise; an item is named when its posterior is at least 0.9 (or
    0.5). Labels read in the block count for m / block, all items being alike. `noise`: the release
    noise's scale (the service's default if None). Returns the counts."""
    rng, b = np.random.default_rng(seed), Board(m, noise)
    w, s = 100.0 / m, b.step.size(m)
    gold = rng.integers(0, 4, block)
    x = rng.integers(0, 4, (keys, block)).astype(np.int8)
    anchored = 0.25 * (m - block)  # the anchored items' right answers (a constant)
    y = first_releases(b, w * (anchored + (x == gold).sum(1)), seed, whole_path=m <= 200)
    cnt = np.stack([(x == letter).sum(0) for letter in range(4)], 1).astype(np.float64)
    if m <= 200:  # least squares on the indicators of letters 1-3 (letter 0 the baseline)
        design = np.concatenate([np.ones((keys, 1))] + [(x == letter).astype(np.float64) for letter in (1, 2, 3)], 1)
        beta, *_ = np.linalg.lstsq(design, y, rcond=None)
        effect = np.c_[np.zeros(block), beta[1:].reshape(3, block).T]
    else:  # in chunks of keys: the indicators as floats would take gigabytes
        effect = np.zeros((block, 4))
        for a in range(0, keys, 20_000):
            for letter in range(4):
                effect[:, letter] += (x[a:a + 20_000] == letter).T.astype(np.float64) @ (y[a:a + 20_000] - y.mean())
        effect /= cnt
    var = b.step.noise_sd(m, m, 1) ** 2 + s * s / 12
    centred = effect - (effect * cnt).sum(1, keepdims=True) / cnt.sum(1, keepdims=True)
    ll = cnt * w * (centred - w / 2) / var
    post = np.exp(ll - ll.max(1, keepdims=True))
    post /= post.sum(1, keepdims=True)
    guess, conf = post.argmax(1), post.max(1)
    scale = m / block
    out = {"keys": keys, "beyond_chance": scale * ((guess == gold).sum() - block / 4) / 0.75}
    for t in (0.5, 0.9):
        named = conf >= t
        out[t] = (scale * named.sum(), scale * (named & (guess == gold)).sum())
    return out


@pytest.mark.parametrize("m, runs", [(200, (16_000,)), (10_000, (400_000,))])
def test_the_regression_attack_needs_over_50_keys_per_label(m, runs):
    """Before (release = score rounded with the key's offset): about 10 fresh keys per label at 200
    items by a two-letter regression, 2 by this one (the next test). Now each release carries secret
    noise of RELEASE_NOISE / sqrt(m) points; the attack's keys per right label named at posterior
    >= 0.9 is asserted to be at least 50 for each number of keys tried. Also printed: at posterior
    >= 0.5, and the accuracy beyond guessing of naming every item, in labels (an information figure,
    not labels read)."""
    for keys in runs:
        r = regression_attack(m, keys, seed=keys)
        named9, right9 = r[0.9]
        named5, right5 = r[0.5]
        print(f"\nregression, {m} items, {keys} fresh keys: posterior >= 0.9: {named9:.0f} named, {right9:.0f} "
              f"right, {keys / max(right9, 1e-9):.0f} keys per label; >= 0.5: {named5:.0f} named, {right5:.0f} "
              f"right ({keys / max(right5, 1e-9):.0f}); beyond chance naming all: {r['beyond_chance']:.0f} "
              f"({keys / max(r['beyond_chance'], 1e-9):.0f} keys per label's worth)")
        assert named9 > 0  # the attack names labels: the bound is measured, not an attack that reads nothing
        assert keys / right9 >= 50, r


def test_without_the_noise_the_regression_attack_reads_a_label_per_few_keys():
    """The same attack on the release path with the noise off (`--release-noise 0`: the offsets'
    rounding alone, as before): it is a real attack, reading 200-item labels with a few keys each."""
    r = regression_attack(200, 1000, seed=1, noise=0.0)
    named, right = r[0.9]
    print(f"\nregression without noise, 200 items, 1000 keys: {named:.0f} named at 0.9, {right:.0f} right, "
          f"{1000 / max(right, 1e-9):.1f} keys per label")
    assert right >= 150 and 1000 / right < 10, r


def test_the_release_noise_is_fresh_per_submission_sized_by_m_and_unbiased():
    """One key, one score, many submissions: released values average to the score, with the standard
    deviation of the noise and the rounding (sqrt(sd^2 + step^2/12)); the draws differ per submission."""
    from glotbench.service import keys as keys_
    from glotbench.service.scoring import HEADLINE, RELEASE_NOISE, noised

    for m, score in ((200, 40.0), (10_000, 62.5)):
        b = Board(m)
        sd, step = b.step.noise_sd(m, m, 1), b.step.size(m)
        assert sd == pytest.approx(RELEASE_NOISE / math.sqrt(m))
        z = [keys_.release_noise("ab" * 32, 1, HEADLINE, sid) for sid in range(4000)]
        vals = np.array([noised(score, sd, x, step, 2, keys_.grid_offset("ab" * 32, 1, HEADLINE)) for x in z])
        want = math.sqrt(sd * sd + step * step / 12)
        print(f"\n{m} items: noise sd {sd:.2f}, released mean {vals.mean():.2f} (score {score}), sd {vals.std():.2f} "
              f"(expected about {want:.2f})")
        assert len(set(z)) == len(z)
        assert abs(vals.mean() - score) < 4 * want / math.sqrt(len(z)) + step / 2
        assert vals.std() == pytest.approx(want, rel=0.1)

"""Bradley–Terry strengths (protocols/pairwise/bradley_terry.py) against an independent implementation.

The reference θ were computed with choix 0.4.1 (``choix.opt_pairwise``, Maystre & Grossglauser), on the
same seeded preferences with every preference entered twice and a tie as one win each way (choix has
no ties or weights; doubling keeps the likelihood's argmax), then centred: θ - mean(θ).
"""
from __future__ import annotations

import math
import random

import pytest

from protocols.pairwise.bradley_terry import FALLBACK_PRIOR, bradley_terry

CHOIX_MLE = [0.8447597598137355, 0.31243940817315563, -0.08777867404349925, -1.0694204939433918]
CHOIX_ALPHA_02 = [0.8439370888979172, 0.31215541194236235, -0.08771148901714318, -1.0683810118231365]


def seeded_preferences() -> list[tuple[str, str, float]]:
    rng = random.Random(1)
    true = {"A": 1.0, "B": 0.3, "C": 0.0, "D": -1.3}
    rows: list[tuple[str, str, float]] = []
    for _ in range(2000):
        a, b = rng.sample(list(true), 2)
        p = 1 / (1 + math.exp(-(true[a] - true[b])))
        u = rng.random()
        rows.append((a, b, 1 if u < p * 0.9 else (0.5 if u < p * 0.9 + 0.1 else 0)))
    return rows


def test_maximum_likelihood_equals_choix():
    result = bradley_terry(seeded_preferences())
    assert result.systems == ["A", "B", "C", "D"]
    assert result.prior == 0 and result.why_prior == ""
    assert result.theta == pytest.approx(CHOIX_MLE, abs=1e-8)
    assert sum(result.theta) == pytest.approx(0, abs=1e-12)


def test_a_ridge_prior_equals_choix_map_estimate():
    assert bradley_terry(seeded_preferences(), prior=0.2).theta == pytest.approx(CHOIX_ALPHA_02, abs=1e-8)


def test_standard_errors_shrink_with_more_preferences_and_intervals_cover_the_estimate():
    rows = seeded_preferences()
    small, large = bradley_terry(rows[:400]), bradley_terry(rows)
    assert all(s > b for s, b in zip(small.se, large.se))
    for theta, low, high in zip(large.theta, large.low, large.high):
        assert low < theta < high


def test_without_a_maximum_likelihood_estimate_a_stated_prior_is_used():
    result = bradley_terry([("A", "B", 1), ("A", "C", 1), ("B", "C", 0.5)])
    assert result.prior == FALLBACK_PRIOR
    assert "never less preferred: A" in result.why_prior
    assert result.ranked()[0][0] == "A"


@pytest.mark.parametrize(("rows", "message"), [
    ([("A", "B", 1), ("A", "A", 1)], "compares 'A' with itself"),
    ([("A", "B", 2)], "outcome is 1, 0 or 0.5"),
    ([], "at least two systems"),
])
def test_bad_preferences_are_refused(rows, message):
    with pytest.raises(ValueError, match=message):
        bradley_terry(rows)

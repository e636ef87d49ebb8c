"""``score_matrix`` (trec_eval convention) gives, bit for bit and with the sign of every zero,
the values of trec_eval's own loop: per rank, in order, a sum of terms that are 0.0 for a
document whose grade is not positive (zero, negative, -0.0 or NaN), and ratios that are 0.0
when their denominator is 0. The kernels compute whole-matrix passes, so this pins their
arithmetic to the sequential one pytrec_eval does."""

from __future__ import annotations

import math

import numpy as np

from heta_notebook.evaluators._kernels import METRICS, score_matrix

K_VALUES = (1, 2, 3, 5, 10, 20)


def _reference(grades: list[float], ideal: list[float], k: int) -> dict[str, float]:
    """One query, as trec_eval's ndcg_cut / map_cut / recall / P and BEIR's MRR@k compute it."""
    discount = np.log2(np.arange(1, len(grades) + 1, dtype=float) + 1.0).tolist()
    n_relevant = sum(1 for g in ideal if g > 0)
    hits, ap, dcg, idcg, first = 0, 0.0, 0.0, 0.0, math.inf
    for i, g in enumerate(grades[:k]):
        if g > 0:
            hits += 1
            ap += hits / (i + 1.0)
            dcg += g / discount[i]
            first = min(first, i + 1.0)
    for i, g in enumerate(ideal[:k]):
        if g > 0:
            idcg += g / discount[i]
    return {
        "precision": hits / k,
        "recall": hits / n_relevant if n_relevant else 0.0,
        "map": ap / n_relevant if n_relevant else 0.0,
        "ndcg": dcg / idcg if idcg > 0 else 0.0,
        "mrr": 1.0 / first if first <= k else 0.0,
    }


def test_score_matrix_equals_trec_evals_sequential_loop_bit_for_bit() -> None:
    rng = np.random.default_rng(5)
    width = 20
    grades = rng.choice([-2.0, -1.0, -0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.5], (300, width))
    grades[rng.random(grades.shape) < 0.02] = math.nan  # counts as not relevant
    grades[:10] = 0.0  # nothing relevant retrieved
    ideal = -np.sort(-rng.choice([0.0, 1.0, 2.0, 3.0, 0.5], (300, 12)), axis=1)
    ideal[:5] = 0.0  # R = 0: every ratio is 0.0
    n_relevant = (ideal > 0).sum(axis=1).astype(float)
    pairs = [(metric, k) for metric in METRICS for k in K_VALUES]
    got = score_matrix(grades, ideal, n_relevant, pairs)
    for (metric, k), values in got.items():
        expected = np.array(
            [
                _reference(g, i, k)[metric]
                for g, i in zip(grades.tolist(), ideal.tolist(), strict=True)
            ]
        )
        np.testing.assert_array_equal(values, expected, err_msg=f"{metric}@{k}")
        assert (np.signbit(values) == np.signbit(expected)).all(), f"{metric}@{k}: a -0.0"

"""validate_benchmark: Kendall's τ-b checked against scipy on the same numbers, flipped pairs,
the query-resample interval, saturation, and a real run of embedded systems on two benchmarks."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from heta_notebook import (
    BeirBenchmark,
    Chunking,
    Recipe,
    SaturationWarning,
    generate_benchmark,
    validate_benchmark,
)
from heta_notebook.analysis._validate import kendall_tau, validation_from_matrices


@pytest.mark.parametrize("seed", range(6))
def test_tau_is_scipys_tau_b_ties_included(seed) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4 if seed % 2 else 100, size=9).astype(float)
    y = x + rng.normal(0, 2, size=9) if seed < 3 else rng.integers(0, 3, size=9).astype(float)
    assert kendall_tau(x, y) == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
    batch = np.stack([x, y[::-1], y])
    expected = [kendalltau(row, y).statistic for row in batch]
    assert kendall_tau(batch, np.stack([y, y, y])) == pytest.approx(expected, abs=1e-12)


def _matrices(means: list[float], n: int, seed: int, sd: float = 0.05) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    values = np.clip(np.asarray(means) + rng.normal(0, sd, size=(n, len(means))), 0, 1)
    return {"s": pd.DataFrame(values, columns=[f"sys{i}" for i in range(len(means))])}


def test_flips_and_interval_from_the_same_numbers() -> None:
    generated = _matrices([0.2, 0.4, 0.6, 0.8], 200, 0)
    reference = _matrices([0.2, 0.4, 0.8, 0.6], 200, 1)  # sys2 and sys3 swapped
    result = validation_from_matrices(generated, reference, n_resamples=300)
    row = result.agreement.loc["s"]
    g, r = generated["s"].mean(), reference["s"].mean()
    assert row.tau == pytest.approx(kendalltau(g, r).statistic)
    assert row.tau == pytest.approx(4 / 6)  # one of six pairs flips
    assert (int(row.flipped), int(row.pairs)) == (1, 6)
    flip = result.flips.iloc[0]
    assert {flip.system_a, flip.system_b} == {"sys2", "sys3"}
    assert row.ci_low <= row.tau <= row.ci_high and row.ci_high <= 1
    assert "1 of 6 pairs flip" in repr(result)


def test_saturation_near_the_ceiling_and_below_the_detectable_difference() -> None:
    ceiling = _matrices([0.97, 0.98, 0.99], 100, 2, sd=0.005)
    with pytest.warns(SaturationWarning, match="near the ceiling"):
        result = validation_from_matrices(ceiling)
    assert result.agreement.empty and bool(result.saturation.loc[("generated", "s"), "at_ceiling"])
    close = _matrices([0.5, 0.505, 0.51], 30, 3, sd=0.2)
    with pytest.warns(SaturationWarning, match="below the smallest difference 30 queries"):
        row = validation_from_matrices(close).saturation.loc[("generated", "s")]
    assert row.spread < row.smallest_detectable
    clear = _matrices([0.1, 0.5, 0.9], 100, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SaturationWarning)
        assert not validation_from_matrices(clear).saturation["saturated"].any()


def test_share_of_queries_every_system_gets_right() -> None:
    m = pd.DataFrame({"a": [1.0, 1.0, 0.0, 1.0], "b": [1.0, 0.5, 1.0, 1.0]})
    with pytest.warns(SaturationWarning):  # 4 queries cannot tell them apart
        result = validation_from_matrices({"s": m})
    assert result.saturation.loc[("generated", "s"), "all_perfect_share"] == 0.5


@pytest.mark.slow
def test_embedded_systems_on_two_benchmarks(tmp_path) -> None:
    documents = BeirBenchmark.cranfield().load().documents[:300]
    generated = generate_benchmark(documents, 60, method="known_item", folder=tmp_path / "k")
    reference = generate_benchmark(documents, 60, method="title", folder=tmp_path / "t")
    systems = {
        "docs": Recipe(name="docs"),
        "chunks": Recipe(name="chunks", chunking=Chunking(unit="words", size=40)),
    }
    with pytest.warns(SaturationWarning, match="recall@100: every system is near the ceiling"):
        result = validate_benchmark(generated, reference, systems=systems, n_resamples=200)
    assert result.settings["systems"] == 6
    assert len(result.means) == 6 and "docs/full_text_search" in result.means.index
    for score, row in result.agreement.iterrows():
        g, r = result.means[("generated", score)], result.means[("reference", score)]
        assert row.tau == pytest.approx(kendalltau(g, r).statistic, nan_ok=True)  # all tied: NaN
    assert result.saturation.loc[("generated", "beir_ndcg@10"), "queries"] == 60

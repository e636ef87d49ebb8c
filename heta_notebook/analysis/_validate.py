"""How far can a generated benchmark be trusted? ``validate_benchmark`` says, in numbers.

The same systems (recipes × query modes) run on the generated benchmark and, when given, on a
reference with real labels. Per score it reports Kendall's τ-b between the two rankings of the
systems' means, with a percentile interval over query resamples (both benchmarks' queries
resampled independently), and the system pairs whose order flips. On each benchmark it checks
**saturation**: every system near the ceiling, or a spread between the best and the worst
system smaller than the smallest difference the benchmark can detect at its size (a paired
two-sided test at α = 1 − confidence with 80% power: (z₁₋α/₂ + z₀.₈) · sd(d) / √n, sd(d) the
median over system pairs of the per-query differences' standard deviation). Without a reference
it reports what it can: spread, saturation and the share of queries every system scores
perfectly on.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, cast

import numpy as np
import pandas as pd
from scipy.stats import norm

from heta_notebook._util.warn import user_stacklevel

DEFAULT_SCORES = ("beir_ndcg@10", "beir_recall@100", "beir_mrr@10")
_BEIR_SCORE = re.compile(r"^beir_(ndcg|map|recall|precision|mrr)@(\d+)$")


class SaturationWarning(UserWarning):
    """A benchmark cannot tell the systems apart (all near the ceiling, or too small a spread)."""


@dataclass(frozen=True)
class BenchmarkValidation:
    """What ``validate_benchmark`` found: agreement per score, saturation per benchmark."""

    agreement: pd.DataFrame  # score → tau, ci_low, ci_high, flipped, pairs, systems
    flips: pd.DataFrame  # score, system_a, system_b, generated_delta, reference_delta
    saturation: pd.DataFrame  # (benchmark, score) → spread, smallest_detectable, ...
    means: pd.DataFrame  # system × (benchmark, score) means
    notes: tuple[str, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)

    def tau(self, score: str) -> float:
        """Kendall's τ-b between the two rankings for ``score``."""
        if self.agreement.empty:
            raise ValueError("no reference was given, so there is no τ")
        return float(self.agreement.loc[score, "tau"])

    def __repr__(self) -> str:
        lines = [f"<BenchmarkValidation over {self.settings.get('systems', '?')} systems>"]
        for score, row in self.agreement.iterrows():
            lines.append(
                f"  {score}: τ = {row.tau:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}], "
                f"{int(row.flipped)} of {int(row.pairs)} pairs flip"
            )
        lines.extend(f"  ! {note}" for note in self.notes)
        return "\n".join(lines)


def validate_benchmark(
    generated: Any,
    reference: Any = None,
    *,
    systems: Mapping[str, Any] | Sequence[Any],
    scores: Sequence[str] = DEFAULT_SCORES,
    query_modes: Sequence[str] | None = None,
    top_k: int = 100,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    ceiling: float = 0.95,
    seed: int = 0,
    progress: bool = False,
) -> BenchmarkValidation:
    """Run ``systems`` (recipes, as ``run_benchmark(recipes=...)``) on ``generated`` and
    ``reference``; report τ per score with a CI, flipped pairs and saturation.

    ``generated``/``reference`` may also be ``RunCollection``\\ s already run with those systems.
    """
    gen = score_matrices(_runs(generated, systems, scores, query_modes, top_k, progress), scores)
    ref = None
    if reference is not None:
        ref_runs = _runs(reference, systems, scores, query_modes, top_k, progress)
        ref = score_matrices(ref_runs, scores)
    return validation_from_matrices(
        gen, ref, confidence=confidence, n_resamples=n_resamples, ceiling=ceiling, seed=seed
    )


def validation_from_matrices(
    generated: Mapping[str, pd.DataFrame],
    reference: Mapping[str, pd.DataFrame] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    ceiling: float = 0.95,
    seed: int = 0,
) -> BenchmarkValidation:
    """The validation from per-query score matrices (score → queries × systems frames)."""
    benchmarks = {"generated": generated, **({"reference": reference} if reference else {})}
    saturation = pd.DataFrame(
        [
            {"benchmark": name, "score": score, **saturation_of(m.to_numpy(), confidence, ceiling)}
            for name, matrices in benchmarks.items()
            for score, m in matrices.items()
        ]
    ).set_index(["benchmark", "score"])
    means = pd.concat(
        {(name, score): m.mean() for name, mats in benchmarks.items() for score, m in mats.items()},
        axis=1,
    )
    rows: list[dict[str, Any]] = []
    flips: list[dict[str, Any]] = []
    rng = np.random.default_rng(seed)
    for score in generated if reference is not None else ():
        g, r = generated[score], cast(Mapping[str, pd.DataFrame], reference)[score]
        common = [s for s in g.columns if s in r.columns]
        g_m, r_m = g[common].to_numpy(), r[common].to_numpy()
        tau = float(kendall_tau(g_m.mean(axis=0), r_m.mean(axis=0)))
        low, high = tau_interval(g_m, r_m, confidence, n_resamples, rng)
        pairs = flipped_pairs(common, g_m.mean(axis=0), r_m.mean(axis=0))
        flips.extend({"score": score, **pair} for pair in pairs)
        n_pairs = len(common) * (len(common) - 1) // 2
        rows.append(
            {"score": score, "tau": tau, "ci_low": low, "ci_high": high,
             "flipped": len(pairs), "pairs": n_pairs, "systems": len(common)}
        )  # fmt: skip
    agreement = pd.DataFrame(rows).set_index("score") if rows else pd.DataFrame()
    notes = tuple(_notes(saturation))
    if notes:
        warnings.warn("; ".join(notes), SaturationWarning, stacklevel=user_stacklevel())
    flip_columns = ["score", "system_a", "system_b", "generated_delta", "reference_delta"]
    return BenchmarkValidation(
        agreement=agreement,
        flips=pd.DataFrame(flips, columns=flip_columns),
        saturation=saturation,
        means=means,
        notes=notes,
        settings={
            "systems": len(means), "confidence": confidence, "n_resamples": n_resamples,
            "ceiling": ceiling, "seed": seed, "tau": "Kendall tau-b",
        },
    )  # fmt: skip


# --------------------------------------------------------------------------- the numbers


def kendall_tau(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ-b of ``x`` and ``y`` along the last axis (batches allowed); NaN when a
    ranking is all ties."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    i, j = np.triu_indices(x.shape[-1], k=1)
    dx, dy = np.sign(x[..., i] - x[..., j]), np.sign(y[..., i] - y[..., j])
    concordance = (dx * dy).sum(axis=-1)
    untied_x, untied_y = (dx != 0).sum(axis=-1), (dy != 0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return concordance / np.sqrt(untied_x * untied_y)


def tau_interval(
    g: np.ndarray, r: np.ndarray, confidence: float, n_resamples: int, rng: np.random.Generator
) -> tuple[float, float]:
    """Percentile interval of τ over resamples of each benchmark's queries (with replacement)."""
    g_means = _resampled_means(g, n_resamples, rng)
    r_means = _resampled_means(r, n_resamples, rng)
    taus = kendall_tau(g_means, r_means)
    taus = taus[~np.isnan(taus)]
    if taus.size == 0:
        return float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    low, high = np.quantile(taus, [alpha, 1 - alpha])
    return float(low), float(high)


def _resampled_means(m: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    counts = rng.multinomial(m.shape[0], np.full(m.shape[0], 1 / m.shape[0]), size=n_resamples)
    return counts @ m / m.shape[0]


def flipped_pairs(systems: Sequence[str], g: np.ndarray, r: np.ndarray) -> list[dict[str, Any]]:
    """System pairs ordered one way by ``g`` and the other way by ``r`` (ties flip nothing)."""
    out = []
    for a, b in combinations(range(len(systems)), 2):
        dg, dr = g[a] - g[b], r[a] - r[b]
        if dg * dr < 0:
            out.append(
                {"system_a": systems[a], "system_b": systems[b],
                 "generated_delta": float(dg), "reference_delta": float(dr)}
            )  # fmt: skip
    return out


def saturation_of(m: np.ndarray, confidence: float, ceiling: float) -> dict[str, Any]:
    """Spread of system means, the smallest detectable difference, ceiling and perfect shares."""
    n, k = m.shape
    means = m.mean(axis=0)
    spread = float(means.max() - means.min()) if k else 0.0
    sds = [np.std(m[:, a] - m[:, b], ddof=1) for a, b in combinations(range(k), 2)] if n > 1 else []
    z = norm.ppf(1 - (1 - confidence) / 2) + norm.ppf(0.8)
    detectable = float(z * np.median(sds) / np.sqrt(n)) if sds else float("nan")
    at_ceiling = bool(k and means.min() >= ceiling)
    return {
        "queries": n,
        "spread": spread,
        "smallest_detectable": detectable,
        "best": float(means.max()) if k else float("nan"),
        "worst": float(means.min()) if k else float("nan"),
        "at_ceiling": at_ceiling,
        "all_perfect_share": float((m >= 1 - 1e-9).all(axis=1).mean()) if n else float("nan"),
        "saturated": at_ceiling or bool(spread < detectable),
    }


def _notes(saturation: pd.DataFrame) -> list[str]:
    notes = []
    for (benchmark, score), row in saturation.iterrows():
        if row.at_ceiling:
            notes.append(
                f"{benchmark} {score}: every system is near the ceiling ({row.worst:.3f}+)"
            )
        elif row.saturated:
            notes.append(
                f"{benchmark} {score}: the systems' spread ({row.spread:.3f}) is below the "
                f"smallest difference {row.queries} queries can detect ({row.smallest_detectable:.3f})"
            )
    return notes


# --------------------------------------------------------------------------- running the systems


def score_matrices(runs: Mapping[str, Any], scores: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Per score, a queries × systems frame of values (system = ``recipe/mode``); a case a
    system failed on counts 0."""
    out: dict[str, list[pd.Series]] = {score: [] for score in scores}
    for label, report in runs.items():
        frame = report.frames().scores()
        for score in scores:
            rows = frame[frame["score"] == score]
            if rows.empty:
                raise ValueError(f"report {label!r} has no score {score!r}")
            table = rows.pivot_table(index="case_id", columns="query_mode", values="value",
                                     aggfunc="first", observed=True)  # fmt: skip
            for mode in table.columns:
                out[score].append(table[mode].rename(f"{label}/{mode}"))
    return {
        score: pd.concat(series, axis=1).sort_index().fillna(0.0) for score, series in out.items()
    }


def _runs(
    benchmark: Any, systems: Any, scores: Sequence[str], modes: Any, top_k: int, progress: bool
):
    if hasattr(benchmark, "reports"):  # already run
        return benchmark.reports
    from heta_notebook.runner import run_benchmark

    runs: Any = run_benchmark(
        benchmark=benchmark,
        recipes=systems,
        evaluators=_evaluators(scores),
        query_modes=modes,
        config={"top_k": top_k},
        progress=progress,
    )
    return runs.reports


def _evaluators(scores: Sequence[str]) -> list[Any] | None:
    """BEIR metrics for ``beir_*@k`` names (only what is asked); else the benchmark's own."""
    from heta_notebook.evaluators._retrieval import BeirRetrievalMetric

    matches = [_BEIR_SCORE.match(score) for score in scores]
    if not all(matches):
        return None
    return [BeirRetrievalMetric(cast(Any, m.group(1)), int(m.group(2))) for m in matches if m]


__all__ = [
    "BenchmarkValidation",
    "SaturationWarning",
    "kendall_tau",
    "validate_benchmark",
    "validation_from_matrices",
]

"""How far to trust a judge: agreement with people, and means corrected by their labels.

- :func:`agreement`: Cohen's kappa (plain and weighted, linear or quadratic weights), the
  confusion matrix and per-slice agreement on the pairs both a judge and a person labelled.
- :func:`corrected_mean`: prediction-powered inference for a mean (Angelopoulos, Bates,
  Fannjiang, Jordan & Zrnic, Science 2023). With judge values ``f`` on all N items and true
  values ``y`` on a labelled subset of n, the estimate is ``mean(f_all) + mean(y - f)_lab``
  (the judge's mean plus a rectifier) with the CLT interval
  ``± z * sqrt(var(f_all)/N + var(y - f)_lab/n)``. It is valid whatever the judge's bias when
  the labelled subset is a uniform random draw of the items.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
import pandas as pd

Weights = Literal["linear", "quadratic"]


@dataclass(frozen=True)
class Agreement:
    """Agreement between two labellers on ``n`` shared pairs."""

    n: int
    kappa: float
    weighted_kappa: float
    weights: str
    accuracy: float
    confusion: pd.DataFrame
    by_slice: pd.DataFrame | None = None

    def __repr__(self) -> str:
        return (
            f"<Agreement n={self.n}: kappa {self.kappa:.3f}, {self.weights}-weighted "
            f"{self.weighted_kappa:.3f}, exact {self.accuracy:.1%}>"
        )


def cohen_kappa(
    a: Sequence[int],
    b: Sequence[int],
    *,
    weights: Weights | None = None,
    grades: Sequence[int] = (),
) -> float:
    """Cohen's kappa of two label sequences; ``weights`` linear or quadratic for ordinal grades."""
    matrix, _ = _confusion(a, b, grades)
    n = matrix.sum()
    if n == 0:
        return float("nan")
    k = len(matrix)
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "linear":
        w = np.abs(i - j) / max(k - 1, 1)
    elif weights == "quadratic":
        w = ((i - j) / max(k - 1, 1)) ** 2
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    observed = matrix / n
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    disagreement = (w * expected).sum()
    if disagreement == 0:
        return 1.0 if (w * observed).sum() == 0 else 0.0
    return float(1.0 - (w * observed).sum() / disagreement)


def _confusion(
    a: Sequence[int], b: Sequence[int], grades: Sequence[int]
) -> tuple[np.ndarray, list[int]]:
    if len(a) != len(b):
        raise ValueError(f"two labellers must label the same pairs: {len(a)} vs {len(b)} labels")
    values = sorted({*map(int, a), *map(int, b), *map(int, grades)})
    index = {v: n for n, v in enumerate(values)}
    matrix = np.zeros((len(values), len(values)), dtype=np.int64)
    np.add.at(matrix, ([index[int(x)] for x in a], [index[int(y)] for y in b]), 1)
    return matrix, values


def agreement(
    first: Mapping[tuple[str, str], int],
    second: Mapping[tuple[str, str], int],
    *,
    weights: Weights = "linear",
    by: Callable[[tuple[str, str]], Any] | None = None,
    names: tuple[str, str] = ("judge", "human"),
) -> Agreement:
    """Agreement of two ``{(query_id, doc_id): grade}`` mappings on the pairs both have;
    ``by`` maps a pair to its slice (e.g. a query's topic) for per-slice rows."""
    shared = sorted(set(first) & set(second))
    a = [int(first[p]) for p in shared]
    b = [int(second[p]) for p in shared]
    matrix, values = _confusion(a, b, ())
    confusion = pd.DataFrame(
        matrix,
        index=pd.Index(values, name=names[0]),
        columns=pd.Index(values, name=names[1]),
    )
    by_slice = None
    if by is not None:
        rows = []
        for key in sorted({by(p) for p in shared}, key=str):
            part = [i for i, p in enumerate(shared) if by(p) == key]
            pa, pb = [a[i] for i in part], [b[i] for i in part]
            rows.append(
                {
                    "slice": key,
                    "n": len(part),
                    "kappa": cohen_kappa(pa, pb),
                    "weighted_kappa": cohen_kappa(pa, pb, weights=weights, grades=values),
                    "accuracy": float(np.mean(np.equal(pa, pb))),
                }
            )
        by_slice = pd.DataFrame(rows)
    return Agreement(
        n=len(shared),
        kappa=cohen_kappa(a, b),
        weighted_kappa=cohen_kappa(a, b, weights=weights),
        weights=weights,
        accuracy=float(np.mean(np.equal(a, b))) if shared else float("nan"),
        confusion=confusion,
        by_slice=by_slice,
    )


@dataclass(frozen=True)
class CorrectedMean:
    """A prediction-powered mean: estimate, interval, and the judge-only mean it corrects."""

    estimate: float
    low: float
    high: float
    judge_only: float
    rectifier: float
    n_judged: int
    n_labelled: int
    confidence: float

    def __repr__(self) -> str:
        return (
            f"<CorrectedMean {self.estimate:.4f} [{self.low:.4f}, {self.high:.4f}] "
            f"({self.confidence:.0%}; judge only {self.judge_only:.4f}; "
            f"{self.n_labelled} labelled of {self.n_judged})>"
        )


def corrected_mean(
    judge_all: Sequence[float],
    truth_labelled: Sequence[float],
    judge_labelled: Sequence[float],
    *,
    confidence: float = 0.95,
    exact: int = 0,
) -> CorrectedMean:
    """The PPI mean of a quantity from judge values on all items and true values on a
    uniformly drawn labelled subset (with the judge's values on that subset); see module.

    ``exact``: how many of the items no judge touched (their true value is the judge value by
    construction); the labelled items are then a uniform draw of the other ones, and the
    rectifier is scaled by their share (stratified PPI: the untouched stratum's error is 0)."""
    f = np.asarray(judge_all, dtype=float)
    y = np.asarray(truth_labelled, dtype=float)
    fl = np.asarray(judge_labelled, dtype=float)
    if len(y) != len(fl):
        raise ValueError(
            f"truth and judge values on the labelled subset differ in length: {len(y)} vs {len(fl)}"
        )
    if len(y) < 2 or len(f) < 2:
        raise ValueError("the corrected mean needs at least 2 judged and 2 labelled items")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if not 0 <= exact <= len(f) - len(y):
        raise ValueError(f"exact must be in [0, {len(f) - len(y)}] (unlabelled items), got {exact}")
    share = (len(f) - exact) / len(f)  # of the items a judge touched
    residual = y - fl
    rectifier = share * float(residual.mean())
    estimate = float(f.mean()) + rectifier
    se = float(np.sqrt(f.var(ddof=1) / len(f) + share**2 * residual.var(ddof=1) / len(y)))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return CorrectedMean(
        estimate,
        estimate - z * se,
        estimate + z * se,
        float(f.mean()),
        rectifier,
        len(f),
        len(y),
        confidence,
    )


def corrected_label_mean(
    labels: Any,
    pairs: Sequence[tuple[str, str]] | None = None,
    *,
    value: Callable[[int], float] = float,
    confidence: float = 0.95,
) -> CorrectedMean:
    """PPI mean of ``value(grade)`` over the judge-labelled ``pairs`` of a label set (all of
    them by default), rectified by the pairs people labelled too."""
    judge = labels.labels("judge")
    human = labels.labels("human")
    chosen = list(pairs) if pairs is not None else sorted(judge)
    f = [value(judge[p].grade) for p in chosen if p in judge]
    both = [p for p in chosen if p in judge and p in human]
    return corrected_mean(
        f,
        [value(human[p].grade) for p in both],
        [value(judge[p].grade) for p in both],
        confidence=confidence,
    )


def corrected_score(
    judged: Any,
    human: Any,
    score: str = "beir_ndcg@10",
    *,
    mode: str | None = None,
    confidence: float = 0.95,
) -> CorrectedMean:
    """The PPI mean of a per-query score: ``judged`` holds its value on judge-filled labels for
    every query, ``human`` on people's labels for a uniformly drawn subset of queries. Each
    is a ``{query: value}`` mapping or a report (its ``score`` in ``mode``)."""
    f = _per_query(judged, score, mode)
    y = _per_query(human, score, mode)
    unknown = sorted(set(y) - set(f))
    if unknown:
        raise ValueError(f"queries labelled by people but not judged: {unknown[:3]}")
    shared = sorted(y)
    return corrected_mean(
        list(f.values()), [y[q] for q in shared], [f[q] for q in shared], confidence=confidence
    )


def _per_query(source: Any, score: str, mode: str | None) -> dict[str, float]:
    if isinstance(source, Mapping):
        return {str(q): float(v) for q, v in source.items()}
    cases = source.frames().cases()
    if score not in cases.columns:
        raise ValueError(f"the report has no score {score!r}")
    modes = list(dict.fromkeys(cases["query_mode"]))
    chosen = mode or (modes[0] if len(modes) == 1 else None)
    if chosen is None:
        raise ValueError(f"the report has several modes {modes}: pass mode=")
    rows = cases[(cases["query_mode"] == chosen) & cases[score].notna()]
    return dict(zip(rows["case_id"].astype(str), rows[score].astype(float), strict=True))


__all__ = [
    "Agreement",
    "CorrectedMean",
    "agreement",
    "cohen_kappa",
    "corrected_label_mean",
    "corrected_mean",
    "corrected_score",
]

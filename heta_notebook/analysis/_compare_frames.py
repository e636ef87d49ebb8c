"""The tables a comparison returns, computed from the aligned matrices: per-variant summary
statistics (``summary_stats``), the significance frame with its test and family described
(``describe_test``), and manifests flattened to ``key.path`` settings (``flatten``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from heta_notebook.analysis import _stats as stats
from heta_notebook.analysis._alignment import Variant
from heta_notebook.analysis._frames import SUMMARY_COLUMNS as FRAME_SUMMARY_COLUMNS
from heta_notebook.evaluators._aggregation import matrix_stats, pass_rate

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.analysis._compare import Comparison


SUMMARY_COLUMNS = [  # the frames' summary per variant, with missing cases instead of counts
    "variant",
    "report",
    *(c for c in FRAME_SUMMARY_COLUMNS if c != "counts"),
    "n_missing",
]


def summary_stats(
    values: np.ndarray,
    passed: np.ndarray,
    confidence: float,
    scores: Sequence[int] | None = None,
    variants: Sequence[int] | None = None,
) -> dict[str, np.ndarray]:
    """Mean, n, std, t-based CI and pass rate over axis 1 (cases) of scores × cases × variants
    (only ``scores`` × ``variants`` of them when given).

    ``aggregation.matrix_stats`` (the one engine) on the aligned, NaN-masked matrices, a
    few scores at a time so its temporaries stay ~4 MB (each score × variant is reduced
    on its own, so the numbers do not depend on the grouping). The fancy indexing is kept
    on purpose: it fixes the memory layout, hence the summation order, the numbers had.
    """
    scores = list(range(len(values)) if scores is None else scores)
    columns: Any = slice(None) if variants is None else list(variants)
    step = max(1, 500_000 // max(values[0].size if len(values) else 1, 1))
    parts = [
        matrix_stats(
            values[scores[i : i + step]][:, :, columns],
            passed[scores[i : i + step]][:, :, columns],
            axis=1,
            confidence=confidence,
        )
        for i in range(0, len(scores), step)
    ]
    if not parts:
        parts = [
            matrix_stats(
                values[:0][:, :, columns],
                passed[:0][:, :, columns],
                axis=1,
                confidence=confidence,
            )
        ]
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return {
        "mean": out["mean"],
        "n": out["n"],
        "std": out["std"],
        "ci_low": out["ci_low"],
        "ci_high": out["ci_high"],
        "pass_rate": pass_rate(out["n_passed"], out["n_judged"]),
        "n_passed": out["n_passed"],
    }


def significance_frame(
    comparison: Comparison,
    pairs: Sequence[tuple[Variant, Variant]],
    scores: Sequence[str],
    result: stats.PairedTest,
    masks: Sequence[tuple[str | None, Any]] = ((None, slice(None)),),
    test: str = "permutation",
    family: str = "score",
) -> pd.DataFrame:
    al = comparison.aligned
    rows = []
    for block, (name, mask) in enumerate(masks):
        for i, score in enumerate(scores):
            s = al.score_index(score)
            for j, (a, b) in enumerate(pairs):
                k = (block * len(scores) + i) * len(pairs) + j
                rows.append(
                    {
                        **({"slice": name} if name is not None else {}),
                        "score": score,
                        "baseline": a.name,
                        "variant": b.name,
                        "baseline_mean": _nanmean(al.values[s][mask, al.variant_index(a)]),
                        "variant_mean": _nanmean(al.values[s][mask, al.variant_index(b)]),
                        "delta": result.mean_diff[k],
                        "ci_low": result.ci_low[k],
                        "ci_high": result.ci_high[k],
                        "p_value": result.p_value[k],
                        "n_pairs": int(result.n[k]),
                        "wins": int(result.wins[k]),
                        "ties": int(result.ties[k]),
                        "losses": int(result.losses[k]),
                        "p_method": result.method[k],
                        "ci_method": result.ci_method[k],  # type: ignore[index]  # always set
                    }
                )
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(
            columns=[
                "score",
                "baseline",
                "variant",
                "delta",
                "ci_low",
                "ci_high",
                "p_value",
                "p_holm",
                "significant",
                "n_pairs",
                "wins",
                "ties",
                "losses",
                "test",
                "family",
                "family_size",
            ]
        )
    families = frame["score"] if family == "score" else pd.Series("all", index=frame.index)
    p_holm = stats.holm(frame["p_value"].to_numpy(), families.to_numpy())
    frame.insert(frame.columns.get_loc("p_value") + 1, "p_holm", p_holm)
    frame.insert(frame.columns.get_loc("p_holm") + 1, "significant", frame["p_holm"] < 0.05)
    frame["test"] = test
    frame["family"] = families.to_numpy()
    tested = frame["p_value"].notna().groupby(frame["family"]).transform("sum")
    frame["family_size"] = tested.astype(int)
    return frame


def describe_test(
    sig: pd.DataFrame, test: str, family: str, score: str, *, of_score: bool = True
) -> str:
    """The test and Holm family of ``score``'s rows of a significance frame, in words."""
    name = stats.TEST_NAMES[test]
    rows = sig[sig["score"] == score] if family == "score" else sig
    m = int(rows["p_value"].notna().sum())
    slices = rows["slice"].nunique() if "slice" in rows else 1
    pairs = rows[["baseline", "variant"]].drop_duplicates().shape[0]
    if family == "all":
        n_scores = rows["score"].nunique()
        parts = [f"{n_scores} scores"] * (n_scores > 1) + [_plural(pairs, "pair")]
        parts += [_plural(slices, "slice")] * (slices > 1)
        return f"{name}, Holm over {_plural(m, 'test')} of {' × '.join(parts)}"
    where = f" of {score}" if of_score else ""
    if slices > 1:
        detail = f"{_plural(pairs, 'pair')} × {_plural(slices, 'slice')}"
        return f"{name}, Holm over {_plural(m, 'test')}{where} ({detail})"
    return f"{name}, Holm over {_plural(m, 'pair')}{where}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _nanmean(x: np.ndarray) -> float:
    ok = ~np.isnan(x)
    return float(x[ok].mean()) if ok.any() else float("nan")


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts/lists → ``{"chunking.size": 100, "stages[0].name": "split"}``."""
    if isinstance(data, Mapping):
        if not data and prefix:
            return {prefix: {}}
        out: dict[str, Any] = {}
        for key, value in data.items():
            out.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(data, (list, tuple)) and any(isinstance(x, (Mapping, list, tuple)) for x in data):
        out = {}
        for i, value in enumerate(data):
            out.update(flatten(value, f"{prefix}[{i}]"))
        return out
    return {prefix or "value": list(data) if isinstance(data, tuple) else data}


def missing_notes(missing: pd.DataFrame) -> list[str]:
    """``Comparison.notes``' lines on cases a variant lacks (``_missing_cases`` rows): one
    line per identical set of cases and status, naming its variants."""
    same: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (variant, status), group in missing.groupby(["variant", "status"], sort=False):
        same.setdefault((status, tuple(group["case_id"])), []).append(variant)
    notes = []
    for (status, ids), variants in same.items():
        example = ", ".join(map(str, ids[:3])) + (", …" if len(ids) > 3 else "")
        notes.append(
            f"{', '.join(variants)}: {len(ids)} case(s) {status} ({example}); "
            "left out of the paired tests."
        )
    return notes

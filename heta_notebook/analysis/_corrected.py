"""Corrected means of a report's scores: judge-filled labels rectified by people's labels.

A report scored on a label set (``labeled(benchmark, labels)``) knows the set by its
fingerprint. Its retrieved rankings are scored twice per query, with the BEIR kernels:

- ``f``: on the original qrels plus the **judge's** labels (what the judge alone says);
- ``y``: on the original qrels plus **people's** labels (the truth, where people labelled).

A query is *labelled* when people labelled every pair of it the judge labelled; a query no
added label touched is *exact* (``y == f`` by construction). The corrected mean is
prediction-powered inference (:func:`heta_notebook.labels.corrected_mean`, stratified by
``exact=``): ``mean(f) + share · mean(y − f)`` over the labelled queries, ``share`` the
touched queries' share, with the CLT interval. Valid when the labelled queries are a uniform
random draw of the touched ones: :func:`queries_to_label` draws them. What it estimates is
the score had people labelled every pair the judge labelled; pairs nobody labelled (holes
outside the pool) stay non-relevant on both sides.

A comparison's difference is corrected the same way on the per-query difference of two
variants (both on the same label set, so the same queries are labelled): a paired PPI
difference with a normal test (:func:`corrected_difference`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from heta_notebook.evaluators._retrieval import BeirRetrievalMetric, evaluate_run
from heta_notebook.labels._benchmark import remember, remembered
from heta_notebook.labels._judged import ranked_run
from heta_notebook.labels._set import LabelSet, files_of
from heta_notebook.labels._trust import CorrectedMean, corrected_mean

_BEIR = re.compile(r"^beir_(?P<metric>ndcg|map|recall|precision|mrr)@(?P<k>\d+)$")
DEFAULT_SCORES = ("beir_ndcg@10", "beir_recall@10")


class NoHumanLabelsError(ValueError):
    """A corrected mean was asked for but the report's labels hold no usable human labels."""


@dataclass(frozen=True)
class CorrectedScore:
    """One score × mode of a report: its mean as scored, and corrected by people's labels."""

    score: str
    mode: str
    shown: float  # the report's own mean (labels in force: a person's label over a judge's)
    mean: CorrectedMean  # .judge_only is the judge-filled mean
    queries: int  # queries scored
    touched: int  # queries with added labels
    labelled: int  # of those, every judge label also labelled by people
    human_labels: int  # human labels on the labelled queries

    def __repr__(self) -> str:
        m = self.mean
        return (
            f"<CorrectedScore {self.score} · {self.mode}: {m.estimate:.4f} "
            f"[{m.low:.4f}, {m.high:.4f}] (judge-filled {m.judge_only:.4f}; "
            f"{self.labelled} of {self.touched} touched queries labelled by people, "
            f"{self.human_labels} human labels)>"
        )


# --------------------------------------------------------------------------- the label set


def report_labels(report: Any, labels: LabelSet | None = None) -> LabelSet:
    """The label set ``report`` was scored on: ``labels`` (checked against the report's
    fingerprint) or the one this session built the report's benchmark on."""
    meta = (getattr(report.benchmark, "metadata", None) or {}).get("label_set")
    if not isinstance(meta, Mapping) or "fingerprint" not in meta:
        raise NoHumanLabelsError(
            f"report {report.report_id} was not scored on a label set, so it has no human "
            "labels: score it on labeled(benchmark, labels) (docs/labels.md)"
        )
    if labels is None:
        found = remembered(str(meta["fingerprint"])) or _saved(meta)
        if found is None:
            raise NoHumanLabelsError(
                f"report {report.report_id} was scored on label set {meta.get('name')!r} "
                f"({str(meta['fingerprint'])[:12]}), which this session does not hold: pass "
                "labels=LabelSet.load(path)"
            )
        return found
    if labels.original_fingerprint() != meta.get("original_fingerprint"):
        raise ValueError(
            f"label set {labels.name!r} starts from other original qrels than report "
            f"{report.report_id}'s ({str(meta.get('original_fingerprint'))[:12]})"
        )
    return labels


def _saved(meta: Mapping[str, Any]) -> LabelSet | None:
    """The set saved at the path the report recorded, if it still holds the same labels."""
    path = meta.get("path")
    if not path or not files_of(path)[1].exists():
        return None
    try:
        saved = LabelSet.load(path)
    except ValueError as exc:  # a damaged file: say so, the card must still render
        raise NoHumanLabelsError(f"the report's label set cannot be read: {exc}") from None
    if saved.fingerprint() != meta["fingerprint"]:
        raise NoHumanLabelsError(
            f"the label set at {path} has changed since the report was scored "
            f"({saved.fingerprint()[:12]}, was {str(meta['fingerprint'])[:12]}): pass "
            f"labels=LabelSet.load({str(path)!r}) to correct with today's labels"
        )
    remember(saved)  # read once per session
    return saved


def touched_queries(labels: LabelSet) -> tuple[set[str], set[str]]:
    """``(touched, labelled)``: queries with added labels on pairs the original did not judge,
    and those where people labelled every pair the judge labelled."""
    original = labels.original
    judge = {p for p in labels.labels("judge") if p[1] not in original.get(p[0], ())}
    human = {p for p in labels.labels("human") if p[1] not in original.get(p[0], ())}
    touched = {q for q, _ in judge | human}
    missing = {q for q, _ in judge - human}
    return touched, touched - missing


def queries_to_label(
    labels: LabelSet, n: int, *, seed: int = 0, done: bool = False
) -> list[tuple[str, str]]:
    """The judge-labelled pairs of ``n`` queries drawn uniformly (seeded) from those the judge
    touched: label all of them (e.g. with ``Labeler``) for a valid corrected mean."""
    judge = sorted(p for p in labels.labels("judge") if p[1] not in labels.original.get(p[0], ()))
    queries = sorted({q for q, _ in judge})
    chosen = set(random.Random(seed).sample(queries, min(n, len(queries))))
    human = labels.labels("human")
    return [p for p in judge if p[0] in chosen and (done or p not in human)]


def _qrels(labels: LabelSet, source: str) -> dict[str, dict[str, int]]:
    out = {q: dict(d) for q, d in labels.original.items()}
    for (q, d), label in labels.labels(source).items():  # type: ignore[arg-type]
        if d not in labels.original.get(q, ()):
            out.setdefault(q, {})[d] = label.grade
    return out


# --------------------------------------------------------------------------- per-query values


def corrected_names(names: Iterable[str]) -> list[str]:
    """The scores a corrected mean exists for: the plain BEIR metrics (``beir_ndcg@10``)."""
    return [n for n in names if _BEIR.match(str(n))]


def _metric(name: str, report: Any) -> BeirRetrievalMetric:
    match = _BEIR.match(name)
    if match is None:
        raise ValueError(
            f"no corrected mean for {name!r}: only the BEIR metrics (beir_ndcg@10, ...) are "
            "rescored on judge and human labels"
        )
    manifest = _evaluator_manifest(report, name)
    return BeirRetrievalMetric(
        match["metric"],  # type: ignore[arg-type]
        int(match["k"]),
        convention=manifest.get("convention", "trec_eval"),
        ties=manifest.get("ties"),  # type: ignore[arg-type]  # None: the convention's default
    )


def _evaluator_manifest(report: Any, name: str) -> dict[str, Any]:
    for entry in report.metadata.get("evaluators") or []:  # the run's evaluator manifests
        if isinstance(entry, Mapping) and entry.get("name") == name:
            found = entry.get("manifest")
            return dict(found) if isinstance(found, Mapping) else {}
    return {}


def _runs(report: Any, mode: str, qrels: Mapping[str, Mapping[str, int]]) -> dict[str, dict]:
    runs = {}
    for result in report.case_results:
        if result.query_mode == mode and result.response is not None:
            runs[result.case_id] = ranked_run(result.response, qrels.get(result.case_id, {}))
    return runs


def per_query(
    report: Any,
    labels: LabelSet,
    score: str,
    mode: str,
    touched: tuple[set[str], set[str]] | None = None,
) -> tuple[dict[str, float], dict[str, float]]:
    """``(f, y)`` per query the report scored: the score on judge-filled labels (every
    query) and on people's labels (the labelled queries and the exact ones)."""
    metric = _metric(score, report)
    cases = report.frames().cases()
    rows = cases[(cases["query_mode"] == mode) & cases[score].notna()]
    items = [str(q) for q in rows["case_id"]]
    judge, human = _qrels(labels, "judge"), _qrels(labels, "human")
    union = {q: {**judge.get(q, {}), **human.get(q, {})} for q in items}
    runs = _runs(report, mode, union)
    hit, labelled = touched if touched is not None else touched_queries(labels)
    known = [q for q in items if q in labelled or q not in hit]

    def values(qrels: Mapping[str, Mapping[str, int]], queries: list[str]) -> dict[str, float]:
        got = evaluate_run({q: qrels.get(q, {}) for q in queries}, runs, [metric], missing="zero")
        return {q: float(got.get(q, {}).get(metric.name, 0.0)) for q in queries}

    return values(judge, items), values(human, known)


def corrected_report_score(
    report: Any,
    score: str = "beir_ndcg@10",
    mode: str | None = None,
    *,
    labels: LabelSet | None = None,
    confidence: float = 0.95,
) -> CorrectedScore:
    """The corrected mean of one score in one mode of a report (see module)."""
    labels = report_labels(report, labels)
    mode = _one_mode(report, mode)
    touched, labelled = split = touched_queries(labels)
    _check_enough(labels, sorted(labelled))  # before the runs are read (every record)
    f, y = per_query(report, labels, score, mode, split)
    lab = sorted(q for q in y if q in labelled)
    exact = sum(1 for q in f if q not in touched)
    _check_enough(labels, lab)
    mean = corrected_mean(
        list(f.values()),
        [y[q] for q in lab],
        [f[q] for q in lab],
        confidence=confidence,
        exact=exact,
    )
    human, chosen = labels.labels("human"), set(lab)
    return CorrectedScore(
        score,
        mode,
        _shown(report, score, mode),
        mean,
        len(f),
        sum(1 for q in f if q in touched),
        len(lab),
        sum(1 for q, _ in human if q in chosen),
    )


def corrected_scores(
    report: Any,
    scores: Sequence[str] | None = None,
    *,
    labels: LabelSet | None = None,
    confidence: float = 0.95,
) -> list[CorrectedScore]:
    """Corrected means of ``scores`` (default nDCG@10 and recall@10, those the report has)
    in every mode; raises :class:`NoHumanLabelsError` when people labelled too little."""
    labels = report_labels(report, labels)
    names = list(report.frames().score_names)
    wanted = list(scores) if scores is not None else [s for s in DEFAULT_SCORES if s in names]
    missing = [s for s in wanted if s not in names]
    if missing:
        raise ValueError(f"the report has no score {missing[0]!r}")
    return [
        corrected_report_score(report, s, m, labels=labels, confidence=confidence)
        for s in wanted
        for m in report.frames().modes
    ]


def _check_enough(labels: LabelSet, labelled: Sequence[str]) -> None:
    if len(labelled) >= 2:
        return
    human = len(labels.labels("human"))
    touched, _ = touched_queries(labels)
    raise NoHumanLabelsError(
        f"label set {labels.name!r} has {human} human label(s) and {len(labelled)} query whose "
        f"judge labels people all labelled (of {len(touched)} the judge touched); a corrected "
        "mean needs at least 2 such queries, drawn at random: label "
        "queries_to_label(labels, 30) (docs/labels.md)"
    )


def _one_mode(report: Any, mode: str | None) -> str:
    modes = list(report.frames().modes)
    if mode is None:
        if len(modes) != 1:
            raise ValueError(f"the report has several modes {modes}: pass mode=")
        return modes[0]
    if mode not in modes:
        raise ValueError(f"the report has no mode {mode!r} (it has {modes})")
    return mode


def _shown(report: Any, score: str, mode: str) -> float:
    cases = report.frames().cases()  # the summary's mean: over the scored cases
    values = cases.loc[cases["query_mode"] == mode, score].dropna()
    return float(values.mean()) if len(values) else float("nan")


def corrected_for_card(
    report: Any, option: Any, labels: LabelSet | None
) -> tuple[list[CorrectedScore], str | None]:
    """What the card shows: ``option`` None (when the report has human labels), True (must),
    False (never) or score names. Returns the rows, or none and why (None: nothing to say)."""
    if option is False:
        return [], None
    meta = (report.benchmark.metadata or {}).get("label_set")
    if option is None and labels is None and not isinstance(meta, Mapping):
        return [], None
    scores = None if option in (None, True) else list(option)
    try:
        return corrected_scores(report, scores, labels=labels), None
    except NoHumanLabelsError as exc:
        if option is None and labels is None:
            return [], None if not isinstance(meta, Mapping) else _quiet(report, exc)
        raise


def _quiet(report: Any, exc: Exception) -> str | None:
    """The card stays quiet on a label set without people's labels; otherwise says why not."""
    meta = report.benchmark.metadata["label_set"]
    labels = remembered(str(meta.get("fingerprint")))
    human = len(labels.labels("human")) if labels is not None else meta.get("human")
    return str(exc) if human else None


# --------------------------------------------------------------------------- differences


@dataclass(frozen=True)
class CorrectedDifference:
    """A paired PPI difference (variant − baseline) of one score: estimate, interval, p."""

    score: str
    baseline: CorrectedMean
    variant: CorrectedMean
    delta: CorrectedMean
    p_value: float
    labelled: int


def corrected_difference(
    baseline: Any,
    variant: Any,
    score: str = "beir_ndcg@10",
    *,
    modes: tuple[str | None, str | None] = (None, None),
    labels: LabelSet | None = None,
    confidence: float = 0.95,
) -> CorrectedDifference:
    """Variant − baseline, corrected: PPI on the per-query difference over the queries both
    scored (the same label set, so the same queries are labelled); two-sided normal p."""
    labels = report_labels(baseline, labels)
    report_labels(variant, labels)
    ma, mb = _one_mode(baseline, modes[0]), _one_mode(variant, modes[1])
    touched, labelled = split = touched_queries(labels)
    fa, ya = per_query(baseline, labels, score, ma, split)
    fb, yb = per_query(variant, labels, score, mb, split)
    shared = [q for q in fa if q in fb]
    lab = [q for q in shared if q in labelled and q in ya and q in yb]
    exact = sum(1 for q in shared if q not in touched)
    _check_enough(labels, lab)

    def ppi(f: Mapping[str, float], y: Mapping[str, float]) -> CorrectedMean:
        return corrected_mean(
            [f[q] for q in shared],
            [y[q] for q in lab],
            [f[q] for q in lab],
            confidence=confidence,
            exact=exact,
        )

    fd = {q: fb[q] - fa[q] for q in shared}
    yd = {q: yb[q] - ya[q] for q in lab}
    delta = ppi(fd, yd)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    se = (delta.high - delta.estimate) / z
    p = 1.0 if se == 0 else 2 * (1 - NormalDist().cdf(abs(delta.estimate) / se))
    return CorrectedDifference(score, ppi(fa, ya), ppi(fb, yb), delta, p, len(lab))


def corrected_summary(report: Any, scores: Sequence[str], *, labels: LabelSet | None = None) -> Any:
    """``report.summary()``'s columns for the gate, with the corrected means and CIs."""
    import pandas as pd

    rows = corrected_scores(report, scores, labels=labels)
    return pd.DataFrame(
        [
            {
                "score": r.score,
                "query_mode": r.mode,
                "mean": r.mean.estimate,
                "n": r.queries,
                "ci_low": r.mean.low,
                "ci_high": r.mean.high,
            }
            for r in rows
        ]
    )


def corrected_significance(
    comparison: Any, sig: Any, *, labels: LabelSet | None = None, correction: str = "holm"
) -> Any:
    """A comparison's significance rows with means, delta, CI and p of the corrected paired
    difference (``test`` ``"ppi-z"``), adjusted by ``correction`` within each row's family."""
    from heta_notebook.analysis._options import adjust

    out = sig.copy()
    for i, r in enumerate(sig.to_dict("records")):
        a, b = comparison.variant(r["baseline"]), comparison.variant(r["variant"])
        d = corrected_difference(
            comparison.reports[a.report],
            comparison.reports[b.report],
            r["score"],
            modes=(a.mode, b.mode),
            labels=labels,
        )
        values = {
            "baseline_mean": d.baseline.estimate,
            "variant_mean": d.variant.estimate,
            "delta": d.delta.estimate,
            "ci_low": d.delta.low,
            "ci_high": d.delta.high,
            "p_value": d.p_value,
            "test": "ppi-z",
            "p_method": "normal (prediction-powered)",
        }
        for column, value in values.items():
            if column in out.columns:
                out.iloc[i, out.columns.get_loc(column)] = value
    families = out["family"].astype(str).to_numpy() if "family" in out.columns else None
    adjusted = adjust(out["p_value"].to_numpy(dtype=float), families, correction)
    out["p_holm"] = adjust(out["p_value"].to_numpy(dtype=float), families, "holm")
    if "p_adjusted" in out.columns:
        out["p_adjusted"] = adjusted
    return out


def corrected_table(comparison: Any, score: str, *, labels: LabelSet | None = None) -> Any:
    """One row per variant: judge-filled and corrected mean with CI; for every variant but
    the baseline, the corrected paired difference from it with its CI and normal p."""
    import pandas as pd

    against = {v.name: base for base, v in comparison.pairs()}
    rows = []
    for variant in comparison.variants:
        base = against.get(variant.name)
        d = None
        if base is None:
            report = comparison.reports[variant.report]
            m = corrected_report_score(report, score, variant.mode, labels=labels).mean
        else:
            d = corrected_difference(
                comparison.reports[base.report],
                comparison.reports[variant.report],
                score,
                modes=(base.mode, variant.mode),
                labels=labels,
            )
            m = d.variant
        rows.append(
            {
                "variant": variant.name,
                "score": score,
                "judge_filled": m.judge_only,
                "corrected": m.estimate,
                "ci_low": m.low,
                "ci_high": m.high,
                "baseline": None if base is None else base.name,
                "delta": None if d is None else d.delta.estimate,
                "delta_low": None if d is None else d.delta.low,
                "delta_high": None if d is None else d.delta.high,
                "p_value": None if d is None else d.p_value,
                "labelled": m.n_labelled,
            }
        )
    return pd.DataFrame(rows)


def corrected_notes(comparison: Any) -> list[str]:
    """A comparison's note when its reports' label set has people's labels: the corrected
    means of the primary score per variant, and what the tests above use."""
    reports = list(comparison.reports.values())
    if not any(isinstance((r.benchmark.metadata or {}).get("label_set"), Mapping) for r in reports):
        return []
    score = comparison.primary_score
    try:
        parts = []
        for v in comparison.variants:
            c = corrected_report_score(comparison.reports[v.report], score, v.mode)
            m = c.mean
            parts.append(f"{v.name} {m.estimate:.3f} [{m.low:.3f}, {m.high:.3f}]")
    except ValueError:  # no human labels (or not held in this session): nothing to correct
        return []
    return [
        f"Corrected means of {score} (judge labels rectified by people's on {c.labelled} of "
        f"{c.touched} judge-touched queries, 95% CI): {'; '.join(parts)}. The tests above use "
        "the labels in force; comparison.corrected() gives paired corrected differences "
        "(the gate: corrected=True)."
    ]


__all__ = [
    "DEFAULT_SCORES",
    "CorrectedDifference",
    "CorrectedScore",
    "NoHumanLabelsError",
    "corrected_difference",
    "corrected_for_card",
    "corrected_notes",
    "corrected_table",
    "corrected_significance",
    "corrected_summary",
    "corrected_names",
    "corrected_report_score",
    "corrected_scores",
    "per_query",
    "queries_to_label",
    "report_labels",
    "touched_queries",
]

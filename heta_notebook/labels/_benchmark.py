"""A benchmark scored against a label set: same documents and queries, the set's labels.

``labeled(benchmark, labels)`` returns a benchmark whose cases' document-level evidence is the
label set's labels in force (grade > 0 as evidence, grade <= 0 as judged non-relevant), whose
version carries the set's fingerprint (so reports on different label sets have different
benchmark keys and fingerprints, and a comparison refuses to pair them), and whose evaluators
add ``judged@k`` (and, with ``holes=True``, the condensed and upper-bound twins of the BEIR
metrics). Its manifest's ``metadata.label_set`` records the set's name and hashes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heta_notebook.benchmarks._base import InMemoryBenchmark, Parsed
from heta_notebook.evaluators._retrieval import BeirRetrievalMetric
from heta_notebook.labels._holes import hole_metrics
from heta_notebook.labels._judged import JudgedAtK, case_qrels
from heta_notebook.labels._set import LabelSet
from heta_notebook.schema._records import BenchmarkCase, BenchmarkEvidence

_SNAPSHOTS: dict[str, LabelSet] = {}  # fingerprint -> a frozen copy, newest last
MAX_SNAPSHOTS = 32


def remember(labels: LabelSet) -> None:
    """Keep a copy of ``labels`` under its fingerprint, so a report scored on it in this
    session finds its labels again (corrected means on the card, in comparisons and gates)."""
    fp = labels.fingerprint()
    _SNAPSHOTS.pop(fp, None)
    _SNAPSHOTS[fp] = LabelSet(labels.original, labels.added, name=labels.name)
    while len(_SNAPSHOTS) > MAX_SNAPSHOTS:
        _SNAPSHOTS.pop(next(iter(_SNAPSHOTS)))


def remembered(fingerprint: str) -> LabelSet | None:
    """The label set a benchmark of this session was built on, by its fingerprint."""
    return _SNAPSHOTS.get(fingerprint)


def labels_of(benchmark: Any, *, name: str | None = None) -> LabelSet:
    """A label set whose original qrels are a benchmark's (every judged document, grade 0 kept)."""
    loaded = benchmark.load() if hasattr(benchmark, "load") else benchmark
    manifest, _, cases = loaded
    original = {case.case_id: case_qrels(case) for case in cases}
    return LabelSet({q: d for q, d in original.items() if d}, name=name or manifest.key)


class LabeledBenchmark(InMemoryBenchmark):
    """``benchmark`` with the labels of ``labels`` (see module)."""

    def __init__(
        self,
        benchmark: Any,
        labels: LabelSet,
        *,
        judged_k: Sequence[int] = (10,),
        holes: bool = False,
        evaluators: Sequence[Any] | None = None,
    ) -> None:
        self.inner, self.label_set = benchmark, labels
        self._judged_k, self._holes = tuple(judged_k), holes
        base = benchmark.manifest
        fp = labels.fingerprint()
        manifest = base.model_copy(
            update={
                "version": f"{base.version}+labels.{fp[:12]}",
                "metadata": {
                    **base.metadata,
                    "label_set": {
                        "name": labels.name,
                        "fingerprint": fp,
                        "original_fingerprint": labels.original_fingerprint(),
                        "added": len(labels.labels()),
                        "human": len(labels.labels("human")),
                        "path": None if labels.path is None else str(labels.path),
                    },
                },
            }
        )
        super().__init__(manifest, evaluators=evaluators, default_evaluators=self._defaults)
        remember(labels)

    def _defaults(self) -> tuple[Any, ...]:
        inner = tuple(self.inner.evaluators())
        beir = [e for e in inner if isinstance(e, BeirRetrievalMetric)]
        extra: tuple[Any, ...] = tuple(JudgedAtK(k) for k in self._judged_k)
        if self._holes:
            extra += hole_metrics(beir)
        return inner + extra

    def evaluators(self) -> tuple[Any, ...]:
        """The evaluators (given or default), always with ``judged@k``: a run on a label set
        is never scored without saying how much of it was judged (and warning when not all)."""
        chosen = super().evaluators()
        names = {getattr(e, "name", None) for e in chosen}
        missing = tuple(JudgedAtK(k) for k in self._judged_k if f"judged@{k}" not in names)
        return chosen + missing

    def _parse(self) -> Parsed:
        _, documents, cases = self.inner.load()
        qrels = self.label_set.qrels()
        remember(self.label_set)
        relabelled = [_relabelled(case, qrels.get(case.case_id, {})) for case in cases]
        facts = {"label_set": self.label_set.fingerprint()}
        return list(documents), relabelled, facts


def _relabelled(case: BenchmarkCase, labels: dict[str, int]) -> BenchmarkCase:
    kept = tuple(e for e in case.expected.evidence if e.reference_id is None)
    evidence = kept + tuple(
        BenchmarkEvidence(reference_id=doc, metadata={"relevance": grade})
        for doc, grade in labels.items()
        if grade > 0
    )
    meta = {
        **case.expected.metadata,
        "judged": len(labels),
        "positive_qrels": sum(1 for g in labels.values() if g > 0),
        "judged_nonrelevant": {d: g for d, g in labels.items() if g <= 0},
    }
    expected = case.expected.model_copy(update={"evidence": evidence, "metadata": meta})
    return case.model_copy(update={"expected": expected})


def labeled(benchmark: Any, labels: LabelSet, **options: Any) -> LabeledBenchmark:
    """``benchmark`` scored against ``labels`` (see module)."""
    return LabeledBenchmark(benchmark, labels, **options)


__all__ = ["LabeledBenchmark", "labeled", "labels_of", "remember", "remembered"]

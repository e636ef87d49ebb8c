"""heta-framework's ``report.json`` form read into our report (no heta-framework needed).

Both libraries write the same layout (schema_version "1"). What ours has and theirs cannot
hold is stashed by ``integrations.heta.to_heta_report`` under ``metadata["_heta_notebook"]``
and put back here; non-finite values (which heta-framework allows) become skipped scores.
Reading is plain data, so ``compare`` and the store accept heta reports without the
integration; writing heta-framework objects stays in ``integrations.heta``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from heta_notebook.schema._records import EvaluationReport

STASH_KEY = "_heta_notebook"


def from_heta_report(
    report: Any | Mapping[str, Any] | str | bytes | PathLike[str],
) -> EvaluationReport:
    """Our ``EvaluationReport`` from heta-framework's object, its ``to_dict()``, JSON or a path.

    Values stashed by :func:`to_heta_report` are restored; non-finite score values (which
    heta-framework allows) become skipped scores that say so.
    """
    data = _restore(_as_dict(report))
    for case in data.get("case_results") or ():
        case["scores"] = [_finite_score(s) for s in case.get("scores") or ()]
    return EvaluationReport.model_validate(data)


def _as_dict(report: Any) -> dict[str, Any]:
    to_dict = getattr(report, "to_dict", None)
    if callable(to_dict) and not isinstance(report, Mapping):
        report = to_dict()
    if isinstance(report, Mapping):  # a deep, JSON-shaped copy (NaN stays a float)
        return json.loads(json.dumps(report, default=str))
    if isinstance(report, bytes) or (isinstance(report, str) and report.lstrip().startswith("{")):
        return json.loads(report)
    return json.loads(Path(report).read_bytes())


def _restore(value: Any) -> Any:
    """Walk the report dict: put stashed fields back, make non-finite scores skipped."""
    if isinstance(value, list):
        return [_restore(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: _restore(item) for key, item in value.items()}
    metadata = out.get("metadata")
    if isinstance(metadata, dict) and STASH_KEY in metadata:
        metadata = dict(metadata)
        stash = metadata.pop(STASH_KEY) or {}
        out["metadata"] = metadata
        out.update(stash.get("original") or {})
        out.update(stash.get("extra") or {})
    return out


def _finite_score(score: Any) -> Any:
    value = score.get("value") if isinstance(score, dict) else None
    if isinstance(value, float) and not math.isfinite(value):
        metadata = {**(score.get("metadata") or {}), "skipped": True}
        metadata.setdefault("skip_reason", f"heta-framework evaluator returned {value}")
        metadata["original_value"] = str(value)
        return {**score, "value": 0.0, "metadata": metadata}
    return score


__all__ = ["STASH_KEY", "from_heta_report"]

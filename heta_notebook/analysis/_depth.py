"""Scores that look deeper than the run retrieved: ``beir_ndcg@100`` on ``top_k=10`` results.

The runner records them (``report.metadata["deeper_than_top_k"]``: score name → its k) and
warns when the run starts. Such a score is computed on the results there are, as trec_eval
computes it on that run, but it is not the BEIR figure of the same name, which ranks k results
(recall@100 on 10 results equals recall@10). The card and the CLI say so in one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

KEY = "deeper_than_top_k"


class DepthWarning(UserWarning):
    """Scores cut deeper than the results a query asked for (the CLI says it its own way)."""


def deeper_scores(evaluators: Iterable[Any], top_k: int) -> dict[str, int]:
    """Score name → k for the evaluators that cut at a ``k`` deeper than ``top_k``."""
    found = {}
    for evaluator in evaluators:
        k = getattr(evaluator, "k", None)
        if isinstance(k, int) and not isinstance(k, bool) and k > top_k:
            found[str(evaluator.name)] = k
    return found


def depth_line(metadata: Mapping[str, Any], how: str = "top_k={k}") -> str | None:
    """``"5 scores cut deeper than the 10 results each query asked for: ..."``, or None when
    every score's k is within the run's ``top_k``; ``how`` says how to ask for ``k`` results."""
    deeper = metadata.get(KEY)
    config = metadata.get("config")
    top_k = config.get("top_k") if isinstance(config, Mapping) else None
    if not isinstance(deeper, Mapping) or not deeper or not isinstance(top_k, int):
        return None
    names = sorted(deeper, key=lambda name: (deeper[name], name))
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    one = len(names) == 1
    return (
        f"{len(names)} score{'' if one else 's'} cut deeper than the {top_k} results each "
        f"query asked for: {shown} {'is' if one else 'are'} computed on those {top_k}, not "
        f"as deep as {'its name says' if one else 'their names say'}; run with "
        f"{how.format(k=max(deeper.values()))} for {'it' if one else 'them'}"
    )


__all__ = ["KEY", "DepthWarning", "deeper_scores", "depth_line"]

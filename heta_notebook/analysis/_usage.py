"""Token usage of a run's chat calls: the answer step's and each LLM judge's, per query mode.

Read from what the report already keeps: ``response.metadata["answer"]["usage"]`` (a chat
answerer) and each judge score's ``metadata["usage"]`` (the endpoint's ``usage`` field:
prompt, completion and total tokens). Replies served from the cache spent no tokens in this
run: they are counted as ``cached`` requests, not in the token totals. A judge score that
shares another score's request (``shared_request``) is not counted twice. An optional price
table (US$ per million tokens, per model) turns tokens into ``cost_usd``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

from heta_notebook.schema._records import EvaluationReport

COLUMNS = [
    "query_mode",
    "source",
    "model",
    "requests",
    "cached",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
]
Prices = Mapping[str, Mapping[str, float]]


def token_usage(report: EvaluationReport, prices: Prices | None = None) -> pd.DataFrame:
    """Chat requests and tokens per (query mode, source, model); ``source`` is ``"answer"`` or
    the judge's score name. ``prices={"model": {"prompt": 0.15, "completion": 0.6}}`` (US$
    per million tokens) adds ``cost_usd``."""
    totals: dict[tuple[str, str, str], list[int]] = {}
    for mode, source, model, usage, cached in _calls(report):
        row = totals.setdefault((mode, source, model), [0, 0, 0, 0, 0])
        row[0] += 1
        if cached:
            row[1] += 1
            continue
        prompt, completion = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
        row[2] += prompt
        row[3] += completion
        row[4] += _int(usage.get("total_tokens")) or prompt + completion
    frame = pd.DataFrame(
        [[*key, *values] for key, values in sorted(totals.items())], columns=COLUMNS
    )
    if prices is not None:
        frame["cost_usd"] = [_cost(row, prices) for row in frame.itertuples(index=False)]
    return frame


def usage_totals(report: EvaluationReport) -> dict[str, int]:
    """The run's chat requests, cached replies and tokens, summed over modes and sources."""
    frame = token_usage(report)
    return {column: int(frame[column].sum()) for column in COLUMNS[3:]}


def _calls(report: EvaluationReport) -> Iterator[tuple[str, str, str, Mapping[str, Any], bool]]:
    for result in report.case_results:
        response = result.response
        answer = response.metadata.get("answer") if response is not None else None
        if isinstance(answer, Mapping) and isinstance(answer.get("usage"), Mapping):
            yield (
                result.query_mode,
                "answer",
                str(answer.get("model") or answer.get("answerer") or "?"),
                answer["usage"],
                bool(answer.get("cache_hit")),
            )
        for score in result.scores:
            meta = score.metadata
            usage = meta.get("usage")
            if isinstance(usage, Mapping) and not meta.get("shared_request"):
                model = str(meta.get("model") or "?")
                yield result.query_mode, score.name, model, usage, bool(meta.get("cache_hit"))


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _cost(row: Any, prices: Prices) -> float | None:
    price = prices.get(row.model)
    if price is None:
        return None
    prompt = row.prompt_tokens * float(price.get("prompt", 0.0))
    completion = row.completion_tokens * float(price.get("completion", 0.0))
    return (prompt + completion) / 1_000_000


__all__ = ["token_usage", "usage_totals"]

"""Small real reports and notebooks for the CLI and notebook-export tests."""

from __future__ import annotations

import json
import re
from pathlib import Path

from heta_notebook.schema import (
    BenchmarkCase,
    BenchmarkEvidence,
    BenchmarkExpected,
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationReport,
    EvaluationScore,
    QueryResponse,
    QueryResult,
)

XSS = "<script>alert(1)</script>"


def make_report(report_id: str = "r1", *, kb: str = "bm25", shift: float = 0.0) -> EvaluationReport:
    """A two-mode, three-case report: evidence found for some cases, missing for others."""
    cases = [
        BenchmarkCase(
            case_id=str(i),
            query=f"query {i} {XSS}" if i == 0 else f"what is case {i}?",
            expected=BenchmarkExpected(evidence=(BenchmarkEvidence(reference_id=f"d{i}"),)),
        )
        for i in range(3)
    ]
    results = []
    for mode in ("bm25", "dense"):
        for i, case in enumerate(cases):
            found = (i + (mode == "dense")) % 2 == 0
            hits = (QueryResult(id=f"c{i}", text="chunk", metadata={"document_id": f"d{i}"}),)
            value = min(1.0, (1.0 if found else 0.0) * 0.8 + shift)
            results.append(
                EvaluationCaseResult(
                    case_id=case.case_id,
                    query=case.query,
                    query_mode=mode,
                    scores=(EvaluationScore(name="ndcg@10", value=value, passed=found),),
                    response=QueryResponse(mode=mode, results=hits if found else ()),
                    latency_ms=1.5 + i,
                    metadata={"expected": case.expected.to_dict()},
                )
            )
    return EvaluationReport(
        report_id=report_id,
        benchmark=BenchmarkManifest(name="tiny", version="1", split="test"),
        knowledge_base_name=kb,
        recipe_manifest={"name": kb, "chunk_size": 100},
        query_modes=("bm25", "dense"),
        score_summary={"bm25.ndcg@10": 0.5},
        case_results=tuple(results),
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:01:00Z",
    )


def external_script_sources(html: str) -> list[str]:
    """``src`` of every script loaded from the network (an offline page has none)."""
    return re.findall(r"<script[^>]+src=[\"'](?:https?:)?//[^\"']+", html)


def write_notebook(path: Path, sources: list[str]) -> Path:
    """Write a minimal nbformat-4 notebook with one code cell per source string."""
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": f"c{i}",
            "metadata": {},
            "outputs": [],
            "source": source,
        }
        for i, source in enumerate(sources)
    ]
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path

"""Shared helpers of the heta-framework integration tests (real heta-framework, no imitation)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "heta"
REPORT_JSON = FIXTURES / "report.json"
BEIR_MINI = FIXTURES / "cranfield_mini"
JSONL_DIR = FIXTURES / "jsonl"
KB_NAME = "heta-cranfield-mini"
REPORT_ID = "heta-fixture-cranfield-mini"

heta = pytest.importorskip("heta_framework.evaluation", reason="heta-framework not installed")


def offline_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    """Point tiktoken at the cl100k file litellm ships, so heta's parser never hits the network.

    heta-framework's ``ParseDocuments`` counts tokens with tiktoken ``cl100k_base`` for every
    document; without a cached file each call tries a download first (measured: 17 s for
    92 documents with a failing DNS lookup, 1.2 s with this cache).
    """
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return
    folder = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    if folder.is_dir() and not os.environ.get("TIKTOKEN_CACHE_DIR"):
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))


def _fixture_script() -> Any:
    path = Path(__file__).parent / "fixtures" / "make_heta_report.py"
    spec = importlib.util.spec_from_file_location("make_heta_report", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def offline_recipe(objects_root: Path, **metadata: str) -> Any:
    """The same offline heta recipe that made the fixture (in-memory BM25, local ObjectStore)."""
    import dataclasses

    recipe = _fixture_script().offline_recipe(objects_root)
    if metadata:
        recipe = dataclasses.replace(recipe, metadata={**recipe.metadata, **metadata})
    return recipe


def heta_beir() -> Any:
    """heta-framework's BeirBenchmark on the committed mini Cranfield folder (no download)."""
    return heta.BeirBenchmark(dataset="cranfield_mini", data_root=BEIR_MINI, download=False)


def heta_jsonl(**kwargs: Any) -> Any:
    """heta-framework's JsonlBenchmark on the committed JSONL fixture."""
    manifest = heta.BenchmarkManifest(
        name="cranfield_mini_jsonl", version="1", split="test", task_type="retrieval"
    )
    return heta.JsonlBenchmark(
        manifest=manifest,
        documents_jsonl=JSONL_DIR / "documents.jsonl",
        cases_jsonl=JSONL_DIR / "cases.jsonl",
        **kwargs,
    )


def heta_workspace(root: Path) -> Any:
    """A heta BenchmarkWorkspace under ``root``."""
    return heta.BenchmarkWorkspace(root_dir=root, cache_dir=root / "cache")


def raw_fixture() -> dict[str, Any]:
    """The committed heta-framework report.json as a dict."""
    return json.loads(REPORT_JSON.read_text(encoding="utf-8"))


def comparable(report: Any) -> list[tuple[str, str, dict[str, Any]]]:
    """Per (case, mode): scores by name, for comparing two runs (latency and ids left out)."""
    rows = []
    for result in report.case_results:
        scores = {s.name: (s.value, s.passed) for s in result.scores}
        rows.append((result.case_id, result.query_mode, scores))
    return sorted(rows, key=lambda row: (row[0], row[1]))

"""The same numbers on every machine: a pinned hash of every per-case score of the Cranfield
recipes the quickstart uses (all modes), and the same scores from a shuffled corpus.jsonl.

Scores are hashed at 9 decimals: float noise between CPUs or BLAS builds is ~1e-16 on these
ratios, so only a real change (a ranking that moved, a metric that changed) alters the hash.
When a change is *meant* to move numbers, update ``PINNED`` in the same commit and say why.
"""

from __future__ import annotations

import hashlib
import random
import shutil

import pytest

from heta_notebook.benchmarks._beir import BeirBenchmark, cranfield_folder
from heta_notebook.evaluators._retrieval import beir_default_metrics, evaluate_batch_columns
from heta_notebook.kb._knowledge_base import KnowledgeBase
from heta_notebook.kb._recipe import Chunking, Dense, Recipe

pytestmark = pytest.mark.slow  # 3 recipes x 3 modes x 225 queries, twice (~40 s on 2 cores)

RECIPES = (
    Recipe(name="whole-docs"),
    Recipe(name="lsa-256", dense=Dense(dims=256)),
    Recipe(name="chunks-100", chunking=Chunking(unit="words", size=100, overlap=20)),
)
# Same hash with OpenBLAS's Nehalem kernels and numpy without AVX2/AVX-512
# (OPENBLAS_CORETYPE=Nehalem NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL").
PINNED = "7697fc99366d5683"
DECIMALS = 9


def per_case_scores(folder) -> dict[tuple[str, str, str, str], float]:
    """(recipe, mode, case, metric) -> value for the 25 default BEIR metrics at top 100."""
    loaded = BeirBenchmark(folder, "test", dataset="cranfield").load()
    cases = list(loaded.cases)
    metrics = beir_default_metrics()
    scores = {}
    for recipe in RECIPES:
        kb = KnowledgeBase.build_sync(recipe, loaded.documents)
        for mode in kb.query_modes:
            found = kb.query_many([c.query for c in cases], mode=mode, top_k=100)
            columns = evaluate_batch_columns(metrics, cases, found)
            for metric, column in zip(metrics, columns, strict=True):
                for case, score in zip(cases, column, strict=True):
                    scores[(recipe.name, mode, case.case_id, metric.name)] = score.value
    return scores


def digest(scores: dict) -> str:
    lines = sorted(f"{'|'.join(key)}|{value:.{DECIMALS}f}" for key, value in scores.items())
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def original():
    return per_case_scores(cranfield_folder())


def test_the_score_hash_is_pinned(original):
    assert len(original) == 3 * 3 * 225 * 25
    assert digest(original) == PINNED


def test_a_shuffled_corpus_gives_identical_scores(original, tmp_path):
    folder = tmp_path / "cranfield"
    shutil.copytree(cranfield_folder(), folder)
    lines = (folder / "corpus.jsonl").read_text("utf-8").splitlines()
    random.Random(29).shuffle(lines)
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    shuffled = per_case_scores(folder)
    moved = [key for key, value in original.items() if shuffled[key] != value]
    assert not moved, f"{len(moved)} scores moved, e.g. {moved[:3]}"

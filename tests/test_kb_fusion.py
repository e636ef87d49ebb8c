"""The hybrid search's numpy fusion (``kb._fusion.fuse``) is the Python rule it replaced.

``reciprocal_rank_fusion`` stays the readable definition of RRF; ``fuse`` is what the KB runs
(once per query: its top k and the judged documents' deep ranks come from the same order).
Both must give the same rows, the same floats and the same per-list ranks, ties included.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from heta_notebook.kb._fusion import fuse, reciprocal_rank_fusion
from heta_notebook.kb._knowledge_base import KnowledgeBase
from heta_notebook.kb._recipe import Chunking, Recipe
from tests._kb_helpers import cranfield


def _python(rows_a, rows_b, k, keys) -> list[tuple[int, float, list[int | None]]]:
    return reciprocal_rank_fusion([list(rows_a), list(rows_b)], k=k, keys=keys)


def _numpy(rows_a, rows_b, k, keys) -> list[tuple[int, float, list[int | None]]]:
    fused = fuse(np.asarray(rows_a, dtype=np.int64), np.asarray(rows_b, dtype=np.int64), k, keys)
    ranks = fused.fusion(len(fused.rows))
    return list(zip(fused.rows.tolist(), fused.scores.tolist(), ranks, strict=True))


@pytest.mark.parametrize("seed", range(40))
def test_numpy_fusion_equals_the_python_rule_on_random_lists(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([1, 5, 30, 200])
    keys = np.asarray(rng.sample(range(n), n))
    rows_a = rng.sample(range(n), rng.randint(0, n))
    rows_b = rng.sample(range(n), rng.randint(0, n))
    k = rng.choice([1, 2, 60])
    assert _numpy(rows_a, rows_b, k, keys) == _python(rows_a, rows_b, k, keys)


def test_mirrored_lists_tie_everywhere_and_still_agree() -> None:
    rows = list(range(50))
    keys = np.asarray(list(reversed(rows)))
    assert _numpy(rows, rows[::-1], 60, keys) == _python(rows, rows[::-1], 60, keys)


@pytest.mark.parametrize("chunking", [None, Chunking(unit="words", size=100, overlap=20)])
def test_the_hybrid_search_returns_the_python_fusion_of_its_candidate_lists(chunking) -> None:
    recipe = Recipe(name="r") if chunking is None else Recipe(name="r", chunking=chunking)
    kb = KnowledgeBase.build_sync(recipe, cranfield().documents[:400])
    queries = [c.query for c in cranfield().cases[:40]]
    keys = kb.chunks.tie_keys
    lexical = kb.bm25.search(queries, 100, keys=keys)
    dense = kb.dense.search(queries, 100, keys=keys)
    responses = kb.query_many(queries, mode="hybrid_search", top_k=10)
    for response, (rows_a, _), (rows_b, _) in zip(responses, lexical, dense, strict=True):
        expected = _python(rows_a, rows_b, kb.recipe.hybrid.rrf_k, keys)[:10]
        got = [
            (
                r.id,
                r.score,
                [r.metadata["fused_ranks"][m] for m in ("full_text_search", "vector_search")],
            )
            for r in response.results
        ]
        assert got == [(kb.chunks[row].chunk_id, s, ranks) for row, s, ranks in expected]

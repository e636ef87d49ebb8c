"""No answer step by default where a benchmark expects no answers.

``Recipe``'s default answer step (``Extractive()``) answers every query. On a retrieval-only
benchmark (BEIR, TREC: no expected answers, no expected abstentions) those answers measure
nothing, and their abstentions filled cards, comparisons and the CLI with "abstained" counts.
So the runner drops the answer step of a recipe that did not choose one; a recipe that sets
``answer=`` (even ``Extractive()``) keeps it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from heta_notebook.schema._abstain import ABSTAIN_EXPECTED
from heta_notebook.schema._records import BenchmarkCase


def expects_answers(cases: Iterable[BenchmarkCase]) -> bool:
    """True when some case has an expected answer, value or abstention (what answers are
    scored against)."""
    return any(
        case.expected.answers
        or case.expected.value is not None
        or ABSTAIN_EXPECTED in case.expected.metadata
        for case in cases
    )


def answer_where_expected(recipe: Any, cases: Iterable[BenchmarkCase]) -> Any:
    """``recipe`` without its default answer step when no case expects an answer."""
    from heta_notebook.kb._recipe import Recipe

    if not isinstance(recipe, Recipe) or "answer" in recipe.model_fields_set:
        return recipe
    if recipe.answer is None or expects_answers(cases):
        return recipe
    return recipe.model_copy(update={"answer": None})


__all__ = ["answer_where_expected", "expects_answers"]

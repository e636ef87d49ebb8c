"""What a command line names, opened: a benchmark (a name, a folder, a file or ``module:attr``),
a recipe, evaluators, and ``module:attr`` import paths; errors say which option and what was
expected (``heta-notebook run``)."""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

NAMED_BENCHMARKS = ("cranfield", "squad2-sample")
NAMED_RECIPES = ("default", "bm25")
NAMED_EVALUATORS = ("beir", "squad", "evidence")


def short_path(text: str, width: int = 80) -> str:
    """A path for a one-line error: long names cut with an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"


def open_benchmark(text: str, split: str = "test") -> Any:
    """A benchmark from the command line: a name (``cranfield``, ``squad2-sample``), a BEIR
    folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/``), a Heta JSONL folder
    (``documents.jsonl``, ``cases.jsonl``), a SQuAD ``.json`` file, or ``module:attr``: a
    benchmark object (ours, heta-framework's, anything the loader reads) or a function that
    takes no arguments and returns one."""
    from heta_notebook.benchmarks._beir import BeirBenchmark
    from heta_notebook.benchmarks._jsonl import JsonlBenchmark
    from heta_notebook.benchmarks._squad import SquadBenchmark

    if text == "cranfield":
        return BeirBenchmark.cranfield()
    if text == "squad2-sample":
        return SquadBenchmark.sample()
    path = Path(text)
    if path.is_dir() and (path / "corpus.jsonl").is_file():
        return BeirBenchmark.from_folder(path, split=split)
    if path.is_dir() and (path / "cases.jsonl").is_file():
        return JsonlBenchmark.from_folder(path)
    if path.is_file() and path.suffix == ".json":
        return SquadBenchmark(path)
    if _is_import_path(text) and not path.exists():
        return _benchmark_object(import_attr(text, "benchmark"), text)
    raise ValueError(
        f"no benchmark at {short_path(text)}: give one of {', '.join(NAMED_BENCHMARKS)}, a BEIR "
        "folder (corpus.jsonl, queries.jsonl, qrels/), a Heta JSONL folder (documents.jsonl, "
        "cases.jsonl), a SQuAD .json file or module:attr"
    )


def _benchmark_object(found: Any, text: str) -> Any:
    """``found`` when it reads as a benchmark, else what the no-argument function it is
    returns; one error naming what it got otherwise."""
    if _takes_no_arguments(found) and not _is_benchmark(found):
        found = found()
    if not _is_benchmark(found):
        raise ValueError(
            f"benchmark {text!r} is a {type(found).__qualname__}, not a benchmark (an object "
            "with documents() and cases(), e.g. JsonlBenchmark or BeirBenchmark)"
        )
    return found


def _is_benchmark(obj: Any) -> bool:
    from heta_notebook.integrations.heta._common import is_heta_object

    has_parts = callable(getattr(obj, "documents", None)) and callable(getattr(obj, "cases", None))
    return not isinstance(obj, type) and (has_parts or is_heta_object(obj))


def open_recipe(text: str) -> Any:
    """``default`` (the embedded recipe), ``bm25`` (BM25 only: fast) or ``module:attr``, an
    import path to a Recipe or a system (a function, an object with ``query``, ...)."""
    from heta_notebook.kb._recipe import Recipe

    if text == "default":
        return Recipe(name="default")
    if text == "bm25":
        return Recipe(name="bm25", dense=None, hybrid=None)
    if not _is_import_path(text):
        raise ValueError(
            f"--recipe {text!r}: give one of {', '.join(NAMED_RECIPES)} or module:attr "
            "(e.g. my_pipeline:search)"
        )
    found = import_attr(text, "--recipe")
    from heta_notebook.systems._adapt import as_system

    try:
        as_system(found)  # only checks what it is: the runner adapts it again
    except TypeError as exc:
        raise ValueError(f"--recipe {text!r}: {exc}") from None
    return found


def open_evaluators(items: Sequence[str] | None) -> list[Any] | None:
    """``--evaluator`` (repeatable) as evaluators; None (the benchmark's own) when not given.

    ``beir``: nDCG, MAP, recall, precision and MRR at 1, 3, 5, 10, 100 (trec_eval's rules);
    ``squad``: SQuAD EM and F1, evidence recall@5 and abstention accuracy; ``evidence``:
    evidence recall@5 and @10; ``module:attr``: an evaluator, a list of them, an evaluator
    class (made with no arguments) or a function (``@evaluator``-style when it takes
    arguments, else called for an evaluator or a list)."""
    if not items:
        return None
    chosen: list[Any] = []
    for item in items:
        chosen += _named_evaluators(item) if item in NAMED_EVALUATORS else _user_evaluators(item)
    return chosen


def _named_evaluators(name: str) -> list[Any]:
    from heta_notebook.evaluators._retrieval import EvidenceRecallAtK, beir_default_metrics
    from heta_notebook.evaluators._squad import squad_default_evaluators

    if name == "beir":
        return list(beir_default_metrics())
    if name == "squad":
        return list(squad_default_evaluators(2))
    return [EvidenceRecallAtK(k=5), EvidenceRecallAtK(k=10)]


def _user_evaluators(text: str) -> list[Any]:
    if not _is_import_path(text):
        raise ValueError(
            f"--evaluator {text!r}: give one of {', '.join(NAMED_EVALUATORS)} or module:attr "
            "(e.g. my_metrics:exact)"
        )
    found = import_attr(text, "--evaluator")
    factory = _takes_no_arguments(found) and not hasattr(found, "evaluate")
    if isinstance(found, type) or factory:  # a class made with no arguments, or a factory
        found = found()
    items = list(found) if isinstance(found, (list, tuple)) else [found]
    return [_as_evaluator(item, text) for item in items]


def _as_evaluator(item: Any, text: str) -> Any:
    """An evaluator object as it is; a plain function wrapped as ``@evaluator`` does."""
    if hasattr(item, "evaluate") or hasattr(item, "score"):
        return item
    if callable(item):
        from heta_notebook.evaluators._decorators import aevaluator, evaluator

        return (aevaluator if inspect.iscoroutinefunction(item) else evaluator)(item)
    raise ValueError(
        f"--evaluator {text!r} is a {type(item).__qualname__}, not an evaluator (an object "
        "with evaluate() or score(), or a function)"
    )


def import_attr(text: str, option: str) -> Any:
    """The object at ``module:attr`` (dots in ``attr`` walk attributes); the module is
    looked for next to where the command runs first. One-line errors."""
    import importlib

    module_name, _, attr = text.partition(":")
    sys.path.insert(0, os.getcwd())  # a module next to where the command runs
    try:
        found: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name.split(".")[0] and exc.name != module_name:
            raise  # the user's module itself imports something missing: say that
        raise ValueError(
            f"{option} {text!r}: no module named {module_name!r} here or on PYTHONPATH"
        ) from None
    for part in attr.split("."):
        if not hasattr(found, part):
            raise ValueError(f"{option} {text!r}: {module_name} has no attribute {attr!r}")
        found = getattr(found, part)
    return found


def _is_import_path(text: str) -> bool:
    module_name, sep, attr = text.partition(":")
    parts = [*module_name.split("."), *attr.split(".")]
    return bool(sep) and all(p.isidentifier() for p in parts)


def _takes_no_arguments(obj: Any) -> bool:
    """Whether ``obj`` is a function (not a class) callable with no arguments."""
    if isinstance(obj, type) or not callable(obj):
        return False
    try:
        inspect.signature(obj).bind()
    except (TypeError, ValueError):
        return False
    return True

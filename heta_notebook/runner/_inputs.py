"""What a run is given, made uniform: recipes or built KBs, evaluators, the store.

Benchmarks are read by the one loader (``benchmarks._loader``); heta-framework evaluators go
through the one adapter call (``benchmarks._loader.adapt_heta``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_notebook._util.paths import temp_folder
from heta_notebook.benchmarks._loader import adapt_heta
from heta_notebook.evaluators._protocol import check_unique_names, settings_of
from heta_notebook.systems._adapt import own_manifest

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.reports._store import ReportStore


def active_evaluators(evaluators: Iterable[Any]) -> tuple[Any, ...]:
    """Adapt foreign evaluators, drop disabled ones, reject duplicate names."""
    adapted = [adapt_heta(ev, "evaluator") for ev in evaluators]
    active = tuple(ev for ev in adapted if settings_of(ev).enabled)
    check_unique_names(active)
    return active


def is_knowledge_base(obj: Any) -> bool:
    """Something to query as it is (a built KB, a function, any system ``systems.as_system``
    reads) rather than a recipe (has ``build_knowledge_base``)."""
    return not hasattr(obj, "build_knowledge_base")


def label_of(recipe: Any, default: str) -> str:
    """A recipe's (or KB's, or system's) short name for legends, else ``default``."""
    name = getattr(recipe, "name", None)
    if isinstance(name, str) and name.strip():
        return name
    function = getattr(recipe, "__name__", None)  # a plain function: its name
    if isinstance(function, str) and function.isidentifier():
        return function
    return default


def json_manifest(obj: Any) -> dict[str, Any] | list[dict[str, Any]]:
    """``obj.manifest()`` as JSON-friendly data (``systems``' one rule), ``{}`` when it has none."""
    value = own_manifest(obj)
    return {} if value is None else value


def named_recipes(recipes: Mapping[str, Any] | Sequence[Any]) -> dict[str, Any]:
    """Labels → recipes from a dict, or from a list labelled by recipe names (made unique)."""
    if isinstance(recipes, Mapping):
        return {str(k): v for k, v in recipes.items()}
    named: dict[str, Any] = {}
    for index, recipe in enumerate(recipes):
        base = label_of(recipe, f"recipe-{index + 1}")
        label, n = base, 2
        while label in named:
            label, n = f"{base}-{n}", n + 1
        named[label] = recipe
    return named


def as_store(store: ReportStore | str | os.PathLike[str] | None) -> ReportStore | None:
    """The store a run writes to: None, a ``ReportStore``, or one opened at a path/URL."""
    from heta_notebook.reports._store import ReportStore

    if store is None or isinstance(store, ReportStore):
        return store
    return ReportStore(store)


def workspace_for(
    namespace: str,
    store: ReportStore | None,
    given: str | os.PathLike[str] | None = None,
) -> Path:
    """Where ``namespace`` (KB builds, prepared benchmarks) is cached: ``given``, the store's
    cache, or the one temp folder (``paths.temp_folder``)."""
    if given is not None:
        path = Path(given)
        path.mkdir(parents=True, exist_ok=True)
        return path
    if store is not None:
        return store.cache_dir(namespace)
    return temp_folder(namespace)

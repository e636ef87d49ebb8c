"""The nbval hook that makes notebook runs fail loudly: a failing ``!`` line or an error printed
as text fails its cell. The checks themselves live in ``heta_notebook.display._notebook_guard``
(``run_notebook`` uses them too); ``notebooks/conftest.py`` imports this hook, and
``pytest -p heta_notebook.testing._notebook_guard`` adds it to any nbval run.
"""

from __future__ import annotations

from typing import Any

from heta_notebook.display._notebook_guard import (
    _SHELL_LINE,
    check_notebook_outputs,
    guard_shell_lines,
    output_problems,
)


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """Guard every nbval cell: its ``!`` lines must succeed, its output must hold no error."""
    for item in items:
        if type(item).__name__ == "IPyNbCell" and hasattr(item, "cell"):
            _guard_item(item)


def _guard_item(item: Any) -> None:
    """Wrap one nbval cell's ``runtest`` with the two checks."""
    source = item.cell.source
    if any(_SHELL_LINE.match(line) for line in source.splitlines()):
        item.cell.source = guard_shell_lines(source)
    run = item.runtest

    def runtest() -> None:
        run()
        problems = output_problems(item.test_outputs or [])
        if problems:
            item.raise_cell_error("the cell's output shows an error", "\n".join(problems))

    item.runtest = runtest


__all__ = [
    "check_notebook_outputs",
    "guard_shell_lines",
    "output_problems",
    "pytest_collection_modifyitems",
]

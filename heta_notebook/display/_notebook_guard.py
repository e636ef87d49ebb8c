"""Make notebook runs fail loudly on what a Python exception does not show.

A failing ``!`` shell escape (``command not found``, a bash syntax error, a non-zero exit) and a
traceback printed as text by a subprocess are not exceptions: nbval ``--nbval-lax`` and nbclient
both pass such a cell. Two checks close that gap:

- ``guard_shell_lines(source)`` adds, after each ``!`` line, a check of IPython's
  ``_exit_code``, so a non-zero exit raises in the cell that ran it;
- ``output_problems(outputs)`` names the shell errors and printed tracebacks in a cell's
  outputs.

``run_notebook`` (the CLI's ``run-notebook``) uses both, and so does the nbval hook in
``heta_notebook.testing._notebook_guard`` (``notebooks/conftest.py`` imports it;
``pytest -p heta_notebook.testing._notebook_guard`` adds it to any nbval run).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

_SHELL_LINE = re.compile(r"^(?P<indent>[ \t]*)!(?!=)(?P<command>.+)$")
_PROBLEMS = (
    (re.compile(r"command not found"), "a shell command was not found"),
    (re.compile(r"^/bin/(ba)?sh: ", re.MULTILINE), "the shell reported an error"),
    (re.compile(r"^Traceback \(most recent call last\):", re.MULTILINE), "a traceback"),
)


def guard_shell_lines(source: str) -> str:
    """``source`` with a check after every ``!`` line that raises when its command failed."""
    lines: list[str] = []
    for line in source.splitlines():
        lines.append(line)
        match = _SHELL_LINE.match(line)
        if match is None or line.rstrip().endswith("\\"):
            continue
        command = match["command"].strip()
        lines.append(
            f"{match['indent']}if _exit_code:  # added by heta_notebook's notebook guard\n"
            f"{match['indent']}    raise RuntimeError("
            f"f'the shell line !{_literal(command)} exited with code {{_exit_code}}')"
        )
    return "\n".join(lines)


def _literal(text: str) -> str:
    """``text`` safe inside a single-quoted f-string (no quotes, braces or backslashes)."""
    return (
        text.replace("\\", "\\\\").replace("'", "\\'").replace("{", "{{").replace("}", "}}")[:120]
    )


def output_problems(outputs: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per shell error or printed traceback in a cell's outputs (empty when clean)."""
    problems: list[str] = []
    for output in outputs:
        text = _output_text(output)
        for pattern, what in _PROBLEMS:
            found = pattern.search(text)
            if found:
                start = text.rfind("\n", 0, found.start()) + 1
                end = text.find("\n", found.end())
                line = text[start : end if end >= 0 else len(text)].strip()
                problems.append(f"{what}: {line[:200]}")
    return problems


def _output_text(output: Mapping[str, Any]) -> str:
    """The printed text of one output (a stream, or a result's ``text/plain``)."""
    kind = output.get("output_type", output.get("msg_type"))
    if kind == "stream":
        text = output.get("text", "")
    elif kind in {"display_data", "execute_result"}:
        text = (output.get("data") or {}).get("text/plain", "")
    else:
        return ""
    return "".join(text) if isinstance(text, list) else str(text)


def check_notebook_outputs(nb: Any) -> list[str]:
    """Every problem in an executed notebook's outputs, each prefixed by its cell number."""
    found: list[str] = []
    for number, cell in enumerate(nb.cells):
        if cell.get("cell_type") == "code":
            found += [f"cell {number}: {p}" for p in output_problems(cell.get("outputs", []))]
    return found


__all__ = ["check_notebook_outputs", "guard_shell_lines", "output_problems"]

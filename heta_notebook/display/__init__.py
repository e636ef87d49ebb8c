"""Display: cards, plotly figures, the case explorers (anywidget, live and in exported HTML),
pages and notebook export. No scoring here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_notebook._util.lazy import lazy_exports

_EXPORTS = {
    "NotebookRun": "heta_notebook.display._notebook",
    "execute_notebook": "heta_notebook.display._notebook",
    "export_html": "heta_notebook.display._notebook",
    "run_notebook": "heta_notebook.display._notebook",
    "report_to_html": "heta_notebook.display._export",
    "setup_notebook": "heta_notebook.display._setup",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the lazy exports, spelled out for type checkers
    from heta_notebook.display._export import (  # noqa: F401
        report_to_html,
    )
    from heta_notebook.display._notebook import (  # noqa: F401
        NotebookRun,
        execute_notebook,
        export_html,
        run_notebook,
    )
    from heta_notebook.display._setup import (  # noqa: F401
        setup_notebook,
    )

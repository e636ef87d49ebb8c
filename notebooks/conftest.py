"""nbval runs of these notebooks fail loudly: a failing ``!`` line or an error printed as text
fails its cell (``heta_notebook.testing._notebook_guard``). Each notebook's run is also exported
as ``run-notebook`` shares it and held to the size budget (``tests/_nbval_export.py``), so CI
executes every notebook once. A kernel that dies while starting is started again
(``tests/_nbval_kernel.py``), and every kernel runs headless, as ``run-notebook``'s do: an
explorer builds its whole payload in its cell (``display._widgets.headless``)."""

import sys
from pathlib import Path

from heta_notebook.testing._notebook_guard import pytest_collection_modifyitems as guard

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: tests._nbval_export
from tests._nbval_export import record_exports  # noqa: E402
from tests._nbval_kernel import retry_kernel_starts  # noqa: E402

retry_kernel_starts()


def pytest_collection_modifyitems(items):
    """Guard every cell, then record every notebook for its export check."""
    guard(items)
    record_exports(items)

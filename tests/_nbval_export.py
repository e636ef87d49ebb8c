"""Export each notebook from the nbval run itself and hold it to the sharing budget.

Every notebook in ``notebooks/`` is executed once in CI, by nbval. This hook (imported by
``notebooks/conftest.py``) records the kernel messages nbval reads, hands them to nbclient's own
message handling (outputs, ``clear_output``, display updates, widget comms: what ``run-notebook``
keeps, through the same library), and after the last cell exports the notebook with
``export_html`` as ``run-notebook`` does. The page must stay within ``HETA_NOTEBOOK_EXPORT_BYTES``
(6 MB) and carry plotly.js once, compressed (issues 34 / 38); a page over budget fails the last
cell with the notebook's name and size. A notebook with a ``Labeler`` (07) must export its
read-only static view counting the labels its widget holds at the end (issue 35). Executing each notebook a second time for this check
cost ~55 CPU s of the suite.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

MAX_HTML_BYTES = 6_000_000
BUDGET_ENV = "HETA_NOTEBOOK_EXPORT_BYTES"  # a test lowers it to see the check bite
KEEP_ENV = "HETA_NOTEBOOK_EXPORT_DIR"  # set: each checked page is also written there, to look at
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
LABELER_VIEW = "Labeling: {made} of {pairs} pairs labelled"  # Labeler.static_html's count


class NotebookRecorder:
    """The executed notebook as nbclient would build it from the messages nbval reads."""

    def __init__(self, path: Path) -> None:
        import nbformat
        from nbclient import NotebookClient

        self.path = path
        self.nb = nbformat.read(path, as_version=4)  # a copy: nbval compares against its own
        self.client = NotebookClient(self.nb, record_timing=False, store_widget_state=True)
        self.client.reset_execution_trackers()
        self.cell_of: dict[str, int] = {}  # execute request msg_id -> cell index
        self.current = -1
        self.count_of: dict[int, int] = {}  # cell index -> its In [n], numbered as nbclient does
        self.failed = False

    def start_cell(self, index: int) -> None:
        """A cell is about to run: its outputs start empty, as in nbclient's execute_cell."""
        self.current = index
        cell = self.nb.cells[index]
        cell.outputs = []
        self.client.clear_before_next_output = False
        if cell.cell_type == "code":  # nbval runs with store_history=False: the kernel counts 0
            self.count_of[index] = cell.execution_count = len(self.count_of) + 1

    def feed(self, msg: dict[str, Any]) -> None:
        """One iopub message; those of no recorded request are dropped, as nbclient does."""
        from nbclient.exceptions import CellExecutionComplete

        index = self.cell_of.get(msg.get("parent_header", {}).get("msg_id"))
        if index is None:
            return
        msg = {**msg, "header": dict(msg["header"])}  # nbclient renames update_display_data
        if "execution_count" in msg.get("content", {}):  # execute_input, execute_result
            msg["content"] = {**msg["content"], "execution_count": self.count_of.get(index)}
        with contextlib.suppress(CellExecutionComplete):
            self.client.process_message(msg, self.nb.cells[index], index)

    def check_export(self) -> str | None:
        """Export as ``run-notebook`` does; what is wrong with the page, or None."""
        from heta_notebook.display._notebook import export_html
        from tests._display_helpers import plotly_js_copies

        self.client.set_widgets_metadata()
        html = export_html(self.nb, title=self.path.stem)
        if os.environ.get(KEEP_ENV):
            Path(os.environ[KEEP_ENV], f"{self.path.stem}.html").write_text(html, encoding="utf-8")
        size, budget = len(html.encode("utf-8")), int(os.environ.get(BUDGET_ENV, MAX_HTML_BYTES))
        copies = plotly_js_copies(html)
        unseen = labeler_views_missing(self.nb, html)
        if unseen:
            return f"{self.path.name}'s export lacks its Labeler's read-only view: {unseen}"
        if size > budget:
            return f"{self.path.name} exports to {size / 1e6:.2f} MB, over the {budget / 1e6:g} MB budget"
        if copies["raw"] or copies["compressed"] > 1:
            return f"{self.path.name}'s export carries plotly.js more than once: {copies}"
        return None


def labeler_views_missing(nb: Any, html: str) -> list[str]:
    """The static views ("Labeling: 150 of 150 pairs labelled") that the exported ``html``
    should hold, one per Labeler widget in ``nb``'s saved widget state, and does not."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    expected = [
        LABELER_VIEW.format(made=len(fields["made"]), pairs=len(fields["items"]))
        for fields in (model.get("state", {}) for model in state.values())
        if {"items", "made", "position", "blind"} <= set(fields)
    ]
    return [view for view in expected if view not in html]


def record_exports(items: list[Any]) -> None:
    """Wrap every nbval cell so its notebook is recorded and, after its last cell, checked."""
    cells = [item for item in items if type(item).__name__ == "IPyNbCell"]
    last = {id(item.parent): item for item in cells}
    recorders: dict[int, NotebookRecorder] = {}
    for item in cells:
        recorder = recorders.setdefault(id(item.parent), _recording(item.parent))
        _wrap(item, recorder, is_last=last[id(item.parent)] is item)


def _recording(parent: Any) -> NotebookRecorder:
    """A recorder for one nbval notebook, fed every message nbval reads from its kernel."""
    recorder = NotebookRecorder(Path(str(parent.path)))
    read = parent.get_kernel_message

    def get_kernel_message(*args: Any, **kwargs: Any) -> Any:
        msg = read(*args, **kwargs)
        recorder.feed(msg)
        return msg

    parent.get_kernel_message = get_kernel_message
    return recorder


def _wrap(item: Any, recorder: NotebookRecorder, *, is_last: bool) -> None:
    """Note which request is this cell's; after the notebook's last cell, check its export."""
    index = next(i for i, cell in enumerate(item.parent.nb.cells) if cell is item.cell)
    run = item.runtest

    def runtest() -> None:
        kernel = item.parent.kernel
        execute = kernel.execute_cell_input
        recorder.start_cell(index)

        def execute_cell_input(*args: Any, **kwargs: Any) -> str:
            msg_id = execute(*args, **kwargs)
            recorder.cell_of[msg_id] = index
            return msg_id

        kernel.execute_cell_input = execute_cell_input
        try:
            run()
        except BaseException:
            recorder.failed = True
            raise
        finally:
            kernel.execute_cell_input = execute
        if is_last and not recorder.failed:
            problem = recorder.check_export()
            if problem:
                item.raise_cell_error("the notebook's shared export fails its check", problem)

    item.runtest = runtest


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """As a plugin (``-p tests._nbval_export``): record and check every nbval notebook."""
    record_exports(items)

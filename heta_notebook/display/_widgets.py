"""The anywidget front-end of the explorers: one ES module, one data model per report.

``ExplorerWidget`` is an ``anywidget.AnyWidget`` (an ipywidgets ``DOMWidget``) whose view is
``assets/explorer.js``; its ``state`` trait (filters, sort, page, selection) syncs both ways.
``ReportDataWidget`` holds one report's columnar payload (``explorer_data.encode_report``),
gzip-compressed and base64-encoded; explorers refer to it instead of copying it, so a report
shown by several explorers in one notebook is stored once in the saved widget state. Its texts
live in text chunk models (``TextChunkWidget``) shared by every report of the kernel session
(``_texts.TextPool``): reports on one corpus store each text once.

The same module and payloads also run without Jupyter: :func:`standalone_html` mounts them
in a plain page through a small model shim (``report.to_html()``, the CLI export).
"""

from __future__ import annotations

import atexit
import base64
import gzip
import hashlib
import json
import os
import threading
import time
import weakref
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import anywidget
import numpy as np
import traitlets
from ipywidgets import widget_serialization

from heta_notebook.display._explorer_data import (
    DEFAULT_MAX_CASES,
    encode_details,
    encode_preview,
    encode_report,
)
from heta_notebook.display._texts import TextPool, resolve
from heta_notebook.schema._records import EvaluationReport

_DATA_ESM = "export default {};"  # a data model has no view


@cache
def explorer_esm() -> str:
    """The explorers' ES module (``display/assets/explorer.js``)."""
    return (
        resources.files("heta_notebook.display")
        .joinpath("assets")
        .joinpath("explorer.js")
        .read_text(encoding="utf-8")
    )


BIG_PAYLOAD = 1 << 20  # bytes of JSON above which gzip level 6 is used (4-5x faster than 9)


def pack(payload: dict[str, Any]) -> str:
    """Compact JSON, gzip (deterministic), base64: what a data model stores.

    Level 9 for small payloads; level 6 above ``BIG_PAYLOAD`` (measured on a 14.6 MB
    payload: 0.7 s instead of 3.2 s for 1.6 % more bytes; level 1 is 26 % bigger)."""
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    data = text.encode("utf-8")
    level = 9 if len(data) <= BIG_PAYLOAD else 6
    return base64.b64encode(gzip.compress(data, level, mtime=0)).decode("ascii")


def unpack(packed: str) -> dict[str, Any]:
    """The payload back from :func:`pack` (tests, debugging)."""
    return json.loads(gzip.decompress(base64.b64decode(packed)).decode("utf-8"))


class TextChunkWidget(anywidget.AnyWidget):
    """Texts several report payloads read (one packed chunk of ``_texts.TextPool``); never
    changes once made, so the page decodes it once."""

    _esm = traitlets.Unicode(_DATA_ESM).tag(sync=True)
    packed = traitlets.Unicode("").tag(sync=True)


_pool: TextPool | None = None
_chunk_widgets: list[TextChunkWidget] = []  # the session pool's chunks (kept alive by it)
_pool_lock = threading.Lock()


def session_texts() -> TextPool:
    """The kernel session's text pool; a new one once any of its chunks was closed
    (``Widget.close_all()``), so no payload refers to a model the page no longer has."""
    global _pool
    with _pool_lock:
        if _pool is None or any(w.comm is None for w in _chunk_widgets):
            _chunk_widgets.clear()
            _pool = TextPool(_chunk_widget)
        return _pool


def _chunk_widget(chunk: dict[str, Any]) -> str:
    """A new chunk model in the kernel; its reference for the payloads that read it."""
    widget = TextChunkWidget(packed=pack(chunk))
    _chunk_widgets.append(widget)
    return f"IPY_MODEL_{widget.model_id}"


def payload_of(data: ReportDataWidget) -> dict[str, Any]:
    """The payload of a data model as the page reads it: string table included."""
    return resolve(unpack(data.payload), lambda ref: unpack(_chunk_of(ref)))


def _chunk_of(ref: str) -> str:
    """The packed chunk of a session chunk model by its reference."""
    model_id = ref.removeprefix("IPY_MODEL_")
    return next(w.packed for w in list(_chunk_widgets) if w.model_id == model_id)


def _shared(payload: dict[str, Any]) -> str:
    """A full payload packed with its texts in the session's chunks."""
    return pack(session_texts().share(payload))


class ReportDataWidget(anywidget.AnyWidget):
    """One report's packed explorer payload, shared by every explorer that shows it.

    With ``report`` it also answers the page's requests for case details it does not hold
    (custom message ``{"type": "details", "rows": [...]}``, see ``encode_details``), and a
    payload still being built in the background (:func:`report_data`) sets ``ready`` when
    it has replaced the first-page preview."""

    _esm = traitlets.Unicode(_DATA_ESM).tag(sync=True)
    payload = traitlets.Unicode("").tag(sync=True)
    # Details the page fetched from the kernel (packed replies), kept in the widget's state
    # so a saved notebook still shows them without a kernel (up to KEEP_FETCHED_BYTES).
    fetched = traitlets.List(traitlets.Unicode()).tag(sync=True)

    def __init__(self, report: EvaluationReport | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._report = report
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if report is not None:
            self.on_msg(self._on_msg)

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """The page asks for the details of report rows (at most ``MAX_FETCH`` at once)."""
        if not isinstance(content, dict) or content.get("type") != "details":
            return
        assert self._report is not None  # the handler is set only with a report
        rows_asked = content.get("rows")
        asked: list[Any] = rows_asked if isinstance(rows_asked, list) else []
        try:
            reply = encode_details(self._report, [int(r) for r in asked][:MAX_FETCH])
        except Exception as exc:  # the page says so instead of waiting forever
            rows = [r for r in asked if isinstance(r, int)]
            reply = {"rows": rows, "error": f"{type(exc).__name__}: {exc}"}
        self.send({"type": "details", **reply})
        if "error" not in reply and reply.get("rows"):
            self._keep(pack(reply))

    def _keep(self, packed: str) -> None:
        """Add a reply to ``fetched`` while the kept replies stay under KEEP_FETCHED_BYTES."""
        if sum(map(len, self.fetched)) + len(packed) <= KEEP_FETCHED_BYTES:
            self.fetched = [*self.fetched, packed]

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the full payload is in (True), or ``timeout`` seconds passed."""
        done = self.ready.wait(timeout)
        if self.error is not None:
            raise RuntimeError("building the explorer payload failed") from self.error
        return done

    def start(self) -> None:
        """Start building the full payload (``report_data(..., defer=True)``); idempotent."""
        if self._thread is not None and not self._thread.ident:
            self._thread.start()

    def _fill(self, build: Any, *, defer: bool = False) -> None:
        """Build the full payload in a thread and replace the preview with it (the thread
        starts now, or on :meth:`start` with ``defer``)."""

        def run() -> None:
            try:
                self.payload = _shared(build())
            except BaseException as exc:  # kept for wait(); the page keeps its preview
                self.error = exc
            finally:
                self.ready.set()

        self._thread = threading.Thread(target=run, name="heta-explorer-payload", daemon=True)
        _BUILDS.add(self._thread)
        if not defer:
            self.start()


_BUILDS: weakref.WeakSet[threading.Thread] = weakref.WeakSet()  # payload threads, for exit
EXIT_WAIT = 60.0  # seconds, at most, that interpreter exit waits for payload builds


@atexit.register
def _finish_builds() -> None:
    """Let payload builds end before the interpreter does: a thread still inside pyarrow or
    numpy when native pools are torn down aborts the process ("terminate called ...")."""
    deadline = time.monotonic() + EXIT_WAIT
    for thread in list(_BUILDS):
        if thread.ident is not None and thread.is_alive():
            thread.join(max(0.0, deadline - time.monotonic()))


class ExplorerWidget(anywidget.AnyWidget):
    """The browser explorer: ``kind`` "report" or "compare", its data models and its state."""

    _esm = traitlets.Unicode("").tag(sync=True)
    kind = traitlets.Unicode("report").tag(sync=True)
    data = traitlets.Any(None).tag(sync=True, **widget_serialization)
    variants = traitlets.List().tag(sync=True)
    state = traitlets.Dict().tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(_esm=explorer_esm(), **kwargs)

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """anywidget's bundle with view format 2.0: the HTML widget manager of exported
        notebooks validates view tags against the 2.0 schema and skips "2.1" silently."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            view = bundle[0].get("application/vnd.jupyter.widget-view+json")
            if isinstance(view, dict):
                bundle[0]["application/vnd.jupyter.widget-view+json"] = {**view, "version_minor": 0}
        return bundle


_data_widgets: weakref.WeakValueDictionary[tuple, ReportDataWidget] = weakref.WeakValueDictionary()


def _key(
    report: EvaluationReport, max_cases: int | None, priority: tuple[str, ...], partial: bool
) -> tuple:
    capped = max_cases is not None and len(report.case_results) > max_cases
    digest = hashlib.sha1("\n".join(priority).encode()).hexdigest() if capped else ""
    return (
        report.report_id,
        id(report),
        len(report.case_results),
        max_cases if capped else None,
        digest,
        partial,
    )


HEADLESS = "HETA_NOTEBOOK_HEADLESS"  # set (non-empty) by run-notebook for its kernel


def headless() -> bool:
    """Whether this kernel runs a notebook with no one watching (``run-notebook`` sets
    ``HETA_NOTEBOOK_HEADLESS=1``; set it yourself for ``jupyter nbconvert --execute``): the
    explorers then build their whole payload in the cell, so the saved notebook holds it."""
    return bool(os.environ.get(HEADLESS))


EAGER_RESULTS = 20_000  # retrieved results whose case details are all embedded at once
MAX_FETCH = 200  # case details one request of the page may ask for
KEEP_FETCHED_BYTES = 4_000_000  # fetched details kept in a saved notebook (packed), at most


def report_data(
    report: EvaluationReport,
    *,
    max_cases: int | None = DEFAULT_MAX_CASES,
    priority: tuple[str, ...] = (),
    first: Sequence[int] | None = None,
    defer: bool = False,
) -> ReportDataWidget:
    """The (cached) data model of ``report``; encoded once per report and cap.

    Without ``first`` every embedded case carries its details. With ``first`` (the report
    rows of an explorer's first page, or of a comparison page's cases) a payload whose details
    would hold more than ``EAGER_RESULTS`` retrieved results embeds the index of every
    embedded case and the details of ``first`` only; the page fetches others on selection.
    A columnar report shows ``first`` at once (``encode_preview``) and builds that payload
    in a background thread (``ReportDataWidget.wait``), started at once or, with ``defer``,
    by ``ReportDataWidget.start`` (an explorer of several reports shows all previews first)."""
    partial = first is not None and partial_details(report, max_cases)
    if partial and first:  # the first page stays embedded (and stays the first page)
        codes, values = report.frames().case_codes("case_id")
        ids = values[codes[np.asarray(first, dtype=np.int64)]]
        priority = tuple(dict.fromkeys([*(str(c) for c in ids.tolist()), *priority]))
    key = _key(report, max_cases, priority, partial)
    found = _data_widgets.get(key)
    if found is not None:
        if not defer:  # another explorer may have deferred it
            found.start()
        return found
    details = list(first) if partial and first is not None else None

    def build(source: EvaluationReport = report) -> dict[str, Any]:
        return encode_report(source, max_cases=max_cases, priority=priority, details=details)

    # A stored report reads its details from disk: preview now, the rest in the background,
    # live. An in-memory one, or any under a headless run, is built at once: nbclient
    # (run-notebook, nbconvert --execute, nbval) keeps only widget messages sent while their
    # cell runs, so a fill finishing later would be lost from the shared notebook.
    if partial and report.frames().columns.folder is not None and not headless():
        found = ReportDataWidget(report, payload=pack(encode_preview(report, details or ())))
        private = _private_copy(report)  # the thread never touches caches the kernel uses
        found._fill(lambda: build(private), defer=defer)
    else:
        found = ReportDataWidget(report, payload=_shared(build()))
        found.ready.set()
    _data_widgets[key] = found
    return found


def partial_details(report: EvaluationReport, max_cases: int | None) -> bool:
    """Whether an explorer of ``report`` embeds only some details at once (their retrieved
    results would exceed ``EAGER_RESULTS``)."""
    n_embedded = len(report.case_results) if max_cases is None else max_cases
    return _n_results(report, n_embedded) > EAGER_RESULTS


def _private_copy(report: EvaluationReport) -> EvaluationReport:
    """The same report with its own column and frames caches (for another thread)."""
    private = report.frames().columns.private_case_results()
    return report.model_copy(update={"case_results": private})


def _n_results(report: EvaluationReport, n_embedded: int) -> float:
    """About how many retrieved results ``n_embedded`` cases' details hold (mean × count)."""
    counts = report.frames().case_column("n_results")
    return float(np.mean(counts)) * min(n_embedded, len(counts)) if len(counts) else 0.0


# --------------------------------------------------------------------------- without Jupyter

_SHIM = """
(async function () {
  const esm = document.getElementById(%(esm_id)s).textContent;
  const models = JSON.parse(document.getElementById(%(models_id)s).textContent);
  const url = URL.createObjectURL(new Blob([esm], {type: "text/javascript"}));
  const mod = (await import(url)).default;
  function shim(id) {
    const values = models[id], handlers = {};
    return {
      get: (name) => values[name],
      set: (name, value) => { values[name] = value; },
      save_changes: () => {},
      on: (event, cb) => { (handlers[event] = handlers[event] || []).push(cb); },
      off: (event, cb) => { handlers[event] = (handlers[event] || []).filter((h) => h !== cb); },
      send: null,  // no kernel: details not embedded cannot be fetched
      widget_manager: { get_model: async (ref) => shim(String(ref).replace(/^IPY_MODEL_/, "")) },
    };
  }
  const el = document.querySelector('[data-hn-explorer="' + %(uid)s + '"]');
  await mod.render({ model: shim(%(uid)s), el });
})();
"""


def _script_json(data: Any) -> str:
    """JSON safe inside a ``<script type=application/json>``: no ``<`` at all, so no tag."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")


def standalone_html(
    kind: str,
    data: str | dict[str, Any],
    state: dict[str, Any],
    variants: list[dict[str, str]] | None = None,
) -> str:
    """One explorer in a plain page: a mount point, the module, its models and a shim.

    ``data`` is a report payload (kind "report") or label → payload (kind "compare"); a
    payload as a dict (``encode_report``) has its texts shared with the page's other reports
    (``_texts.TextPool``), a packed one is embedded as it is. No widget is created, so
    nothing leaks into a notebook's widget state."""
    uid = _next_id()
    several = kind == "compare" and isinstance(data, dict)
    payloads: dict[str, Any] = data if several else {"": data}  # type: ignore[assignment]
    models: dict[str, dict[str, Any]] = {}
    pool = TextPool(lambda chunk: _page_chunk(models, f"{uid}-t{len(models)}", chunk))
    refs: dict[str, str] = {}
    for n, (label, payload) in enumerate(payloads.items()):
        packed = payload if isinstance(payload, str) else pack(pool.share(payload))
        models[f"{uid}-d{n}"] = {"payload": packed}
        refs[label] = f"IPY_MODEL_{uid}-d{n}"
    models[uid] = {
        "kind": kind,
        "data": refs if several else refs[""],
        "variants": variants or [],
        "state": state,
    }
    esm = explorer_esm().replace("</script", "<\\/script")
    ids = {
        "esm_id": json.dumps(f"{uid}-esm"),
        "models_id": json.dumps(f"{uid}-models"),
        "uid": json.dumps(uid),
    }
    return (
        f'<div class="hn-explorer-mount" data-hn-explorer="{uid}"></div>'
        f'<script type="text/plain" id="{uid}-esm">{esm}</script>'
        f'<script type="application/json" id="{uid}-models">{_script_json(models)}</script>'
        f"<script>{_SHIM % ids}</script>"
    )


def _page_chunk(models: dict[str, dict[str, Any]], model_id: str, chunk: dict[str, Any]) -> str:
    """A chunk of texts as a model of a standalone page; its reference."""
    models[model_id] = {"packed": pack(chunk)}
    return f"IPY_MODEL_{model_id}"


_counter = iter(range(1, 1 << 62))


def _next_id() -> str:
    return f"hn-explorer-{next(_counter)}"


__all__ = [
    "ExplorerWidget",
    "ReportDataWidget",
    "TextChunkWidget",
    "explorer_esm",
    "pack",
    "payload_of",
    "report_data",
    "session_texts",
    "standalone_html",
    "unpack",
]

"""Execute a notebook headless and export it to one HTML file that renders offline.

``run_notebook(path, outdir)`` is what ``python -m heta_notebook run-notebook`` and
``python3 tasks.py quickstart`` use. The export embeds require.js (a ``data:`` URL) and the
ipywidgets HTML manager (gzip-compressed, unpacked by the browser; both vendored in
``display/assets``, see THIRD_PARTY_NOTICES.md), so saved
widget state renders without a CDN, and it drops nbconvert's MathJax CDN script. Charts render
offline because the notebook calls ``setup_notebook()`` (plotly.js embedded once).
"""

from __future__ import annotations

import base64
import gzip
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from heta_notebook.display._notebook_guard import check_notebook_outputs, guard_shell_lines

REQUIRE_JS = "requirejs-2.3.8-require.js.gz"
WIDGETS_JS = "jupyter-widgets-html-manager-1.0.15-embed-amd.js.gz"
ANYWIDGET_JS = "anywidget-0.11.0-index-amd.js.gz"  # the explorers' widget front-end (AMD)
NO_MATHJAX = "data:text/javascript,"  # an empty script instead of MathJax from cdnjs

# nbconvert's lab template writes widget_renderer_url twice (once for a pre-2015 fallback);
# the widget manager is loaded from one place instead, and travels gzip-compressed, once per page
# (base64 of 0.9 MB instead of a 4.8 MB data: URL of its 3.6 MB): the browser unpacks it
# (DecompressionStream, as for plotly.js) and runs it from a blob: URL. Before it starts,
# require.js learns where the "anywidget" module is (a data: URL of the vendored front-end), so
# the explorers' saved state renders offline instead of asking a CDN.
_TEMPLATE = "heta_offline.html.j2"
_TEMPLATE_SOURCE = """{%- extends 'index.html.j2' -%}
{% block jupyter_widgets %}
{%- if "widgets" in nb.metadata -%}
<script type="text/plain" id="hn-widget-manager-gz">{{ resources.heta_widgets_gz }}</script>
<script>
document.addEventListener('DOMContentLoaded', function () {
  if (window.requirejs) {
    window.requirejs.config({paths: {anywidget: '{{ resources.heta_anywidget_url }}'}});
  }
  var bin = atob(document.getElementById('hn-widget-manager-gz').textContent.trim());
  var bytes = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  new Response(stream).blob().then(function (source) {
    var script = document.createElement('script');
    script.src = URL.createObjectURL(new Blob([source], {type: 'text/javascript'}));
    document.body.appendChild(script);
  });
});
</script>
{%- endif -%}
{% endblock jupyter_widgets %}
"""


@dataclass(frozen=True)
class NotebookRun:
    """Where ``run_notebook`` wrote its outputs, their sizes and how long it took."""

    notebook: Path
    html: Path
    seconds: float

    def describe(self) -> str:
        """One line per file with its size, for the CLI."""
        lines = [f"executed in {self.seconds:.1f} s"]
        for path in (self.notebook, self.html):
            lines.append(f"{path}  ({path.stat().st_size / 1e6:.1f} MB)")
        return "\n".join(lines)


@cache
def _asset_base64(name: str) -> str:
    """A vendored asset as it is stored, gzip-compressed, in base64 (unpacked by the page)."""
    packed = resources.files("heta_notebook.display").joinpath("assets").joinpath(name).read_bytes()
    return base64.b64encode(packed).decode("ascii")


@cache
def _asset_data_url(name: str) -> str:
    """A vendored, gzipped JS asset as a ``data:text/javascript;base64`` URL."""
    raw = gzip.decompress(
        resources.files("heta_notebook.display").joinpath("assets").joinpath(name).read_bytes()
    )
    return "data:text/javascript;base64," + base64.b64encode(raw).decode("ascii")


def _kernel_manager() -> Any:
    """A kernel manager for THIS interpreter's ipykernel (never a stale user kernelspec)."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    specs = KernelSpecManager(kernel_dirs=[], ensure_native_kernel=True)
    return KernelManager(kernel_name="python3", kernel_spec_manager=specs)


def execute_notebook(path: str | Path, *, timeout: int = 600) -> Any:
    """Run every cell of ``path`` in a fresh kernel (cwd = its folder); keep widget state."""
    import nbformat
    from nbclient import NotebookClient

    path = Path(path).resolve()
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        km=_kernel_manager(),
        timeout=timeout,
        store_widget_state=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    from heta_notebook.display._widgets import HEADLESS

    with _shell_lines_guarded(nb):  # headless: explorers embed their whole payload
        client.execute(env={**os.environ, HEADLESS: "1"})
    problems = check_notebook_outputs(nb)
    if problems:
        raise NotebookOutputError(f"{path.name}: " + "; ".join(problems))
    return nb


class NotebookOutputError(RuntimeError):
    """An executed notebook's output shows a shell error or a printed traceback."""


@contextmanager
def _shell_lines_guarded(nb: Any) -> Iterator[None]:
    """Run with every ``!`` line checked (a failing command raises); restore the sources."""
    sources = [cell.source for cell in nb.cells]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = guard_shell_lines(cell.source)
    try:
        yield
    finally:
        for cell, source in zip(nb.cells, sources, strict=True):
            cell.source = source


def export_html(nb: Any, *, title: str | None = None) -> str:
    """nbconvert's lab HTML of an executed notebook, with widget JS inlined and no CDN scripts."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_name="lab",
        template_file=_TEMPLATE,
        extra_loaders=[DictLoader({_TEMPLATE: _TEMPLATE_SOURCE})],
        require_js_url=_asset_data_url(REQUIRE_JS),
        widget_renderer_url=NO_MATHJAX,  # unused: the template loads the compressed manager
        mathjax_url=NO_MATHJAX,
    )
    resources_in: dict[str, Any] = {
        "heta_anywidget_url": _asset_data_url(ANYWIDGET_JS),
        "heta_widgets_gz": _asset_base64(WIDGETS_JS),
    }
    if title:
        resources_in["metadata"] = {"name": title}
    body, _ = exporter.from_notebook_node(nb, resources=resources_in)
    return body


def run_notebook(path: str | Path, outdir: str | Path, *, timeout: int = 600) -> NotebookRun:
    """Execute ``path`` and write ``OUTDIR/<name>.ipynb`` and ``OUTDIR/<name>.html``."""
    import nbformat

    from heta_notebook._util.paths import atomic_write_text

    path, outdir = Path(path), Path(outdir)
    started = time.perf_counter()
    nb = execute_notebook(path, timeout=timeout)
    seconds = time.perf_counter() - started
    outdir.mkdir(parents=True, exist_ok=True)
    notebook_out, html_out = outdir / f"{path.stem}.ipynb", outdir / f"{path.stem}.html"
    atomic_write_text(notebook_out, nbformat.writes(nb))
    atomic_write_text(html_out, export_html(nb, title=path.stem))
    return NotebookRun(notebook=notebook_out, html=html_out, seconds=seconds)


__all__ = ["NotebookOutputError", "NotebookRun", "execute_notebook", "export_html", "run_notebook"]

"""setup_notebook(): make plotly charts survive a saved notebook and its offline HTML export.

Inside a Jupyter kernel plotly's default renderer emits only ``application/vnd.plotly.v1+json``,
which JupyterLab draws but nbconvert's HTML export drops. ``setup_notebook()`` switches to
``plotly_mimetype+heta_offline``: JupyterLab keeps drawing the mimetype output, and every figure
also carries a small ``text/html`` div that the exported HTML draws with a copy of plotly.js
embedded ONCE per kernel, in the output of the first figure shown (a notebook without charts
carries none). No CDN is involved (no ``"cdn"`` / ``"notebook_connected"``, no MathJax script
per figure). Re-run a notebook top to bottom before sharing it, as ``run-notebook`` does.
"""

from __future__ import annotations

import base64
import gzip
import re
from functools import cache
from pathlib import Path
from typing import Any, Literal

RENDERER_NAME = "heta_offline"
DEFAULT_RENDERER = f"plotly_mimetype+{RENDERER_NAME}"

_embedded_in: set[int] = set()  # ids of the IPython shells that already hold plotly.js


def _offline_renderer() -> Any:
    """plotly's ``notebook`` renderer minus its CDN MathJax script and its implicit plotly.js."""
    import plotly.io as pio
    from plotly.io._base_renderers import HtmlRenderer

    class OfflineHtmlRenderer(HtmlRenderer):
        """``text/html`` per figure; plotly.js is displayed once, before the first figure."""

        def activate(self) -> None:
            embed_plotlyjs_once()

        def to_mimebundle(self, fig_dict: dict) -> dict[str, str]:
            html = pio.to_html(
                fig_dict,
                config=self.config,
                include_plotlyjs=False,
                include_mathjax=False,
                full_html=False,
                default_width="100%",
                default_height=500,
                validate=False,
            )
            return {"text/html": html}

    return OfflineHtmlRenderer(global_init=False, include_plotlyjs=False)


def _kernel_shell() -> Any | None:
    """The running IPython kernel shell, or None outside a Jupyter kernel."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return None
    shell = get_ipython()
    if shell is None or not type(shell).__module__.startswith("ipykernel"):
        return None
    return shell


# plotly.js travels gzip-compressed (base64, 2.0 MB instead of 4.8 MB) and is unpacked by the
# browser (DecompressionStream); until then a stand-in ``Plotly.newPlot`` queues the figures.
_PLOTLY_LOADER = """<script>window.PlotlyConfig = {MathJaxConfig: 'local'};
(function () {
  if (window.Plotly) return;  // loaded, or another copy of this block is unpacking it
  var queue = [];
  window.Plotly = {__hnPending: true, newPlot: function () {
    var args = arguments;
    return new Promise(function (done) { queue.push([args, done]); });
  }};
  var bin = atob(document.getElementById("hn-plotlyjs-gz").textContent.trim());
  var bytes = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  new Response(stream).text().then(function (source) {
    var amd = window.define;
    window.define = undefined;  // plotly.js is UMD: make it set window.Plotly, not an AMD module
    window.Plotly = undefined;
    try { (0, eval)(source); } finally { window.define = amd; }
    var real = window.Plotly;  // (no "Plotly" + ".newPlot" here: tests count figures by it)
    queue.forEach(function (item) { real.newPlot.apply(real, item[0]).then(item[1]); });
  });
})();
</script>"""


ASSETS = Path(__file__).resolve().parent / "assets"
# The trace types of plotly.js's official cartesian bundle (plotly.js-cartesian-dist-min): what a
# standalone page of ours may draw with it (display/assets/THIRD_PARTY_NOTICES.md).
CARTESIAN_TRACES = frozenset(
    {"scatter", "bar", "box", "heatmap", "histogram", "histogram2d", "histogram2dcontour"}
    | {"contour", "image", "pie", "violin"}
)
Bundle = Literal["full", "cartesian"]


@cache
def _cartesian_gzip() -> bytes | None:
    """The shipped cartesian bundle (gzip), when it is the plotly.js plotly.py brings; else
    None (figure JSON of another plotly.py is drawn by its own plotly.js, never a mismatch)."""
    from plotly.offline import get_plotlyjs_version

    wanted = get_plotlyjs_version()
    path = ASSETS / f"plotly.js-cartesian-dist-min-{wanted}.js.gz"
    if not path.is_file():
        return None
    packed = path.read_bytes()
    head = gzip.decompress(packed)[:200].decode("utf-8", "replace")
    version = re.search(r"cartesian - minified\) v(\S+)", head)
    return packed if version and version[1] == wanted else None


@cache
def _plotlyjs_gzip_base64(bundle: Bundle = "full") -> tuple[str, str]:
    """(banner, base64 of gzip) of plotly.js: the full library, or the cartesian bundle when
    asked and shipped for this plotly.js (else the full library)."""
    from plotly import __version__ as plotly_py
    from plotly.offline import get_plotlyjs

    cartesian = _cartesian_gzip() if bundle == "cartesian" else None
    if cartesian is not None:
        source = gzip.decompress(cartesian).decode("utf-8")
        return source[: source.find("*/") + 2], base64.b64encode(cartesian).decode("ascii")
    source = get_plotlyjs()
    banner = (
        source[: source.find("*/") + 2] if source.startswith("/**") else f"plotly.py {plotly_py}"
    )
    packed = base64.b64encode(gzip.compress(source.encode("utf-8"), 9, mtime=0)).decode("ascii")
    return banner, packed


def plotlyjs_block(bundle: Bundle = "full") -> str:
    """plotly.js, gzip-compressed in base64, and the script that unpacks it: the one copy a
    page or a notebook carries (figures drawn before it is unpacked wait for it). ``bundle=
    "cartesian"`` (a page whose every figure draws only ``CARTESIAN_TRACES``): 0.66 MB, not 2."""
    banner, packed = _plotlyjs_gzip_base64(bundle)
    return (
        f'<script type="text/plain" id="hn-plotlyjs-gz">{packed}</script>\n'
        f"{_PLOTLY_LOADER}\n"
        f"<!-- {banner.replace('--', '- -')} -->\n"
    )


def plotlyjs_html() -> str:
    """The one block holding plotly.js (what ``setup_notebook()`` displays once), compressed."""
    return (
        plotlyjs_block() + '<div style="font-size:11px;color:#888">heta_notebook: plotly.js '
        "embedded once (compressed) so charts render offline in saved and exported notebooks.</div>"
    )


def plotlyjs_for_card() -> str:
    """What a card with charts carries for plotly.js: nothing in a kernel (the kernel's one copy
    is displayed now if it was not yet), else the compressed block."""
    if _kernel_shell() is not None:
        embed_plotlyjs_once()
        return ""
    return plotlyjs_block()


def embed_plotlyjs_once() -> bool:
    """Display plotly.js in the current output if this kernel has not done so yet."""
    shell = _kernel_shell()
    if shell is None or id(shell) in _embedded_in:
        return False
    from IPython.display import HTML, display

    display(HTML(plotlyjs_html()))
    _embedded_in.add(id(shell))
    return True


def setup_notebook(renderer: str = DEFAULT_RENDERER) -> None:
    """Configure plotly for notebooks that are shared offline; safe to call more than once.

    Registers the ``heta_offline`` renderer and makes ``renderer`` plotly's default; inside a
    Jupyter kernel plotly.js is then displayed once, with the first figure.
    """
    import plotly.io as pio

    if RENDERER_NAME not in pio.renderers:
        pio.renderers[RENDERER_NAME] = _offline_renderer()
    if pio.renderers.default != renderer:
        pio.renderers.default = renderer  # plotly activates (embeds) it before the next figure


__all__ = [
    "DEFAULT_RENDERER",
    "RENDERER_NAME",
    "embed_plotlyjs_once",
    "plotlyjs_block",
    "plotlyjs_for_card",
    "plotlyjs_html",
    "setup_notebook",
]

"""setup_notebook(): make plotly charts survive a saved notebook and its offline HTML export.

Inside a Jupyter kernel plotly's default renderer emits only ``application/vnd.plotly.v1+json``,
which JupyterLab draws but nbconvert's HTML export drops. ``setup_notebook()`` switches to
``plotly_mimetype+heta_offline``: JupyterLab keeps drawing the mimetype output, and every figure
also carries a small ``text/html`` div that the exported HTML draws with a copy of plotly.js
embedded ONCE in the notebook (in the output of the cell that calls ``setup_notebook()``).
No CDN is involved (no ``"cdn"`` / ``"notebook_connected"``, no MathJax script per figure).
"""

from __future__ import annotations

from typing import Any

RENDERER_NAME = "heta_offline"
DEFAULT_RENDERER = f"plotly_mimetype+{RENDERER_NAME}"

_embedded_in: set[int] = set()  # ids of the IPython shells that already hold plotly.js


def _offline_renderer() -> Any:
    """plotly's ``notebook`` renderer minus its CDN MathJax script and its implicit plotly.js."""
    import plotly.io as pio
    from plotly.io._base_renderers import HtmlRenderer

    class OfflineHtmlRenderer(HtmlRenderer):
        """``text/html`` per figure; plotly.js is embedded once by ``setup_notebook()``."""

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


def plotlyjs_html() -> str:
    """The one ``<script>`` block holding plotly.js (what ``setup_notebook()`` displays once)."""
    from plotly.offline import get_plotlyjs

    return (
        "<script>window.PlotlyConfig = {MathJaxConfig: 'local'};</script>\n"
        f"<script>{get_plotlyjs()}</script>\n"
        '<div style="font-size:11px;color:#888">heta_notebook: plotly.js embedded once '
        "so charts render offline in saved and exported notebooks.</div>"
    )


def setup_notebook(renderer: str = DEFAULT_RENDERER) -> None:
    """Configure plotly for notebooks that are shared offline; safe to call more than once.

    Registers the ``heta_offline`` renderer, makes ``renderer`` plotly's default and, inside a
    Jupyter kernel, displays plotly.js once per kernel (in the calling cell's output).
    """
    import plotly.io as pio

    if RENDERER_NAME not in pio.renderers:
        pio.renderers[RENDERER_NAME] = _offline_renderer()
    if pio.renderers.default != renderer:
        pio.renderers.default = renderer
    shell = _kernel_shell()
    if shell is not None and id(shell) not in _embedded_in and RENDERER_NAME in renderer:
        from IPython.display import HTML, display

        display(HTML(plotlyjs_html()))
        _embedded_in.add(id(shell))


__all__ = ["DEFAULT_RENDERER", "RENDERER_NAME", "plotlyjs_html", "setup_notebook"]

"""setup_notebook() and the offline notebook export (run-notebook) on a small real notebook."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from heta_notebook.display._notebook import (
    NO_MATHJAX,
    REQUIRE_JS,
    WIDGETS_JS,
    _asset_base64,
    _asset_data_url,
    execute_notebook,
)
from heta_notebook.display._setup import DEFAULT_RENDERER, setup_notebook
from tests._cli_helpers import external_script_sources, write_notebook

PLOTLY_JS_MARK = "plotly.js v"  # the licence banner at the top of plotly.min.js

CELLS = [
    "from heta_notebook import setup_notebook\nsetup_notebook()\nsetup_notebook()",
    "import plotly.express as px\npx.bar(x=['a', 'b'], y=[1, 2], title='first chart')",
    "import ipywidgets as w\nw.VBox([w.Dropdown(options=['x', 'y']), w.HTML('<b>hello</b>')])",
    "px.line(x=[1, 2, 3], y=[3, 1, 2], title='second chart')",
]


@pytest.fixture
def restore_plotly_renderer():
    saved = pio.renderers.default
    yield
    pio.renderers.default = saved


def test_setup_notebook_gives_figures_an_offline_html_output(restore_plotly_renderer):
    setup_notebook()
    setup_notebook()  # idempotent

    assert pio.renderers.default == DEFAULT_RENDERER
    bundle = go.Figure(go.Bar(x=["a"], y=[1]))._repr_mimebundle_()
    assert "application/vnd.plotly.v1+json" in bundle  # what JupyterLab draws
    html = bundle["text/html"]  # what an exported notebook draws
    assert "Plotly.newPlot" in html
    assert "<script src=" not in html  # neither plotly.js (embedded once) nor MathJax from a CDN
    assert PLOTLY_JS_MARK not in html


def test_vendored_widget_scripts_decode():
    for name in (REQUIRE_JS, WIDGETS_JS):
        url = _asset_data_url(name)
        assert url.startswith("data:text/javascript;base64,") and len(url) > 20_000


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Run the small notebook through the CLI once; return (executed nb, html text)."""
    folder = tmp_path_factory.mktemp("nb")
    notebook = write_notebook(folder / "small.ipynb", CELLS)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "heta_notebook",
            "run-notebook",
            str(notebook),
            "-o",
            str(folder / "out"),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    executed = json.loads((folder / "out" / "small.ipynb").read_text(encoding="utf-8"))
    html = (folder / "out" / "small.html").read_text(encoding="utf-8")
    return executed, html


def test_run_notebook_keeps_widget_state_and_one_plotly_js(exported):
    executed, _ = exported
    assert "application/vnd.jupyter.widget-state+json" in executed["metadata"]["widgets"]
    text = json.dumps(executed)
    assert text.count(PLOTLY_JS_MARK) == 1  # setup_notebook() twice, two charts: one copy
    errors = [o for c in executed["cells"] for o in c["outputs"] if o["output_type"] == "error"]
    assert errors == []


def test_exported_html_needs_no_network(exported):
    _, html = exported
    assert external_script_sources(html) == []
    assert html.count(PLOTLY_JS_MARK) == 1
    # the widget manager once (not twice: nbconvert's fallback), compressed (not a data: URL)
    assert html.count(_asset_base64(WIDGETS_JS)) == 1 and _asset_data_url(WIDGETS_JS) not in html
    assert len(_asset_base64(WIDGETS_JS)) < len(_asset_data_url(WIDGETS_JS)) / 3
    assert f'src="{NO_MATHJAX}"' in html
    assert len(re.findall(r"Plotly\.newPlot", html)) >= 2
    assert "first chart" in html and "second chart" in html


def test_a_notebook_without_charts_carries_no_plotly_js(tmp_path):
    notebook = write_notebook(
        tmp_path / "nochart.ipynb",
        ["from heta_notebook import setup_notebook\nsetup_notebook()", "print('no figure here')"],
    )
    executed = execute_notebook(notebook, timeout=120)
    assert PLOTLY_JS_MARK not in json.dumps(executed)


def test_an_executed_notebook_keeps_a_stored_reports_whole_explorer_payload(tmp_path):
    """A stored report's large explorer shows a preview and fills in later when someone is
    watching; run headless (run-notebook's kernel), it builds the whole payload in its cell,
    since nbclient keeps only the widget messages sent while their cell runs."""
    from heta_notebook.display._widgets import HEADLESS, unpack
    from heta_notebook.reports._folder import write_report
    from tests._display_helpers import make_report

    report = make_report(30)
    write_report(tmp_path / "saved", report)
    cells = [
        "import heta_notebook.display._widgets as widgets\n"
        "widgets.EAGER_RESULTS = 10  # 'large': more results than that\n"
        "from heta_notebook import EvaluationReport\n"
        f"saved = EvaluationReport.load({str(tmp_path / 'saved')!r})\n"
        f"print(type(saved.case_results).__name__, widgets.headless(), {HEADLESS!r})",
        "saved.explore()",
    ]
    notebook = write_notebook(tmp_path / "stored.ipynb", cells)
    executed = execute_notebook(notebook, timeout=120)
    assert "LazyCaseResults True" in "".join(executed.cells[0].outputs[0]["text"])
    state = executed.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    payloads = [unpack(m["state"]["payload"]) for m in state.values() if m["state"].get("payload")]
    assert len(payloads) == 1 and not payloads[0].get("preview")
    assert len(payloads[0]["rows"]) == len(report.case_results)  # every case, not a page

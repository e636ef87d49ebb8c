"""display.html and display.theme: escaping builders, stable colours, number formats."""

from __future__ import annotations

import subprocess
import sys

import pytest

from heta_notebook.display._html import (
    Markup,
    attrs,
    badge,
    details,
    esc,
    json_block,
    table,
    tag,
    td,
)
from heta_notebook.display._theme import (
    PALETTE,
    color_for,
    color_map,
    fmt_ci,
    fmt_duration,
    fmt_int,
    fmt_ms,
    fmt_num,
    fmt_pct,
    plotly_template,
)


def test_esc_escapes_markup_and_quotes():
    assert esc('<a href="x">\'') == "&lt;a href=&quot;x&quot;&gt;&#x27;"
    assert esc(None) == "" and esc(3) == "3"
    assert esc(Markup("<b>ok</b>")) == "<b>ok</b>"


def test_tag_escapes_text_children_and_attributes():
    html = tag("div", "<script>x</script>", tag("b", "ok"), title='"><img onerror=1>')
    assert html == (
        '<div title="&quot;&gt;&lt;img onerror=1&gt;">&lt;script&gt;x&lt;/script&gt;<b>ok</b></div>'
    )


def test_attrs_refuse_event_handlers_and_neutralise_javascript_urls():
    with pytest.raises(ValueError):
        attrs(onclick="alert(1)")
    assert attrs(href="javascript:alert(1)") == ' href="#"'
    assert attrs(href=" JavaScript:alert(1)") == ' href="#"'
    assert attrs(href="https://example.org/?a=1&b=2") == ' href="https://example.org/?a=1&amp;b=2"'
    assert attrs(class_="a", data_x=1, hidden=True, skip=None) == ' class="a" data-x="1" hidden'


def test_table_details_badge_json_escape_data():
    out = table(["h<1>"], [["<i>x</i>", td("v", class_="hn-best")]])
    assert "h&lt;1&gt;" in out and "&lt;i&gt;x&lt;/i&gt;" in out
    assert '<td class="hn-best">v</td>' in out
    assert "&lt;s&gt;" in details("<s>", "<s>") and "&lt;s&gt;" in badge("<s>")
    assert "&lt;/pre&gt;" in json_block({"k": "</pre><script>"})
    assert "more characters" in json_block({"k": "x" * 100}, max_chars=20)


def test_color_for_is_stable_across_processes_and_calls():
    code = "from heta_notebook.display._theme import color_for; print(color_for('my-recipe'))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == color_for("my-recipe") == color_for("my-recipe")
    assert color_for("bm25") == PALETTE[0] and color_for("hybrid") == PALETTE[2]


def test_color_map_is_collision_free_and_order_independent():
    labels = [f"recipe-{i}" for i in range(8)]
    forward, backward = color_map(labels), color_map(reversed(labels))
    assert forward == backward
    assert len(set(forward.values())) == len(labels)
    assert color_map(["bm25", "dense"]) == {"bm25": PALETTE[0], "dense": PALETTE[1]}


def test_number_formats():
    assert fmt_num(0.53219) == "0.532" and fmt_num(None) == "–" and fmt_num(float("nan")) == "–"
    assert fmt_num(True) == "yes" and fmt_int(10000) == "10,000" and fmt_pct(0.5312) == "53.1%"
    assert fmt_ci(0.1, 0.25) == "[0.100, 0.250]" and fmt_ci(None, 1) == "–"
    assert fmt_ms(840) == "840 ms" and fmt_ms(1250) == "1.25 s" and fmt_ms(0.5) == "0.50 ms"
    assert fmt_duration(42) == "42.0 s" and fmt_duration(185) == "3 min 05 s"


def test_plotly_template_registered_once():
    import plotly.io as pio

    first = plotly_template()
    assert pio.templates["heta"] is first is plotly_template()
    assert list(first.layout.colorway) == list(PALETTE)


def test_recipe_labels_never_take_the_common_mode_colours() -> None:
    from heta_notebook.display._theme import color_for

    mode_colours = {color_for(m) for m in ("full_text_search", "vector_search", "hybrid_search")}
    recipes = ["whole-docs", "chunks-100", "lsa-256", "bm25-docs", "my recipe", "r1", "r2", "r3"]
    assert not {color_for(r) for r in recipes} & mode_colours

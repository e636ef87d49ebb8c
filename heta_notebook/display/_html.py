"""Safe HTML building blocks: escape untrusted text, build small tags without injection.

Every string shown to a user that came from a model, a document or a benchmark (answers,
chunks, queries, judge reasons, metadata) goes through :func:`esc`. Builders here escape
their text arguments; only :class:`Markup` (HTML built by these helpers) passes unescaped.

>>> str(tag("b", "<script>"))
'<b>&lt;script&gt;</b>'
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_SAFE_URL = re.compile(r"^(?:#|https?://|mailto:|data:image/(?:png|jpeg|gif|webp);)", re.I)
_ATTR_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_:.-]*$")


class Markup(str):
    """A string of HTML built by trusted code; builders insert it without escaping."""

    __slots__ = ()

    def __html__(self) -> str:
        return str(self)


def esc(text: Any) -> str:
    """Escape ``text`` for HTML element content and quoted attributes (None → "")."""
    if text is None:
        return ""
    if isinstance(text, Markup):
        return str(text)
    return html.escape(text if isinstance(text, str) else str(text), quote=True)


def raw(markup: str) -> Markup:
    """Mark HTML produced by trusted code (never data) as safe to insert."""
    return Markup(markup)


def join(parts: Iterable[Any], sep: str = "") -> Markup:
    """Concatenate parts, escaping every part that is not already Markup."""
    return Markup(esc(sep).join(esc(p) for p in parts))


def _attr_value(name: str, value: Any) -> str:
    text = " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    if name in {"href", "src", "action", "formaction", "xlink:href"} and not _SAFE_URL.match(
        text.strip()
    ):
        text = "#"
    return esc(text)


def attrs(**attributes: Any) -> str:
    """Render attributes safely: values escaped, ``on*`` handlers and unsafe URLs refused.

    A trailing underscore is dropped (``class_`` → ``class``); ``data_x`` becomes ``data-x``.
    """
    out = []
    for key, value in attributes.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        if not _ATTR_NAME.match(name) or name.lower().startswith("on"):
            raise ValueError(f"refusing unsafe attribute name {name!r}")
        out.append(f" {name}" if value is True else f' {name}="{_attr_value(name, value)}"')
    return "".join(out)


def tag(name: str, *children: Any, **attributes: Any) -> Markup:
    """``<name attrs>children</name>``; str children are escaped, Markup children are kept."""
    return Markup(f"<{name}{attrs(**attributes)}>{join(children)}</{name}>")


def badge(text: Any, kind: str = "info", title: str | None = None) -> Markup:
    """A small coloured label (kind: ok, bad, warn, info, muted)."""
    return tag("span", text, class_=f"hn-badge hn-{kind}", title=title)


def details(summary: Any, *body: Any, open_: bool = False, **attributes: Any) -> Markup:
    """A collapsible ``<details>`` section."""
    return tag("details", tag("summary", summary), *body, open=open_, **attributes)


class Cell(Markup):
    """A complete ``<td>`` built by :func:`td`; :func:`table` inserts it as is."""

    __slots__ = ()


def td(*children: Any, **attributes: Any) -> Cell:
    """A table cell with attributes (e.g. a class or a hover ``title``) for :func:`table`."""
    return Cell(tag("td", *children, **attributes))


def _cell(content: Any) -> Markup:
    return content if isinstance(content, Cell) else tag("td", content)


def table(
    header: Sequence[Any],
    rows: Iterable[Sequence[Any]],
    *,
    class_: str = "hn-table",
    **attributes: Any,
) -> Markup:
    """A simple table; every cell escaped unless it is Markup (a :func:`td` keeps its attributes)."""
    head = tag("thead", tag("tr", *(tag("th", h) for h in header)))
    body = tag("tbody", *(tag("tr", *(_cell(c) for c in row)) for row in rows))
    return tag("table", head, body, class_=class_, **attributes)


def definition_list(items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> Markup:
    """``<dl>`` of key → value pairs, both escaped."""
    pairs = items.items() if isinstance(items, Mapping) else items
    return tag("dl", *(join([tag("dt", k), tag("dd", v)]) for k, v in pairs), class_="hn-dl")


def json_block(data: Any, *, max_chars: int = 4000) -> Markup:
    """Pretty JSON of ``data`` in an escaped ``<pre>``, truncated after ``max_chars``."""
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(data)
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n… ({len(text) - max_chars} more characters)"
    return tag("pre", text, class_="hn-json")


def truncate(text: Any, limit: int = 300) -> str:
    """Shorten ``text`` to ``limit`` characters with an ellipsis (not escaped: escape on output)."""
    value = "" if text is None else str(text)
    return value if len(value) <= limit else value[: limit - 1] + "…"


__all__ = [
    "Cell",
    "Markup",
    "attrs",
    "badge",
    "definition_list",
    "details",
    "esc",
    "join",
    "json_block",
    "panel",
    "raw",
    "style",
    "table",
    "tag",
    "td",
    "truncate",
]


def style() -> Markup:
    """The shared ``<style>`` block (rules scoped under ``.hn``)."""
    from heta_notebook.display._theme import CSS

    return Markup(f"<style>{CSS}</style>")


def panel(*children: Any, **attributes: Any) -> Markup:
    """A ``<div class="hn">`` root that the shared stylesheet styles."""
    klass = " ".join(filter(None, ["hn", attributes.pop("class_", None)]))
    return tag("div", *children, class_=klass, **attributes)

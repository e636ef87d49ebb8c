"""``StaticFallback``: how an explorer shows itself, live in Jupyter and readable when exported.

nbconvert's HTML export renders only the first mimetype of an output in priority order, and
the widget view comes first, so a fallback inside the widget's own bundle is never shown.
The static summary therefore goes out as its own output before the widget; the widget's HTML
carries CSS that hides it whenever the live or saved widget renders.
"""

from __future__ import annotations

from typing import Any


class StaticFallback:
    """Mixin for objects with a ``widget`` and a ``static_html()`` readable without a kernel."""

    widget: Any

    def static_html(self) -> str:  # pragma: no cover - implemented by each explorer
        raise NotImplementedError

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        data = dict((bundle[0] if isinstance(bundle, tuple) else bundle) or {})
        data["text/html"] = self.static_html()
        data["text/plain"] = repr(self)
        return data

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display({"text/html": self.static_html(), "text/plain": repr(self)}, raw=True)
        display(self.widget)

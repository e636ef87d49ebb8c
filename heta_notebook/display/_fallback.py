"""``StaticFallback``: how an explorer shows itself, live in Jupyter and readable when exported.

nbconvert's HTML export renders only the first mimetype of an output in priority order, and
the widget view comes first, so a fallback inside the widget's own bundle is never shown.
The static summary therefore goes out as its own output before the widget; the widget's HTML
carries CSS that hides it whenever the live or saved widget renders. An object whose static
view changes after it is shown (a ``Labeler`` as labels are made) sets ``refreshed`` and calls
``refresh_static()``: the view shown is updated in place, so an exported notebook's static
view says what the object holds at the end, not when it was first shown.
"""

from __future__ import annotations

import uuid
from typing import Any


class StaticFallback:
    """Mixin for objects with a ``widget`` and a ``static_html()`` readable without a kernel."""

    widget: Any
    refreshed = False  # True: the static view is shown with a display id, for refresh_static()
    _static_id: str | None = None  # set once shown with a display id

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

        static = {"text/html": self.static_html(), "text/plain": repr(self)}
        if self.refreshed:
            self._static_id = self._static_id or uuid.uuid4().hex
            display(static, raw=True, display_id=self._static_id)
        else:
            display(static, raw=True)
        display(self.widget)

    def refresh_static(self) -> None:
        """Update the static view wherever it was shown (nothing when it was not shown)."""
        if self._static_id is None:
            return
        from IPython.display import update_display

        static = {"text/html": self.static_html(), "text/plain": repr(self)}
        update_display(static, raw=True, display_id=self._static_id)

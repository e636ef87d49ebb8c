"""``Labeler``: label (query, document) pairs by keyboard in the notebook (anywidget).

The browser shows one pair at a time: the query, the document text with the query's terms
highlighted, and the judge's grade and reason when there is one (hideable, for blind
labeling). Keys ``0``-``3`` label, ``s`` skips, ``u`` undoes; a progress count shows. Every
label goes to the label set at once (journaled on disk when the set has a path), so a kernel
restart loses nothing. Without a kernel (an exported notebook) the widget shows the labels
made, read-only; so does the static HTML view, updated in place as labels are made.

All text reaches the page through text nodes in ``assets/labeling.js``; nothing from a
document, a query or a judge is parsed as HTML.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from importlib.resources import files
from typing import Any

import anywidget
import traitlets

from heta_notebook.display._fallback import StaticFallback
from heta_notebook.display._html import panel, style, table, tag
from heta_notebook.labels._set import Label, LabelSet

MAX_TEXT = 6000


def labeling_esm() -> str:
    """The widget's ES module."""
    return (files("heta_notebook.display") / "assets" / "labeling.js").read_text(encoding="utf-8")


class LabelingWidget(anywidget.AnyWidget):
    """The browser half: ``items`` to label, ``made`` (labels so far), ``position``, ``blind``."""

    _esm = traitlets.Unicode("").tag(sync=True)
    items: traitlets.List[Any] = traitlets.List().tag(sync=True)
    made: traitlets.List[Any] = traitlets.List().tag(sync=True)
    position = traitlets.Int(0).tag(sync=True)
    blind = traitlets.Bool(False).tag(sync=True)
    who = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(_esm=labeling_esm(), **kwargs)

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | None:
        """View format 2.0, which exported notebooks' widget manager renders (as explorers)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            view = bundle[0].get("application/vnd.jupyter.widget-view+json")
            if isinstance(view, dict):
                bundle[0]["application/vnd.jupyter.widget-view+json"] = {**view, "version_minor": 0}
        return bundle


class Labeler(StaticFallback):
    """Walk ``pairs`` (a pool or ``(query_id, doc_id)`` pairs) and label them into ``labels``."""

    refreshed = True  # the static view counts the labels made as they are made

    def __init__(
        self,
        labels: LabelSet,
        pairs: Iterable[tuple[str, str]],
        *,
        queries: Mapping[str, str],
        documents: Mapping[str, str] | Callable[[str], str],
        who: str = "me",
        blind: bool = False,
        limit: int | None = 500,
    ) -> None:
        self.labels, self.who = labels, who
        text = documents if callable(documents) else documents.__getitem__
        judged = labels.labels("judge")
        self._pairs = list(pairs)[:limit]
        items = []
        for q, d in self._pairs:
            judge = judged.get((q, d))
            items.append(
                {
                    "query_id": q,
                    "doc_id": d,
                    "query": queries.get(q, ""),
                    "text": str(text(d))[:MAX_TEXT],
                    "judge_grade": None if judge is None else judge.grade,
                    "judge_reason": None if judge is None else judge.reason,
                }
            )
        self._made: list[Label] = []
        human = labels.labels("human")
        done = [p for p in self._pairs if p in human]
        self.widget = LabelingWidget(
            items=items,
            made=[_row(human[p]) for p in done],
            position=_first_open(self._pairs, human),
            blind=blind,
            who=who,
        )
        self.widget.on_msg(self._on_message)

    def _on_message(self, widget: Any, content: Any, buffers: Any) -> None:
        """The browser's keys: ``{"type": "hello"}``, ``{"type": "label", "index", "grade"}``,
        ``{"type": "skip"}``, ``{"type": "undo"}``."""
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "hello":
            self.widget.send({"type": "ready"})
            return
        position = self.widget.position
        if kind == "label" and 0 <= int(content.get("index", -1)) < len(self._pairs):
            index, grade = int(content["index"]), int(content["grade"])
            if grade not in (0, 1, 2, 3):
                return
            q, d = self._pairs[index]
            label = self.labels.add(Label(q, d, grade, "human", self.who))  # journaled now
            self._made.append(label)
            self.widget.made = [*self.widget.made, _row(label)]
            self.widget.position = min(index + 1, len(self._pairs))
        elif kind == "skip":
            self.widget.position = min(position + 1, len(self._pairs))
        elif kind == "undo" and self._made:
            label = self._made.pop()
            self.labels.undo(label)
            self.widget.made = self.widget.made[:-1]
            self.widget.position = self._pairs.index(label.pair)
        if kind in ("label", "undo"):
            self.refresh_static()  # an exported notebook's read-only view: the labels made
        self.widget.send({"type": "ready"})

    def label(self, grade: int) -> None:
        """Label the current pair from Python (what the key ``0``-``3`` does)."""
        self._on_message(
            self.widget, {"type": "label", "index": self.widget.position, "grade": grade}, []
        )

    def static_html(self) -> str:
        """The labels made, read-only (shown where the widget cannot render)."""
        rows = [
            [m["query_id"], m["doc_id"], str(m["grade"]), m["who"], m["time"]]
            for m in self.widget.made
        ]
        note = tag(
            "div",
            f"Labeling: {len(self.widget.made)} of {len(self._pairs)} pairs labelled "
            f"(read-only view; labels are saved in the label set).",
            class_="hn-note",
        )
        body = [note, table(["query", "document", "grade", "who", "time"], rows)]
        return str(panel(style(), *body, class_="hn-labeling-fallback"))

    def __repr__(self) -> str:
        return f"<Labeler {len(self.widget.made)} of {len(self._pairs)} labelled, at {self.widget.position}>"


def _row(label: Label) -> dict[str, Any]:
    return {
        "query_id": label.query_id,
        "doc_id": label.doc_id,
        "grade": label.grade,
        "who": label.who,
        "time": label.time,
    }


def _first_open(pairs: list[tuple[str, str]], human: Mapping[tuple[str, str], Any]) -> int:
    return next((i for i, p in enumerate(pairs) if p not in human), len(pairs))


__all__ = ["Labeler", "LabelingWidget"]

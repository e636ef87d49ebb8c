"""The labeling widget's Python half: keys arrive as messages, every label is on disk at once."""

from __future__ import annotations

from pathlib import Path

from heta_notebook import Label, Labeler, LabelSet

QUERIES = {"q1": "shock wave <b>boundary</b> layer"}
DOCS = {
    "d1": "the shock wave meets the boundary layer",
    "d2": "<img src=x onerror=alert(1)>",
    "d3": "c",
}


def _labeler(tmp_path: Path) -> tuple[LabelSet, Labeler, list]:
    labels = LabelSet.open(tmp_path / "mine", {"q1": {"d0": 1}})
    labels.add(Label("q1", "d2", 3, "judge", "relevance", model="m", reason="<i>sure</i>"))
    labeler = Labeler(
        labels,
        [("q1", "d1"), ("q1", "d2"), ("q1", "d3")],
        queries=QUERIES,
        documents=DOCS,
        who="ana",
    )
    sent: list = []
    labeler.widget.send = sent.append  # type: ignore[method-assign]
    return labels, labeler, sent


def test_keys_label_skip_and_undo_and_every_label_is_saved_at_once(tmp_path: Path) -> None:
    labels, labeler, sent = _labeler(tmp_path)
    assert labeler.widget.items[1]["judge_grade"] == 3  # the judge's grade and reason travel
    labeler._on_message(labeler.widget, {"type": "hello"}, [])
    assert sent == [{"type": "ready"}]
    labeler._on_message(labeler.widget, {"type": "label", "index": 0, "grade": 2}, [])
    assert LabelSet.open(tmp_path / "mine", labels.original).grade("q1", "d1") == 2  # restart
    labeler._on_message(labeler.widget, {"type": "skip"}, [])
    assert labeler.widget.position == 2
    labeler._on_message(labeler.widget, {"type": "label", "index": 2, "grade": 0}, [])
    labeler._on_message(labeler.widget, {"type": "undo"}, [])
    assert labeler.widget.position == 2 and len(labeler.widget.made) == 1
    assert LabelSet.open(tmp_path / "mine", labels.original).grade("q1", "d3") is None
    labeler._on_message(labeler.widget, {"type": "label", "index": 2, "grade": 9}, [])  # ignored
    assert labels.grade("q1", "d3") is None
    human = LabelSet.load(tmp_path / "mine").labels("human")
    assert [(x.pair, x.grade, x.who) for x in human.values()] == [(("q1", "d1"), 2, "ana")]


def test_a_new_labeler_resumes_after_the_pairs_already_labelled(tmp_path: Path) -> None:
    labels, labeler, _ = _labeler(tmp_path)
    labeler.label(1)
    again = Labeler(
        LabelSet.open(tmp_path / "mine", labels.original),
        labeler._pairs,
        queries=QUERIES,
        documents=DOCS,
    )
    assert again.widget.position == 1 and len(again.widget.made) == 1


def test_the_static_view_lists_labels_escaped(tmp_path: Path) -> None:
    labels = LabelSet({})
    labeler = Labeler(labels, [("<q>", "d1")], queries={"<q>": "x"}, documents=DOCS)
    labeler.label(2)
    html = labeler.static_html()
    assert "&lt;q&gt;" in html and "<q>" not in html and "1 of 1 pairs labelled" in html


def test_the_static_view_shown_counts_the_labels_made_after_it(tmp_path: Path, monkeypatch) -> None:
    """An exported notebook keeps the last static view: shown before labelling (notebook 07),
    it is updated in place as each label is made or undone."""
    from types import SimpleNamespace

    from tests._nbval_export import labeler_views_missing

    shown: list = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append((obj, kw)))
    monkeypatch.setattr("IPython.display.update_display", lambda obj, **kw: shown.append((obj, kw)))
    labels, labeler, _ = _labeler(tmp_path)
    labeler.label(2)  # not shown yet: nothing to update
    assert shown == []
    labeler._ipython_display_()
    view_id = shown[0][1]["display_id"]
    labeler.label(1)
    labeler._on_message(labeler.widget, {"type": "undo"}, [])
    updates = [(obj["text/html"], kw) for obj, kw in shown[2:]]
    assert [kw["display_id"] for _, kw in updates] == [view_id, view_id]
    assert "2 of 3 pairs labelled" in updates[0][0] and "1 of 3 pairs labelled" in updates[1][0]
    state = {"m": {"state": {"items": [{}] * 3, "made": [{}], "position": 1, "blind": False}}}
    saved = {"application/vnd.jupyter.widget-state+json": {"state": state}}  # as nbclient saves
    nb = SimpleNamespace(metadata={"widgets": saved})
    assert labeler_views_missing(nb, updates[1][0]) == []  # the export check: the count shown
    stale = updates[1][0].replace("1 of 3 pairs", "0 of 3 pairs")  # as shown before labels
    assert labeler_views_missing(nb, stale) == ["Labeling: 1 of 3 pairs labelled"]

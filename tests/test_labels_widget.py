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

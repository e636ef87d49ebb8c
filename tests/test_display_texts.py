"""Texts shared by the explorer payloads of a kernel session / a standalone page (_texts.py):
each text stored once, and every explorer decodes the very strings it decoded before."""

from __future__ import annotations

from collections import Counter

import pytest

from heta_notebook.display._explorer_data import encode_report
from heta_notebook.display._texts import TextPool, resolve
from heta_notebook.display._widgets import (
    TextChunkWidget,
    payload_of,
    report_data,
    session_texts,
    standalone_html,
    unpack,
)
from tests._display_helpers import make_report, page_payloads


@pytest.fixture
def fresh_session(monkeypatch):
    """A session pool of this test only (other tests' reports share these texts too)."""
    from heta_notebook.display import _widgets

    monkeypatch.setattr(_widgets, "_pool", None)
    monkeypatch.setattr(_widgets, "_chunk_widgets", [])


def _pool() -> tuple[TextPool, list[dict]]:
    chunks: list[dict] = []

    def new_chunk(chunk: dict) -> str:
        chunks.append(chunk)
        return f"IPY_MODEL_c{len(chunks) - 1}"

    return TextPool(new_chunk), chunks


def test_a_pool_stores_each_text_once_and_gives_every_payload_its_table_back():
    pool, chunks = _pool()
    first = {"strings": ["a", "b", "c"], "full_length": {"2": 900}, "cases": {"q": [0, 2]}}
    second = {"strings": ["c", "x", "a"], "full_length": {"0": 900}, "cases": {"q": [1]}}
    third = {"strings": ["x"], "full_length": {}}
    shared = [pool.share(p) for p in (first, second, third)]
    assert [c["strings"] for c in chunks] == [["a", "b", "c"], ["x"]]  # only new texts
    assert shared[0]["texts"] == {"chunks": ["IPY_MODEL_c0"], "refs": [0, 1, 1]}
    assert shared[1]["texts"] == {"chunks": ["IPY_MODEL_c0", "IPY_MODEL_c1"], "refs": [2, 1, -3]}
    assert shared[2]["texts"] == {"chunks": ["IPY_MODEL_c1"], "refs": [0]}  # what it reads
    assert all("strings" not in p for p in shared)
    assert [pool.resolve(p) for p in shared] == [first, second, third]


def test_a_payload_saved_before_sharing_is_read_as_it_is():
    old = {"strings": ["a"], "full_length": {}, "cases": {}}
    assert resolve(old, lambda ref: {}) is old


def test_a_session_with_two_reports_on_one_corpus_stores_each_text_once(fresh_session):
    a = make_report(12, label="a", report_id="texts-a")
    b = make_report(12, label="b", report_id="texts-b", quality_shift=0.2)
    before = {r.label: encode_report(r, max_cases=None) for r in (a, b)}
    models = {r.label: report_data(r, max_cases=None) for r in (a, b)}
    pool = session_texts()
    payloads = {label: unpack(m.payload) for label, m in models.items()}
    chunks = {ref for p in payloads.values() for ref in p["texts"]["chunks"]}
    stored = Counter(t for ref in chunks for t in pool._chunks[ref]["strings"])
    assert stored and max(stored.values()) == 1  # no text twice
    assert set(before["a"]["strings"]) & set(before["b"]["strings"])  # they do share texts
    assert len(stored) == len(set(before["a"]["strings"]) | set(before["b"]["strings"]))
    for label, model in models.items():  # what the explorer decodes, case by case
        assert payload_of(model) == before[label]
        assert isinstance(model.payload, str) and "strings" not in payloads[label]


def test_chunks_are_widgets_and_a_closed_one_starts_a_new_pool(fresh_session):
    from heta_notebook.display import _widgets

    report = make_report(4, report_id="texts-closed")
    payload = unpack(report_data(report, max_cases=None).payload)
    pool = session_texts()
    ids = {w.model_id: w for w in _widgets._chunk_widgets}
    read = [ids[ref.removeprefix("IPY_MODEL_")] for ref in payload["texts"]["chunks"]]
    assert read and all(isinstance(w, TextChunkWidget) for w in read)
    assert all(unpack(w.packed) == pool._chunks[f"IPY_MODEL_{w.model_id}"] for w in read)
    read[0].close()  # Widget.close_all() in a session: no payload may refer to it any more
    assert session_texts() is not pool


def test_a_standalone_comparison_page_shares_texts_between_its_reports():
    a = make_report(10, label="a", report_id="page-a")
    b = make_report(10, label="b", report_id="page-b", quality_shift=0.2)
    data = {r.label: encode_report(r, max_cases=None) for r in (a, b)}
    page = standalone_html("compare", data, {}, [])
    assert page_payloads(page) == [data["a"], data["b"]]
    inline = standalone_html("compare", {k: _packed(v) for k, v in data.items()}, {}, [])
    assert len(page) < len(inline)  # the texts of b that a has are not there twice


def _packed(payload: dict) -> str:
    from heta_notebook.display._widgets import pack

    return pack(payload)

"""A chunked recipe whose chunk boundary cuts the evidence text: the miss is ``split``.

The embedded KB checks, for each judged document missing from the top k, whether one chunk
holds the evidence passage whole (``kb._passages``): the evidence's own text, or SQuAD's answer
at its character offset. Constructed documents put the passage across a word-window boundary.
"""

from __future__ import annotations

import pytest

from heta_notebook import BenchmarkRunConfig, Chunking, KnowledgeBase, Recipe, run_benchmark
from heta_notebook.kb._passages import Judged, Passage, is_cut
from heta_notebook.schema import (
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkEvidence,
    BenchmarkExpected,
)
from tests._runner_helpers import ListBenchmark

WORDS = Chunking(unit="words", size=10, overlap=0)
PASSAGE = "the sonic boom strength depends on altitude"  # 7 words


def _text(before: int) -> str:
    """Filler, then the passage starting ``before`` words in (10-word windows: 6 cuts it)."""
    head = " ".join(f"lead{i}" for i in range(before))
    tail = " ".join(f"tail{i}" for i in range(20))
    return f"{head} {PASSAGE} {tail}"


def _chunks(text: str) -> list[tuple[int, int, str]]:
    from heta_notebook.kb._chunking import chunk_text

    return [(c.start, c.end, c.text) for c in chunk_text("d", text, WORDS)]


def test_is_cut_by_text_and_by_offset() -> None:
    cut, whole = _text(6), _text(1)
    assert is_cut(_chunks(cut), [Passage(PASSAGE)]) is True
    assert is_cut(_chunks(whole), [Passage(PASSAGE)]) is False
    assert is_cut(_chunks(cut), [Passage("Sonic   BOOM")]) is False  # casefolded, spaces collapsed
    assert is_cut(_chunks(cut), [Passage("not in the document")]) is None
    answer = "boom strength depends"
    at = cut.index(answer)
    assert is_cut(_chunks(cut), [Passage(answer, at)]) is True  # words 8-10 and 11: cut
    assert is_cut(_chunks(cut), [Passage(answer, at + 1)]) is None  # offset not at the answer
    held = "lead0"
    assert is_cut(_chunks(cut), [Passage(answer, at), Passage(held, 0)]) is False  # one is held


def _kb() -> tuple[KnowledgeBase, list[BenchmarkDocument]]:
    docs = [
        BenchmarkDocument(document_id="cut", text=_text(6)),
        BenchmarkDocument(document_id="whole", text=_text(1)),
        *(
            BenchmarkDocument(document_id=f"top{i}", text=f"sonic boom strength altitude {i}")
            for i in range(4)
        ),
    ]
    recipe = Recipe(name="w10", chunking=WORDS, dense=None, hybrid=None)
    return KnowledgeBase.build_sync(recipe, docs), docs


def test_the_kb_marks_a_missed_document_whose_passage_no_chunk_holds() -> None:
    kb, _ = _kb()
    judged = [[Judged(d, (Passage(PASSAGE),)) for d in ("cut", "whole", "top0")]]
    response = kb.query_many(
        ["sonic boom strength altitude"], mode="full_text_search", top_k=2, judged=judged
    )[0]
    deep = response.metadata["deep_ranks"]
    assert deep["cut"]["cut"] is True and deep["cut"]["chunks"] > 1
    assert deep["whole"]["cut"] is False
    assert "top0" not in deep or deep["top0"]["cut"] is None  # one chunk: nothing to cut


@pytest.mark.parametrize("by", ["text", "answer offset"])
def test_a_run_classes_a_cut_evidence_split(tmp_path, by: str) -> None:
    _, docs = _kb()

    def case(doc: str) -> BenchmarkCase:
        text = next(d.text for d in docs if d.document_id == doc)
        if by == "text":
            evidence = BenchmarkEvidence(reference_id=doc, text=PASSAGE)
            expected = BenchmarkExpected(evidence=(evidence,))
        else:
            answer = "boom strength depends"
            meta = {"answer_starts": [text.index(answer)]}
            evidence = BenchmarkEvidence(reference_id=doc, metadata=meta)
            expected = BenchmarkExpected(answers=(answer,), evidence=(evidence,))
        return BenchmarkCase(case_id=doc, query="sonic boom strength altitude", expected=expected)

    report = run_benchmark(
        benchmark=ListBenchmark(cases=[case("cut"), case("whole")], documents=docs),
        recipes={"w10": Recipe(name="w10", chunking=WORDS, dense=None, hybrid=None)},
        workspace=tmp_path,
        config=BenchmarkRunConfig(top_k=2),
        progress=False,
    )["w10"]
    rows = report.misses(level="evidence").set_index("case_id")
    assert rows.loc["cut", "miss_class"] == "split" and rows.loc["cut", "cut"]
    assert rows.loc["whole", "cut"] == False  # noqa: E712 - held whole: ranked below k
    assert rows.loc["whole", "miss_class"] == "split"  # several chunks, none high enough

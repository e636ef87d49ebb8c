"""Comparisons pair what the user means: a one-mode system against each mode of the others, mode
by mode where names match, a note (text and HTML alike) otherwise; headlines name labels, and
settings the pair's modes do not read never lead the details."""

from __future__ import annotations

from html import escape

from heta_notebook import BeirBenchmark, BeirRetrievalMetric, Recipe, compare, run_benchmark
from tests._compare_helpers import scored_report
from tests._systems_helpers import ranked_ids

BASE = {"ndcg@10": [0.2, 0.4, 0.6, 0.8, 0.5, 0.3]}
UP = {"ndcg@10": [0.3, 0.5, 0.7, 0.9, 0.6, 0.4]}


def test_a_one_mode_system_pairs_with_each_mode_of_the_others() -> None:
    mine = scored_report("mine", BASE, modes=("default",), recipe={"kind": "function"})
    kb = scored_report("kb", UP, modes=("full_text_search", "vector_search"))
    c = compare({"mine": mine, "kb": kb})
    assert [(a.name, b.name) for a, b in c.pairs()] == [
        ("mine · default", "kb · full_text_search"),
        ("mine · default", "kb · vector_search"),
    ]
    sig = c.significance()
    assert list(sig["n_pairs"]) == [6, 6] and list(sig["delta"].round(6)) == [0.1, 0.1]
    lines = c.headline()
    assert lines[0].startswith("mine · default → kb · full_text_search: ndcg@10 +0.100")
    [note] = [n for n in c.notes() if "paired" in n]
    assert "each paired with mine · default" in note and "by query id" in note
    assert not any("did not run" in n for n in c.notes())
    html = c._repr_html_()
    assert "baseline mine (by query id)" in html and "(same mode)" not in html
    assert all(line in html for line in lines) and escape(note) in html  # same notes as repr
    assert f"note: {note}" in repr(c)
    # the embedded side as the baseline: the one-mode system pairs with each of its modes
    flipped = compare({"kb": kb, "mine": mine})
    assert [(a.mode, b.mode) for a, b in flipped.pairs()] == [
        ("full_text_search", "default"),
        ("vector_search", "default"),
    ]
    assert len(flipped.headline()) == 2


def test_multi_mode_reports_pair_by_mode_name_or_say_what_to_choose() -> None:
    a = scored_report("a", BASE, modes=("bm25", "dense"))
    b = scored_report("b", UP, modes=("bm25", "dense"))
    assert [(x.mode, y.mode) for x, y in compare([a, b]).pairs()] == [
        ("bm25", "bm25"),
        ("dense", "dense"),
    ]
    assert not [n for n in compare([a, b]).notes() if "paired" in n]
    other = scored_report("c", UP, modes=("sparse", "vectors"))
    c = compare([a, other])
    assert c.pairs() == [] and c.headline() == []
    [note] = [n for n in c.notes() if "nothing paired" in n]
    assert "baseline='a · bm25'" in note
    assert f"note: {note}" in repr(c)  # repr and HTML show the same notes
    assert escape(note) in c._repr_html_()
    chosen = compare([a, other], baseline="a · bm25")
    assert len(chosen.pairs()) == 3  # everything against that variant


def test_partly_matching_modes_say_what_paired_with_nothing_and_how_to_choose() -> None:
    a = scored_report("a", BASE, modes=("bm25", "dense"))
    b = scored_report("b", UP, modes=("bm25", "sparse"))
    c = compare([a, b])
    assert [(x.name, y.name) for x, y in c.pairs()] == [("a · bm25", "b · bm25")]
    note = (
        "b · sparse paired with nothing (a has no mode sparse; b has no mode dense); "
        "to compare it, choose baseline='a · dense' (everything against that variant)."
    )
    mode_notes = [n for n in c.notes() if "mode" in n]
    assert mode_notes == [note]  # one line, not one "did not run" per report
    assert f"note: {note}" in repr(c) and escape(note) in c._repr_html_()
    chosen = compare([a, b], baseline="a · dense")  # the choice the note names is accepted
    assert ("a · dense", "b · sparse") in [(x.name, y.name) for x, y in chosen.pairs()]
    # every mode of b matched, the baseline ran one more: said as a mode b did not run
    fewer = scored_report("b", UP, modes=("bm25", "dense"))
    more = scored_report("a", BASE, modes=("bm25", "dense", "hybrid"))
    assert [n for n in compare([more, fewer]).notes() if "mode" in n] == [
        "b did not run mode(s) hybrid."
    ]


def test_settings_a_mode_does_not_read_never_lead_and_values_are_never_cut() -> None:
    long = {"template": "x" * 80, "stopwords": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]}
    a = scored_report("a", BASE, modes=("full_text_search",), recipe={"dense": {"dims": 128}})
    b = scored_report(
        "b",
        UP,
        modes=("full_text_search",),
        recipe={"dense": {"dims": 256}, "bm25": {"k1": 0.9, **long}},
    )
    c = compare([a, b])
    [line] = c.headline()
    assert line.startswith("a → b: ndcg@10") and "dense" not in line
    [(x, y)] = c.pairs()
    described = c.change_description(x, y, max_keys=10)
    assert "dense.dims" not in described
    assert "x" * 80 in described and "[10 items]" in described and "…" not in described
    html = c._repr_html_()
    assert html.index("bm25.k1") < html.index("dense.dims")  # the table: BM25 settings first


def test_mine_against_embedded_runs_shows_paired_significance_by_label() -> None:
    """compare({"mine": my_run, **embedded_runs}) with the embedded recipe's default three
    modes: paired significance for mine against each embedded mode, in a terminal and in HTML,
    headlines by label (20 Cranfield queries keep it quick)."""
    options = {"evaluators": [BeirRetrievalMetric("ndcg", 10)], "progress": False, "limit": 20}
    mine = run_benchmark(
        benchmark=BeirBenchmark.cranfield(), recipe=lambda t: ranked_ids(t), **options
    ).report
    embedded = run_benchmark(
        benchmark=BeirBenchmark.cranfield(), recipes={"kb": Recipe(name="kb")}, **options
    )
    embedded_runs = dict(embedded.reports)
    modes = ["full_text_search", "vector_search", "hybrid_search"]
    assert list(embedded_runs["kb"].query_modes) == modes  # the default recipe's three modes
    c = compare({"mine": mine, **embedded_runs})
    sig = c.significance()
    assert list(sig["baseline"]) == ["mine · default"] * 3
    assert list(sig["variant"]) == [f"kb · {m}" for m in modes]
    assert list(sig["n_pairs"]) == [20, 20, 20] and sig["p_value"].notna().all()
    lines = c.headline()
    assert [line.split(":")[0] for line in lines] == [f"mine · default → kb · {m}" for m in modes]
    assert all("(p=" in line for line in lines)  # each headline carries its paired test
    assert not any("function" in line or "chunking" in line for line in lines)
    text, html = repr(c), c._repr_html_()
    assert all(line in text and line in html for line in lines)

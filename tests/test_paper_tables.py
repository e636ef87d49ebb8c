"""Paper tables and the multi-benchmark view on real runs: Cranfield plus a generated BEIR folder
whose query ids overlap Cranfield's. The table's numbers equal the per-benchmark comparisons;
LaTeX is checked for structure (no TeX needed), Markdown for shape."""

from __future__ import annotations

import functools
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest

from heta_notebook import (
    BeirBenchmark,
    BenchmarkRunConfig,
    Recipe,
    compare,
    compare_benchmarks,
    run_benchmark,
)
from heta_notebook.display._tables import latex_escape, md_escape
from tests._compare_helpers import scored_report
from tests._kb_helpers import write_topics_beir

NDCG = "beir_ndcg@10"
BASE = "bm25 · full_text_search"  # every recipe · mode against plain BM25
RECIPES = (Recipe(name="bm25", dense=None, hybrid=None), Recipe(name="default"))


@functools.cache
def _reports() -> tuple:
    """2 recipes (bm25 alone; BM25 + LSA dense + hybrid) × 2 benchmarks, top 100."""
    with tempfile.TemporaryDirectory() as tmp:
        topics = BeirBenchmark.from_folder(write_topics_beir(Path(tmp) / "topics"))
        out = []
        for bench in (BeirBenchmark.cranfield(), topics):
            for recipe in RECIPES:
                out.append(
                    run_benchmark(
                        benchmark=bench,
                        recipe=recipe,
                        config=BenchmarkRunConfig(top_k=100),
                        progress=False,
                        workspace=tmp,
                    ).report
                )
        return tuple(out)


@pytest.fixture(scope="module")
def bench():
    return compare_benchmarks(list(_reports()), baseline=BASE)


def test_each_benchmark_is_its_own_comparison_and_the_mean_is_of_means(bench):
    cran, topics = (r.benchmark.name for r in _reports()[::2])
    assert set(bench.benchmarks) == {cran, topics}
    table = bench.table(NDCG)
    for name in bench.benchmarks:
        alone = compare([r for r in _reports() if r.benchmark.name == name], baseline=BASE)
        assert bench.benchmark(name).pairs() == alone.pairs()
        expected = alone.table("mean").loc[NDCG]
        for variant, value in expected.items():
            assert table.loc[variant, name] == pytest.approx(value)
        sig = bench.significance(NDCG)
        sig = sig[sig["benchmark"] == name].set_index("variant")
        ref = alone.select(scores=[NDCG]).significance().set_index("variant")
        assert sig["p_holm"].to_dict() == pytest.approx(ref["p_holm"].to_dict())
        assert (sig["n_pairs"] == len(alone.aligned.case_ids)).all()  # never across datasets
    both = table.drop(columns="Mean")
    assert np.allclose(table["Mean"], both.mean(axis=1))


def test_wins_count_benchmarks_with_a_significant_difference(bench):
    wins, sig = bench.wins(NDCG), bench.significance(NDCG)
    for variant, row in wins.iterrows():
        mine = sig[sig["variant"] == variant]
        assert row["wins"] == int(((mine["p_holm"] < 0.05) & (mine["delta"] > 0)).sum())
        assert row["losses"] == int(((mine["p_holm"] < 0.05) & (mine["delta"] < 0)).sum())
    assert wins.loc["bm25 · full_text_search", "compared"] == 0  # the baseline itself


def _tabular(latex: str) -> str:
    return latex.split(r"\begin{tabular}")[1].split(r"\end{tabular}")[0]


def test_latex_is_a_booktabs_table_a_paper_can_input(bench):
    latex = bench.to_latex([NDCG, "beir_recall@100"], label="tab:main")
    for env in ("table", "tabular"):
        assert latex.count(rf"\begin{{{env}}}") == latex.count(rf"\end{{{env}}}") == 1
    assert latex.count("{") == latex.count("}") + latex.count(r"\{") - latex.count(r"\}")
    assert r"\toprule" in latex and r"\midrule" in latex and r"\bottomrule" in latex
    assert r"\label{tab:main}" in latex
    spec = re.search(r"\\begin\{tabular\}\{(\w+)\}", latex).group(1)
    columns = len(spec)
    assert columns == 1 + 2 * (len(bench.benchmarks) + 1)  # system + (benchmarks + Mean) × 2
    rows = [r for r in _tabular(latex).split(r"\\")[:-1] if "&" in r]
    for row in rows:  # every row has as many cells as the column spec (\& is escaped text)
        cells = re.sub(
            r"\\multicolumn\{(\d+)\}\{c\}\{[^}]*\}", lambda m: "&" * (int(m[1]) - 1), row
        )
        assert cells.replace(r"\&", "").count("&") == columns - 1, row
    body = [r for r in rows if "full" in r or "search" in r]
    assert len(body) == len(bench.variants)
    assert "_" not in latex.replace(r"\_", "")  # every underscore escaped
    caption = re.search(r"\\caption\{(.*)\}\n", latex).group(1)
    assert "sign-flip" in caption and "Holm" in caption and "per benchmark" in caption
    # each benchmark column's best value is bold, and the bold value is that column's max
    table = bench.table(NDCG)
    for name in table.columns:
        assert f"{table[name].max():.3f}" in re.findall(r"\\textbf\{([\d.]+)\}", latex)


def test_markdown_numbers_equal_the_table(bench):
    md = bench.to_markdown(decimals=4)
    lines = md.splitlines()
    header, rule, *rows = lines[: 2 + len(bench.variants)]
    assert header.count("|") == rule.count("|") == len(bench.benchmarks) + 3
    table = bench.table(NDCG)
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        variant = cells[0].replace("\\_", "_")
        numbers = [float(re.search(r"[\d.]+", c).group(0)) for c in cells[1:]]
        assert numbers == pytest.approx(table.loc[variant].round(4).tolist(), abs=1e-9)
    assert "Holm" in lines[-1]


def test_card_and_figure_open_each_benchmark(bench):
    html = bench.to_html()
    for i, name in enumerate(bench.benchmarks):
        target = re.search(rf'id="(hn-bench-\w+-{i})"', html).group(1)
        assert f'href="#{target}"' in html
        assert bench.benchmark(name)._repr_html_()[:200] in html  # the comparison behind it
    assert "<!DOCTYPE" not in html  # its sections, not nested pages (one plotly.js for all)
    fig = bench.plot.bars(NDCG)
    assert len(fig.data) == len(bench.variants)
    assert list(fig.data[0].x) == [*bench.benchmarks, "Mean"]
    assert fig.data[0].y[-1] == pytest.approx(bench.table(NDCG).iloc[0]["Mean"])


def _toy():
    up = [0.5 + 0.0102 * (i % 2) for i in range(40)]  # means 0.7051 (up) and 0.2051 (down)
    return (
        scored_report("base", {"s_x": [0.5] * 40, "other": [0.2] * 40}),
        scored_report("up", {"s_x": [u + 0.2 for u in up], "other": [0.2] * 40}),
        scored_report("down", {"s_x": [u - 0.3 for u in up], "other": [0.2] * 40}),
    )


def test_markers_say_the_direction_and_letters_say_whom_a_row_beats():
    c = compare(list(_toy()), baseline="base")
    md = c.to_markdown(["s_x"])
    assert "up · bm25 | **0.705** ↑" in md and "down · bm25 | 0.205 ↓" in md
    latex = c.to_latex(["s_x"], markers="letters")
    assert r"(b) up $\cdot$ bm25 & \textbf{0.705}$^{\mathrm{ac}}$" in latex
    assert r"(a) base $\cdot$ bm25 & 0.500$^{\mathrm{c}}$" in latex
    assert "within each score over its 3 comparison(s)" in latex
    plain = c.to_latex(["s_x"], markers=None, decimals=1)
    assert r"\uparrow" not in plain.split(r"\begin{tabular}")[1] and "0.7" in plain
    with pytest.raises(ValueError, match="markers must be one of"):
        c.to_latex(markers="stars")


def test_summary_tables_and_escaping():
    report = _toy()[0]
    latex = report.to_latex(labels={"s_x": "100% & more_{x}"})
    assert r"100\% \& more\_\{x\}" in latex
    assert "| bm25 | **0.500** | **0.200** |" in report.to_markdown()
    with pytest.raises(KeyError, match=r"no score 'nope'.*scores: s_x, other"):
        report.to_latex(["nope"])
    assert latex_escape("a_b%c&d#e$f") == r"a\_b\%c\&d\#e\$f"
    assert md_escape("a|b*c") == r"a\|b\*c"


def test_multi_benchmark_inputs_are_checked_by_name():
    a = scored_report("a", {"s": [0.1, 0.2]}, benchmark=("one", "1", "test"))
    b = scored_report("b", {"s": [0.3, 0.4]}, benchmark=("one", "1", "test"))
    c = scored_report("b", {"s": [0.3, 0.4]}, benchmark=("two", "1", "test"))
    absent = compare_benchmarks([a, b, c], baseline="a")  # no KeyError: an n/a cell
    assert any("n/a: the baseline a has no report on two" in n for n in absent.notes())
    assert absent.significance("s")["benchmark"].tolist() == ["one"]
    assert "n/a" in absent.to_markdown() and "did not run on two" in absent.to_latex()
    bench = compare_benchmarks([a, b, c], baseline="b")
    assert bench.benchmarks == ["one", "two"] and bench.variants == ["a · bm25", "b · bm25"]
    with pytest.raises(KeyError, match=r"no benchmark 'three'.*one, two"):
        bench.benchmark("three")
    with pytest.raises(KeyError, match=r"no score 'x' on every benchmark \(scores: s\)"):
        bench.table("x")
    table = bench.table("s")
    assert np.isnan(table.loc["a · bm25", "two"]) and np.isnan(table.loc["a · bm25", "Mean"])
    assert any("a · bm25 has no s on two" in note for note in bench.notes())
    latex = bench.to_latex()
    assert "--" in latex  # a missing cell, not a made-up number
    with pytest.raises(ValueError, match="markers must be 'direction' or None"):
        bench.to_latex(markers="letters")


def test_captions_carry_queries_ties_and_the_missing_convention(bench):
    from heta_notebook.analysis._ties import tie_effects

    md = bench.to_markdown([NDCG], labels={name: name.upper() for name in bench.benchmarks})
    counts = [
        f"{name.upper()} {len(bench.benchmark(name).aligned.case_ids)}" for name in bench.benchmarks
    ]
    assert "Queries per benchmark: " + ", ".join(counts) in md.replace("\\_", "_")
    assert "as trec\\_eval does" in md and 'missing="drop"' in md
    sig = bench.significance(NDCG)
    moved = 0
    for row in sig[sig["direction"] != "n.s."].itertuples():  # the marked cells
        comparison = bench.benchmark(row.benchmark)
        v = comparison.variant(row.variant)
        effects = tie_effects(comparison.frames(v.report), NDCG)
        r = effects[effects["query_mode"] == v.mode].iloc[0]
        footnote = f"{r['mean']:.3f} as scored, {r['expected']:.3f} tie-aware"
        if round(r["expected"], 3) != round(r["mean"], 3):
            moved += 1
            assert footnote in md, footnote
        else:
            assert footnote not in md
    assert sig["direction"].ne("n.s.").any()

"""Pools with holes, measured (issue 35; figures in docs/labels.md).

On Cranfield, keep only the labels of a depth-10 pool of two embedded variants (judged
non-relevant documents kept as grade 0), score the 9 embedded variants (3 recipes × 3 modes)
and report per variant judged@10 and nDCG@10 on the full labels, on the pooled labels
(trec_eval's convention), condensed, and after the holes are filled by a loopback judge that
answers from the full labels with a controlled error rate; Kendall's tau of each convention's
ranking of the variants against the full labels'; MAE of filled and pooled against full.
Then the corrected mean: 150 "human" labels drawn from the truth correct the judge's mean
grade over the filled holes.

    PYTHONPATH=$PWD .venv/bin/python bench/labels_holes.py [ERROR_RATE ...]
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import warnings

import numpy as np
from scipy.stats import kendalltau

from heta_notebook import (
    BeirBenchmark,
    BeirRetrievalMetric,
    BenchmarkRunConfig,
    Chunking,
    LabelSet,
    Recipe,
    RelevanceJudge,
    UnjudgedWarning,
    corrected_label_mean,
    fill_holes,
    labels_of,
    pool,
    run_benchmark,
    score_with_labels,
)
from heta_notebook.labels import Label
from heta_notebook.labels._pool import rankings_of
from tests._judge_server import JudgeServer, Reply

MODES = ("full_text_search", "vector_search", "hybrid_search")
POOLED = ("whole-documents · full_text_search", "chunks-50 · vector_search")
NDCG = [BeirRetrievalMetric("ndcg", 10)]


def variants() -> dict[str, dict[str, list[str]]]:
    recipes = {
        "whole-documents": Recipe(name="whole-documents"),
        "chunks-100": Recipe(
            name="chunks-100", chunking=Chunking(unit="words", size=100, overlap=20)
        ),
        "chunks-50": Recipe(name="chunks-50", chunking=Chunking(unit="words", size=50, overlap=10)),
    }
    runs = run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipes=recipes,
        query_modes=MODES,
        config=BenchmarkRunConfig(top_k=100),
        progress=False,
    )
    return rankings_of(runs)


def as_run(ranked: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    return {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in ranked.items()}


def mean_ndcg(run, labels, unjudged="nonrelevant") -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnjudgedWarning)
        scored = score_with_labels(run, labels, NDCG, unjudged=unjudged)
    name = "beir_ndcg_condensed@10" if unjudged == "condensed" else "beir_ndcg@10"
    return (
        float(np.mean([row[name] for row in scored.values()])),
        float(np.mean([row["judged@10"] for row in scored.values()])),
    )


def judge_route(full, queries, texts, error: float, seed: int):
    """The loopback judge: the full label (capped at 3) for the pair, wrong ``error`` of the
    time (relevant → 0, non-relevant → 1-3), decided per pair by a seeded draw."""
    by_query = {text: q for q, text in queries.items()}
    by_text = {text: d for d, text in texts.items()}

    def route(request):
        content = request["messages"][-1]["content"]
        query = content.split("<query>\n", 1)[1].split("\n</query>", 1)[0]
        passage = content.split("<passage>\n", 1)[1].split("\n</passage>", 1)[0]
        q, d = by_query[query], by_text[passage]  # the judge sends the passage as given
        truth = min(full.get(q, {}).get(d, 0), 3)
        rng = random.Random(f"{seed}:{q}:{d}")
        grade = truth
        if rng.random() < error:
            grade = 0 if truth > 0 else rng.choice([1, 2, 3])
        return Reply(content=json.dumps({"score": grade, "reason": f"truth {truth}"}))

    return route


def main(errors: list[float]) -> None:
    bench = BeirBenchmark.cranfield()
    full = labels_of(bench).qrels()
    _, documents, cases = bench.load()
    queries = {c.case_id: c.query for c in cases}
    texts = {d.document_id: (d.text or "")[:4000] for d in documents}
    systems = variants()
    runs = {name: as_run(ranked) for name, ranked in systems.items()}
    pooled_pairs = pool([systems[n] for n in POOLED], depth=10)
    pooled = {}
    for q, d in pooled_pairs:
        pooled.setdefault(q, {})[d] = full.get(q, {}).get(d, 0)  # judged non-relevant: grade 0
    pooled = {q: docs for q, docs in pooled.items() if q in full}
    holes = pool(list(systems.values()), depth=10, labels=pooled)
    print(
        f"pool of {POOLED}: {sum(map(len, pooled.values()))} labels; holes of the 9: {len(holes)}"
    )
    rows = {}
    for name, run in runs.items():
        full_ndcg, _ = mean_ndcg(run, full)
        pooled_ndcg, judged = mean_ndcg(run, pooled)
        condensed, _ = mean_ndcg(run, pooled, "condensed")
        rows[name] = {
            "judged@10": judged,
            "full": full_ndcg,
            "pooled": pooled_ndcg,
            "condensed": condensed,
        }
    for error in errors:
        with JudgeServer() as server, tempfile.TemporaryDirectory() as tmp:
            server.route = judge_route(full, queries, texts, error, seed=0)
            judge = RelevanceJudge(
                base_url=server.base_url,
                model=f"loopback-{error}",
                cache_dir=tmp,
                max_concurrency=16,
            )
            filled = LabelSet(pooled, name="pooled")
            result = fill_holes(filled, holes, judge, queries=queries, documents=texts)
            print(f"error {error:.0%}: {result}")
            for name, run in runs.items():
                rows[name][f"filled {error:.0%}"] = mean_ndcg(run, filled)[0]
            # the corrected mean of the judge's grades over the holes, 150 human labels
            rng = random.Random(1)
            judged_pairs = sorted(filled.labels("judge"))
            for q, d in rng.sample(judged_pairs, 150):
                filled.add(Label(q, d, min(full.get(q, {}).get(d, 0), 3), "human", "truth"))
            truth = np.mean([min(full.get(q, {}).get(d, 0), 3) for q, d in judged_pairs])
            print(f"  mean grade of the holes: truth {truth:.4f}; {corrected_label_mean(filled)}")
    names = list(rows)
    columns = list(rows[names[0]])
    print("| variant | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for name in names:
        print(f"| {name} | " + " | ".join(f"{rows[name][c]:.3f}" for c in columns) + " |")
    truth = [rows[n]["full"] for n in names]
    for column in columns[2:]:
        values = [rows[n][column] for n in names]
        tau = kendalltau(truth, values).statistic
        mae = np.mean(np.abs(np.subtract(values, truth)))
        print(f"{column}: Kendall tau vs full {tau:.3f}; MAE vs full {mae:.3f}")


if __name__ == "__main__":
    main([float(x) for x in sys.argv[1:]] or [0.1, 0.2])

"""The embedded KB at 100,000 and 1,000,000 documents, next to the libraries underneath it.

Run by hand (not part of the test suite)::

    python bench/kb_scale.py --docs 100000            # while iterating
    python bench/kb_scale.py --docs 100000 1000000    # the recorded run

A synthetic corpus is generated (no downloads): a Zipf-Mandelbrot vocabulary of pseudo-words,
~86 words per document (Poisson), seed 0; queries are 2–6 words taken from random documents.
Each measured step runs in its own child process, so every peak RSS is that step's alone:

- ``bm25s``: the floor for BM25: ``bm25s.tokenize`` + ``BM25.index`` on the texts (the very
  tokens the KB indexes: same pattern, stopwords), then ``retrieve`` for the tokenised queries.
- ``kb-bm25``: ``KnowledgeBase.build_sync`` with a BM25-only recipe (chunking, corpus hash and
  provenance included), then ``query_many`` in ``full_text_search``.
- ``kb-default``: the default recipe (BM25 + LSA + hybrid): build, save (index size on disk).
- ``kb-load``: ``KnowledgeBase.load`` of that folder (memory-mapped), then every mode at
  ``top_k`` 10 and 100 on the first 1,000 queries, **interleaved in the same process with the
  floors** on the same index and embeddings, ``REPEATS`` rounds (median and range):
  bm25s ``tokenize`` + ``retrieve`` on the KB's own bm25s index; bm25s's scoring alone (no
  top-k: a tighter floor); the KB's query embedder + float32 matmul + ``argpartition`` per
  block of 64 queries on the KB's own embeddings; hybrid: both floors at the fusion depth.
- ``numpy``: the older separate-process dense floor (query blocks as large as the KB's).
- ``run``: a full run on every query x 3 modes, ``top_k`` 100, the 25 BEIR metrics, a
  checkpointing ``ReportStore``, at 8 (the default) and 64 concurrent queries, interleaved
  with the sum of the floors for the same queries; peak RSS.

Latency is the CPU time per query of one batched call (``query_many``), BLAS on one thread
everywhere (the KB's own setting; the box is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SEED = 0
WORDS_PER_DOC = 86
TOP_KS = (10, 100)
MODES = ("full_text_search", "vector_search", "hybrid_search")
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]  # 70 syllables


# ----------------------------------------------------------------------------- corpus


def word(rank: int) -> str:
    """A pronounceable pseudo-word for vocabulary rank ``rank`` (3+ syllables, so no stopword)."""
    out = []
    rank += len(SYLLABLES) ** 2  # at least three syllables
    while rank:
        rank, s = divmod(rank, len(SYLLABLES))
        out.append(SYLLABLES[s])
    return "".join(reversed(out))


def generate(folder: Path, docs: int, queries: int) -> None:
    """``docs.txt`` (one document per line) and ``queries.txt``, deterministic for ``SEED``."""
    rng = np.random.default_rng(SEED)
    vocabulary = max(20_000, int(60 * (docs * WORDS_PER_DOC) ** 0.5))  # Heaps-like growth
    ranks = np.arange(1, vocabulary + 1, dtype=np.float64)
    p = 1.0 / (ranks + 2.7) ** 1.07
    cdf = np.cumsum(p / p.sum())
    words = np.array([word(r) for r in range(vocabulary)], dtype=object)
    lengths = np.maximum(rng.poisson(WORDS_PER_DOC, docs), 5)
    folder.mkdir(parents=True, exist_ok=True)
    sample_docs = rng.choice(docs, queries, replace=False)  # = query_documents(docs, queries)
    wanted = {int(d): i for i, d in enumerate(sample_docs)}
    query_texts: list[str] = [""] * queries
    with (folder / "docs.txt").open("w", encoding="utf-8") as handle:
        block = 20_000
        for start in range(0, docs, block):
            stop = min(start + block, docs)
            draws = np.searchsorted(cdf, rng.random(int(lengths[start:stop].sum())))
            bounds = np.concatenate([[0], np.cumsum(lengths[start:stop])])
            lines = []
            for j in range(stop - start):
                tokens = words[draws[bounds[j] : bounds[j + 1]]]
                lines.append(" ".join(tokens))
                if start + j in wanted:
                    n = int(rng.integers(2, 7))
                    picked = rng.choice(len(tokens), min(n, len(tokens)), replace=False)
                    query_texts[wanted[start + j]] = " ".join(tokens[np.sort(picked)])
            handle.write("\n".join(lines) + "\n")
    (folder / "queries.txt").write_text("\n".join(query_texts) + "\n", encoding="utf-8")
    facts = {"docs": docs, "queries": queries, "vocabulary": vocabulary, "seed": SEED}
    (folder / "corpus.json").write_text(json.dumps(facts))


def query_documents(docs: int, queries: int) -> np.ndarray:
    """The document each query was drawn from (``generate``'s draws, replayed): its qrels."""
    rng = np.random.default_rng(SEED)
    rng.poisson(WORDS_PER_DOC, docs)
    return rng.choice(docs, queries, replace=False)


def read_lines(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return handle.read().splitlines()


# ----------------------------------------------------------------------------- steps


def rss() -> int:
    """Current resident set size in bytes."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak() -> int:
    """Peak resident set size of this process so far, in bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


class Clock:
    """Wall and CPU seconds of a block (CPU time is what ratios use: the box is shared)."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu


def timed_queries(out: dict, key: str, function, queries, k: int):
    """Run ``function(queries, k)`` once; store wall/CPU seconds per query under ``key``."""
    with Clock() as clock:
        result = function(queries, k)
    out[key] = clock.cpu / len(queries)
    out[key + "_wall"] = clock.wall / len(queries)
    return result


def step_bm25s(work: Path) -> dict:
    import bm25s

    from heta_notebook.kb._threads import one_blas_thread

    texts = read_lines(work / "docs.txt")
    queries = read_lines(work / "queries.txt")
    base = rss()
    with Clock() as clock:
        tokens = bm25s.tokenize(
            texts,
            lower=True,
            token_pattern=r"(?u)\b\w\w+\b",
            stopwords="en",
            return_ids=True,
            show_progress=False,
        )
        retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        retriever.index(tokens, show_progress=False)
    del tokens
    out = {"build_s": clock.cpu, "build_wall": clock.wall, "input_rss": base, "peak_rss": peak()}
    retriever.save(str(work / "bm25s"), show_progress=False)
    out["index_bytes"] = folder_bytes(work / "bm25s")

    def search(qs, k):
        q = bm25s.tokenize(
            qs,
            lower=True,
            token_pattern=r"(?u)\b\w\w+\b",
            stopwords="en",
            return_ids=False,
            show_progress=False,
        )
        return retriever.retrieve(q, k=k, show_progress=False, n_threads=0)

    with one_blas_thread():
        search(queries[:20], 10)  # warm up
        for k in TOP_KS:
            ids, _ = timed_queries(out, f"query_s@{k}", search, queries, k)
            np.save(work / f"bm25s_ids@{k}.npy", ids)
    return out


def _documents(work: Path):
    from heta_notebook.schema import BenchmarkDocument

    return [
        BenchmarkDocument.model_construct(document_id=f"d{i}", text=text, metadata={})
        for i, text in enumerate(read_lines(work / "docs.txt"))
    ]


def step_kb_bm25(work: Path) -> dict:
    from heta_notebook.kb._knowledge_base import KnowledgeBase
    from heta_notebook.kb._recipe import Recipe

    documents = _documents(work)
    queries = read_lines(work / "queries.txt")
    base = rss()
    with Clock() as clock:
        kb = KnowledgeBase.build_sync(Recipe(name="bm25", dense=None, hybrid=None), documents)
    out = {"build_s": clock.cpu, "build_wall": clock.wall, "input_rss": base, "peak_rss": peak()}

    def search(qs, k):
        return kb.query_many(qs, mode="full_text_search", top_k=k)

    search(queries[:20], 10)
    for k in TOP_KS:
        responses = timed_queries(out, f"query_s@{k}", search, queries, k)
        ours = [[int(r.id[1:].split("#")[0]) for r in resp.results] for resp in responses]
        floor = np.load(work / f"bm25s_ids@{k}.npy")
        out[f"same_top1@{k}"] = float(
            np.mean([o[:1] == list(f[:1]) for o, f in zip(ours, floor, strict=True)])
        )
    return out


def time_parts() -> dict:
    """Wrap the steps of ``KnowledgeBase._build`` to record their CPU seconds (bench only)."""
    from heta_notebook.kb import _knowledge_base as module

    parts: dict[str, float] = {}

    def timed(name, function):
        def wrapper(*args, **kwargs):
            with Clock() as clock:
                result = function(*args, **kwargs)
            parts[name] = parts.get(name, 0.0) + clock.cpu
            return result

        return wrapper

    for name in ("chunk_documents", "tokenize", "corpus_hash"):
        setattr(module, name, timed(name, getattr(module, name)))
    module.ChunkTable.from_chunks = timed("chunk table", module.ChunkTable.from_chunks)
    module.Bm25Index.build = timed("bm25 index", module.Bm25Index.build)
    module.DenseIndex.build = timed("dense (LSA fit + embed)", module.DenseIndex.build)
    return parts


def step_kb_default(work: Path) -> dict:
    from heta_notebook.kb._knowledge_base import KnowledgeBase
    from heta_notebook.kb._recipe import Recipe

    documents = _documents(work)
    parts = time_parts()
    base = rss()
    with Clock() as clock:
        kb = KnowledgeBase.build_sync(Recipe(name="default"), documents)
    out = {"build_s": clock.cpu, "build_wall": clock.wall, "input_rss": base, "peak_rss": peak()}
    out["lsa"] = getattr(kb.dense.embedder, "fit_facts", {})
    out["parts"] = parts
    folder = work / "kb"
    shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()
    kb.save(folder)
    out["save_s"] = time.perf_counter() - started
    out["index_bytes"] = folder_bytes(folder)
    out["files"] = {
        str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*") if p.is_file()
    }
    return out


def bm25_floor(kb, queries, k: int):
    """bm25s on the KB's own index and tokens: ``tokenize`` + ``retrieve`` (its own top-k)."""
    from heta_notebook.kb._bm25 import tokenize

    tokens = tokenize(queries, kb.bm25.config)
    return kb.bm25.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=0)[0]


def bm25_scores_floor(kb, queries) -> None:
    """The tighter BM25 floor: bm25s's scoring of every chunk alone, no selection at all.

    bm25s's own top-k (``np.argpartition`` over scores that are mostly zeros) costs more than
    its scoring on this numpy (introselect on many equal values)."""
    from heta_notebook.kb._bm25 import tokenize

    retriever = kb.bm25.retriever
    for tokens in tokenize(queries, kb.bm25.config):
        ids = retriever.get_tokens_ids(tokens)
        if ids:
            retriever.get_scores_from_ids(ids)


FLOOR_BLOCK = 64  # queries per matmul block: a 64 x n float32 score matrix stays cache-friendly


def dense_floor(kb, queries, k: int) -> np.ndarray:
    """The tight dense floor on the KB's own embeddings: embed the queries (the same embedder),
    then per block of queries one float32 matmul + ``argpartition`` + sorting the top k."""
    from heta_notebook.kb._embedders import normalize_rows

    vectors = normalize_rows(kb.dense.embedder.embed(list(queries)))
    embeddings, out = kb.dense.embeddings, []
    for start in range(0, len(vectors), FLOOR_BLOCK):
        scores = vectors[start : start + FLOOR_BLOCK] @ embeddings.T
        top = np.argpartition(scores, -k, axis=1)[:, -k:]
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1)
        out.append(np.take_along_axis(top, order, axis=1))
    return np.concatenate(out)


def interleaved(out: dict, runs: dict, queries, repeats: int) -> None:
    """Time every ``runs[key](queries)`` once per round, ``repeats`` rounds, rotated so no
    function always runs first; store CPU seconds per query: median, min, max (``key``,
    ``key_min``, ``key_max``) and the median wall time (``key_wall``)."""
    cpu: dict[str, list[float]] = {key: [] for key in runs}
    wall: dict[str, list[float]] = {key: [] for key in runs}
    keys = list(runs)
    for round_ in range(repeats):
        for key in keys[round_ % len(keys) :] + keys[: round_ % len(keys)]:
            with Clock() as clock:
                runs[key](queries)
            cpu[key].append(clock.cpu / len(queries))
            wall[key].append(clock.wall / len(queries))
    for key in runs:
        out[key] = float(np.median(cpu[key]))
        out[key + "_min"], out[key + "_max"] = min(cpu[key]), max(cpu[key])
        out[key + "_wall"] = float(np.median(wall[key]))


def step_kb_load(work: Path, repeats: int = int(os.environ.get("REPEATS", 5))) -> dict:
    """Load the cached KB; every mode at top_k 10 and 100 interleaved with its floors
    (the first 1,000 queries)."""
    from heta_notebook.kb._embedders import normalize_rows
    from heta_notebook.kb._knowledge_base import KnowledgeBase
    from heta_notebook.kb._threads import one_blas_thread

    queries = read_lines(work / "queries.txt")[:1000]
    base = rss()
    started = time.perf_counter()
    kb = KnowledgeBase.load(work / "kb")
    out = {"load_s": time.perf_counter() - started, "input_rss": base, "rss_after_load": rss()}
    out["mmap"] = all(
        isinstance(array, np.memmap)
        for array in (
            kb.dense.embeddings,
            kb.bm25.retriever.scores["data"],
            kb.chunks.columns["text"],
        )
    )
    with one_blas_thread():
        vectors = normalize_rows(kb.dense.embedder.embed(queries))
        np.save(work / "query_vectors.npy", vectors)
        depth = kb.recipe.hybrid.candidates
        for k in TOP_KS:
            runs = {
                f"floor_bm25_s@{k}": lambda qs, k=k: bm25_floor(kb, qs, k),
                f"floor_bm25_scores_s@{k}": lambda qs: bm25_scores_floor(kb, qs),
                f"floor_dense_s@{k}": lambda qs, k=k: dense_floor(kb, qs, k),
                f"floor_hybrid_s@{k}": lambda qs, k=k: (
                    bm25_floor(kb, qs, max(depth, k)),
                    dense_floor(kb, qs, max(depth, k)),
                ),
            }
            for mode in MODES:
                runs[f"{mode}_s@{k}"] = lambda qs, k=k, m=mode: kb.query_many(qs, mode=m, top_k=k)
            for run in runs.values():
                run(queries[:20])  # warm up
            interleaved(out, runs, queries, repeats)
            ids = [
                [int(r.id[1:].split("#")[0]) for r in resp.results]
                for resp in kb.query_many(queries, mode="vector_search", top_k=k)
            ]
            np.save(work / f"dense_ids@{k}.npy", np.array(ids))
            floor = dense_floor(kb, queries, k)
            out[f"dense_same_top1@{k}"] = float(np.mean(floor[:, 0] == np.array(ids)[:, 0]))
            ours = kb.query_many(queries, mode="full_text_search", top_k=k)
            floor = bm25_floor(kb, queries, k)
            same = [
                bool(r.results) and r.results[0].id == kb.chunks.rows([int(f[0])])[0].chunk_id
                for r, f in zip(ours, floor, strict=True)
            ]
            out[f"bm25_same_top1@{k}"] = float(np.mean(same))
    out["peak_rss"] = peak()
    return out


def step_numpy(work: Path) -> dict:
    from heta_notebook.kb._dense import QUERY_BLOCK_BYTES
    from heta_notebook.kb._threads import one_blas_thread

    embeddings = np.load(work / "kb" / "dense" / "embeddings.npy")  # in RAM: the floor
    vectors = np.load(work / "query_vectors.npy")
    block = max(1, QUERY_BLOCK_BYTES // (4 * len(embeddings)))
    out: dict = {}

    def search(qs, k):
        result = []
        for start in range(0, len(qs), block):
            scores = qs[start : start + block] @ embeddings.T
            top = np.argpartition(scores, -k, axis=1)[:, -k:]
            values = np.take_along_axis(scores, top, axis=1)
            order = np.argsort(-values, axis=1, kind="stable")
            result.extend(np.take_along_axis(top, order, axis=1))
        return result

    with one_blas_thread():
        search(vectors[:20], 10)
        for k in TOP_KS:
            ids = timed_queries(out, f"query_s@{k}", search, vectors, k)
            ours = np.load(work / f"dense_ids@{k}.npy")
            out[f"same_top1@{k}"] = float(np.mean(ours[:, 0] == np.array(ids)[:, 0]))
    out["peak_rss"] = peak()
    return out


def step_run(work: Path, repeats: int = int(os.environ.get("REPEATS", 3))) -> dict:
    """A full run: every query x 3 modes, top_k 100, the 25 BEIR metrics, a checkpointing
    store; its CPU time next to the sum of the three modes' floors for the same queries,
    measured in this process before, between and after the runs (median of each)."""
    from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore
    from heta_notebook.benchmarks._records import RecordsBenchmark
    from heta_notebook.evaluators._retrieval import beir_default_metrics
    from heta_notebook.kb._knowledge_base import KnowledgeBase
    from heta_notebook.kb._threads import one_blas_thread

    queries = read_lines(work / "queries.txt")
    corpus = json.loads((work / "corpus.json").read_text())
    sources = query_documents(corpus["docs"], corpus["queries"])
    records = [
        {"case_id": f"q{i}", "query": q, "reference_ids": [f"d{int(d)}"]}
        for i, (q, d) in enumerate(zip(queries, sources, strict=True))
    ]
    benchmark = RecordsBenchmark(records, manifest="kb_scale")
    kb = KnowledgeBase.load(work / "kb")
    depth, k = max(kb.recipe.hybrid.candidates, 100), 100

    def floors(qs):  # full text + vector at k, hybrid's two parts at its depth
        with one_blas_thread():
            bm25_floor(kb, qs, k)
            dense_floor(kb, qs, k)
            bm25_floor(kb, qs, depth)
            dense_floor(kb, qs, depth)

    reports = []

    def run(qs, concurrency: int):
        shutil.rmtree(work / "store", ignore_errors=True)
        result = BenchmarkRunner().run_sync(
            benchmark=benchmark,
            recipe=kb,
            evaluators=beir_default_metrics(),
            config=BenchmarkRunConfig(top_k=k, max_concurrent_queries=concurrency),
            store=ReportStore(work / "store"),
            progress=False,
        )
        reports[:] = [result.report]

    floors(queries[:20])
    out: dict = {"queries": len(queries), "modes": len(MODES)}
    runs = {"floors_s": floors, "run_s": lambda qs: run(qs, 8)}  # 8: the default concurrency
    runs["run64_s"] = lambda qs: run(qs, 64)  # 64 queries per batched KB call
    interleaved(out, runs, queries, repeats)
    (report,) = reports
    out["ndcg@10"] = {m: report.score_summary[f"{m}.beir_ndcg@10"] for m in MODES}
    out["case_results"] = len(report.case_results)
    out["scores"] = len(report.score_names)
    out["peak_rss"] = peak()
    return out


STEPS = {
    "bm25s": step_bm25s,
    "kb-bm25": step_kb_bm25,
    "kb-default": step_kb_default,
    "kb-load": step_kb_load,
    "numpy": step_numpy,
    "run": step_run,
}


# ----------------------------------------------------------------------------- driver


def run_step(name: str, work: Path) -> dict:
    """Run one step in a fresh interpreter (its own peak RSS) and return its figures."""
    result = work / f"{name}.json"
    command = [sys.executable, __file__, "--step", name, "--work", str(work)]
    subprocess.run(command, check=True)
    return json.loads(result.read_text())


def gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def report(work: Path, r: dict) -> str:
    corpus = json.loads((work / "corpus.json").read_text())
    b, kb, default, load, floor = (r.get(s) for s in STEPS)
    parts = default.get("parts", {})
    if kb is None:  # skipped at 1M for time: BM25-only build = default build minus the dense step
        kb = {
            "build_s": default["build_s"] - parts["dense (LSA fit + embed)"],
            "build_wall": 0,
            "input_rss": default["input_rss"],
            "peak_rss": 0,
            "derived": True,
        }
        for k in TOP_KS:  # the loaded (memory-mapped) KB's full_text_search stands in
            for suffix in ("", "_wall"):
                kb[f"query_s@{k}{suffix}"] = load[f"full_text_search_s@{k}{suffix}"]
            kb[f"same_top1@{k}"] = float("nan")
    t = lambda x, key: f"{x[key]:.1f} s ({x.get(key.replace('_s', '_wall'), 0):.1f} s)"  # noqa: E731
    lines = [
        f"#### {corpus['docs']:,} documents, {corpus['queries']:,} queries, "
        f"vocabulary {corpus['vocabulary']:,}",
        "",
        "| step | CPU (wall) | peak RSS (input RSS) | on disk |",
        "|---|---:|---:|---:|",
        f"| bm25s tokenize + index | {t(b, 'build_s')} | {gib(b['peak_rss'])} "
        f"({gib(b['input_rss'])}) | {b['index_bytes'] / 2**20:.0f} MiB |",
        f"| KB build, BM25 only | {t(kb, 'build_s')} | {gib(kb['peak_rss'])} "
        f"({gib(kb['input_rss'])}) | |",
        f"| KB build, default (BM25 + LSA + hybrid) | {t(default, 'build_s')} | "
        f"{gib(default['peak_rss'])} ({gib(default['input_rss'])}) | "
        f"{default['index_bytes'] / 2**20:.0f} MiB |",
        f"| KB load (cached folder) | {load['load_s']:.2f} s wall | +"
        f"{gib(load['rss_after_load'] - load['input_rss'])} after load; peak "
        f"{gib(load['peak_rss'])} after all queries | memory-mapped: {load['mmap']} |",
        "",
        "| ms per query, CPU (wall), one batched call | top_k 10 | top_k 100 |",
        "|---|---:|---:|",
    ]
    ms = lambda x, key: f"{x[key] * 1000:.2f} ({x[key + '_wall'] * 1000:.2f})"  # noqa: E731
    rows = [
        ("bm25s retrieve (floor)", b, "query_s"),
        ("KB full_text_search", kb, "query_s"),
        ("numpy matmul + top-k (floor)", floor, "query_s"),
        ("KB vector_search (loaded, mmap)", load, "vector_search_s"),
        ("KB hybrid_search (loaded, mmap)", load, "hybrid_search_s"),
        ("KB full_text_search (loaded, mmap)", load, "full_text_search_s"),
    ]
    for label, x, key in rows:
        lines.append(f"| {label} | {ms(x, key + '@10')} | {ms(x, key + '@100')} |")
    ratio = lambda x, kx, y, ky: f"{x[kx] / y[ky]:.2f}×"  # noqa: E731
    lines += [
        "",
        f"CPU-time ratios: BM25 build {ratio(kb, 'build_s', b, 'build_s')}; BM25 query "
        f"{ratio(kb, 'query_s@10', b, 'query_s@10')} / {ratio(kb, 'query_s@100', b, 'query_s@100')}"
        f"; dense query {ratio(load, 'vector_search_s@10', floor, 'query_s@10')} / "
        f"{ratio(load, 'vector_search_s@100', floor, 'query_s@100')} (top_k 10 / 100). "
        f"Same top-1 as the floor: BM25 {kb['same_top1@10']:.3f}, dense {floor['same_top1@10']:.3f}. "
        f"LSA fit: {json.dumps(default.get('lsa', {}))}.",
        "",
        "Default build, CPU seconds by part: "
        + ", ".join(f"{name} {seconds:.1f}" for name, seconds in parts.items())
        + (
            " (BM25-only build derived: default build minus the dense part)"
            if kb.get("derived")
            else ""
        ),
    ]
    return "\n".join(lines)


def floors_report(load: dict | None, run: dict | None) -> str:
    """Ours next to the floors measured in the same process, interleaved (``kb-load``, ``run``)."""
    lines = []
    ms = lambda x, key: (  # noqa: E731
        f"{x[key] * 1e3:.2f} [{x[key + '_min'] * 1e3:.2f}–{x[key + '_max'] * 1e3:.2f}]"
    )
    if load is not None and "floor_bm25_s@10" in load:
        lines += [
            "| ms per query, CPU, median [min–max] | top_k 10 | floor | ratio | top_k 100 | floor | ratio |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        rows = list(zip(MODES, ("bm25", "dense", "hybrid"), strict=True))
        if "floor_bm25_scores_s@10" in load:
            rows.insert(1, ("full_text_search", "bm25_scores"))
        for mode, floor in rows:
            cells = []
            for k in TOP_KS:
                ours, base = f"{mode}_s@{k}", f"floor_{floor}_s@{k}"
                cells += [ms(load, ours), ms(load, base), f"{load[ours] / load[base]:.2f}×"]
            label = f"{mode} vs bm25s scoring only" if floor == "bm25_scores" else mode
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append(
            "\nFloors: bm25s `tokenize` + `retrieve` on the KB's own index; the KB's embedder + "
            f"float32 matmul + argpartition in blocks of {FLOOR_BLOCK} queries on its own "
            "embeddings; hybrid: both at the fusion depth. Same top-1: "
            + ", ".join(f"{key} {value:.3f}" for key, value in load.items() if "same_top1" in key)
        )
    if run is not None:
        lines += [
            "",
            f"Full run: {run['queries']:,} queries × {run['modes']} modes, top_k 100, "
            f"{run['scores']} metrics, checkpointing store, ms CPU per query (all modes): "
            f"floors {ms(run, 'floors_s')}; run at the default concurrency (8) "
            f"{ms(run, 'run_s')}: **{run['run_s'] / run['floors_s']:.2f}×** (wall "
            f"{run['run_s_wall'] * 1e3:.2f} ms); at concurrency 64 {ms(run, 'run64_s')}: "
            f"**{run['run64_s'] / run['floors_s']:.2f}×** (wall {run['run64_s_wall'] * 1e3:.2f} ms); "
            f"peak RSS {gib(run['peak_rss'])}; "
            f"nDCG@10 {json.dumps({m: round(v, 4) for m, v in run['ndcg@10'].items()})}.",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[100_000])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/kb_scale"))
    parser.add_argument("--step", choices=sorted(STEPS))
    parser.add_argument("--only", nargs="+", choices=sorted(STEPS), help="re-run these steps")
    parser.add_argument("--skip", nargs="+", choices=sorted(STEPS), default=[])
    args = parser.parse_args()
    if args.step:
        out = STEPS[args.step](args.work)
        (args.work / f"{args.step}.json").write_text(json.dumps(out, indent=1))
        return
    for docs in args.docs:
        work = args.work / str(docs)
        if not (work / "corpus.json").is_file():
            started = time.perf_counter()
            generate(work, docs, args.queries)
            print(f"generated {docs:,} documents in {time.perf_counter() - started:.0f} s")
        results = {}
        for name in STEPS:
            if name in args.skip:
                continue
            if args.only and name not in args.only and (work / f"{name}.json").is_file():
                results[name] = json.loads((work / f"{name}.json").read_text())
                continue
            print(f"[{docs:,}] {name} ...", flush=True)
            results[name] = run_step(name, work)
        if all(name in results for name in STEPS if name != "run"):
            text = report(work, results) + "\n\n"
        else:
            text = ""
        text += floors_report(results.get("kb-load"), results.get("run"))
        (work / "report.md").write_text(text + "\n")
        print(text, flush=True)


if __name__ == "__main__":
    main()

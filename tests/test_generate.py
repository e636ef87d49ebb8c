"""Offline generators on Cranfield's corpus: deterministic per seed (byte-identical folders),
evidence where each method says, saved as BEIR folders with a manifest that runs carry."""

from __future__ import annotations

import hashlib
import json
import shutil
import warnings
from pathlib import Path

import pytest

from heta_notebook import (
    BeirBenchmark,
    BenchmarkDocument,
    BenchmarkWarning,
    GeneratedBenchmark,
    JsonlBenchmark,
    evaluate,
    generate_benchmark,
)
from heta_notebook.benchmarks._beir import cranfield_folder
from heta_notebook.benchmarks._generate_offline import stopwords, tokens

METHODS = ("known_item", "title", "inverse_cloze")
SMALL = [d for i, d in enumerate(BeirBenchmark.cranfield().load().documents) if i < 300]


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, GeneratedBenchmark]:
    root = tmp_path_factory.mktemp("gen")
    return {
        m: generate_benchmark(cranfield_folder(), 220, method=m, seed=7, folder=root / m)
        for m in METHODS
    }


@pytest.mark.parametrize("method", METHODS)
def test_same_seed_same_bytes_other_seed_other_bytes(method, tmp_path) -> None:
    one = generate_benchmark(SMALL, 50, method=method, seed=7, folder=tmp_path / "1")
    again = generate_benchmark(SMALL, 50, method=method, seed=7, folder=tmp_path / "a")
    other = generate_benchmark(SMALL, 50, method=method, seed=8, folder=tmp_path / "b")
    assert _digest(again.folder) == _digest(one.folder)
    files = {"corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "generation.json"}
    assert set(_digest(again.folder)) == files
    assert _digest(other.folder)["queries.jsonl"] != _digest(again.folder)["queries.jsonl"]


@pytest.mark.parametrize("method", METHODS)
def test_a_benchmark_of_at_least_200_cases_that_reads_back_as_beir(made, method) -> None:
    generated = made[method]
    cases = generated.load().cases
    assert len(cases) == 220 and len({c.expected.evidence[0].reference_id for c in cases}) == 220
    beir = BeirBenchmark.from_folder(generated.folder).load()
    assert [(c.case_id, c.query) for c in beir.cases] == [(c.case_id, c.query) for c in cases]
    manifest = generated.generation
    assert manifest.method == method and manifest.seed == 7 and manifest.documents == 1400
    assert manifest.counts == {"generated": 220, "kept": 220, "dropped": {}}
    assert beir.manifest.metadata["generation"]["corpus_fingerprint"] == manifest.corpus_fingerprint


def test_known_item_terms_come_from_the_document_or_the_collection(tmp_path) -> None:
    clean = generate_benchmark(SMALL, 50, method="known_item", noise=0.0, folder=tmp_path / "c")
    docs = {d.document_id: set(tokens(d.text, stopwords())) for d in clean.load().documents}
    for case in clean.load().cases:
        assert set(case.query.split()) <= docs[case.expected.evidence[0].reference_id]
    noisy = generate_benchmark(SMALL, 50, method="known_item", noise=1.0, folder=tmp_path / "n")
    outside = [
        set(c.query.split()) - docs[c.expected.evidence[0].reference_id] for c in noisy.load().cases
    ]
    assert sum(bool(o) for o in outside) > 25  # collection terms, mostly not in the document
    assert all(
        c.metadata["noise_terms"] == c.metadata["query_terms"] or c.metadata["noise_terms"] >= 1
        for c in noisy.load().cases
    )


def test_inverse_cloze_removes_the_sentence_from_what_the_index_sees(made) -> None:
    generated = made["inverse_cloze"]
    original = {d.document_id: d.text for d in BeirBenchmark.cranfield().load().documents}
    seen = {d.document_id: d.text for d in generated.load().documents}
    for case in generated.load().cases:
        doc = case.expected.evidence[0].reference_id
        span = case.metadata["evidence"]
        assert original[doc][span["start"] : span["end"]].strip() == case.query
        assert case.query not in seen[doc] and case.metadata["sentence_removed"]


def test_title_queries_are_taken_out_of_the_text(made) -> None:
    generated = made["title"]
    seen = {d.document_id: d.text for d in generated.load().documents}
    for case in generated.load().cases:
        assert case.metadata["source"] == "title"
        assert not seen[case.expected.evidence[0].reference_id].startswith(case.query)


def test_headings_are_queries_with_passage_offsets(tmp_path) -> None:
    corpus = [
        f"# Wing flutter at speed {i}\nPanels shake.\n\n## Heat on plates {i}\nIt doubles."
        for i in range(5)
    ]
    generated = generate_benchmark(corpus, 5, method="title", strip_title=False, folder=tmp_path)
    case = generated.load().cases[0]
    text = {d.document_id: d.text for d in generated.load().documents}[
        case.expected.evidence[0].reference_id
    ]
    span = case.metadata["evidence"]
    assert case.query.startswith("Wing flutter") and text[span["start"] : span["end"]].startswith(
        "# Wing"
    )


def test_every_kind_of_corpus(tmp_path) -> None:
    texts = [
        f"document {i} about supersonic flow over cones number {i} and more words" for i in range(8)
    ]
    dicts = [{"_id": f"d{i}", "text": t} for i, t in enumerate(texts)]
    docs = [BenchmarkDocument(document_id=f"d{i}", text=t) for i, t in enumerate(texts)]
    folder = tmp_path / "jsonl"
    folder.mkdir()
    (folder / "documents.jsonl").write_text(
        "".join(json.dumps({"document_id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(texts))
    )
    (folder / "cases.jsonl").write_text(json.dumps({"case_id": "c", "query": "flow"}) + "\n")
    made = [
        generate_benchmark(corpus, 4, folder=tmp_path / f"out{i}")
        for i, corpus in enumerate([dicts, docs, folder, JsonlBenchmark.from_folder(folder)])
    ]
    queries = {m.folder.name: (m.folder / "queries.jsonl").read_bytes() for m in made}
    assert len(set(queries.values())) == 1  # the same corpus, whichever way it came
    assert len(generate_benchmark(texts, 3, folder=tmp_path / "s").load().cases) == 3


def test_bad_inputs_say_what_is_wrong(tmp_path) -> None:
    with pytest.raises(ValueError, match="unknown method 'magic'"):
        generate_benchmark(["a text with words"], 1, method="magic")
    with pytest.raises(ValueError, match="duplicate document id 'x'"):
        generate_benchmark([{"_id": "x", "text": "a b"}, {"_id": "x", "text": "c d"}], 1)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        generate_benchmark(["text"], 0)
    with pytest.raises(ValueError, match="noise must be between 0 and 1"):
        generate_benchmark(["some words in a document here"], 1, noise=2)
    with pytest.raises(Exception, match="no corpus.jsonl"):
        generate_benchmark(tmp_path, 1)


def test_review_decisions_are_saved_and_applied(made, tmp_path) -> None:
    generated = made["known_item"].save(tmp_path / "copy")
    first, second, third = (c.case_id for c in generated.load().cases[:3])
    generated.save_decisions(
        {first: {"decision": "accept"}, second: {"decision": "reject", "reason": "vague"},
         third: {"decision": "accept", "query": "an edited query"}}
    )  # fmt: skip
    fresh = GeneratedBenchmark.from_folder(tmp_path / "copy")  # as after a kernel restart
    cases = {c.case_id: c for c in fresh.load().cases}
    assert second not in cases and cases[third].query == "an edited query"
    assert len(cases) == 219
    assert fresh.generation.review == {"accepted": 2, "rejected": 1, "edited": 1, "pending": 217}
    assert len(fresh.generated_inputs()[1]) == 220


def _fingerprint(benchmark) -> str:
    first = benchmark.load().documents[0].document_id  # a system that finds one real document

    def one(text: str) -> list[str]:
        return [first]

    report = evaluate(one, benchmark, progress=False, limit=2)
    return report.metadata["fingerprint"]


def test_runs_carry_the_manifest_in_their_fingerprint(made, tmp_path) -> None:
    source = made["title"].folder
    plain, changed = tmp_path / "plain", tmp_path / "changed"
    shutil.copytree(source, plain)
    shutil.copytree(source, changed)
    (plain / "generation.json").unlink()
    manifest = json.loads((changed / "generation.json").read_text())
    manifest["parameters"]["strip_title"] = "changed"
    (changed / "generation.json").write_text(json.dumps(manifest))
    kw = {"dataset": "same", "version": "1"}
    prints = {_fingerprint(BeirBenchmark(f, **kw)) for f in (source, plain, changed)}
    assert len(prints) == 3


def test_the_loader_counts_queries_without_judgments(tmp_path) -> None:
    folder = tmp_path / "beir"
    shutil.copytree(cranfield_folder(), folder)
    with (folder / "queries.jsonl").open("a") as handle:
        for i in range(3):
            handle.write(json.dumps({"_id": f"extra{i}", "text": "an unjudged query"}) + "\n")
    with pytest.warns(
        BenchmarkWarning, match="3 of 228 queries have no judgments.*keep_unjudged=True"
    ):
        dropped = BeirBenchmark.from_folder(folder).load()
    assert len(dropped.cases) == 225
    with warnings.catch_warnings():
        warnings.simplefilter("error", BenchmarkWarning)
        kept = BeirBenchmark.from_folder(folder, keep_unjudged=True).load()
    assert len(kept.cases) == 228 and kept.cases[-1].expected.evidence == ()


def test_the_stopwords_are_the_embedded_bm25s() -> None:
    from bm25s.stopwords import STOPWORDS_EN

    assert stopwords() == frozenset(STOPWORDS_EN)


def test_a_bad_review_file_or_decision_says_so(made, tmp_path) -> None:
    generated = made["title"].save(tmp_path / "bad")
    with pytest.raises(ValueError, match="decision must be 'accept' or 'reject'"):
        generated.save_decisions({"title-0001": {"decision": "maybe"}})
    (generated.folder / "review.json").write_text("{not json")
    with pytest.raises(Exception, match=r"review\.json: malformed review"):
        generated.decisions()

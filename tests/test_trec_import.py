"""Any run file in: an outside TREC run scored on TREC or BEIR qrels with no corpus equals
pytrec_eval query by query, joins compare_benchmarks beside the library's own reports, and the
strict readers refuse (naming file and line) what trec_eval would read differently. The TREC
parsers are fuzzed: a seeded small budget here, a large one under ``-m soak``."""

from __future__ import annotations

import functools
import io
import random
import re
import tempfile
from pathlib import Path

import pytest
import pytrec_eval

from heta_notebook import (
    BeirBenchmark,
    BenchmarkRunConfig,
    Recipe,
    TrecFormatError,
    compare_benchmarks,
    read_trec_qrels,
    read_trec_run,
    report_from_trec,
    reports_from_trec,
    run_benchmark,
)
from heta_notebook.benchmarks import BenchmarkFormatError
from heta_notebook.benchmarks._beir import cranfield_folder
from heta_notebook.labels import read_trec_qrels as labels_qrels
from tests._compare_helpers import scored_report

CRANFIELD_QRELS = cranfield_folder() / "qrels" / "test.tsv"  # the package's copy
K = (1, 3, 5, 10, 100)
MEASURES = {f"{m}.{','.join(map(str, K))}" for m in ("ndcg_cut", "map_cut", "recall", "P")}
OURS = {"ndcg_cut": "ndcg", "map_cut": "map", "recall": "recall", "P": "precision"}


@functools.cache
def _bm25():
    """The library's BM25 recipe on the embedded Cranfield, top 100."""
    with tempfile.TemporaryDirectory() as workspace:
        return run_benchmark(
            benchmark=BeirBenchmark.cranfield(),
            recipe=Recipe(name="bm25", dense=None, hybrid=None),
            config=BenchmarkRunConfig(top_k=100),
            progress=False,
            workspace=workspace,
        ).report


def _trec_qrels(tmp_path: Path) -> Path:
    """Cranfield's BEIR qrels rewritten in TREC layout (``qid 0 doc grade``)."""
    out = tmp_path / "cranfield.qrels"
    rows = CRANFIELD_QRELS.read_text().splitlines()[1:]
    out.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in (r.split("\t") for r in rows)))
    return out


def _outside_run(tmp_path: Path) -> Path:
    """An outside system's run: BM25's ranking with its scores perturbed (ties included)."""
    report = _bm25()
    path = report.to_trec(tmp_path / "bm25.run")
    rng = random.Random(7)
    lines = []
    for line in path.read_text().splitlines():
        qid, q0, doc, rank, score, _ = line.split()
        lines.append(f"{qid} {q0} {doc} {rank} {round(float(score) * rng.random(), 1)} outside\n")
    out = tmp_path / "outside.run"
    out.write_text("".join(lines))
    return out


def test_an_outside_run_on_trec_qrels_equals_pytrec_eval_in_three_lines(tmp_path):
    run_path, qrels_path = _outside_run(tmp_path), _trec_qrels(tmp_path)
    # the three lines a user writes:
    report = report_from_trec(run_path, qrels=qrels_path)
    values = report.frames().scores()  # noqa: F841 - per query, per measure
    # the oracle: pytrec_eval on its own parse of the same files
    with open(qrels_path) as q, open(run_path) as r:
        theirs = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(q), MEASURES).evaluate(
            pytrec_eval.parse_run(r)
        )
    assert report.benchmark.key == "cranfield:1:test" or report.benchmark.name
    compared = 0
    for result in report.case_results:
        if result.case_id not in theirs:
            continue
        for measure, ours in OURS.items():
            for k in K:
                value = result.score(f"beir_{ours}@{k}").value
                assert value == pytest.approx(theirs[result.case_id][f"{measure}_{k}"], abs=1e-12)
                compared += 1
    assert compared == 225 * 20
    same = report_from_trec(run_path, qrels=CRANFIELD_QRELS)  # the BEIR TSV reads the same
    assert [r.scores for r in same.case_results] == [r.scores for r in report.case_results]


def test_an_outside_run_joins_compare_benchmarks_beside_the_library(tmp_path):
    bm25 = _bm25()
    outside = report_from_trec(_outside_run(tmp_path), qrels=_trec_qrels(tmp_path), benchmark=bm25)
    other = scored_report(
        "elsewhere", {"beir_ndcg@10": [0.1, 0.4, 0.3]}, benchmark=("x", "1", "test")
    )
    bench = compare_benchmarks(
        [bm25, outside, other],
        baseline=(bm25.label, "full_text_search"),
        test="t-test",
        correction="bh",
    )
    table = bench.table("beir_ndcg@10")
    assert {bm25.label + " · full_text_search", "outside · trec_run"} <= set(table.index)
    assert table.loc["outside · trec_run", "beir_cranfield"] == pytest.approx(
        outside.summary().query("score == 'beir_ndcg@10'")["mean"].iloc[0]
    )
    latex = bench.to_latex(labels={"beir_cranfield": "Cranfield"})
    assert "Cranfield" in latex and "n/a" in latex  # the baseline did not run on x
    sig = bench.significance("beir_ndcg@10")
    assert sig["variant"].tolist() == ["outside · trec_run"] and sig["correction"].tolist() == [
        "bh"
    ]
    assert "did not run on x" in latex and "Queries per benchmark: Cranfield 225" in latex
    assert "Benjamini" in latex and 'missing="drop"' in latex


def test_qrels_formats_are_told_apart_and_a_wrong_one_is_named(tmp_path):
    trec = _trec_qrels(tmp_path)
    assert read_trec_qrels(trec) == read_trec_qrels(CRANFIELD_QRELS, format="beir")
    with pytest.raises(TrecFormatError, match=r"test.tsv:1: .*looks like a BEIR qrels TSV"):
        read_trec_qrels(CRANFIELD_QRELS, format="trec")
    run = _outside_run(tmp_path)
    with pytest.raises(TrecFormatError, match=r"outside.run:1: .*looks like a TREC run file"):
        read_trec_qrels(run)
    with pytest.raises(TrecFormatError, match=r"cranfield.qrels:1: .*looks like a TREC qrels"):
        read_trec_run(trec)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("1 Q0 184 1 1_0 x", r"score '1_0' is not a number as trec_eval reads one"),
        ("1 Q0 184 1 0x1p3 x", "score '0x1p3' is not a number"),
        ("1 Q0 184 1 nan x", "score 'nan' is not a number"),
        ("1 Q0 184 1 1e999 x", "score '1e999' is not finite"),
        ("1 Q0 184 1 \u0661 x", "is not a number"),  # an Arabic-Indic digit: float() reads 1
    ],
)
def test_run_scores_are_read_as_trec_eval_reads_them(tmp_path, line, problem):
    path = tmp_path / "bad.run"
    path.write_text(f"1 Q0 29 1 2.0 x\n{line}\n")
    with pytest.raises(TrecFormatError, match=rf"bad.run:2: .*{problem}"):
        read_trec_run(path)


def _beir_qrels(tmp_path: Path, grade: str) -> Path:
    """A BEIR folder whose qrels TSV grades document 30 ``grade`` (on line 3)."""
    (tmp_path / "qrels").mkdir()
    docs = [f'{{"_id": "{d}", "text": "doc {d}"}}' for d in ("29", "30")]
    (tmp_path / "corpus.jsonl").write_text("\n".join(docs) + "\n")
    (tmp_path / "queries.jsonl").write_text('{"_id": "1", "text": "q"}\n')
    qrels = tmp_path / "qrels" / "test.tsv"
    qrels.write_text(f"query-id\tcorpus-id\tscore\n1\t29\t1\n1\t30\t{grade}\n", "utf-8")
    return qrels


# every qrels reader, with the file it reads and the line it must name: one grade rule
QRELS_READERS = {
    "read_trec_qrels": lambda tmp, grade: _trec_file(tmp, grade, read_trec_qrels),
    "labels.read_trec_qrels": lambda tmp, grade: _trec_file(tmp, grade, labels_qrels),
    "BeirBenchmark": lambda tmp, grade: (
        _beir_qrels(tmp, grade),
        3,
        lambda: BeirBenchmark.from_folder(tmp, evaluators=()).load(),
    ),
}


def _trec_file(tmp_path: Path, grade: str, read):
    path = tmp_path / "bad.qrels"
    path.write_text(f"1 0 29 1\n1 0 30 {grade}\n", "utf-8")
    return path, 2, lambda: read(path)


@pytest.mark.parametrize("reader", sorted(QRELS_READERS))
@pytest.mark.parametrize("grade", ["1e3", "1_0", "1.0", "one", "+", "\u0661", "0x1"])
def test_qrels_grades_are_integers(tmp_path, grade, reader):
    """``1_0`` (Python's int: 10), ``\u0661`` (an Arabic-Indic digit: 1) and ``1e3`` are
    refused by every qrels reader, naming the file and line, as trec_eval reads grades."""
    path, line, read = QRELS_READERS[reader](tmp_path, grade)
    with pytest.raises(BenchmarkFormatError) as info:
        read()
    assert isinstance(info.value, TrecFormatError)
    assert (info.value.file, info.value.line) == (str(path), line)
    assert re.search(
        rf"{re.escape(path.name)}:{line}: relevance grade .* is not an integer", str(info.value)
    )


@pytest.mark.parametrize("reader", sorted(QRELS_READERS))
def test_integer_grades_still_load_in_every_qrels_reader(tmp_path, reader):
    path, _, read = QRELS_READERS[reader](tmp_path, "-1")
    loaded = read()
    if reader == "BeirBenchmark":
        assert loaded.cases[0].expected.metadata["judged_nonrelevant"] == {"30": -1}
    else:
        assert loaded == {"1": {"29": 1, "30": -1}}


def test_a_label_sets_qrels_file_that_is_not_utf8_names_the_file_and_line(tmp_path):
    path = tmp_path / "set.qrels"
    path.write_bytes(b"q1 0 d1 1\nq1 0 caf\xe9 1\n")
    with pytest.raises(BenchmarkFormatError, match=r"set\.qrels:2: the line is not UTF-8"):
        labels_qrels(path)
    path.write_bytes(b"")
    assert labels_qrels(path) == {}  # a set with no labels yet


def test_bytes_that_are_not_utf8_name_the_file_and_line(tmp_path):
    path = tmp_path / "latin1.run"
    path.write_bytes(b"1 Q0 29 1 2.0 x\n1 Q0 caf\xe9 2 1.0 x\n")
    with pytest.raises(
        TrecFormatError, match=r"latin1.run:2: the line is not UTF-8 \(byte 0xe9 at column 9\)"
    ):
        read_trec_run(path)
    path.write_bytes(b"1 0 caf\xe9 1\n")
    with pytest.raises(TrecFormatError, match=r"latin1.run:1: .*not UTF-8"):
        read_trec_qrels(path)


def test_a_run_spanning_two_splits_is_refused_split_or_scored_on_one(tmp_path):
    qrels_test, qrels_dev = tmp_path / "test.qrels", tmp_path / "dev.qrels"
    qrels_test.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    qrels_dev.write_text("3 0 d 1\n")
    run = tmp_path / "both.run"
    run.write_text("1 Q0 a 1 3 x\n1 Q0 b 2 2 x\n2 Q0 a 1 1 x\n3 Q0 d 1 9 x\n")
    with pytest.raises(ValueError, match=r"1 of the run's 3 query id.*other_queries='ignore'"):
        report_from_trec(run, qrels=qrels_test)
    only = report_from_trec(run, qrels=qrels_test, other_queries="ignore")
    assert [r.case_id for r in only.case_results] == ["1", "2"]
    split = reports_from_trec(run, {"test": qrels_test, "dev": qrels_dev}, name="toy")
    assert {s: r.benchmark.key for s, r in split.items()} == {
        "test": "toy:1:test",
        "dev": "toy:1:dev",
    }
    assert split["dev"].case_results[0].score("beir_ndcg@10").value == 1.0
    assert split["test"].case_results[1].score("beir_ndcg@10").value == 0.0
    with pytest.raises(ValueError, match=r"in none of the splits test"):
        reports_from_trec(run, {"test": qrels_test})


# --------------------------------------------------------------------------- fuzz

_PIECES = [b"1_0", b"1e3", b"0x10", b"nan", b"inf", b"-0", b".5", b"5.", b"1e-3", b"\xe9", b"\xff"]
_PIECES += [b"\x00", b"\t", b" ", b"\r", b"\n", b"\xc2\xa0", b"\xc2\x85", b"\x1c", b"\xd9\xa1"]
_PIECES += [b"Q0", b"+", b"-", b"e", b".", b"_", b"\xe2\x80\x83", b"12", b"\x0b", b"\x0c"]


def _mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(out) + 1)
        kind = rng.random()
        if kind < 0.4:
            out[at:at] = rng.choice(_PIECES)
        elif kind < 0.6 and out:
            out[min(at, len(out) - 1)] = rng.randrange(256)
        elif kind < 0.8:
            del out[at : at + rng.randint(1, 3)]
        else:  # replace a field by a tricky number
            fields = out.split(b" ")
            fields[rng.randrange(len(fields))] = rng.choice(_PIECES)
            out = bytearray(b" ".join(fields))
    return bytes(out)


_ASCII_SPACE = re.compile(rb"[ \t\n\r\x0b\x0c]")


def _oracle_run(data: bytes) -> dict:
    """trec_eval's reading (the documented rule) via pytrec_eval's own parser: on lines split
    at \\n whose every character str.split() treats as a separator is ASCII whitespace."""
    text = data.decode("utf-8")
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    # pytrec_eval splits on Unicode whitespace; trec_eval (C) on ASCII only: compare only
    # where the two agree, else the documented rule read independently
    if any(ch.isspace() and not _ASCII_SPACE.fullmatch(ch.encode()) for ch in text):
        return {q: d for q, d in _rule_run(lines).items()}
    return dict(pytrec_eval.parse_run(io.StringIO("\n".join(ln for ln in lines if ln.split()))))


def _rule_run(lines: list[str]) -> dict:
    out: dict = {}
    for line in lines:
        fields = [f.decode() for f in line.encode().split()]
        if fields:
            out.setdefault(fields[0], {})[fields[2]] = float(fields[4])
    return out


def _fuzz(tmp_path: Path, budget: int, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    base_run = b"".join(
        b"%d Q0 d%d %d %s tag\n" % (q, d, r, str(round(rng.uniform(-5, 5), 3)).encode())
        for q in range(1, 4)
        for r, d in enumerate(rng.sample(range(40), 6), start=1)
    )
    base_qrels = b"".join(
        b"%d 0 d%d %d\n" % (q, d, rng.randint(0, 3)) for q in range(1, 4) for d in range(5)
    )
    accepted = refused = 0
    run_file, qrels_file = tmp_path / "fuzz.run", tmp_path / "fuzz.qrels"
    for _ in range(budget):
        data = _mutate(base_run, rng)
        run_file.write_bytes(data)
        try:
            ours = read_trec_run(run_file)
        except TrecFormatError as exc:
            assert str(exc).startswith(f"{run_file}"), exc
            refused += 1
        else:
            accepted += 1
            assert ours == _oracle_run(data), data
        data = _mutate(base_qrels, rng)
        qrels_file.write_bytes(data)
        try:
            qrels = read_trec_qrels(qrels_file, format="trec")
        except TrecFormatError as exc:
            assert str(exc).startswith(f"{qrels_file}"), exc
        else:
            text = data.decode("utf-8")
            if not any(ch.isspace() and not _ASCII_SPACE.fullmatch(ch.encode()) for ch in text):
                lines = [ln for ln in text.split("\n") if ln.split()]
                assert qrels == dict(pytrec_eval.parse_qrel(io.StringIO("\n".join(lines))))
            for docs in qrels.values():
                assert all(type(g) is int for g in docs.values())
    return accepted, refused


def test_fuzzed_trec_files_give_no_traceback_and_trec_eval_values(tmp_path):
    accepted, refused = _fuzz(tmp_path, budget=300, seed=39)
    assert accepted > 20 and refused > 20  # the fuzz reaches both outcomes


@pytest.mark.soak
def test_fuzzed_trec_files_soak(tmp_path):
    accepted, refused = _fuzz(tmp_path, budget=4000, seed=40)
    print(f"\nsoak: 4,000 runs (and as many qrels): {accepted} runs read, {refused} refused")
    assert accepted > 200 and refused > 200


def test_unbounded_recip_rank_equals_pytrec_eval_beyond_any_cutoff(tmp_path):
    from heta_notebook import RecipRank

    run_path, qrels_path = _outside_run(tmp_path), _trec_qrels(tmp_path)
    report = report_from_trec(run_path, qrels=qrels_path, evaluators=[RecipRank()])
    with open(qrels_path) as q, open(run_path) as r:
        theirs = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(q), {"recip_rank"}).evaluate(
            pytrec_eval.parse_run(r)
        )
    deep = 0
    for result in report.case_results:
        score = result.score("recip_rank")
        assert score.value == pytest.approx(theirs[result.case_id]["recip_rank"], abs=1e-12)
        deep += (score.metadata["first_relevant_rank"] or 0) > 10
    assert deep > 0  # some first relevant documents lie beyond beir_mrr@10's cutoff

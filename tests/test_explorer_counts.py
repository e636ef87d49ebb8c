"""No confident zero: the explorers' "found by B, missed by A" / "found by A, missed by B"
filters count from the report's columns (``found_index``) for every embedded case, whether
its details are embedded or not, and give Python's count (``Comparison.evidence_changes``)."""

from __future__ import annotations

import numpy as np
import pytest

from heta_notebook import compare
from heta_notebook.display._explorer_data import encode_report
from tests._display_helpers import make_report


def _found(payload: dict) -> dict[tuple[str, str], set[str]]:
    s, c = payload["strings"], payload["cases"]
    return {
        (s[cid], s[mode]): {s[j] for j in found}
        for cid, mode, found in zip(c["case_id"], c["mode"], c["found"], strict=True)
    }


def _js_rule(a: dict, b: dict, mode: str, change: str) -> int:
    """What explorer.js compareRows counts for ``filter=change`` (lost / gained)."""
    ids = {cid for cid, m in a if m == mode} & {cid for cid, m in b if m == mode}
    count = 0
    for cid in ids:
        fa, fb = a[(cid, mode)], b[(cid, mode)]
        source, target = (fa, fb) if change == "lost" else (fb, fa)
        count += bool(source - target)
    return count


def test_lost_and_gained_counts_come_from_the_columns_without_details() -> None:
    base = make_report(40, label="base", seed=0)
    worse = make_report(40, label="worse", seed=1, quality_shift=-0.2)
    c = compare({"base": base, "worse": worse})
    a = _found(encode_report(base, details=[]))  # no case's details embedded
    b = _found(encode_report(worse, details=[]))
    for mode in c.modes:
        changes = c.evidence_changes(f"base · {mode}", f"worse · {mode}")
        for change in ("lost", "gained"):
            python = changes.loc[changes["change"] == change, "case_id"].nunique()
            assert _js_rule(a, b, mode, change) == python
    explorer = c.explore(filter="lost")
    changes = c.evidence_changes(*c.pairs()[0])
    python = changes.loc[changes["change"] == "lost", "case_id"].nunique()
    assert len(explorer.rows) == python > 0  # the rule is exercised


def test_the_found_index_matches_the_details_where_both_exist() -> None:
    report = make_report(12, label="r", seed=2)
    payload = encode_report(report)
    s, c = payload["strings"], payload["cases"]
    for i, evidence in enumerate(c["evidence"]):
        from_details = {s[e[0]] for e in evidence if e[1]}
        assert {s[j] for j in c["found"][i]} == from_details
    assert np.all([isinstance(f, list) for f in c["found"]])


def _tiny_beir(folder):
    import json
    import random

    rng = random.Random(5)
    words = [f"w{i}" for i in range(60)]
    (folder / "qrels").mkdir(parents=True)
    docs = {f"d{i}": " ".join(rng.choices(words, k=30)) for i in range(40)}
    with open(folder / "corpus.jsonl", "w") as out:
        for doc_id, text in docs.items():
            out.write(json.dumps({"_id": doc_id, "title": "", "text": text}) + "\n")
    with open(folder / "queries.jsonl", "w") as out:
        for q in range(12):
            out.write(
                json.dumps({"_id": f"q{q}", "text": " ".join(rng.choices(words, k=4))}) + "\n"
            )
    lines = ["query-id\tcorpus-id\tscore"]
    lines += [f"q{q}\td{rng.randrange(40)}\t{1 + q % 2}" for q in range(12) for _ in range(3)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.filterwarnings("ignore::heta_notebook.DepthWarning")  # shallow on purpose
def test_a_stored_report_gives_the_same_found_index_without_building_records(
    tmp_path, monkeypatch
) -> None:
    """The index reads the miss rows (a stored report's columns): at 100,000 case results it
    must not build a record per case (frames.evidence() did: minutes, GBs)."""
    from heta_notebook import BeirBenchmark, BenchmarkRunConfig, Recipe, ReportStore, run_benchmark
    from heta_notebook.display._explorer_cells import StringTable
    from heta_notebook.display._explorer_details import found_index
    from heta_notebook.reports._stored import LazyCaseResults

    store = ReportStore(tmp_path / "store")
    (run,) = run_benchmark(
        benchmark=BeirBenchmark(_tiny_beir(tmp_path / "beir")),
        recipes={"bm25": Recipe(name="bm25", dense=None, hybrid=None)},
        store=store,
        progress=False,
        config=BenchmarkRunConfig(top_k=5),
    )
    stored = store.load(run.knowledge_base_name, run.report_id)
    assert isinstance(stored.case_results, LazyCaseResults)
    from heta_notebook.reports import _stored

    built: list[int] = []
    build = _stored._build_rows  # every record of a stored report is built here
    monkeypatch.setattr(
        _stored, "_build_rows", lambda c, a, b, *k: built.append(b - a) or build(c, a, b, *k)
    )
    rows = np.arange(len(stored.case_results))
    s1, s2 = StringTable(), StringTable()
    from_columns = [[s1.texts[j] for j in f] for f in found_index(stored, rows, s1) or []]
    assert sum(built) == 0
    records = stored.model_copy(update={"case_results": tuple(stored.case_results)})
    from_records = [[s2.texts[j] for j in f] for f in found_index(records, rows, s2) or []]
    assert from_columns == from_records and any(from_columns)
    hit = records.frames().evidence()
    hit = hit[hit["matched"].fillna(False).astype(bool)]
    matched = hit.drop_duplicates(["case_id", "query_mode", "label"])
    assert sum(map(len, from_records)) == len(matched)

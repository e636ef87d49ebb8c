"""Every stored byte checked (issue 40): one bit flipped in any file of a saved store (the
report's tables, its header, its ``summary.json`` listing row, or heta's ``report.json``
when saved in that layout) is never silently wrong. What
``store.list()`` and ``store.load()`` give is either exactly the original, or comes with a
warning or an error naming the problem; a listing row failing its sums is rebuilt from the
report itself, with a warning.

Budget: ``FLIPS`` seeded flips spread over the files in the default suite; 1,000 under
``-m soak`` (figures in docs/safety.md).
"""

from __future__ import annotations

import json
import random
import shutil
import warnings

import pytest

from heta_notebook import ReportStore
from tests.test_store_columnar import synthetic_report

FLIPS = 40


@pytest.fixture(scope="module", params=["columnar", "heta"])
def saved(tmp_path_factory, request):
    root = tmp_path_factory.mktemp("flips") / "store"
    store = ReportStore(root)
    report = synthetic_report(12, 2)
    store.save(report, format=request.param)
    files = sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())
    rows = _rows(store)
    loaded = store.load(report.knowledge_base_name, report.report_id).model_dump_json()
    return root, files, rows, loaded, (report.knowledge_base_name, report.report_id)


def _rows(store: ReportStore) -> list[dict]:
    return json.loads(store.list().to_json(orient="records", date_format="iso"))


def _outcome(root, rows, loaded, ids) -> str:
    """ "same", "noticed" (a warning or an error) or "SILENT" (different, with no word)."""
    store = ReportStore(root)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            listed = _rows(store)
            again = store.load(*ids).model_dump_json()
        except Exception:  # noqa: BLE001 - an error naming the problem is a detection
            return "noticed"
    if listed == rows and again == loaded:
        return "same"
    return "noticed" if caught else "SILENT"


def _flips(root, files, budget: int, seed: int):
    rng = random.Random(seed)
    sizes = {f: (root / f).stat().st_size for f in files}
    for n in range(budget):
        name = files[n % len(files)]  # every file gets its share
        bit = rng.randrange(sizes[name] * 8)
        yield name, bit


def _soak(saved, tmp_path, budget: int, seed: int) -> dict[str, int]:
    root, files, rows, loaded, ids = saved
    counts = {"same": 0, "noticed": 0, "SILENT": 0}
    silent = []
    for i, (name, bit) in enumerate(_flips(root, files, budget, seed)):
        work = tmp_path / f"s{i}"
        shutil.copytree(root, work)
        path = work / name
        data = bytearray(path.read_bytes())
        data[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(data))
        outcome = _outcome(work, rows, loaded, ids)
        counts[outcome] += 1
        if outcome == "SILENT":
            silent.append((str(name), bit))
        shutil.rmtree(work)
    assert silent == [], f"silently wrong after flipping: {silent[:10]}"
    return counts


def test_a_flipped_summary_is_rebuilt_from_the_report_with_a_warning(saved, tmp_path):
    root, files, rows, loaded, ids = saved
    work = tmp_path / "store"
    shutil.copytree(root, work)
    (summary,) = [f for f in files if f.name == "summary.json"]
    text = (work / summary).read_text()
    year = rows[0]["finished_at"][:4]
    assert year in text
    (work / summary).write_text(text.replace(year, str(int(year) + 800), 1))  # 2026 -> 2826
    with pytest.warns(Warning, match="checksum does not match.*listed from the report"):
        assert _rows(ReportStore(work)) == rows


def test_a_summary_written_before_sums_is_listed_from_the_report(saved, tmp_path):
    root, files, rows, loaded, ids = saved
    work = tmp_path / "store"
    shutil.copytree(root, work)
    (summary,) = [f for f in files if f.name == "summary.json"]
    row = json.loads((work / summary).read_text())
    row.pop("_sha256")
    row["finished_at"] = "2826-01-01T00:00:00+00:00"  # a wrong old row: the report wins
    (work / summary).write_text(json.dumps(row))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _rows(ReportStore(work)) == rows


def test_flipped_bits_in_every_stored_file_are_never_silently_wrong(saved, tmp_path):
    counts = _soak(saved, tmp_path, FLIPS, seed=40)
    assert counts["noticed"] > 0


@pytest.mark.soak
def test_a_thousand_flips_are_never_silently_wrong(saved, tmp_path):
    counts = _soak(saved, tmp_path, 1000, seed=4040)
    print(f"\nsoak: {counts} over files {[str(f) for f in saved[1]]}")

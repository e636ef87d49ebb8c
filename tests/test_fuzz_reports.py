"""A saved columnar report never returns different data: each table file's sha256 is in the
committed header (itself digested), and every Parquet page carries a CRC checked on read. A
flipped bit anywhere is a ``CorruptReportError`` naming the file and what differs
(issue 27, part 2a).

Budget: a seeded sample of flips per file per run (``FLIPS``); ``-m soak`` flips every bit.
"""

from __future__ import annotations

import random
import shutil

import pyarrow.parquet as pq
import pytest

from heta_notebook.reports._columns import ReportColumns
from heta_notebook.reports._folder import open_report, write_report
from heta_notebook.reports._stored import read_header
from heta_notebook.reports._tables import HEADER, OPTIONAL_TABLES, TABLES, CorruptReportError
from tests._report_helpers import table_paths
from tests.test_store_columnar import synthetic_report

FLIPS = 250  # seeded bit flips per file per run of the default suite


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report") / "r"
    report = synthetic_report(24, 3)
    write_report(folder, report, cases_per_group=8)
    return folder, list(report.case_results), report


def _read_everything(folder):
    """Open the report and read every table (records need all four; the explorer reads
    the saved miss rows)."""
    report = open_report(folder)
    records = list(report.case_results)
    report.frames().columns.saved_misses()  # None for a save that kept none
    return report, records


def _bits(size: int, budget: int | None, seed: int) -> list[int]:
    every = range(size * 8)
    return (
        list(every) if budget is None else random.Random(seed).sample(every, min(budget, size * 8))
    )


@pytest.mark.parametrize("budget", [FLIPS, pytest.param(None, marks=pytest.mark.soak)])
@pytest.mark.parametrize("table", [*TABLES, *OPTIONAL_TABLES, "header"])
def test_every_flipped_bit_is_refused_naming_the_file(saved, tmp_path, table, budget):
    folder, records, report = saved
    work = tmp_path / "r"
    shutil.copytree(folder, work)
    path = work / HEADER if table == "header" else table_paths(work)[table]
    original = path.read_bytes()
    for bit in _bits(len(original), budget, seed=hash(table) % 1000):
        data = bytearray(original)
        data[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(data))
        try:
            loaded, back = _read_everything(work)
        except CorruptReportError as exc:
            assert path.name in str(exc)
            continue
        except ValueError as exc:  # a flipped header: JSON, version or schema errors
            assert table == "header" and HEADER in str(exc), exc
            continue
        # loaded: only when the flip changed no value (e.g. the 17th digit of a float, or a
        # \u00e9 escape's hex case): then the report must be exactly the original
        assert table == "header", f"bit {bit} of {path.name} loaded without an error"
        assert read_header(work) == read_header(folder) and back == records, bit
        assert loaded.model_dump(exclude={"case_results"}) == report.model_dump(
            exclude={"case_results"}
        ), bit
    path.write_bytes(original)
    assert _read_everything(work)[1] == records


def test_a_mismatch_says_what_differs(saved, tmp_path):
    work = tmp_path / "r"
    shutil.copytree(saved[0], work)
    path = table_paths(work)["results"]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptReportError, match=rf"{path.name}: sha256 \w+… differs from"):
        _read_everything(work)
    path.write_bytes(bytes(data[:-10]))
    with pytest.raises(CorruptReportError, match=rf"{path.name}: has \d+ bytes, header.json says"):
        _read_everything(work)


def test_page_checksums_are_written_and_checked_on_every_read(saved, tmp_path, monkeypatch):
    """Without the file digest (e.g. a file changed after it was opened), the page CRCs
    still refuse a flipped data page."""
    work = tmp_path / "r"
    shutil.copytree(saved[0], work)
    path = table_paths(work)["texts"]
    meta = pq.ParquetFile(path).metadata
    column = meta.row_group(0).column(0)
    start = column.dictionary_page_offset if column.has_dictionary_page else None
    end = (start or column.data_page_offset) + column.total_compressed_size
    data = bytearray(path.read_bytes())
    data[end - 3] ^= 0x01  # inside the last data page of the column chunk
    path.write_bytes(bytes(data))
    monkeypatch.setattr(ReportColumns, "verify", lambda self, table: None)
    with pytest.raises(CorruptReportError, match=rf"{path.name}: cannot read") as caught:
        ReportColumns(work).column("texts", "text")
    assert "CRC" in str(caught.value) or "checksum" in str(caught.value).lower()


def test_folders_of_format_version_1_still_load(saved, tmp_path):
    """Reports saved before snapshots (fixed table names, no digests) open as before."""
    import json

    work = tmp_path / "old"
    shutil.copytree(saved[0], work)
    header = json.loads((work / HEADER).read_text())
    for table, path in table_paths(work).items():
        path.rename(work / f"{table}.parquet")
    for key in ("files", "header_sha256"):
        header.pop(key)
    (work / HEADER).write_text(json.dumps({**header, "format_version": 1}))
    assert _read_everything(work)[1] == saved[1]

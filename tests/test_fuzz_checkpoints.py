"""A run's checkpoint never crashes the process and never returns different data: every
message of ``cases.arrows`` is checked against its sha256 in ``cases.arrows.sums`` and every
batch validated in full before use; a bad batch is cut like a torn tail, with a warning naming
the file and the case results dropped (issue 27, part 2b).

The bit-flip loops run in this process on purpose: a SIGSEGV in pyarrow fails the suite.
Budget: a seeded sample of flips per run (``FLIPS``); ``-m soak`` flips every bit.
"""

from __future__ import annotations

import random
import warnings

import pyarrow as pa
import pytest

from heta_notebook import ReportStore
from heta_notebook.reports._checkpoint import (
    CHECKPOINT_SUMS,
    CheckpointWarning,
    records_of,
    scan_checkpoint,
)
from tests.test_store_columnar import synthetic_report

FLIPS = 2000  # seeded bit flips per file and per run of the default suite
NAME = "cases.arrows"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A real run checkpoint of 3 appends (7 case results with texts, scores, errors)."""
    store = ReportStore(tmp_path_factory.mktemp("store"))
    records = list(synthetic_report(7, 3).case_results)
    with store.run("kb", "r", fingerprint="fp") as run:
        for part in (records[:2], records[2:5], records[5:]):
            run.append(part)
        stream, sums = run.stream_path, run.sums_path
    data, digest_lines = stream.read_bytes(), sums.read_bytes()
    clean = scan_checkpoint(data, NAME, digest_lines)
    assert len(clean.tables["cases"]) == 7 and len(clean.ends) == 4
    assert records_of(clean.tables, clean.texts) == records
    return data, digest_lines, clean


def _flip(data: bytes, bit: int) -> bytes:
    out = bytearray(data)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def _rows(tables: dict[str, pa.Table]) -> int:
    return len(tables["cases"])


def _is_prefix(scan, clean) -> bool:
    """The kept rows are exactly the first rows of the clean checkpoint (never altered)."""
    n = _rows(scan.tables)
    if n > _rows(clean.tables) or scan.texts != clean.texts[: len(scan.texts)]:
        return False
    kept = {name: clean.tables[name] for name in clean.tables}
    if not scan.tables["cases"].equals(kept["cases"].slice(0, n)):
        return False
    for name in ("results", "scores"):
        table = scan.tables[name]
        if not table.equals(kept[name].slice(0, len(table))):
            return False
    return True


def _check_flip(data: bytes, sums: bytes | None, clean) -> str:
    """One corrupted checkpoint: same data or less (with the file named), or a named error."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            scan = scan_checkpoint(data, NAME, sums)
        except ValueError as exc:
            assert NAME in str(exc), exc
            return "refused"
    for warning in caught:
        assert issubclass(warning.category, CheckpointWarning) and NAME in str(warning.message)
    assert _is_prefix(scan, clean), "a flipped bit changed the data silently"
    if _rows(scan.tables) == _rows(clean.tables) and scan.texts == clean.texts:
        return "same"
    return "cut (warned)" if caught else "cut"


def _bits(size: int, budget: int | None, seed: int) -> list[int]:
    every = range(size * 8)
    return (
        list(every) if budget is None else random.Random(seed).sample(every, min(budget, size * 8))
    )


@pytest.mark.parametrize("budget", [FLIPS, pytest.param(None, marks=pytest.mark.soak)])
def test_a_flipped_bit_in_the_stream_is_cut_never_read(checkpoint, budget):
    data, sums, clean = checkpoint
    outcomes: dict[str, int] = {}
    for bit in _bits(len(data), budget, seed=27):
        outcome = _check_flip(_flip(data, bit), sums, clean)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert "same" not in outcomes, outcomes  # every flip of the stream is noticed
    assert outcomes.get("cut (warned)", 0) > 0


@pytest.mark.parametrize("budget", [FLIPS, pytest.param(None, marks=pytest.mark.soak)])
def test_a_flipped_bit_in_the_sums_never_changes_data(checkpoint, budget):
    data, sums, clean = checkpoint
    for bit in _bits(len(sums), budget, seed=28):
        _check_flip(data, _flip(sums, bit), clean)


@pytest.mark.parametrize("budget", [FLIPS, pytest.param(None, marks=pytest.mark.soak)])
def test_a_stream_without_sums_never_crashes(checkpoint, budget):
    """Checkpoints of earlier versions have no sums: full validation still keeps the
    process alive, and anything refused names the file."""
    data, _, clean = checkpoint
    for bit in _bits(len(data), budget, seed=29):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                scan = scan_checkpoint(_flip(data, bit), NAME, None)
            except ValueError as exc:
                assert NAME in str(exc)
                continue
        assert all(NAME in str(w.message) for w in caught)
        assert _rows(scan.tables) <= _rows(clean.tables)


def test_garbage_inside_a_batch_is_cut_with_a_warning_on_resume(tmp_path):
    """64 bytes of 0xff in the second batch: resume warns (file, cases dropped), keeps the
    first batch, and appends after it."""
    store = ReportStore(tmp_path)
    records = list(synthetic_report(6, 2).case_results)
    with store.run("kb", "r", fingerprint="fp") as run:
        run.append(records[:2])
        run.append(records[2:4])
        run.append(records[4:])
        stream = run.stream_path
    ends = [
        int(line.split()[0])
        for line in stream.with_name(CHECKPOINT_SUMS).read_text().split("\n")[:-1]
    ]
    data = bytearray(stream.read_bytes())
    data[ends[1] + 200 : ends[1] + 264] = b"\xff" * 64
    stream.write_bytes(bytes(data))
    with pytest.warns(CheckpointWarning) as caught, store.run("kb", "r", fingerprint="fp") as run:
        assert [r.case_id for r in run.read()] == [r.case_id for r in records[:2]]
        run.append(records[2:])
    message = str(caught[0].message)
    assert str(stream) in message and "dropping 4 case result(s)" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the cut and the new appends are clean
        assert store.read_checkpoint("kb", "r") == records


def test_garbage_in_a_stream_without_sums_is_cut_not_a_crash(tmp_path):
    store = ReportStore(tmp_path)
    records = list(synthetic_report(4, 2).case_results)
    with store.run("kb", "r", fingerprint="fp") as run:
        run.append(records[:2])
        run.append(records[2:])
        stream, sums = run.stream_path, run.sums_path
    first_batch_end = int(sums.read_text().split("\n")[1].split()[0])
    sums.unlink()  # as an earlier version wrote it
    data = bytearray(stream.read_bytes())
    data[first_batch_end + 300 : first_batch_end + 364] = b"\xff" * 64
    stream.write_bytes(bytes(data))
    with pytest.warns(CheckpointWarning, match="cases.arrows: corrupt batch"):
        assert store.read_checkpoint("kb", "r") == records[:2]
    with pytest.warns(CheckpointWarning), store.run("kb", "r", fingerprint="fp") as run:
        run.append(records[2:])
    assert sums.exists() and store.read_checkpoint("kb", "r") == records

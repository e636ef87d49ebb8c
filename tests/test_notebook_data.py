"""The notebooks' data folder is a copy of the test fixtures; the two must not drift apart."""

from __future__ import annotations

import filecmp
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_notebook_data_matches_the_heta_fixtures() -> None:
    fixtures, data = ROOT / "tests/fixtures/heta", ROOT / "notebooks/data"
    assert filecmp.cmp(fixtures / "report.json", data / "heta_report.json", shallow=False)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        assert filecmp.cmp(
            fixtures / "cranfield_mini" / name, data / "cranfield_mini" / name, shallow=False
        ), name

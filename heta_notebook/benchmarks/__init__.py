"""Benchmarks: where documents and cases come from (JSONL, BEIR folders, records/DataFrames)."""

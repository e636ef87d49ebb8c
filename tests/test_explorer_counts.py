"""No confident zero: the explorers' "found by B, missed by A" / "found by A, missed by B"
filters count from the report's columns (``found_index``) for every embedded case, whether
its details are embedded or not, and give Python's count (``Comparison.evidence_changes``)."""

from __future__ import annotations

import numpy as np

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

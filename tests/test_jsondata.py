"""JSON-safe copies have one home, ``_util/jsondata.py`` (issue 33: "``json_safe`` ×2"):
``json_safe`` for what users hand us, ``json_copy`` for heta-framework's records (moved from
the heta adapter). Each gives what it gave before on every kind of value."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from heta_notebook._util.jsondata import json_copy, json_safe
from heta_notebook.schema import EvaluationScore

NOTE = "value omitted: not JSON-safe"


class WithToDict:
    def to_dict(self):
        return {"path": Path("a/b"), "pair": (1, 2)}

    def __str__(self) -> str:
        return "WithToDict()"


class Opaque:
    def __str__(self) -> str:
        return "Opaque()"


SCORE = EvaluationScore(name="s", value=0.5)
CASES = [
    # value, json_safe(value), json_copy(value)
    ({"a": (1, 2), 1: "x"}, {"a": (1, 2), 1: "x"}, {"a": [1, 2], "1": "x"}),
    (Path("a/b"), "a/b", "a/b"),
    ({1, 2}, "{1, 2}", [1, 2]),
    (np.array([1, 2]), [1, 2], {"type": "ndarray", "manifest_note": NOTE}),
    (np.float32(1.5), 1.5, {"type": "float32", "manifest_note": NOTE}),
    (np.float64(1.5), 1.5, 1.5),
    (
        SCORE,
        SCORE.model_dump(mode="json"),
        {"name": "s", "value": 0.5, "passed": None, "metadata": {}},
    ),
    (WithToDict(), "WithToDict()", {"path": "a/b", "pair": [1, 2]}),
    (
        [Opaque(), None, True, "t"],
        ["Opaque()", None, True, "t"],
        [
            {"type": "Opaque", "manifest_note": NOTE},
            None,
            True,
            "t",
        ],
    ),
]


@pytest.mark.parametrize(("value", "safe", "copy"), CASES)
def test_both_rules_give_what_they_gave_before(value, safe, copy):
    assert json_safe(value) == safe
    assert json_copy(value) == copy


def test_json_safe_keeps_json_data_itself_and_json_copy_makes_it_finite():
    data = {"a": (1, 2), "nan": math.nan}
    assert json_safe(data) is data  # JSON data kept as it is (tuples and NaN too)
    assert json_copy({"nan": math.nan, "inf": -math.inf}) == {"nan": "nan", "inf": "-inf"}

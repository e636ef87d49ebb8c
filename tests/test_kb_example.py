"""examples/cranfield_quickstart.py keeps working (run with one small recipe to stay fast)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from heta_notebook.kb._recipe import Recipe

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cranfield_quickstart.py"


def test_quickstart_prints_ndcg_per_recipe_and_mode(monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("cranfield_quickstart", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert len(module.RECIPES) == 2 and {len(r.query_modes) for r in module.RECIPES} == {3}
    monkeypatch.setattr(module, "RECIPES", (Recipe(name="bm25 only", dense=None, hybrid=None),))
    module.main()
    out = capsys.readouterr().out
    assert "1400 documents, 225 judged queries" in out
    row = next(line for line in out.splitlines() if line.startswith("bm25 only"))
    assert row.split()[3] == "0.3476" and row.split()[4] == "225"

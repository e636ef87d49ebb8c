"""The command line on real files: ls over a ReportStore, export of reports to HTML."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from heta_notebook.cli import main
from heta_notebook.reports._store import ReportStore
from tests._cli_helpers import XSS, external_script_sources, make_report
from tests._display_helpers import plotly_js_copies


def test_ls_lists_every_saved_report(tmp_path, capsys):
    store = ReportStore(tmp_path)
    store.save(make_report("first", kb="bm25"))
    store.save(make_report("second", kb="dense-kb"))

    assert main(["ls", str(tmp_path)]) == 0

    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert len(lines) == 3  # header + two reports
    assert "report_id" in lines[0]
    assert "first" in out and "second" in out and "dense-kb" in out and "tiny" in out


def test_ls_json_gives_records(tmp_path, capsys):
    ReportStore(tmp_path).save(make_report("only"))

    assert main(["ls", str(tmp_path), "--json"]) == 0

    records = json.loads(capsys.readouterr().out)
    assert [r["report_id"] for r in records] == ["only"]
    assert records[0]["n_cases"] == 6


def test_ls_empty_store_says_so(tmp_path, capsys):
    assert main(["ls", str(tmp_path)]) == 0
    assert "no reports" in capsys.readouterr().out


def test_ls_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="is not a folder"):
        main(["ls", str(tmp_path / "nope")])


def test_export_bad_report_names_the_file(tmp_path):
    bad = tmp_path / "report.json"
    bad.write_text('{"report_id": ""}')
    with pytest.raises(SystemExit, match=re.escape(str(bad))):
        main(["export", str(bad), "-o", str(tmp_path / "x.html")])
    with pytest.raises(SystemExit, match="no report at"):
        main(["export", str(tmp_path / "missing.json"), "-o", str(tmp_path / "x.html")])


def test_export_one_report_writes_offline_html(tmp_path, capsys):
    report_path = make_report("r1").save(tmp_path / "report.json")
    out = tmp_path / "report.html"

    assert main(["export", str(report_path), "-o", str(out)]) == 0

    html = out.read_text(encoding="utf-8")
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # not the 0600 of a temporary file
    assert "wrote" in capsys.readouterr().out
    assert "what is case 1?" in html
    assert XSS not in html  # the query's markup is escaped, not live
    assert external_script_sources(html) == []


def test_export_accepts_a_store_report_folder(tmp_path):
    path = ReportStore(tmp_path / "store").save(make_report("r1"))
    out = tmp_path / "r.html"

    assert main(["export", str(path.parent), "-o", str(out)]) == 0
    assert out.stat().st_size > 1000


def test_export_several_reports_writes_a_comparison(tmp_path):
    a = make_report("a", kb="bm25").save(tmp_path / "a.json")
    b = make_report("b", kb="hybrid", shift=0.2).save(tmp_path / "b.json")
    out = tmp_path / "cmp.html"

    assert main(["export", str(a), str(b), "-o", str(out)]) == 0

    html = out.read_text(encoding="utf-8")
    assert "bm25" in html and "hybrid" in html
    assert "Plotly.newPlot" in html  # charts, drawn by one compressed copy of the cartesian bundle
    assert plotly_js_copies(html) == {"raw": 0, "compressed": 1, "cartesian": 1}
    assert external_script_sources(html) == []


def test_module_entry_point_runs(tmp_path):
    ReportStore(tmp_path).save(make_report("viaexe"))
    done = subprocess.run(
        [sys.executable, "-m", "heta_notebook", "ls", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "viaexe" in done.stdout

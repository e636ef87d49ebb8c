"""The residuals of issue 40, each pinned: stale temp files of killed saves are removed, the
gate refuses absurd resamples and a boolean ``max_drop`` in one line, a damaged
``checkpoint.json`` is never taken for a report-id collision, a bad manifest dict names its
fields, and unusable CLI inputs exit 2."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from heta_notebook import ReportStore
from heta_notebook.benchmarks import JsonlBenchmark
from heta_notebook.cli import main
from heta_notebook.reports import ReportIdCollisionError, UnverifiedCheckpointError
from heta_notebook.testing import assert_no_regression
from heta_notebook.testing._gates import GateInputError
from tests._cli_helpers import make_report

ROOT = Path(__file__).resolve().parents[1]


def test_a_save_removes_the_temp_files_killed_saves_left(tmp_path):
    target = tmp_path / "r" / "report.json"
    make_report().save(target)
    stale = target.with_name(".report.json.k1ll3d.tmp")
    stale.write_text("{half a report")
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))
    live = target.with_name(".report.json.wr1t1ng.tmp")  # another writer, right now
    live.write_text("{")
    make_report().save(target)
    assert not stale.exists() and live.exists()
    assert sorted(p.name for p in target.parent.iterdir()) == sorted(["report.json", live.name])


def test_the_gate_refuses_absurd_resamples_in_one_line():
    old, new = make_report("a"), make_report("b", shift=0.1)
    with pytest.raises(GateInputError, match="n_resamples must be a whole number from 1 to"):
        assert_no_regression(new, old, n_resamples=99999999999999999999)


def test_the_cli_gate_says_it_in_one_line_and_exits_2(tmp_path):
    make_report("a").save(tmp_path / "a.json")
    make_report("b", shift=0.1).save(tmp_path / "b.json")
    done = subprocess.run(
        [sys.executable, "-m", "heta_notebook", "gate", str(tmp_path / "b.json"),
         "--baseline", str(tmp_path / "a.json"), "--score", "ndcg@10",
         "--resamples", "99999999999999999999"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "n_resamples" in done.stderr


@pytest.mark.parametrize("flag", [True, False])
def test_a_boolean_max_drop_is_refused(flag):
    old, new = make_report("a"), make_report("b", shift=0.1)
    with pytest.raises(GateInputError, match="max_drop must be a finite number"):
        assert_no_regression(new, old, max_drop=flag)


def test_a_damaged_checkpoint_json_is_never_a_report_id_collision(tmp_path):
    """Flip bits in the names ``checkpoint.json`` records: never a collision claim; a refusal
    that names the file (or, for a flip outside the names, the run opens as before)."""
    store = ReportStore(tmp_path / "base")
    with store.run("kb", "run", fingerprint="one") as run:
        run.append(make_report().case_results)
    identity = store.report_dir("kb", "run") / "checkpoint.json"
    original = identity.read_bytes()
    rng = random.Random(40)
    for bit in rng.sample(range(len(original) * 8), 50):
        data = bytearray(original)
        data[bit // 8] ^= 1 << (bit % 8)
        identity.write_bytes(bytes(data))
        try:
            with store.run("kb", "run", fingerprint="one"):
                pass
        except ReportIdCollisionError as exc:  # pragma: no cover - the bug
            pytest.fail(f"bit {bit}: a damaged checkpoint.json read as a collision: {exc}")
        except UnverifiedCheckpointError as exc:
            assert "checkpoint.json" in str(exc)
        identity.write_bytes(original)


def test_a_bad_manifest_dict_names_its_fields(tmp_path):
    (tmp_path / "documents.jsonl").write_text('{"document_id": "d1", "text": "x"}\n')
    (tmp_path / "cases.jsonl").write_text('{"case_id": "c1", "query": "q"}\n')
    with pytest.raises(ValueError, match=r"bad benchmark manifest: name: .*\(fields: .*task_type"):
        JsonlBenchmark.from_folder(tmp_path, manifest={"name": 5})
    with pytest.raises(TypeError, match="manifest must be a BenchmarkManifest"):
        JsonlBenchmark.from_folder(tmp_path, manifest=[("name", "x")])


@pytest.mark.parametrize(
    "argv",
    [
        ["export", "{list}", "-o", "{out}"],
        ["export", "{missing}", "-o", "{out}"],
        ["ls", "{list}"],
    ],
)
def test_unusable_cli_inputs_exit_2_with_one_line(tmp_path, capsys, argv):
    (tmp_path / "list.json").write_text("[1, 2]")
    names = {"list": tmp_path / "list.json", "out": tmp_path / "o.html", "missing": tmp_path / "no"}
    with pytest.raises(SystemExit) as stop:
        main([part.format(**names) for part in argv])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1

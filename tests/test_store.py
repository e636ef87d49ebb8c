"""ReportStore keeps reports in heta-framework's key layout, atomically and safely."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from heta_notebook import ReportStore
from heta_notebook._util.paths import UnsafeNameError, safe_join, safe_name
from heta_notebook.reports import CheckpointWarning, OldCheckpointError
from tests._store_kinds import STORE_KINDS, store_of_kind
from tests.test_schema import make_report


@pytest.mark.parametrize(("fmt", "file"), [(None, "header.json"), ("heta", "report.json")])
def test_save_uses_the_heta_key_layout_and_loads_back(tmp_path, fmt, file) -> None:
    store = ReportStore(tmp_path)
    report = make_report()
    path = store.save(report, format=fmt)
    assert path == tmp_path / f"_heta/knowledge_bases/kb/evaluations/r1/{file}"
    loaded = store.load("kb", "r1")
    assert loaded.report_key == "_heta/knowledge_bases/kb/evaluations/r1/report.json"
    assert loaded.model_copy(update={"report_key": None}) == report
    assert store.exists("kb", "r1") and store.report_ids("kb") == ["r1"]


def test_list_has_one_row_per_report_with_headline_scores(tmp_path) -> None:
    store = ReportStore(tmp_path)
    assert store.list().empty
    store.save(make_report())
    store.save(make_report(report_id="r2", knowledge_base_name="Other KB"))
    frame = store.list()
    assert list(frame["report_id"]) == ["r1", "r2"]
    assert set(frame["knowledge_base_name"]) == {"kb", "Other KB"}
    assert frame.loc[0, "full_text_search.ndcg@10"] == 0.5
    assert frame.loc[0, "n_cases"] == 2 and frame.loc[0, "benchmark"] == "cranfield"
    assert len(store.load_all(knowledge_base_name="kb")) == 1


def test_reports_written_by_heta_without_a_summary_are_listed(tmp_path) -> None:
    store = ReportStore(tmp_path)
    store.save(make_report())
    (store.report_dir("kb", "r1") / "summary.json").unlink()
    assert list(store.list()["report_id"]) == ["r1"]


def test_delete_and_missing_reports_give_clear_errors(tmp_path) -> None:
    store = ReportStore(tmp_path)
    store.save(make_report())
    store.delete("kb", "r1")
    assert not store.exists("kb", "r1")
    with pytest.raises(FileNotFoundError, match="no report 'r1'"):
        store.load("kb", "r1")
    with pytest.raises(FileNotFoundError):
        store.delete("kb", "r1")


@pytest.fixture(params=STORE_KINDS)
def kind(request, tmp_path):
    """A store of each kind (local folder, fsspec memory, fsspec over local files) and the
    file system its files are on."""
    with store_of_kind(request.param, tmp_path) as pair:
        yield pair


def _append_runs(store: ReportStore, *parts) -> None:
    for part in parts:
        with store.run("kb", "run", fingerprint="fp") as run:
            run.append(part)


def test_a_checkpoint_cuts_a_torn_last_batch_and_appends_after_it(kind) -> None:
    store, fs = kind
    results = list(make_report().case_results)
    _append_runs(store, results[:1], results[1:])
    path = str(store.checkpoint_path("kb", "run"))
    data = fs.cat_file(path)
    with fs.open(path, "ab") as handle:
        handle.write(data[len(data) // 2 :])  # a crash in the middle of a batch
    assert store.read_checkpoint("kb", "run") == results
    _append_runs(store, results[:1])  # a resumed run cuts the torn bytes, then appends
    assert fs.cat_file(path)[: len(data)] == data
    assert store.read_checkpoint("kb", "run") == results
    assert store.checkpoint_keys("kb", "run") == [(r.case_id, r.query_mode) for r in results] + [
        (results[0].case_id, results[0].query_mode)
    ]


def test_a_corrupt_batch_in_the_middle_is_named_and_cut_never_read(kind) -> None:
    store, fs = kind
    results = list(make_report().case_results)
    _append_runs(store, results[:1], results[1:])
    path = str(store.checkpoint_path("kb", "run"))
    data = bytearray(fs.cat_file(path))
    first = int(fs.cat_file(path + ".sums").split(b"\n")[1].split()[0])  # first batch's end
    data[first + 40] ^= 0x10
    fs.pipe_file(path, bytes(data))
    with pytest.warns(CheckpointWarning, match=r"cases\.arrows: the message at byte .* sha256"):
        assert store.read_checkpoint("kb", "run") == results[:1]
    with pytest.warns(CheckpointWarning), store.run("kb", "run", fingerprint="fp") as run:
        assert run.read() == results[:1]  # the resume keeps what is intact
        run.append(results[1:])
    assert store.read_checkpoint("kb", "run") == results


def test_an_old_cases_jsonl_checkpoint_is_refused_naming_the_file(kind) -> None:
    """A checkpoint an earlier version wrote (one JSON line per case) cannot be resumed: the
    run and the checkpoint readers say which file and what to do, and nothing is written."""
    store, fs = kind
    results = list(make_report().case_results)
    old = store.report_dir("kb", "run") / "cases.jsonl"
    fs.makedirs(str(old.parent), exist_ok=True)
    fs.pipe_file(str(old), "".join(r.model_dump_json() + "\n" for r in results).encode())
    message = rf"{old}: a checkpoint written by an earlier heta-notebook version.*Delete that file"
    for attempt in (
        lambda: store.run("kb", "run", fingerprint="fp").__enter__(),
        lambda: store.read_checkpoint("kb", "run"),
        lambda: store.checkpoint_keys("kb", "run"),
    ):
        with pytest.raises(OldCheckpointError, match=message):
            attempt()
    assert not fs.exists(str(store.checkpoint_path("kb", "run")))
    fs.rm(str(old))  # as the message says: its cases run again
    _append_runs(store, results)
    assert store.read_checkpoint("kb", "run") == results


def test_two_processes_saving_at_once_lose_nothing(tmp_path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {os.getcwd()!r})
        from heta_notebook import ReportStore
        from tests.test_schema import make_report
        store = ReportStore({str(tmp_path)!r})
        worker = sys.argv[1]
        for i in range(30):
            store.save(make_report(report_id=f"{{worker}}-{{i}}"))
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, w]) for w in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    store = ReportStore(tmp_path)
    assert len(store.list()) == 60
    for rid in store.report_ids("kb"):
        assert len(store.load("kb", rid).case_results) == 2
    leftovers = list(tmp_path.rglob("*.tmp"))
    assert leftovers == []


@pytest.mark.parametrize(
    "name",
    ["../x", "..", ".", "a/b", "a\\b", "/etc/passwd", "x\x00y", "", "   ", "C:evil", "line\nbreak"],
)
def test_unsafe_names_are_rejected(tmp_path, name) -> None:
    with pytest.raises(UnsafeNameError):
        safe_name(name)
    store = ReportStore(tmp_path)
    with pytest.raises(UnsafeNameError):
        store.save(
            make_report(knowledge_base_name=name) if name.strip() else make_report(report_id="../x")
        )


def test_names_are_slugged_like_heta_framework() -> None:
    assert safe_name("My KB  v2") == "my_kb_v2"


def test_symlinks_leading_out_of_the_root_are_refused(tmp_path) -> None:
    root, outside = tmp_path / "store", tmp_path / "outside"
    outside.mkdir()
    (root / "_heta" / "knowledge_bases").mkdir(parents=True)
    os.symlink(outside, root / "_heta" / "knowledge_bases" / "kb")
    with pytest.raises(UnsafeNameError, match="outside the store root"):
        ReportStore(root).save(make_report())
    assert list(outside.iterdir()) == []
    with pytest.raises(UnsafeNameError):
        safe_join(root, "..", "outside")


def test_fsspec_memory_store_round_trips() -> None:
    pytest.importorskip("fsspec")
    store = ReportStore("memory://heta-store-test")
    store.save(make_report())
    assert store.load("kb", "r1").report_id == "r1"
    assert list(store.list()["report_id"]) == ["r1"]
    store.delete("kb", "r1")
    assert store.list().empty


def test_relative_roots_and_shared_file_modes(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    old = os.umask(0o022)
    try:
        path = ReportStore("reports").save(make_report())
    finally:
        os.umask(old)
    assert path == tmp_path / "reports/_heta/knowledge_bases/kb/evaluations/r1/header.json"
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_store_named_heta_is_the_layouts_own_folder_not_a_parent_of_another(tmp_path) -> None:
    path = ReportStore(tmp_path / "_heta").save(make_report(report_id="r1"))
    assert path.relative_to(tmp_path).parts[:2] == ("_heta", "knowledge_bases")
    assert not (tmp_path / "_heta" / "_heta").exists()
    assert list(ReportStore(tmp_path).list()["report_id"]) == ["r1"]  # one store, two spellings


def test_a_store_made_by_an_older_version_inside_heta_heta_is_still_read(tmp_path) -> None:
    legacy = tmp_path / "_heta"
    (legacy / "_heta").mkdir(parents=True)
    ReportStore(legacy).save(make_report(report_id="old"))
    assert (legacy / "_heta" / "knowledge_bases").is_dir()
    assert list(ReportStore(legacy).list()["report_id"]) == ["old"]


def test_a_remote_store_named_heta_uses_the_same_layout() -> None:
    fsspec = pytest.importorskip("fsspec")
    ReportStore("memory://bucket-25/_heta").save(make_report(report_id="r1"), format="heta")
    assert fsspec.filesystem("memory").isdir("/bucket-25/_heta/knowledge_bases")
    assert not fsspec.filesystem("memory").exists("/bucket-25/_heta/_heta")

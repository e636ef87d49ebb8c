"""ReportStore: reports, run checkpoints and caches in a folder (or an fsspec URL).

Layout (heta-framework's keys, so either library finds the other's reports)::

    {root}/_heta/knowledge_bases/{kb}/evaluations/{report_id}/
        header.json, {cases,results,texts,scores}.{generation}.parquet
                           # columnar report (the default, see heta_notebook.reports._folder):
                           # each save writes new files and commits by renaming the header
        report.json        # heta-framework's layout (save(..., format="heta"), or theirs)
        summary.json       # listing row, for list()
        cases.arrows       # the one checkpoint format, of every store: an Arrow IPC
                           # stream, one batch of report-table rows per append
                           # (checkpoints.CaseBatches)
        cases.arrows.sums  # one line per message of that stream: end offset, sha256
                           # (checked before a batch is used; a bad one is cut)
                           # (a run deletes its checkpoint once its complete report
                           # is saved: the report holds every row of it; a cases.jsonl
                           # of earlier versions is refused: OldCheckpointError)
        checkpoint.json    # who the checkpoint belongs to: names + run fingerprint
        .lock              # held (flock) by the process writing this report
    {root}/_heta/cache/{namespace}/...                    # KB builds, judges

Local writes are atomic (temporary file + rename), so a reader never sees half a report
and two processes saving different reports lose nothing. One process at a time writes a
report id (``lock``/``checkpoint`` raise :class:`ReportLockedError` otherwise); files in
a report folder that are symlinks are refused on read and write; two names whose folder
slugs collide ("Baseline Run", "baseline_run") are refused instead of overwriting each
other. Appending to a checkpoint costs the same at case 20,000 as at case 1; a torn last
batch (a killed process) is cut once when it is reopened. A run's save reuses the columns its checkpoint built (each case is turned into
columns once).
Remote (fsspec) stores keep heta's ``report.json`` and have no lock.
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import json
import os
import shutil
import threading
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from heta_notebook._util.paths import atomic_write_text, safe_join, safe_name
from heta_notebook._util.redaction import redact_strings
from heta_notebook._util.sums import seal, unseal
from heta_notebook._util.warn import user_stacklevel
from heta_notebook.reports import _checkpoint as checkpoints
from heta_notebook.reports import _folder as folders
from heta_notebook.reports._run import (
    ReportIdCollisionError,
    ReportLockedError,
    ReportWarning,
    RunHandle,
    _refuse_symlink,
    refuse_old_checkpoint,
)
from heta_notebook.schema._records import (
    KNOWLEDGE_BASES,
    EvaluationCaseResult,
    EvaluationReport,
    ReportFormatError,
    report_folder,
    report_key,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def _outside_heta(root: Path, is_dir: Any) -> Path:
    """The store root for a folder given by the user: ``ReportStore("_heta")`` names the
    ``_heta`` folder of the layout itself, so its parent is the root (never ``_heta/_heta``);
    a ``_heta`` folder that already holds a nested ``_heta`` (older versions) stays the root."""
    if root.name != KNOWLEDGE_BASES[0] or is_dir(root / KNOWLEDGE_BASES[0]):
        return root
    return root.parent


class ReportStore:
    """Save, load, list and delete evaluation reports under one root folder or URL."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        root_text = os.fspath(root)
        self._fs = None
        if "://" in root_text and not root_text.startswith("file://"):
            try:
                import fsspec
            except ImportError as exc:  # pragma: no cover - depends on environment
                raise ImportError(
                    f"ReportStore({root_text!r}) needs fsspec: pip install 'heta-notebook[fsspec]'"
                ) from exc
            self._fs, url_root = fsspec.core.url_to_fs(root_text)
            fs = self._fs
            self._url_root = str(_outside_heta(Path(url_root), lambda p: fs.isdir(str(p))))
            self.root = Path(self._url_root)
        else:
            given = Path(root_text.removeprefix("file://")).expanduser().resolve()
            self.root = _outside_heta(given, Path.is_dir)
            self.root.mkdir(parents=True, exist_ok=True)
        self._checkpoints: dict[Path, RunHandle] = {}  # open in this process, by folder

    def __repr__(self) -> str:
        return f"ReportStore({str(self.root)!r})"

    # -- paths ----------------------------------------------------------------------------

    def report_dir(self, knowledge_base_name: str, report_id: str) -> Path:
        """The folder of one report (not created)."""
        return self._join(*report_folder(knowledge_base_name, report_id))

    def cache_dir(self, namespace: str, *parts: str) -> Path:
        """A cache folder under the store (created), e.g. ``cache_dir("kb", recipe_hash)``."""
        names = [safe_name(p, what="cache key") for p in (namespace, *parts)]
        path = self._join("_heta", "cache", *names)
        if self._fs is None:
            path.mkdir(parents=True, exist_ok=True)
        return path

    def _join(self, *parts: str) -> Path:
        if self._fs is not None:
            return Path(self._url_root).joinpath(*parts)
        return safe_join(self.root, *parts)

    # -- reports --------------------------------------------------------------------------

    def save(
        self,
        report: EvaluationReport,
        *,
        format: Literal["columnar", "heta"] | None = None,  # noqa: A002
    ) -> Path:
        """Write a report (columnar by default; ``format="heta"``: heta's ``report.json``)
        and its ``summary.json`` listing row; return the header or report.json path."""
        kb, rid = report.knowledge_base_name, report.report_id
        folder = self.report_dir(kb, rid)
        fmt = format or ("heta" if self._fs is not None else "columnar")
        if fmt not in {"columnar", "heta"}:
            raise ValueError(f"format must be 'columnar' or 'heta', got {format!r}")
        key = report_key(kb, rid)
        if report.report_key != key:
            report = report.model_copy(update={"report_key": key})
        with self.lock(kb, rid):
            self._check_owner(folder, kb, rid)
            open_checkpoint = self._checkpoints.get(folder)  # its run's, if one is open
            if fmt == "heta":
                self._write(folder / "report.json", report.stored_json())
                stale: tuple[str, ...] = (folders.HEADER,)
                if self._fs is None:
                    stale += tuple(folders.committed_files(folder))
            else:
                self._refuse_links(folder, (folders.HEADER, *folders.committed_files(folder)))
                batches = open_checkpoint.batches if open_checkpoint is not None else None
                folders.write_report(folder, report, batches=batches, exclusive=True)
                stale = ("report.json",)
            if open_checkpoint is not None:
                open_checkpoint.saved = True  # the report holds (and fsynced) every row
            summary = seal(redact_strings(_header(report)))  # sums: a flip is caught on read
            self._write(folder / "summary.json", json.dumps(summary, indent=2))
            for name in stale:  # one format per folder: drop the other one's files
                if self._fs is None:
                    with contextlib.suppress(FileNotFoundError):
                        (folder / name).unlink()
        return folder / ("report.json" if fmt == "heta" else folders.HEADER)

    def load(self, knowledge_base_name: str, report_id: str) -> EvaluationReport:
        """Load one report by knowledge base name and report id (columnar ones lazily)."""
        folder = self.report_dir(knowledge_base_name, report_id)
        if self._fs is None and folders.is_columnar(folder):
            self._refuse_links(folder, (folders.HEADER,))  # and each table as it opens
            report = folders.open_report(folder)
        elif self._exists(folder / "report.json"):
            report = self._load_report(folder / "report.json")
        else:
            known = ", ".join(self.report_ids(knowledge_base_name)) or "none"
            raise FileNotFoundError(
                f"no report {report_id!r} for knowledge base {knowledge_base_name!r} in {self.root} "
                f"(reports there: {known})"
            )
        if report.report_id != report_id and safe_name(report.report_id) == safe_name(report_id):
            raise ReportIdCollisionError(
                f"{folder} holds report {report.report_id!r}, not {report_id!r} (their folder "
                "names collide)"
            )
        return report

    def _load_report(self, path: Path) -> EvaluationReport:
        """``EvaluationReport.load`` with the file named in any error (also for fsspec stores)."""
        try:
            return EvaluationReport.load(self._read(path))
        except ValueError as exc:
            raise ReportFormatError(path, exc) from exc

    def load_all(self, **filters: Any) -> list[EvaluationReport]:
        """Load every report whose listing row matches ``filters`` (e.g. ``benchmark="cranfield"``)."""
        frame = self.list()
        for column, value in filters.items():
            frame = frame[frame[column] == value]
        return [
            self.load(kb, rid)
            for kb, rid in zip(frame["knowledge_base_name"], frame["report_id"], strict=True)
        ]

    def report_path(self, knowledge_base_name: str, report_id: str) -> Path:
        """The main file of a saved report: ``header.json`` (columnar) or ``report.json``."""
        folder = self.report_dir(knowledge_base_name, report_id)
        header = folder / folders.HEADER
        return header if self._exists(header) else folder / "report.json"

    def exists(self, knowledge_base_name: str, report_id: str) -> bool:
        """Whether a saved report (columnar or ``report.json``) exists for this id."""
        folder = self.report_dir(knowledge_base_name, report_id)
        return self._exists(folder / folders.HEADER) or self._exists(folder / "report.json")

    def delete(self, knowledge_base_name: str, report_id: str) -> None:
        """Remove a report with its checkpoint; raises if there is none."""
        folder = self.report_dir(knowledge_base_name, report_id)
        if not self._exists(folder):
            raise FileNotFoundError(
                f"no report {report_id!r} for {knowledge_base_name!r} in {self.root}"
            )
        if self._fs is not None:
            self._fs.rm(str(folder), recursive=True)
        else:
            shutil.rmtree(folder)

    def report_ids(self, knowledge_base_name: str) -> list[str]:
        """Report ids saved for one knowledge base, sorted."""
        folder = self._join(*report_folder(knowledge_base_name))
        return sorted(p.name for p in self._listdir(folder))

    def list(self) -> pd.DataFrame:
        """One row per saved report: ids, benchmark, KB, modes, times, case count, headline scores."""
        import pandas as pd

        rows = []
        for kb_dir in self._listdir(self._join(*KNOWLEDGE_BASES)):
            for report_dir in self._listdir(self._join(*report_folder(kb_dir.name))):
                row = self._header_of(report_dir)
                if row is not None:
                    rows.append(row)
        columns = [
            "knowledge_base_name",
            "report_id",
            "label",
            "benchmark",
            "benchmark_version",
            "split",
            "query_modes",
            "n_cases",
            "started_at",
            "finished_at",
            "partial",
        ]
        frame = pd.DataFrame(rows)
        if frame.empty:
            return pd.DataFrame(columns=columns)
        front = [c for c in columns if c in frame.columns]
        rest = [c for c in frame.columns if c not in front]
        frame = frame[front + rest]
        if "started_at" not in frame:  # only foreign or hand-made summaries: keep folder order
            return frame
        return frame.sort_values("started_at", ignore_index=True, key=lambda c: c.astype(str))

    # -- locks and checkpoints -------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, knowledge_base_name: str, report_id: str) -> Iterator[None]:
        """Hold this report id's lock: another process gets :class:`ReportLockedError`.

        Re-entrant within one process (a run holds it and saves under it). Local stores only.
        """
        if self._fs is not None:
            yield
            return
        folder = self.report_dir(knowledge_base_name, report_id)
        with _LOCKS.hold(folder, f"report {report_id!r} of knowledge base {knowledge_base_name!r}"):
            yield

    def run(
        self,
        knowledge_base_name: str,
        report_id: str,
        *,
        fingerprint: str | None = None,
        force: bool = False,
    ) -> RunHandle:
        """Open this report id for a run (use as a context manager): the one handle a run
        carries for its folder, lock, fingerprint, checkpoint and Ray shard checkpoints.

        Takes the lock, refuses a folder of another name with the same slug or a run with
        another ``fingerprint``, cuts a torn last batch once; then ``append`` costs the same
        at every case. A checkpoint without a readable fingerprint (``checkpoint.json``
        missing, empty or corrupt) is refused with :class:`UnverifiedCheckpointError` unless
        ``force=True`` (which then records this run's fingerprint).
        """
        return RunHandle(self, knowledge_base_name, report_id, fingerprint, force=force)

    def checkpoint_path(self, knowledge_base_name: str, report_id: str) -> Path:
        """Where a run appends its finished case results (``cases.arrows``, with its sums)."""
        return self.report_dir(knowledge_base_name, report_id) / checkpoints.CHECKPOINT

    def read_checkpoint(
        self, knowledge_base_name: str, report_id: str
    ) -> builtins.list[EvaluationCaseResult]:
        """Case results a run checkpointed so far; a torn or corrupt last batch (a killed
        process) is left out. A later record for the same (case_id, query_mode) replaces
        an earlier one."""
        latest: dict[tuple[str, str], EvaluationCaseResult] = {}
        stream = self._checkpoint_stream(knowledge_base_name, report_id)
        if stream is not None:
            tables, texts = self._scan_stream(stream)[:2]
            for result in checkpoints.records_of(tables, texts):
                latest[(result.case_id, result.query_mode)] = result
        return list(latest.values())

    def checkpoint_keys(
        self, knowledge_base_name: str, report_id: str
    ) -> builtins.list[tuple[str, str]]:
        """(case_id, query_mode) of every checkpointed record in the order written (replaced
        ones too, a torn tail left out): how far a run has got."""
        stream = self._checkpoint_stream(knowledge_base_name, report_id)
        if stream is None:
            return []
        cases = self._scan_stream(stream).tables["cases"]
        ids, modes = cases.column("case_id").to_pylist(), cases.column("query_mode").to_pylist()
        return list(zip(ids, modes, strict=True))

    def _checkpoint_stream(self, knowledge_base_name: str, report_id: str) -> Path | None:
        """The checkpoint stream of this report id, None if there is none (an earlier
        version's ``cases.jsonl``: :class:`OldCheckpointError`)."""
        stream = self.checkpoint_path(knowledge_base_name, report_id)
        refuse_old_checkpoint(self, stream.parent, report_id)
        linked = self._fs is None and stream.is_symlink()  # refused by the read
        return stream if linked or self._exists(stream) else None

    def _scan_stream(self, stream: Path) -> checkpoints.CheckpointScan:
        """A checkpoint stream read and checked against its sums (when it has them)."""
        sums_path = stream.with_name(checkpoints.CHECKPOINT_SUMS)
        sums = self._read(sums_path) if self._exists(sums_path) else None
        return checkpoints.scan_checkpoint(self._read(stream), stream, sums)

    def _lives_in(self, names: tuple[Any, Any], folder: Path) -> bool:
        """Whether a report of these names would live in ``folder`` (a damaged name would not)."""
        try:
            return self.report_dir(str(names[0]), str(names[1])) == folder
        except (TypeError, ValueError):
            return False

    def _check_owner(self, folder: Path, kb: str, rid: str) -> None:
        """Refuse to write into a folder that belongs to another name with the same slug."""
        for name in ("summary.json", "checkpoint.json", folders.HEADER):
            path = folder / name
            if not self._exists(path):
                continue
            owner, _ = unseal(self._read(path))
            if owner is None:  # damaged (its own reader says so): no claim on the folder
                continue
            theirs = (owner.get("knowledge_base_name"), owner.get("report_id"))
            if None not in theirs and theirs != (kb, rid) and self._lives_in(theirs, folder):
                raise ReportIdCollisionError(
                    f"{folder} already holds report {theirs[1]!r} of knowledge base "
                    f"{theirs[0]!r}; {rid!r} of {kb!r} maps to the same folder. Use a report id "
                    "(and knowledge base name) whose slug differs"
                )
            return

    def _refuse_links(self, folder: Path, names: Iterable[str]) -> None:
        if self._fs is None:
            for name in names:
                _refuse_symlink(folder / name)

    # -- file system access ---------------------------------------------------------------

    def _write(self, path: Path, text: str) -> None:
        if self._fs is None:
            _refuse_symlink(path)
            atomic_write_text(path, text)
            return
        self._fs.makedirs(str(path.parent), exist_ok=True)  # a local fsspec folder needs it
        tmp = f"{path}.tmp"
        self._fs.pipe(tmp, text.encode("utf-8"))
        self._fs.mv(tmp, str(path))

    def _read(self, path: Path) -> bytes:
        if self._fs is not None:
            return self._fs.cat_file(str(path))
        _refuse_symlink(path)
        return path.read_bytes()

    def _exists(self, path: Path) -> bool:
        return self._fs.exists(str(path)) if self._fs is not None else path.exists()

    def _listdir(self, folder: Path) -> Iterator[Path]:
        if self._fs is not None:
            if self._fs.isdir(str(folder)):
                for entry in sorted(self._fs.ls(str(folder), detail=False)):
                    if self._fs.isdir(entry):
                        yield Path(entry)
            return
        if folder.is_dir():
            yield from sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())

    def _header_of(self, report_dir: Path) -> dict[str, Any] | None:
        """The listing row of one report; a corrupt file is skipped with a warning naming it."""
        summary, report = report_dir / "summary.json", report_dir / "report.json"
        try:
            if self._exists(summary):  # checked against its sums; else listed from the report
                row, problem = unseal(self._read(summary))
                if row is None:  # (a row written before sums is listed from the report)
                    warnings.warn(
                        f"{summary}: {problem}; listed from the report itself",
                        ReportWarning,
                        stacklevel=user_stacklevel(),
                    )
                if problem is None:
                    return row
            if self._exists(report):  # written by heta-framework: no summary sidecar
                return _header(self._load_report(report))
            if self._fs is None and folders.is_columnar(report_dir):
                return _header(folders.open_report(report_dir))
        except ReportFormatError as exc:
            warnings.warn(f"skipped a report: {exc}", ReportWarning, stacklevel=user_stacklevel())
        return None


class _LockTable:
    """Per-process table of held report locks (``flock`` on ``.lock``), re-entrant."""

    def __init__(self) -> None:
        self._held: dict[Path, list[int]] = {}  # folder -> [fd, depth]
        self._mutex = threading.Lock()

    @contextlib.contextmanager
    def hold(self, folder: Path, what: str) -> Iterator[None]:
        self.acquire(folder, what)
        try:
            yield
        finally:
            self.release(folder)

    def acquire(self, folder: Path, what: str) -> None:
        with self._mutex:
            if folder in self._held:
                self._held[folder][1] += 1
                return
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / ".lock"
            _refuse_symlink(path)
            while True:  # a holder unlinks .lock as it lets go: lock the file that is there now
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
                    os.close(fd)
                    raise ReportLockedError(
                        f"{what} is being written by another process (pid {holder}, lock "
                        f"{path}); wait for it to finish or use another report_id"
                    ) from None
                if _same_file(fd, path):
                    break
                os.close(fd)
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            self._held[folder] = [fd, 1]

    def release(self, folder: Path) -> None:
        with self._mutex:
            entry = self._held.get(folder)
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] == 0:
                del self._held[folder]
                with contextlib.suppress(OSError):  # a finished run leaves no .lock behind
                    (folder / ".lock").unlink()
                fcntl.flock(entry[0], fcntl.LOCK_UN)
                os.close(entry[0])


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open at ``fd`` (not unlinked by its last holder)."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
    except OSError:
        return False


_LOCKS = _LockTable()


def _header(report: EvaluationReport) -> dict[str, Any]:
    """The listing row of a report: identity, size, times and its score summary."""
    return {
        "knowledge_base_name": report.knowledge_base_name,
        "report_id": report.report_id,
        "label": report.label,
        "benchmark": report.benchmark.name,
        "benchmark_version": report.benchmark.version,
        "split": report.benchmark.split,
        "query_modes": list(report.query_modes),
        "n_cases": len(report.case_results),
        "started_at": report.started_at,
        "finished_at": report.finished_at,
        "partial": report.is_partial,
        **{k: v for k, v in report.score_summary.items()},
    }

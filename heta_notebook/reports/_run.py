"""One run's handle on its report id: folder, lock, fingerprint, checkpoint and shards.

The runner holds only this handle (``store.run(kb, report_id, fingerprint=...)``): the
previous report and the fingerprint check, appends, the save (which returns the report's
path), the report's key and the Ray shard checkpoints all go through it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_notebook._util.paths import UnsafeNameError
from heta_notebook._util.sums import seal, unseal
from heta_notebook.reports import _checkpoint as checkpoints
from heta_notebook.reports._tables import HEADER
from heta_notebook.schema._records import (
    EvaluationCaseResult,
    EvaluationReport,
    report_key,
)

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.reports._store import ReportStore


class ReportLockedError(RuntimeError):
    """Another process is writing this report id (running or saving it)."""


class ReportIdCollisionError(ValueError):
    """Two different names map to one report folder (same slug)."""


class CheckpointMismatchError(ValueError):
    """A checkpoint was written by a run with other settings (its fingerprint differs)."""


class UnverifiedCheckpointError(CheckpointMismatchError):
    """A checkpoint whose settings cannot be checked (no readable fingerprint): resuming it
    could mix results of different runs, so it needs ``force=True``."""


class OldCheckpointError(CheckpointMismatchError):
    """A checkpoint of an earlier version (``cases.jsonl``, one JSON line per case result),
    which this version does not read: its cases cannot be resumed, only run again."""


OLD_CHECKPOINT = "cases.jsonl"  # the checkpoint of versions before the one Arrow format


def refuse_old_checkpoint(store: ReportStore, folder: Path, report_id: str) -> None:
    """Raise :class:`OldCheckpointError` naming ``folder/cases.jsonl`` if an earlier
    version left one: never resumed silently, never mixed with this version's checkpoint."""
    path = folder / OLD_CHECKPOINT
    if store._exists(path) or (store._fs is None and path.is_symlink()):
        raise OldCheckpointError(
            f"{path}: a checkpoint written by an earlier heta-notebook version (one JSON line "
            f"per case result), which this version no longer reads, so report {report_id!r} "
            "cannot resume from it. Delete that file to run its cases again under this "
            "report_id (a partial report saved beside it still resumes), or give this run a "
            "new report_id"
        )


class ReportWarning(UserWarning):
    """A saved report that ``ReportStore.list()`` could not read and left out; names the file."""


def check_fingerprint(before: Any, now: Any, report_id: str, where: Any) -> None:
    """The one "same run?" rule: refuse to mix results of runs with other settings (a
    missing fingerprint on either side is not a mismatch)."""
    if before and now and before != now:
        raise CheckpointMismatchError(
            f"report {report_id!r} was run with other settings (recipe, modes, evaluators, "
            f"top_k or query options; fingerprint in {where}); give this run a new report_id, "
            "or delete the old report"
        )


SHARD_KB = "ray"  # a run's shard checkpoints (``{report}/shards``) hold one "knowledge base"


class RunHandle:
    """One run's hold on its report id: folder, lock, fingerprint, checkpoint and shards.

    ``with store.run(kb, rid, fingerprint=fp) as run: run.read(); run.append(results)``.
    Every store (a local folder, an fsspec URL) appends to the one checkpoint format:
    ``cases.arrows``, an Arrow IPC stream of one batch per append holding the results'
    report-table rows (``checkpoints.CaseBatches``), and ``cases.arrows.sums``, one sha256
    per message, checked before a batch is used. Locally each message is one ``write`` (the
    OS keeps it if the process is killed; a torn last batch is cut on reopening), fsynced
    when the checkpoint closes (unless the run's report was saved since: the save fsyncs
    its own copy); an fsspec store opens the files in append mode per append. The run's
    save reuses those columns. A ``cases.jsonl`` of an earlier version is refused with
    :class:`OldCheckpointError` (this version cannot resume it).
    """

    def __init__(
        self,
        store: ReportStore,
        kb: str,
        report_id: str,
        fingerprint: str | None,
        *,
        force: bool = False,
    ) -> None:
        self.store, self.kb, self.report_id, self.fingerprint = store, kb, report_id, fingerprint
        self.force = force
        self.stream_path = store.checkpoint_path(kb, report_id)
        self.sums_path = self.stream_path.with_name(checkpoints.CHECKPOINT_SUMS)
        self.batches = checkpoints.CaseBatches()
        self._stream: _LocalFile | _RemoteFile | None = None
        self._sums: _LocalFile | _RemoteFile | None = None
        self._end = 0  # the stream's length: where the next batch ends up
        self._loaded: tuple[dict[str, Any], list[str]] | None = None
        self._lock: Any = store.lock(kb, report_id)
        self._entered = False
        self.saved = False  # set by the save of its report: no fsync needed at close
        self._discard = False  # set by ``discard``: delete the files at close

    @property
    def folder(self) -> Path:
        """The report's folder in its store."""
        return self.stream_path.parent

    @property
    def report_key(self) -> str:
        """heta-framework's key of the report this run saves."""
        return report_key(self.kb, self.report_id)

    def previous(self) -> EvaluationReport | None:
        """The report an earlier run of this id saved (None if none), refused when a run
        with other settings wrote it."""
        if not self.store.exists(self.kb, self.report_id):
            return None
        previous = self.store.load(self.kb, self.report_id)
        before = previous.metadata.get("fingerprint")
        check_fingerprint(before, self.fingerprint, self.report_id, self.folder)
        return previous

    def save(self, report: EvaluationReport) -> Path:
        """Save this run's report (reusing the checkpoint's columns); return its path."""
        return self.store.save(report)

    def shards(self) -> ReportStore:
        """The store of this run's Ray shard checkpoints: ``{report}/shards``, on the same
        file system (an fsspec store's as a URL)."""
        folder = self.folder / "shards"
        fs = self.store._fs
        from heta_notebook.reports._store import ReportStore

        return ReportStore(fs.unstrip_protocol(folder.as_posix()) if fs is not None else folder)

    def shard_results(self) -> list[EvaluationCaseResult]:
        """What the shards of an interrupted Ray run checkpointed (a killed driver saved no
        report): kept whichever executor resumes the run."""
        if not self.store._exists(self.folder / "shards"):
            return []
        shards: Any = self.shards()
        return [r for sid in self._shard_ids(shards) for r in shards.read_checkpoint(SHARD_KB, sid)]

    def shard_id(self, token: str, number: int) -> str:
        """The checkpoint id of one shard of this run (``token``: the driver's own)."""
        return f"{self.report_id}--s-{token}-{number:05d}"

    def drop_shards(self) -> None:
        """Delete the shard checkpoints once a saved report holds their results."""
        if not self.store._exists(self.folder / "shards"):
            return
        shards = self.shards()
        for shard_id in self._shard_ids(shards):
            shards.delete(SHARD_KB, shard_id)

    def _shard_ids(self, shards: ReportStore) -> list[str]:
        prefix = f"{self.report_id}--s-"
        return [rid for rid in shards.report_ids(SHARD_KB) if rid.startswith(prefix)]

    def __enter__(self) -> RunHandle:
        self._lock.__enter__()
        self._entered = True
        try:
            self._open()
        except BaseException:
            self.close()
            raise
        self.store._checkpoints[self.folder] = self
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> None:
        store, folder = self.store, self.folder
        store._check_owner(folder, self.kb, self.report_id)
        refuse_old_checkpoint(store, folder, self.report_id)
        identity = folder / "checkpoint.json"
        before, problem = self._recorded_fingerprint(identity)
        if before is not None:
            check_fingerprint(before, self.fingerprint, self.report_id, identity)
        elif self.fingerprint:
            if self._has_checkpoint() and not self.force:
                raise UnverifiedCheckpointError(
                    f"{identity}: {problem}, so the checkpoint beside it cannot be checked "
                    f"against this run's settings; resuming could mix results of different "
                    "runs. Resume it anyway with force=True (BenchmarkRunConfig(force_resume="
                    "True)), give this run a new report_id, or delete the old checkpoint"
                )
            store._write(
                identity,
                json.dumps(
                    seal(
                        {
                            "knowledge_base_name": self.kb,
                            "report_id": self.report_id,
                            "fingerprint": self.fingerprint,
                        }
                    )
                ),
            )
        if store._fs is None:
            folder.mkdir(parents=True, exist_ok=True)
        self._stream = _open_file(store, self.stream_path)
        self._open_stream(self._stream)

    def _recorded_fingerprint(self, identity: Path) -> tuple[str | None, str]:
        """The fingerprint ``checkpoint.json`` records (or, once a finished run removed it, the
        saved header's), or None and why there is none."""
        header = identity.with_name(HEADER)
        if not self.store._exists(identity) and self.store._exists(header):
            identity = header
        if not self.store._exists(identity):
            return None, "missing"
        if identity.name == HEADER:  # a saved report's header: its own digest, not a seal
            try:
                recorded = json.loads(self.store._read(identity))
            except (ValueError, UnicodeDecodeError) as exc:
                return None, f"unreadable ({exc})"
            recorded = recorded.get("metadata") if isinstance(recorded, dict) else None
        else:
            recorded, problem = unseal(self.store._read(identity))
            if recorded is None:
                return None, f"unreadable ({problem})"
        fingerprint = recorded.get("fingerprint") if isinstance(recorded, dict) else None
        if not isinstance(fingerprint, str) or not fingerprint:
            return None, "records no fingerprint"
        return fingerprint, ""

    def _has_checkpoint(self) -> bool:
        """Whether finished cases are checkpointed here (more than an empty stream)."""
        empty = len(checkpoints.CHECKPOINT_SCHEMA.serialize())
        path, fs = self.stream_path, self.store._fs
        if fs is None:
            return path.is_file() and path.stat().st_size > empty
        return bool(fs.exists(str(path)) and fs.size(str(path)) > empty)

    def _open_stream(self, stream: _LocalFile | _RemoteFile) -> None:
        """Read the stream once (its rows continue in ``batches``), cut a torn or corrupt
        last part, rewrite the sums of what is kept, and start a new stream if empty."""
        store, sums_path = self.store, self.sums_path
        data = stream.read()
        sums = store._read(sums_path) if store._exists(sums_path) else None
        scan = checkpoints.scan_checkpoint(data, self.stream_path, sums if data else None)
        if scan.good < len(data):
            stream.truncate(scan.good)
        kept = "".join(map(checkpoints.sums_line, scan.ends, scan.digests, scan.counts))
        if sums is None or sums != kept.encode():
            store._write(sums_path, kept)
        self._sums = _open_file(store, sums_path)
        self._end = scan.good
        if scan.good == 0:
            self._append_message(checkpoints.CHECKPOINT_SCHEMA.serialize())
        self.batches.extend(scan.tables, scan.texts)
        self._loaded = (scan.tables, scan.texts)

    def _append_message(self, message: Any, cases: int = 0) -> None:
        """One message onto the stream, then its end, sha256 and case count onto the sums
        (a kill between the two leaves a batch without a sum: cut as torn on reopening)."""
        assert self._stream is not None and self._sums is not None  # opened by ``__enter__``
        self._stream.append(message)
        self._end += len(message)
        line = checkpoints.sums_line(self._end, hashlib.sha256(message).hexdigest(), cases)
        self._sums.append(line.encode())

    def read(self) -> list[EvaluationCaseResult]:
        """Case results checkpointed so far (a later one for a case replaces an earlier one)."""
        if self._stream is None or self._loaded is None:
            return self.store.read_checkpoint(self.kb, self.report_id)
        latest: dict[tuple[str, str], EvaluationCaseResult] = {}
        records = checkpoints.records_of(*self._loaded)
        for result in records:
            latest[(result.case_id, result.query_mode)] = result
        kept = {id(r) for r in latest.values()}
        self.batches.register((row, r) for row, r in enumerate(records) if id(r) in kept)
        return list(latest.values())

    @property
    def writes_columns(self) -> bool:
        """Whether appends go to ``cases.arrows`` (the handle is open): only then is a
        ``scores`` table used."""
        return self._stream is not None

    def append(self, results: Iterable[EvaluationCaseResult], scores: Any = None) -> None:
        """Append finished case results as one batch, in one write (``scores``: their
        ``checkpoints.score_table``, when the scorer kept its columns)."""
        if self._stream is None:
            raise RuntimeError("append() needs the run handle open: use `with store.run(...)`")
        results = list(results)
        if results:
            self._append_message(self.batches.add(results, scores).serialize(), len(results))
            self.saved = False

    def discard(self) -> None:
        """Delete the checkpoint files when it closes: its run's complete report is saved
        and holds every row (a 20,000-case checkpoint is ~90 MB beside a ~1 MB report)."""
        if not self.saved:
            raise RuntimeError("discard() needs the run's report saved first")
        self._discard = True

    def close(self) -> None:
        """Fsync (unless its report was saved since the last append: the save fsyncs a
        copy of every row) and close the files, and release the lock (idempotent)."""
        stream, self._stream = self._stream, None
        sums, self._sums = self._sums, None
        lock, self._lock = self._lock, None
        if self.store._checkpoints.get(self.folder) is self:
            del self.store._checkpoints[self.folder]
        try:
            for handle in (stream, sums):
                if handle is not None:
                    handle.close(sync=not self.saved)
            if self._discard:
                doomed = [self.stream_path, self.sums_path]
                if self.store._exists(self.folder / HEADER):  # its header keeps the fingerprint
                    doomed.append(self.folder / "checkpoint.json")  # (a report.json does not)
                for path in doomed:
                    if self.store._fs is None:
                        path.unlink(missing_ok=True)  # a symlink: the link, never its target
                    elif self.store._exists(path):
                        self.store._fs.rm(str(path))
        finally:
            if lock is not None and self._entered:
                lock.__exit__(None, None, None)


class _LocalFile:
    """A local checkpoint file opened once for appending (``O_APPEND``, never a symlink)."""

    def __init__(self, path: Path) -> None:
        self.fd = _open_append(path)

    def read(self) -> bytes:
        size = os.fstat(self.fd).st_size
        return os.pread(self.fd, size, 0) if size else b""

    def truncate(self, size: int) -> None:
        os.ftruncate(self.fd, size)

    def append(self, data: Any) -> None:
        _write_all(self.fd, data)

    def close(self, *, sync: bool) -> None:
        try:
            if sync:
                os.fsync(self.fd)
        finally:
            os.close(self.fd)


class _RemoteFile:
    """A checkpoint file of an fsspec store: each append opens it in ``"ab"`` mode and
    closes it (the store holds the bytes once it returns); a cut rewrites the kept bytes."""

    def __init__(self, fs: Any, path: Path) -> None:
        self.fs, self.path = fs, str(path)

    def read(self) -> bytes:
        return bytes(self.fs.cat_file(self.path)) if self.fs.exists(self.path) else b""

    def truncate(self, size: int) -> None:
        self.fs.pipe(self.path, self.read()[:size])

    def append(self, data: Any) -> None:
        with self.fs.open(self.path, "ab") as handle:
            handle.write(memoryview(data))

    def close(self, *, sync: bool) -> None:  # every append was closed (and so stored)
        del sync


def _open_file(store: ReportStore, path: Path) -> _LocalFile | _RemoteFile:
    return _LocalFile(path) if store._fs is None else _RemoteFile(store._fs, path)


def _write_all(fd: int, data: Any) -> None:
    """``os.write`` until every byte of ``data`` is written."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _refuse_symlink(path: Path) -> None:
    if path.is_symlink():
        raise UnsafeNameError(
            f"{path} is a symlink; files inside a report store must be regular files"
        )


def _open_append(path: Path) -> int:
    """Open ``path`` for appending, refusing a symlink (``O_NOFOLLOW``)."""
    _refuse_symlink(path)
    try:
        return os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    except OSError as exc:
        if path.is_symlink():
            raise UnsafeNameError(f"{path} is a symlink; refusing to append to it") from exc
        raise

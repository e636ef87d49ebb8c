"""One run's handle on its report id: folder, lock, fingerprint, checkpoint and shards.

The runner holds only this handle (``store.run(kb, report_id, fingerprint=...)``): the
previous report and the fingerprint check, appends, the save, the report's key and path,
and the Ray shard checkpoints all go through it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_notebook._util.paths import UnsafeNameError, atomic_write_text
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
    Local stores append to ``cases.arrows``, an Arrow IPC stream of one batch per append
    holding the results' report-table rows (``checkpoints.CaseBatches``), each written with
    one ``write`` (the OS keeps it if the process is killed; a torn last batch is cut on
    reopening) and fsynced when the checkpoint closes (unless the run's report was saved
    since: the save fsyncs its own copy). The run's save reuses those columns.
    A ``cases.jsonl`` of an earlier version (or of ``append_cases``) is still read.
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
        self.path = store.checkpoint_path(kb, report_id)
        self.stream_path = self.path.with_name(checkpoints.CHECKPOINT)
        self.sums_path = self.path.with_name(checkpoints.CHECKPOINT_SUMS)
        self.batches = checkpoints.CaseBatches()
        self._fd: int | None = None
        self._sums_fd: int | None = None
        self._end = 0  # the stream's length: where the next batch ends up
        self._loaded: tuple[dict[str, Any], list[str]] | None = None
        self._lock: Any = store.lock(kb, report_id)
        self._entered = False
        self.saved = False  # set by the save of its report: no fsync needed at close
        self._discard = False  # set by ``discard``: delete the files at close

    @property
    def folder(self) -> Path:
        """The report's folder in its store."""
        return self.path.parent

    @property
    def report_key(self) -> str:
        """heta-framework's key of the report this run saves."""
        return report_key(self.kb, self.report_id)

    @property
    def report_path(self) -> Path:
        """The main file of the saved report (``header.json`` or ``report.json``)."""
        return self.store.report_path(self.kb, self.report_id)

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
        self.store._checkpoints[self.path.parent] = self
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> None:
        store, folder = self.store, self.path.parent
        store._check_owner(folder, self.kb, self.report_id)
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
            if self.path.exists() or self.path.is_symlink():  # written by an earlier version
                fd = _open_append(self.path)
                try:
                    _cut_torn_tail(fd)
                finally:
                    os.close(fd)
            self._fd = _open_append(self.stream_path)
            self._open_stream(self._fd)

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
        schema_only = len(checkpoints.CHECKPOINT_SCHEMA.serialize())
        for path, empty in ((self.stream_path, schema_only), (self.path, 0)):
            if self.store._fs is None:
                if path.is_file() and path.stat().st_size > empty:
                    return True
            elif self.store._exists(path) and self.store._fs.size(str(path)) > empty:
                return True
        return False

    def _open_stream(self, fd: int) -> None:
        """Read the stream once (its rows continue in ``batches``), cut a torn or corrupt
        last part, rewrite the sums of what is kept, and start a new stream if empty."""
        size = os.fstat(fd).st_size
        data = os.pread(fd, size, 0) if size else b""
        sums_path = self.sums_path
        _refuse_symlink(sums_path)
        sums = sums_path.read_bytes() if sums_path.exists() else None
        scan = checkpoints.scan_checkpoint(data, self.stream_path, sums if size else None)
        if scan.good < size:
            os.ftruncate(fd, scan.good)
        kept = "".join(map(checkpoints.sums_line, scan.ends, scan.digests, scan.counts))
        if sums is None or sums != kept.encode():
            atomic_write_text(sums_path, kept)
        self._sums_fd = _open_append(sums_path)
        self._end = scan.good
        if scan.good == 0:
            self._append_message(checkpoints.CHECKPOINT_SCHEMA.serialize())
        self.batches.extend(scan.tables, scan.texts)
        self._loaded = (scan.tables, scan.texts)

    def _append_message(self, message: Any, cases: int = 0) -> None:
        """One message onto the stream, then its end, sha256 and case count onto the sums
        (a kill between the two leaves a batch without a sum: cut as torn on reopening)."""
        assert self._fd is not None and self._sums_fd is not None  # opened by the first append
        _write_all(self._fd, message)
        self._end += len(message)
        line = checkpoints.sums_line(self._end, hashlib.sha256(message).hexdigest(), cases)
        _write_all(self._sums_fd, line.encode())

    def read(self) -> list[EvaluationCaseResult]:
        """Case results checkpointed so far (a later one for a case replaces an earlier one)."""
        if self._fd is None or self._loaded is None:
            return self.store.read_checkpoint(self.kb, self.report_id)
        latest: dict[tuple[str, str], EvaluationCaseResult] = {}
        if self.path.exists() or self.path.is_symlink():
            for result in parse_checkpoint(self.store._read(self.path), self.path):
                latest[(result.case_id, result.query_mode)] = result
        records = checkpoints.records_of(*self._loaded)
        for result in records:
            latest[(result.case_id, result.query_mode)] = result
        kept = {id(r) for r in latest.values()}
        self.batches.register((row, r) for row, r in enumerate(records) if id(r) in kept)
        return list(latest.values())

    @property
    def writes_columns(self) -> bool:
        """Whether appends go to ``cases.arrows`` (a local store without an
        ``append_cases`` override): only then is a ``scores`` table used."""
        from heta_notebook.reports._store import ReportStore

        return self._fd is not None and type(self.store).append_cases is ReportStore.append_cases

    def append(self, results: Iterable[EvaluationCaseResult], scores: Any = None) -> None:
        """Append finished case results as one batch, in one write (``scores``: their
        ``checkpoints.score_table``, when the scorer kept its columns)."""
        if not self.writes_columns:
            self.store.append_cases(self.kb, self.report_id, results)  # remote, or a subclass hook
            return
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
        copy of every row) and close the file, and release the lock (idempotent)."""
        fd, self._fd = self._fd, None
        sums_fd, self._sums_fd = self._sums_fd, None
        lock, self._lock = self._lock, None
        if self.store._checkpoints.get(self.path.parent) is self:
            del self.store._checkpoints[self.path.parent]
        try:
            for handle in (fd, sums_fd):
                if handle is not None:
                    try:
                        if not self.saved:
                            os.fsync(handle)
                    finally:
                        os.close(handle)
            if self._discard:  # finished: its header keeps the fingerprint checkpoint.json had
                identity = self.path.parent / "checkpoint.json"
                for path in (self.stream_path, self.sums_path, self.path, identity):
                    if self.store._fs is None:
                        path.unlink(missing_ok=True)  # a symlink: the link, never its target
                    elif self.store._exists(path):
                        self.store._fs.rm(str(path))
        finally:
            if lock is not None and self._entered:
                lock.__exit__(None, None, None)


def _write_all(fd: int, data: Any) -> None:
    """``os.write`` until every byte of ``data`` is written."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def parse_checkpoint(data: bytes, path: Path | str) -> list[EvaluationCaseResult]:
    """Parse ``cases.jsonl`` bytes: a torn last line is ignored, a bad line elsewhere named."""
    results: dict[tuple[str, str], EvaluationCaseResult] = {}
    lines = data.split(b"\n")
    torn = lines.pop()  # b"" when the file ends with a newline; else an unfinished line
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            result = EvaluationCaseResult.model_validate_json(line)
        except ValueError as exc:
            raise ValueError(f"{path}, line {number}: corrupt checkpoint record: {exc}") from exc
        results[(result.case_id, result.query_mode)] = result
    del torn
    return list(results.values())


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


def _cut_torn_tail(fd: int, block: int = 1 << 16) -> None:
    """Cut a last line left unfinished by a killed process (reads only the file's tail)."""
    end = os.lseek(fd, 0, os.SEEK_END)
    position = end
    while position > 0:
        start = max(0, position - block)
        chunk = os.pread(fd, position - start, start)
        if position == end and chunk.endswith(b"\n"):
            return
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            os.ftruncate(fd, start + newline + 1)
            return
        position = start
    if end:
        os.ftruncate(fd, 0)

"""ReportStore: reports, run checkpoints and caches in a folder (or an fsspec URL).

Layout (heta-framework's keys, so either library finds the other's reports)::

    {root}/_heta/knowledge_bases/{kb}/evaluations/{report_id}/report.json
    {root}/_heta/knowledge_bases/{kb}/evaluations/{report_id}/summary.json   # header, for list()
    {root}/_heta/knowledge_bases/{kb}/evaluations/{report_id}/cases.jsonl    # checkpoint
    {root}/_heta/cache/{namespace}/...                                        # KB builds, judges

Local writes are atomic (temporary file + rename), so a reader never sees half a report
and two processes saving different reports lose nothing.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_notebook.paths import atomic_write_text, safe_join, safe_name
from heta_notebook.schema import EvaluationCaseResult, EvaluationReport

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

_PREFIX = ("_heta", "knowledge_bases")


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
            self._fs, self._url_root = fsspec.core.url_to_fs(root_text)
            self.root = Path(self._url_root)
        else:
            self.root = Path(root_text.removeprefix("file://")).expanduser().resolve()
            self.root.mkdir(parents=True, exist_ok=True)

    def __repr__(self) -> str:
        return f"ReportStore({str(self.root)!r})"

    # -- paths ----------------------------------------------------------------------------

    def report_dir(self, knowledge_base_name: str, report_id: str) -> Path:
        """The folder of one report (not created)."""
        kb = safe_name(knowledge_base_name, what="knowledge_base_name")
        rid = safe_name(report_id, what="report_id")
        return self._join(*_PREFIX, kb, "evaluations", rid)

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

    def save(self, report: EvaluationReport) -> Path:
        """Write ``report.json`` (and its ``summary.json`` header) atomically; return its path."""
        folder = self.report_dir(report.knowledge_base_name, report.report_id)
        key = "/".join(folder.relative_to(self._root_path()).parts + ("report.json",))
        if report.report_key != key:
            report = report.model_copy(update={"report_key": key})
        self._write(folder / "report.json", report.to_json())
        self._write(folder / "summary.json", json.dumps(_header(report), indent=2))
        return folder / "report.json"

    def load(self, knowledge_base_name: str, report_id: str) -> EvaluationReport:
        """Load one report by knowledge base name and report id."""
        path = self.report_dir(knowledge_base_name, report_id) / "report.json"
        if not self._exists(path):
            known = ", ".join(self.report_ids(knowledge_base_name)) or "none"
            raise FileNotFoundError(
                f"no report {report_id!r} for knowledge base {knowledge_base_name!r} in {self.root} "
                f"(reports there: {known})"
            )
        return EvaluationReport.load(self._read(path))

    def load_all(self, **filters: Any) -> list[EvaluationReport]:
        """Load every report whose listing row matches ``filters`` (e.g. ``benchmark="cranfield"``)."""
        frame = self.list()
        for column, value in filters.items():
            frame = frame[frame[column] == value]
        return [
            self.load(kb, rid)
            for kb, rid in zip(frame["knowledge_base_name"], frame["report_id"], strict=True)
        ]

    def exists(self, knowledge_base_name: str, report_id: str) -> bool:
        """Whether a finished ``report.json`` exists for this id."""
        return self._exists(self.report_dir(knowledge_base_name, report_id) / "report.json")

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
        folder = self._join(*_PREFIX, safe_name(knowledge_base_name), "evaluations")
        return sorted(p.name for p in self._listdir(folder))

    def list(self) -> pd.DataFrame:
        """One row per saved report: ids, benchmark, KB, modes, times, case count, headline scores."""
        import pandas as pd

        rows = []
        for kb_dir in self._listdir(self._join(*_PREFIX)):
            for report_dir in self._listdir(kb_dir / "evaluations"):
                row = self._header_of(report_dir)
                if row is not None:
                    rows.append(row)
        columns = [
            "knowledge_base_name", "report_id", "label", "benchmark", "benchmark_version", "split",
            "query_modes", "n_cases", "started_at", "finished_at", "partial",
        ]  # fmt: skip
        frame = pd.DataFrame(rows)
        if frame.empty:
            return pd.DataFrame(columns=columns)
        front = [c for c in columns if c in frame.columns]
        rest = [c for c in frame.columns if c not in front]
        return frame[front + rest].sort_values("started_at", ignore_index=True)

    # -- checkpoints ----------------------------------------------------------------------

    def checkpoint_path(self, knowledge_base_name: str, report_id: str) -> Path:
        """Where finished case results of an unfinished run are appended."""
        return self.report_dir(knowledge_base_name, report_id) / "cases.jsonl"

    def append_cases(
        self, knowledge_base_name: str, report_id: str, results: Iterable[EvaluationCaseResult]
    ) -> None:
        """Append finished case results, one JSON line each, flushed to disk."""
        lines = "".join(r.model_dump_json() + "\n" for r in results)
        if not lines:
            return
        path = self.checkpoint_path(knowledge_base_name, report_id)
        if self._fs is not None:
            with self._fs.open(str(path), "a", encoding="utf-8") as handle:
                handle.write(lines)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        _drop_torn_line(path)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(lines)
            handle.flush()
            os.fsync(handle.fileno())

    def read_checkpoint(
        self, knowledge_base_name: str, report_id: str
    ) -> list[EvaluationCaseResult]:
        """Case results saved so far; a torn last line (a killed process) is ignored.

        A later line for the same (case_id, query_mode) replaces an earlier one.
        """
        path = self.checkpoint_path(knowledge_base_name, report_id)
        if not self._exists(path):
            return []
        results: dict[tuple[str, str], EvaluationCaseResult] = {}
        lines = self._read(path).decode("utf-8").split("\n")
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                result = EvaluationCaseResult.model_validate_json(line)
            except ValueError as exc:
                if number >= len(lines) - 1:  # the last line was cut short by a crash
                    break
                raise ValueError(
                    f"{path}, line {number}: corrupt checkpoint record: {exc}"
                ) from exc
            results[(result.case_id, result.query_mode)] = result
        return list(results.values())

    # -- file system access ---------------------------------------------------------------

    def _root_path(self) -> Path:
        return Path(self._url_root) if self._fs is not None else self.root

    def _write(self, path: Path, text: str) -> None:
        if self._fs is None:
            atomic_write_text(path, text)
            return
        tmp = f"{path}.tmp"
        self._fs.pipe(tmp, text.encode("utf-8"))
        self._fs.mv(tmp, str(path))

    def _read(self, path: Path) -> bytes:
        if self._fs is not None:
            return self._fs.cat_file(str(path))
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
        summary, report = report_dir / "summary.json", report_dir / "report.json"
        if self._exists(summary):
            return json.loads(self._read(summary))
        if self._exists(report):  # written by heta-framework: no summary sidecar
            return _header(EvaluationReport.load(self._read(report)))
        return None


def _drop_torn_line(path: Path) -> None:
    """Cut a last line left unfinished by a killed process, so appended lines start clean."""
    if not path.is_file():
        return
    with open(path, "rb+") as handle:
        data = handle.read()
        if data and not data.endswith(b"\n"):
            handle.truncate(data.rfind(b"\n") + 1)


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

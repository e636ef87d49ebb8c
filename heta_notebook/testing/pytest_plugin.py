"""pytest plugin (entry point ``pytest11``): baselines for regression gates, and their summary.

- ``heta_baseline(source, store=None)`` fixture: a :class:`Baseline` named by a path
  (``report.json``, relative to the test file) or by a name in a ``ReportStore``
  (``store=`` / ``--heta-baseline-store`` / ini ``heta_baseline_store``);
  ``baseline.check(report, scores=..., max_drop=...)`` runs ``assert_no_regression``.
- ``--heta-update-baseline``: ``check`` saves the current report as the baseline instead
  (accepting the new numbers on purpose) and the test passes.
- ``--heta-gate-dir`` (ini ``heta_gate_dir``): where comparison pages go (``heta-gates/``
  under the rootdir by default).
- A terminal summary lists every gate that ran, its verdict, worst delta and page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

_LISTENER = pytest.StashKey[Any]()
_UPDATED = pytest.StashKey[list]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's command-line options and ini keys."""
    group = parser.getgroup("heta", "heta_notebook regression gates")
    group.addoption(
        "--heta-update-baseline",
        action="store_true",
        default=False,
        help="save the current reports as the new baselines instead of gating",
    )
    group.addoption(
        "--heta-gate-dir",
        default=None,
        help="folder for the gates' comparison pages (default: heta-gates/)",
    )
    group.addoption(
        "--heta-baseline-store", default=None, help="ReportStore root holding named baselines"
    )
    parser.addini("heta_gate_dir", "folder for the gates' comparison pages", default="")
    parser.addini("heta_baseline_store", "ReportStore root holding named baselines", default="")


def pytest_configure(config: pytest.Config) -> None:
    """Collect the gates of this session; pages go to the configured folder."""
    from heta_notebook.testing import _gates as testing

    folder = config.getoption("heta_gate_dir") or config.getini("heta_gate_dir") or "heta-gates"
    listener = testing.GateListener(gate_dir=Path(config.rootpath, folder))
    testing._LISTENERS.append(listener)
    config.stash[_LISTENER] = listener
    config.stash[_UPDATED] = []


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop collecting (nested in-process sessions each have their own listener)."""
    from heta_notebook.testing import _gates as testing

    listener = config.stash.get(_LISTENER, None)
    if listener in testing._LISTENERS:
        testing._LISTENERS.remove(listener)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """One line per gate that ran, and the baselines rewritten by --heta-update-baseline."""
    from heta_notebook.testing._gates import summary_line

    listener = config.stash.get(_LISTENER, None)
    records = listener.records if listener is not None else []
    updated = config.stash.get(_UPDATED, [])
    if not records and not updated:
        return
    failed = sum(not result.passed for _, result in records)
    terminalreporter.write_sep("=", "heta gates")
    for test, result in records:
        terminalreporter.write_line(f"{summary_line(result)}  [{test or 'outside a test'}]")
    for test, where in updated:
        terminalreporter.write_line(f"UPDATED baseline {where}  [{test}]")
    terminalreporter.write_line(
        f"{len(records)} gate(s): {len(records) - failed} passed, {failed} failed"
        + (f"; {len(updated)} baseline(s) updated" if updated else "")
    )


class Baseline:
    """A baseline report in a file or a ReportStore; ``check`` gates a new report against it."""

    def __init__(
        self,
        source: str | Path,
        *,
        store: Any = None,
        update: bool = False,
        base_dir: Path | None = None,
        config: Any = None,
    ) -> None:
        self.store = _as_store(store)
        self.name = str(source)
        self.path = None if self.store is not None else _resolve(Path(source), base_dir)
        self.update = update
        self._config = config

    def __repr__(self) -> str:
        where = self.path if self.path is not None else f"{self.name!r} in {self.store!r}"
        return f"<Baseline {where}{' (update)' if self.update else ''}>"

    @property
    def where(self) -> str:
        """The file, or ``name in store``, for messages."""
        return str(self.path) if self.path is not None else f"{self.name} in {self.store.root}"

    def exists(self) -> bool:
        """Whether the baseline has been saved."""
        if self.path is not None:
            return self.path.is_file()
        return self._store_row() is not None

    def load(self) -> Any:
        """The baseline report; a clear error (how to create it) when it does not exist."""
        from heta_notebook.testing._gates import GateInputError, load_report

        if not self.exists():
            raise GateInputError(
                f"no baseline at {self.where}; run pytest with "
                "--heta-update-baseline to save the current report as it"
            )
        if self.path is not None:
            return load_report(self.path, "baseline")
        row = self._store_row()
        assert row is not None  # exists() said so
        kb, report_id = row
        return self.store.load(kb, report_id)

    def save(self, report: Any, *, keep_texts: bool = False) -> str:
        """Write ``report`` as this baseline (a path gets ``report.json``; a store, the name).

        Retrieved texts are dropped unless ``keep_texts`` (``testing.slim_report``).
        """
        from heta_notebook.testing._gates import load_report, slim_report

        report = load_report(report, "report")
        report = report if keep_texts else slim_report(report)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            report.save(self.path)
        else:
            row = self._store_row()
            if row is not None:
                self.store.delete(*row)
            self.store.save(report.model_copy(update={"report_id": self.name}))
        return self.where

    def check(self, report: Any, **options: Any) -> Any:
        """``assert_no_regression(report, baseline, **options)``; under
        ``--heta-update-baseline``, save ``report`` as the baseline instead (returns None)."""
        from heta_notebook.testing._gates import assert_no_regression

        if self.update:
            where = self.save(report)
            if self._config is not None:
                test = _current_test()
                self._config.stash[_UPDATED].append((test, where))
            return None
        return assert_no_regression(report, self.load(), **options)

    def _store_row(self) -> tuple[str, str] | None:
        listing = self.store.list()
        if listing.empty:
            return None
        rows = listing[listing["report_id"] == self.name]
        if rows.empty:
            return None
        row = rows.sort_values("finished_at").iloc[-1]
        return str(row["knowledge_base_name"]), str(row["report_id"])


@pytest.fixture
def heta_baseline(request: pytest.FixtureRequest) -> Any:
    """``heta_baseline("baselines/bm25.json")`` or ``heta_baseline("bm25", store=...)``."""
    config = request.config
    default_store = config.getoption("heta_baseline_store") or config.getini("heta_baseline_store")

    def make(source: str | Path, *, store: Any = None) -> Baseline:
        if store is None and default_store and not _looks_like_path(source):
            store = Path(config.rootpath, default_store)
        return Baseline(
            source,
            store=store,
            update=config.getoption("heta_update_baseline"),
            base_dir=Path(request.path).parent,
            config=config,
        )

    return make


def _as_store(store: Any) -> Any:
    if store is None or hasattr(store, "list"):
        return store
    from heta_notebook.reports._store import ReportStore

    return ReportStore(store)


def _resolve(path: Path, base_dir: Path | None) -> Path:
    return path if path.is_absolute() or base_dir is None else base_dir / path


def _looks_like_path(source: str | Path) -> bool:
    text = str(source)
    return isinstance(source, Path) or "/" in text or "\\" in text or text.endswith(".json")


def _current_test() -> str:
    import os

    return os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]

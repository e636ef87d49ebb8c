"""The shard checkpoints a Ray run keeps in its report's folder (``{report}/shards``).

Each shard task appends its finished results to its own checkpoint there; whichever
executor resumes the run (Ray or local) reads them, and they are dropped once a saved
report holds them. Reading them needs no Ray.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.runner._plan import RunSpec
    from heta_notebook.schema import EvaluationCaseResult
    from heta_notebook.store import ReportStore

SHARD_KB = "ray"  # the shard checkpoints' own store holds one "knowledge base"


def shard_store(spec: RunSpec) -> ReportStore:
    """The shard checkpoints' store: a folder inside the report's own folder."""
    from heta_notebook.store import ReportStore

    store = spec.store
    folder = store.report_dir(spec.knowledge_base_name, spec.report_id) / "shards"
    fs = getattr(store, "_fs", None)  # an fsspec store: the same file system, as a URL
    return ReportStore(fs.unstrip_protocol(folder.as_posix()) if fs is not None else folder)


def shard_results(spec: RunSpec) -> list[EvaluationCaseResult]:
    """What the shards of an interrupted Ray run checkpointed in the report's folder (a
    crashed or killed driver saved no report): kept whichever executor resumes the run."""
    if not _has_shards(spec):
        return []
    return read_shards(shard_store(spec), spec.report_id)


def drop_shards(spec: RunSpec) -> None:
    """Delete the report's shard checkpoints once a saved report holds their results."""
    if not _has_shards(spec):
        return
    shards = shard_store(spec)
    for shard_id in shard_ids(shards, spec.report_id):
        shards.delete(SHARD_KB, shard_id)


def _has_shards(spec: RunSpec) -> bool:
    store = spec.store
    if not hasattr(store, "report_dir") or not hasattr(store, "_exists"):
        return False  # a store of another kind: no shard folder
    return bool(
        store._exists(store.report_dir(spec.knowledge_base_name, spec.report_id) / "shards")
    )


def shard_ids(shards: ReportStore, report_id: str) -> list[str]:
    return [rid for rid in shards.report_ids(SHARD_KB) if rid.startswith(f"{report_id}--s-")]


def read_shards(shards: ReportStore, report_id: str) -> list[EvaluationCaseResult]:
    return [
        r for sid in shard_ids(shards, report_id) for r in shards.read_checkpoint(SHARD_KB, sid)
    ]

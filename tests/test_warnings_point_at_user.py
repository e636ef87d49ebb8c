"""Every warning a user can trigger points at the user's own line (the call that ran, loaded,
listed or validated), never at the package's internals, however deep the call went
(``_util.warn.user_stacklevel``), so ``warnings.filterwarnings(..., module=...)`` and a
notebook's warning line work. One test per warning class; ``DepthWarning`` and the dry run's
warnings are in tests/test_systems_found.py."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from heta_notebook import (
    BeirBenchmark,
    BeirRetrievalMetric,
    BenchmarkWarning,
    JudgedAtK,
    Recipe,
    ReportStore,
    SaturationWarning,
    run_benchmark,
    validate_benchmark,
)
from heta_notebook.labels import UnjudgedWarning
from heta_notebook.reports import CheckpointWarning, ReportWarning
from tests._compare_helpers import scored_report
from tests._kb_helpers import write_beir
from tests._systems_helpers import ranked_ids
from tests.test_schema import make_report

CORPUS = [
    {"_id": "a", "title": "Wings", "text": "lift and drag"},
    {"_id": "b", "title": "", "text": "heat transfer"},
]
QUERIES = [{"_id": "1", "text": "lift?"}, {"_id": "2", "text": "heat?"}, {"_id": "3", "text": "?"}]


def _caught(call: Callable[[], Any], category: type[Warning]) -> list[warnings.WarningMessage]:
    """The warnings of ``category`` that ``call`` raises (each one, not once per place)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    found = [w for w in caught if issubclass(w.category, category)]
    assert found, f"no {category.__name__}"
    return found


def _first_document(text: str) -> list[str]:
    return ["a"]


def test_benchmark_warnings_point_at_the_load_or_the_run(tmp_path) -> None:
    """Dropped qrels rows, unjudged queries left out, labels of unknown queries."""
    qrels = ["1\ta\t1", "2\tb\t1", "9\ta\t1", "1\tzzz\t1"]  # 3 is unjudged; 9 and zzz unknown
    folder = write_beir(tmp_path / "beir", CORPUS, QUERIES, qrels)
    labels = {"1": {"topic": "aero"}, "404": {"topic": "none"}}
    loaded = _caught(lambda: BeirBenchmark(folder, labels=labels).load(), BenchmarkWarning)
    assert len(loaded) == 3 and all(w.filename == __file__ for w in loaded)
    options = {"evaluators": [BeirRetrievalMetric("ndcg", 1)], "progress": False}
    benchmark = BeirBenchmark(folder)
    ran = _caught(
        lambda: run_benchmark(benchmark=benchmark, recipe=_first_document, **options), Warning
    )
    ran = [w for w in ran if issubclass(w.category, BenchmarkWarning)]
    assert len(ran) == 2 and all(w.filename == __file__ for w in ran)


def test_a_rebuilt_kb_cache_warning_points_at_the_run(tmp_path) -> None:
    folder = write_beir(tmp_path / "beir", CORPUS, QUERIES[:2], ["1\ta\t1", "2\tb\t1"])
    options = {
        "benchmark": BeirBenchmark(folder),
        "recipe": Recipe(name="bm25", dense=None, hybrid=None, answer=None),
        "evaluators": [BeirRetrievalMetric("ndcg", 1)],
        "workspace": tmp_path / "kb",
        "progress": False,
    }
    run_benchmark(**options)
    [cached] = (tmp_path / "kb").rglob("kb.json")
    cached.write_text("{not json", encoding="utf-8")
    [rebuilt] = [
        w
        for w in _caught(lambda: run_benchmark(**options), UserWarning)
        if "rebuilding unreadable cached KB" in str(w.message)
    ]
    assert rebuilt.filename == __file__


def test_a_listing_warning_points_at_the_store_call(tmp_path) -> None:
    store = ReportStore(tmp_path / "store")
    path = store.save(make_report())
    (path.parent / "summary.json").write_text("[1, 2")  # a damaged listing row
    [damaged] = _caught(store.list, ReportWarning)
    assert "summary.json" in str(damaged.message) and damaged.filename == __file__
    [deeper] = _caught(store.load_all, ReportWarning)  # listed on the way: the same line
    assert deeper.filename == __file__


def test_a_cut_checkpoint_warning_points_at_the_read(tmp_path) -> None:
    store = ReportStore(tmp_path)
    results = make_report().case_results
    with store.run("kb", "run", fingerprint="fp") as checkpoint:
        checkpoint.append(results[:1])
        checkpoint.append(results[1:2])
    path = store.checkpoint_path("kb", "run")
    data = bytearray(path.read_bytes())
    data[-20] ^= 0xFF  # the second batch damaged behind its sum
    path.write_bytes(bytes(data))
    [cut] = _caught(lambda: store.read_checkpoint("kb", "run"), CheckpointWarning)
    assert cut.filename == __file__


def test_an_unjudged_warning_points_at_the_run() -> None:
    def run() -> None:
        run_benchmark(
            benchmark=BeirBenchmark.cranfield(),
            recipe=lambda text: ranked_ids(text),
            evaluators=[JudgedAtK(10)],
            limit=3,
            progress=False,
        )

    unjudged = _caught(run, UnjudgedWarning)  # one per scored batch
    assert all(w.filename == __file__ for w in unjudged)


def test_a_saturation_warning_points_at_validate_benchmark() -> None:
    near_top = {"beir_ndcg@10": [0.97, 0.99, 0.98, 0.99]}
    runs = SimpleNamespace(reports={s: scored_report(s, near_top) for s in ("a", "b", "c")})
    [saturated] = _caught(
        lambda: validate_benchmark(runs, systems=[], scores=["beir_ndcg@10"]), SaturationWarning
    )
    assert saturated.filename == __file__


def test_a_stopped_ray_runs_resume_hint_points_at_the_line_that_ran_it(monkeypatch) -> None:
    """The Ray executor's resume hint (a partial report), without a cluster: its run of the
    shards is replaced by one that stops after one of two cases."""
    from heta_notebook.runner._ray_executor import _RecipeOnRay

    partial = make_report()
    partial = partial.model_copy(
        update={"case_results": partial.case_results[:1], "metadata": {"partial": True}}
    )
    on_ray = _RecipeOnRay.__new__(_RecipeOnRay)

    async def stopped(*args: Any) -> Any:
        return partial

    monkeypatch.setattr(on_ray, "_execute_held", stopped)
    spec = SimpleNamespace(
        store=None,
        config=SimpleNamespace(persist_report=False),
        label="bm25",
        groups=[SimpleNamespace(cases=[1, 2])],
        query_modes=["default"],
    )
    execute = on_ray._execute(spec, None, [], "", 0.0)  # type: ignore[arg-type]
    [hint] = _caught(lambda: asyncio.run(execute), RuntimeWarning)
    assert "interrupted with 1 of 2 case results" in str(hint.message)
    assert hint.filename == __file__

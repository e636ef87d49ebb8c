"""One checkpoint format in every kind of store (issue 33: "two checkpoint formats"; issue
40: "every stored byte is checked"): a local folder, an fsspec memory store and an fsspec
store over local files all append to ``cases.arrows`` with ``cases.arrows.sums``, resume
from it alone, and are never resumed silently wrong after a flipped bit.

Budget: ``FLIPS`` seeded flips per file and store kind in the default suite, through the
real resume path (open the run, read what it resumes, append the rest); ``SOAK_FLIPS``
under ``-m soak``. The flips of the stream's bytes alone (no store) are in
``test_fuzz_checkpoints.py``.
"""

from __future__ import annotations

import random
import warnings

import pytest

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner
from heta_notebook.reports._checkpoint import CHECKPOINT, CHECKPOINT_SUMS
from tests._runner_helpers import (
    MODES,
    AnswerMatch,
    ListBenchmark,
    TopHit,
    ToyKB,
    comparable,
    make_cases,
)
from tests._store_kinds import STORE_KINDS, store_of_kind
from tests.test_store_columnar import synthetic_report

FLIPS = 10  # per file (stream, sums) and store kind
SOAK_FLIPS = 500


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_interrupted_run_resumes_from_the_arrow_checkpoint_in_every_store(tmp_path, kind):
    options = dict(
        benchmark=ListBenchmark(cases=make_cases(4), evaluators=(TopHit(), AnswerMatch())),
        knowledge_base_name="kb",
        query_modes=MODES,
        config=BenchmarkRunConfig(report_id="r", checkpoint_every=1, max_concurrent_queries=1),
        progress=False,
    )
    clean = (await BenchmarkRunner().run(recipe=ToyKB(), **options)).report
    with store_of_kind(kind, tmp_path) as (store, fs):
        folder = store.report_dir("kb", "r")
        with pytest.warns(RuntimeWarning, match="interrupted"):
            await BenchmarkRunner().run(recipe=ToyKB(interrupt_after=3), store=store, **options)
        names = {p.rsplit("/", 1)[-1] for p in fs.ls(str(folder), detail=False)}
        assert {CHECKPOINT, CHECKPOINT_SUMS} <= names and "cases.jsonl" not in names
        kept = len(store.read_checkpoint("kb", "r"))
        kb = ToyKB()
        final = (await BenchmarkRunner().run(recipe=kb, store=store, **options)).report
        assert kept >= 3 and kb.calls == 8 - kept
        assert comparable(final) == comparable(clean)
        assert comparable(store.load("kb", "r")) == comparable(clean)
        layout = "header.json" if kind == "local" else "report.json"  # fsspec: heta's layout
        assert store.report_path("kb", "r").name == layout
        assert not fs.exists(str(folder / CHECKPOINT))  # the complete report holds it all


@pytest.fixture(scope="module", params=STORE_KINDS)
def checkpointed(request, tmp_path_factory):
    """A real checkpoint of 3 appends (7 case results with texts, scores, errors) in a
    store of each kind, with the bytes of its two files."""
    with store_of_kind(request.param, tmp_path_factory.mktemp(request.param)) as (store, fs):
        records = list(synthetic_report(7, 3).case_results)
        with store.run("kb", "r", fingerprint="fp") as run:
            for part in (records[:2], records[2:5], records[5:]):
                run.append(part)
        stream = str(store.checkpoint_path("kb", "r"))
        files = {name: fs.cat_file(name) for name in (stream, f"{stream}.sums")}
        yield store, fs, records, files, request.param


def _resume_after_flip(checkpointed, name: str, bit: int) -> str:
    """Flip one bit of one file, resume as a run does and finish its appends: what the run
    resumes must be the clean records or a prefix of them, and the finished checkpoint
    exactly the clean records; anything refused or cut names the file."""
    store, fs, records, files, _ = checkpointed
    for path, data in files.items():
        fs.pipe_file(path, data)
    flipped = bytearray(files[name])
    flipped[bit // 8] ^= 1 << (bit % 8)
    fs.pipe_file(name, bytes(flipped))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with store.run("kb", "r", fingerprint="fp") as run:
                kept = run.read()
                run.append(records[len(kept) :] if kept == records[: len(kept)] else [])
        except ValueError as exc:
            assert CHECKPOINT in str(exc), exc
            return "refused"
    assert all(CHECKPOINT in str(w.message) for w in caught), [str(w.message) for w in caught]
    assert kept == records[: len(kept)], f"bit {bit} of {name}: resumed different data"
    assert store.read_checkpoint("kb", "r") == records, f"bit {bit} of {name}: lost on resume"
    if len(kept) == len(records):
        return "same"
    return "cut (warned)" if caught else "cut"


def _flip_all(checkpointed, budget: int, seed: int) -> dict[str, dict[str, int]]:
    rng = random.Random(seed)
    outcomes: dict[str, dict[str, int]] = {}
    for name, data in checkpointed[3].items():
        counts = outcomes.setdefault(name.rsplit("/", 1)[-1], {})
        for bit in rng.sample(range(len(data) * 8), min(budget, len(data) * 8)):
            outcome = _resume_after_flip(checkpointed, name, bit)
            counts[outcome] = counts.get(outcome, 0) + 1
    return outcomes


def test_a_flipped_bit_is_never_resumed_silently_wrong_in_any_store(checkpointed):
    outcomes = _flip_all(checkpointed, FLIPS, seed=33)
    assert "same" not in outcomes[CHECKPOINT], outcomes  # every flip of the stream is seen
    assert outcomes[CHECKPOINT].get("cut (warned)", 0) > 0


@pytest.mark.soak
def test_soak_flips_are_never_resumed_silently_wrong_in_any_store(checkpointed):
    outcomes = _flip_all(checkpointed, SOAK_FLIPS, seed=3340)
    print(f"\nsoak ({checkpointed[4]} store): {outcomes}")
    assert "same" not in outcomes[CHECKPOINT], outcomes

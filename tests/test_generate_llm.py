"""The LLM generator against a real loopback server: good, garbage, unsupported, duplicate,
context-bound, closed-book-answerable replies and a timeout. Only good cases are kept; every
other candidate is dropped with its reason; nothing generated is lost."""

from __future__ import annotations

import json

import pytest

from heta_notebook import BeirBenchmark, generate_benchmark
from tests._judge_server import JudgeServer, Reply

TOPICS = {
    "alpha": "The alpha wing was tested in a wind tunnel at Mach two. Its lift rose with the angle of attack.",
    "bravo": "The bravo engine burns kerosene with liquid oxygen. Its thrust reached nine hundred kilonewtons.",
    "charlie": "Charlie studied boundary layers over heated plates. Heat transfer doubled near the leading edge.",
    "delta": "The delta probe measured shock waves around blunt bodies. The standoff distance shrank with speed.",
    "echo": "Echo panels flutter when the dynamic pressure exceeds a critical value set by their stiffness.",
    "foxtrot": "Foxtrot nozzles expand hot gas through a throat. The exit velocity depends on the pressure ratio.",
    "golf": "The golf ball dimples trip the boundary layer to turbulence, which delays separation and cuts drag.",
    "india": "India rotor blades showed fatigue cracks after ten thousand load cycles.",
    "juliet": "Juliet struts buckle under axial load once the slenderness ratio passes a limit.",
}
GOOD = {
    "alpha": ("At what Mach number was the alpha wing tested in the wind tunnel?", "Mach two"),
    "bravo": ("Which oxidiser does the bravo engine burn with kerosene?", "liquid oxygen"),
    "foxtrot": ("On what does the exit velocity of foxtrot nozzles depend?", "the pressure ratio"),
    "golf": ("Why do dimples on a golf ball reduce drag?", "delays separation"),
}


def _route(request: dict) -> Reply:
    system, user = (m["content"] for m in request["messages"])
    if system.startswith("Answer the question"):  # the closed-book check
        if "golf" in user:
            return Reply(content="It delays separation.")  # known without the evidence
        return Reply(content="I do not know.")
    if "alpha-b" in user:  # the same question again
        question = GOOD["alpha"][0].replace("alpha", "alpha-b")
        return Reply(content=json.dumps({"question": question, "answer": "Mach two"}))
    name = next(n for n in TOPICS if TOPICS[n] in user)
    if name in GOOD:
        question, answer = GOOD[name]
        return Reply(content=json.dumps({"question": question, "answer": answer}))
    if name == "charlie":
        return Reply(content="Sure! Here is a question about heat.")  # garbage
    if name == "delta":
        reply = {
            "question": "What did the delta probe measure around blunt bodies?",
            "answer": "gravitational waves from pulsars",
        }
        return Reply(content=json.dumps(reply))  # unsupported
    if name == "india":  # points at its context
        reply = {
            "question": "What does the passage say about India rotor blades?",
            "answer": "fatigue cracks",
        }
        return Reply(content=json.dumps(reply))
    if name == "juliet":  # holds its answer
        reply = {
            "question": "Do Juliet struts buckle under axial load?",
            "answer": "buckle under axial load",
        }
        return Reply(content=json.dumps(reply))
    if name == "echo":
        return Reply(content="{}", delay=2.0)  # a timeout
    raise AssertionError(name)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    corpus = [{"_id": name, "title": "", "text": text} for name, text in TOPICS.items()]
    corpus.append({"_id": "hotel", "text": "Hotel: " + TOPICS["alpha"].replace("alpha", "alpha-b")})
    folder = tmp_path_factory.mktemp("llm")
    with JudgeServer() as server:
        server.route = _route
        server.default = Reply(content="{}")
        benchmark = generate_benchmark(
            corpus, 10, method="llm", seed=0, folder=folder, model="scripted",
            base_url=server.base_url, timeout=0.5, max_retries=0, prices={"prompt": 0.5, "completion": 1.5},
        )  # fmt: skip
        return benchmark, list(server.requests)


def test_only_good_cases_are_kept(generated) -> None:
    benchmark, _ = generated
    cases = benchmark.load().cases
    kept = {c.expected.evidence[0].reference_id: c for c in cases}
    assert set(kept) == {"alpha", "bravo", "foxtrot"}
    assert kept["bravo"].query == GOOD["bravo"][0]
    assert kept["bravo"].expected.answers == ("liquid oxygen",)
    assert 0 <= kept["bravo"].metadata["difficulty"] <= 1


def test_every_other_candidate_says_why(generated) -> None:
    benchmark, _ = generated
    manifest = benchmark.generation
    reasons = {d["document_id"]: d["reason"] for d in manifest.drops}
    assert reasons == {
        "charlie": "unparseable",
        "delta": "unsupported_answer",
        "echo": "request_failed",
        "golf": "answerable_without_evidence",
        "hotel": "near_duplicate",
        "india": "not_self_contained",
        "juliet": "answer_in_question",
    }
    counts = manifest.counts
    assert counts["generated"] == 10 == counts["kept"] + sum(counts["dropped"].values())
    duplicate = next(d for d in manifest.drops if d["reason"] == "near_duplicate")
    assert "alpha-b wing" in duplicate["question"]  # the generated text is kept, not lost
    assert (
        "no reply within" in next(d for d in manifest.drops if d["document_id"] == "echo")["detail"]
    )


def test_usage_cost_model_and_prompt_hash_are_recorded(generated) -> None:
    benchmark, requests = generated
    manifest = benchmark.generation
    assert manifest.model == "scripted" and len(manifest.prompt_hash) == 64
    usage = manifest.usage
    answered = len(requests) - 1  # the timed-out request got no usage back
    assert usage["requests"] == len(requests)
    assert usage["prompt_tokens"] == 42 * answered and usage["completion_tokens"] == 7 * answered
    assert usage["cost"] == pytest.approx((42 * 0.5 + 7 * 1.5) * answered / 1000)
    assert "api_key" not in json.dumps(manifest.to_dict()).lower()


def test_saved_folder_reads_back_as_beir_with_manifest(generated) -> None:
    benchmark, _ = generated
    beir = BeirBenchmark.from_folder(benchmark.folder)
    assert beir.manifest.metadata["generation"]["method"] == "llm"
    assert [c.query for c in beir.load().cases] == [c.query for c in benchmark.load().cases]


def test_limit_takes_the_first_chunks(tmp_path) -> None:
    corpus = [{"_id": name, "text": text} for name, text in TOPICS.items() if name in GOOD]
    with JudgeServer() as server:
        server.route = _route
        benchmark = generate_benchmark(
            corpus, 10, method="llm_multihop", folder=tmp_path, model="m",
            base_url=server.base_url, limit=2, closed_book_check=False,
        )  # fmt: skip
        asked = len(server.requests)
    assert asked == 2 and benchmark.generation.counts["generated"] == 2
    first = benchmark.load().cases[0]
    assert len(first.expected.evidence) == 2  # multi-hop: two source documents


def test_a_second_run_asks_only_what_it_does_not_have(tmp_path) -> None:
    corpus = [{"_id": n, "text": TOPICS[n]} for n in ("alpha", "bravo", "echo")]
    options = {"model": "m", "timeout": 0.5, "max_retries": 0, "cache_dir": tmp_path / "cache"}
    with JudgeServer() as server:
        server.route = _route
        first = generate_benchmark(corpus, 3, method="llm", folder=tmp_path / "1",
                                   base_url=server.base_url, **options)  # fmt: skip
        assert first.generation.counts["dropped"] == {"request_failed": 1}
        before = server.seen_within(5)
        assert before == 5  # three questions, two closed-book checks

        def answer_echo(request: dict) -> Reply:
            if "Echo panels" in request["messages"][1]["content"]:
                reply = {"question": "When do echo panels flutter?", "answer": "critical value"}
                return Reply(content=json.dumps(reply))
            return _route(request)

        server.route = answer_echo
        second = generate_benchmark(corpus, 3, method="llm", folder=tmp_path / "2",
                                    base_url=server.base_url, **options)  # fmt: skip
        assert server.seen_within(before + 2) - before == 2  # echo's question and its check
    assert second.generation.counts == {"generated": 3, "kept": 3, "dropped": {}}
    assert second.generation.usage["cached"] == 4

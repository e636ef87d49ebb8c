"""The recipe's answer step: extractive answers with citations on every mode, abstention,
manifests, and the KB cache (answers are per query, not per build)."""

from __future__ import annotations

import pytest

from heta_notebook._util.redaction import mark
from heta_notebook.kb._answer import ChatAnswer, Extractive, extractive_answer, phrase, sentences
from heta_notebook.kb._cache import build_or_load, cache_key
from heta_notebook.kb._knowledge_base import KnowledgeBase
from heta_notebook.kb._recipe import Recipe
from heta_notebook.schema import BenchmarkDocument, QueryResult

DOCS = [
    BenchmarkDocument(
        document_id="normandy",
        text=(
            "The Normans were the people who gave their name to Normandy. "
            "Normandy is a region in France. Its capital is Rouen."
        ),
    ),
    BenchmarkDocument(
        document_id="complexity",
        text=(
            "Computational complexity theory classifies problems by difficulty. "
            "A Turing machine is a mathematical model of computation."
        ),
    ),
    BenchmarkDocument(document_id="cooking", text="Bread needs flour, water, salt and yeast."),
]


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.build_sync(Recipe(name="tiny", dense=None, hybrid=None), DOCS)


def test_default_recipe_answers_extractively():
    assert Recipe(name="r").answer == Extractive()
    assert Recipe(name="r", answer="extractive").answer == Extractive()
    assert Recipe(name="r", answer=None).answer is None


@pytest.mark.parametrize("mode", ["full_text_search", "vector_search", "hybrid_search"])
async def test_every_mode_answers_with_a_citation(mode):
    kb = KnowledgeBase.build_sync(Recipe(name="all", dense={"dims": 2}), DOCS)
    response = await kb.query("Which region is Normandy?", mode=mode, top_k=3)
    assert response.answer == "Normandy is a region in France."
    [citation] = response.citations
    assert citation.result_id == "normandy#0" and citation.text == response.answer
    assert citation.result_id in {r.id for r in response.results}
    assert citation.source["benchmark_document_id"] == "normandy"
    meta = response.metadata["answer"]
    assert meta["answerer"] == "extractive" and meta["prompt_version"] == "extractive/1"
    assert meta["abstained"] is False and meta["latency_ms"] >= 0
    assert response.trace[-1].stage == "answer"


async def test_abstains_when_no_sentence_holds_the_question(kb):
    response = await kb.query("Who painted the Mona Lisa?", mode="full_text_search", top_k=3)
    assert response.answer is None and response.citations == ()
    assert response.metadata["answer"]["abstained"] is True
    assert response.results  # retrieval is kept


def test_answering_never_changes_the_ranking():
    plain = KnowledgeBase.build_sync(Recipe(name="p", answer=None, dense={"dims": 2}), DOCS)
    answering = KnowledgeBase.build_sync(Recipe(name="a", dense={"dims": 2}), DOCS)
    for mode in plain.query_modes:
        without = plain.query_sync("What is its capital?", mode=mode, top_k=3)
        with_answer = answering.query_sync("What is its capital?", mode=mode, top_k=3)
        assert without.answer is None and "answer" not in without.metadata
        assert with_answer.answer == "Its capital is Rouen."
        assert with_answer.results == without.results


def test_extractive_is_deterministic_and_prefers_the_higher_ranked_result():
    results = (
        QueryResult(id="a", text="Rouen is the capital. Paris is big."),
        QueryResult(id="b", text="Rouen is the capital of Normandy."),
    )
    step = Extractive(min_overlap=0.3)
    first = extractive_answer(step, "What is the capital?", results)
    assert first.text == "Rouen is the capital." and first.citations[0].result_id == "a"
    assert extractive_answer(step, "What is the capital?", results).text == first.text
    # more of the question's words beat rank
    best = extractive_answer(step, "capital of Normandy?", results)
    assert best.citations[0].result_id == "b"
    # only the top `top_results` are read
    top_one = Extractive(top_results=1, min_overlap=1.0)
    only_b = extractive_answer(top_one, "capital Normandy", results[::-1])
    assert only_b.citations[0].result_id == "b"
    assert extractive_answer(top_one, "capital Normandy", results).text is None


def test_phrase_span_answers_with_the_words_next_to_the_question():
    results = (QueryResult(id="r", text="Normandy is a region in France. It rains."),)
    answer = extractive_answer(Extractive(span="phrase"), "Normandy is a region in?", results)
    assert answer.text == "France"
    assert answer.citations[0].text == "Normandy is a region in France."
    assert phrase("The capital of Normandy is Rouen", frozenset({"capital", "normandy"}), 6) == (
        "Rouen"
    )


def test_sentences_split_on_end_marks_and_newlines():
    text = 'He said "Go." Then left!\nNew line here? yes'
    assert [text[a:b] for a, b in sentences(text)] == [
        'He said "Go."',
        "Then left!",
        "New line here?",
        "yes",
    ]


def test_manifest_records_the_answer_step_and_redacts_secrets():
    step = ChatAnswer(
        model="m",
        base_url="https://user:pw@llm.example/v1?api_key=sk-123",
        api_key_env="MY_KEY",
    )
    manifest = Recipe(name="chat", answer=step).manifest()
    answer = manifest["answer"]
    assert answer["kind"] == "chat" and answer["model"] == "m"
    assert answer["api_key_env"] == "MY_KEY"  # a variable's name, not a secret
    assert answer["base_url"].startswith("https://") and "llm.example/v1" in answer["base_url"]
    assert answer["prompt"]["version"] == "grounded-answer/1"
    assert "sk-123" not in str(manifest) and "pw@" not in str(manifest)
    assert Recipe(name="e").manifest()["answer"]["kind"] == "extractive"
    assert Recipe(name="x", dense={"options": {"api_key": "s"}}).manifest()["dense"]["options"] == {
        "api_key": mark("s")
    }


def test_manifest_round_trips_with_the_answer_step():
    recipe = Recipe(name="chat", answer=ChatAnswer(model="m", base_url="http://127.0.0.1:1/v1"))
    assert Recipe.from_manifest(recipe.manifest()) == recipe
    assert recipe.hash != Recipe(name="chat").hash  # reports tell answerers apart


async def test_kb_cache_ignores_the_answer_step(tmp_path):
    extractive = Recipe(name="a", dense=None, hybrid=None)
    chat = Recipe(
        name="a", dense=None, hybrid=None, answer=ChatAnswer(model="m", base_url="http://x/v1")
    )
    assert cache_key(extractive, DOCS) == cache_key(chat, DOCS)
    first = await build_or_load(extractive, DOCS, knowledge_base_name="k", workspace=tmp_path)
    second = await build_or_load(
        Recipe(name="a", dense=None, hybrid=None, answer=Extractive(span="phrase")),
        DOCS,
        knowledge_base_name="k",
        workspace=tmp_path,
    )
    assert first.facts["cache"]["hit"] is False and second.facts["cache"]["hit"] is True
    assert second.recipe.answer == Extractive(span="phrase")  # the caller's step answers
    response = await second.query(
        "Normandy is a region of which country?", mode="full_text_search", top_k=2
    )
    assert response.answer == "France"

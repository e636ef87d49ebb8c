"""The embedded default knowledge base: recipes, chunking, indexes (BM25, dense, hybrid),
query modes, the KB cache and the answer step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_notebook._util.lazy import lazy_exports

_EXPORTS = {
    "Answer": "heta_notebook.kb._answer",
    "AnswerPrompt": "heta_notebook.kb._answer",
    "AnswerStep": "heta_notebook.kb._answer",
    "ChatAnswer": "heta_notebook.kb._answer",
    "CustomAnswer": "heta_notebook.kb._answer",
    "DEFAULT_ANSWER_PROMPT": "heta_notebook.kb._answer",
    "Extractive": "heta_notebook.kb._answer",
    "answer_response": "heta_notebook.kb._answer",
    "answer_response_sync": "heta_notebook.kb._answer",
    "extractive_answer": "heta_notebook.kb._answer",
    "with_answer": "heta_notebook.kb._answer",
    "Bm25": "heta_notebook.kb._recipe",
    "Chunking": "heta_notebook.kb._recipe",
    "Dense": "heta_notebook.kb._recipe",
    "Hybrid": "heta_notebook.kb._recipe",
    "Recipe": "heta_notebook.kb._recipe",
    "redact": "heta_notebook.kb._recipe",
    "Embedder": "heta_notebook.kb._embedders",
    "LsaEmbedder": "heta_notebook.kb._embedders",
    "SentenceTransformerEmbedder": "heta_notebook.kb._embedders",
    "embedder_for": "heta_notebook.kb._embedders",
    "normalize_rows": "heta_notebook.kb._embedders",
    "KnowledgeBase": "heta_notebook.kb._knowledge_base",
    "KnowledgeBaseProtocol": "heta_notebook.kb._protocol",
    "RecipeProtocol": "heta_notebook.kb._protocol",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the lazy exports, spelled out for type checkers
    from heta_notebook.kb._answer import (  # noqa: F401
        DEFAULT_ANSWER_PROMPT,
        Answer,
        AnswerPrompt,
        AnswerStep,
        ChatAnswer,
        CustomAnswer,
        Extractive,
        answer_response,
        answer_response_sync,
        extractive_answer,
        with_answer,
    )
    from heta_notebook.kb._embedders import (  # noqa: F401
        Embedder,
        LsaEmbedder,
        SentenceTransformerEmbedder,
        embedder_for,
        normalize_rows,
    )
    from heta_notebook.kb._knowledge_base import (  # noqa: F401
        KnowledgeBase,
    )
    from heta_notebook.kb._protocol import (  # noqa: F401
        KnowledgeBaseProtocol,
        RecipeProtocol,
    )
    from heta_notebook.kb._recipe import (  # noqa: F401
        Bm25,
        Chunking,
        Dense,
        Hybrid,
        Recipe,
        redact,
    )

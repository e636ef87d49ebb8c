"""The embedded default knowledge base: recipes, indexes (BM25, dense LSA, hybrid) and query modes."""

"""Evaluators: the protocol and settings, retrieval and answer metrics, decorators, judges, aggregation."""

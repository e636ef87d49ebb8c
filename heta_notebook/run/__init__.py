"""The run machinery behind ``BenchmarkRunner`` and ``evaluate()``: one place for all of it.

``config`` (settings), ``scoring`` (evaluators with timeout/retry/isolation), ``execute``
(bounded worker pool, checkpoints, progress), ``report`` (summary, statistics, environment),
``inputs`` (benchmarks, recipes, heta-framework objects), ``result`` (what a run returns) and
``sync`` (the notebook-friendly synchronous entry).
"""

"""Benchmarks: where documents and cases come from. The protocol, the one loader, JSONL
(Heta), BEIR folders, records/DataFrames (HoneyHive datapoints), SQuAD, labels, and
benchmarks generated from a corpus (offline or with a model) with their manifests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_notebook._util.lazy import lazy_exports

_EXPORTS = {
    "BeirBenchmark": "heta_notebook.benchmarks._beir",
    "benchmark_document_id": "heta_notebook.benchmarks._beir",
    "cranfield_folder": "heta_notebook.benchmarks._beir",
    "read_qrels": "heta_notebook.benchmarks._beir",
    "BenchmarkFormatError": "heta_notebook.benchmarks._io",
    "BenchmarkWarning": "heta_notebook.benchmarks._io",
    "BenchmarkProtocol": "heta_notebook.benchmarks._protocol",
    "BenchmarkResource": "heta_notebook.benchmarks._protocol",
    "BenchmarkRunUnit": "heta_notebook.benchmarks._protocol",
    "BenchmarkWorkspace": "heta_notebook.benchmarks._protocol",
    "LoadedBenchmark": "heta_notebook.benchmarks._protocol",
    "PreparedBenchmark": "heta_notebook.benchmarks._protocol",
    "load_benchmark": "heta_notebook.benchmarks._protocol",
    "load_benchmark_sync": "heta_notebook.benchmarks._protocol",
    "JsonlBenchmark": "heta_notebook.benchmarks._jsonl",
    "as_manifest": "heta_notebook.benchmarks._jsonl",
    "read_cases": "heta_notebook.benchmarks._jsonl",
    "read_documents": "heta_notebook.benchmarks._jsonl",
    "LabelSource": "heta_notebook.benchmarks._labels",
    "read_labels": "heta_notebook.benchmarks._labels",
    "RecordsBenchmark": "heta_notebook.benchmarks._records",
    "case_from_record": "heta_notebook.benchmarks._records",
    "RunUnit": "heta_notebook.benchmarks._loader",
    "SquadBenchmark": "heta_notebook.benchmarks._squad",
    "squad2_sample_path": "heta_notebook.benchmarks._squad",
    "GeneratedBenchmark": "heta_notebook.benchmarks._generate",
    "generate_benchmark": "heta_notebook.benchmarks._generate",
    "GenerationManifest": "heta_notebook.benchmarks._generation_manifest",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the lazy exports, spelled out for type checkers
    from heta_notebook.benchmarks._beir import (  # noqa: F401
        BeirBenchmark,
        benchmark_document_id,
        cranfield_folder,
        read_qrels,
    )
    from heta_notebook.benchmarks._generate import (  # noqa: F401
        GeneratedBenchmark,
        generate_benchmark,
    )
    from heta_notebook.benchmarks._generation_manifest import (  # noqa: F401
        GenerationManifest,
    )
    from heta_notebook.benchmarks._io import (  # noqa: F401
        BenchmarkFormatError,
        BenchmarkWarning,
    )
    from heta_notebook.benchmarks._jsonl import (  # noqa: F401
        JsonlBenchmark,
        as_manifest,
        read_cases,
        read_documents,
    )
    from heta_notebook.benchmarks._labels import (  # noqa: F401
        LabelSource,
        read_labels,
    )
    from heta_notebook.benchmarks._loader import (  # noqa: F401
        RunUnit,
    )
    from heta_notebook.benchmarks._protocol import (  # noqa: F401
        BenchmarkProtocol,
        BenchmarkResource,
        BenchmarkRunUnit,
        BenchmarkWorkspace,
        LoadedBenchmark,
        PreparedBenchmark,
        load_benchmark,
        load_benchmark_sync,
    )
    from heta_notebook.benchmarks._records import (  # noqa: F401
        RecordsBenchmark,
        case_from_record,
    )
    from heta_notebook.benchmarks._squad import (  # noqa: F401
        SquadBenchmark,
        squad2_sample_path,
    )

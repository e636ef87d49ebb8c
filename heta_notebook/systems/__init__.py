"""The one door for a system under test: recipes, built KBs, functions, objects with ``query``,
LangChain / LlamaIndex objects and HTTP services, all behind one query protocol; the checks
run before a run (output shape, id coverage) and the stages record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_notebook._util.lazy import lazy_exports

_EXPORTS = {
    "DEFAULT_MODE": "heta_notebook.systems._adapt",
    "System": "heta_notebook.systems._adapt",
    "as_system": "heta_notebook.systems._adapt",
    "stamp_documents": "heta_notebook.systems._adapt",
    "IdCoverage": "heta_notebook.systems._check",
    "IdCoverageError": "heta_notebook.systems._check",
    "NoResultsError": "heta_notebook.systems._check",
    "id_coverage": "heta_notebook.systems._check",
    "preflight": "heta_notebook.systems._check",
    "HttpSystem": "heta_notebook.systems._http",
    "HttpSystemError": "heta_notebook.systems._http",
    "ACCEPTED_FORMS": "heta_notebook.systems._normalize",
    "Abstain": "heta_notebook.schema._abstain",
    "SystemOutputError": "heta_notebook.systems._normalize",
    "normalize_response": "heta_notebook.systems._normalize",
    "Stage": "heta_notebook.systems._stages",
    "Stages": "heta_notebook.systems._stages",
    "response_stages": "heta_notebook.systems._stages",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the lazy exports, spelled out for type checkers
    from heta_notebook.schema._abstain import Abstain  # noqa: F401
    from heta_notebook.systems._adapt import (  # noqa: F401
        DEFAULT_MODE,
        System,
        as_system,
        stamp_documents,
    )
    from heta_notebook.systems._check import (  # noqa: F401
        IdCoverage,
        IdCoverageError,
        NoResultsError,
        id_coverage,
        preflight,
    )
    from heta_notebook.systems._http import (  # noqa: F401
        HttpSystem,
        HttpSystemError,
    )
    from heta_notebook.systems._normalize import (  # noqa: F401
        ACCEPTED_FORMS,
        SystemOutputError,
        normalize_response,
    )
    from heta_notebook.systems._stages import (  # noqa: F401
        Stage,
        Stages,
        response_stages,
    )

"""Shared helpers of the heta-framework adapters: the lazy import and the type check (their
JSON copies are ``_util.jsondata.json_copy``)."""

from __future__ import annotations

from types import ModuleType

INSTALL_HINT = "pip install 'heta-notebook[heta]'"


def require_heta(what: str = "this feature") -> ModuleType:
    """Import ``heta_framework.evaluation`` or fail with the command that installs it."""
    try:
        import heta_framework.evaluation as evaluation
    except ImportError as exc:
        raise ImportError(
            f"{what} needs heta-framework, which is not installed; install it with: {INSTALL_HINT}"
        ) from exc
    return evaluation


def is_heta_object(obj: object) -> bool:
    """True when ``obj`` is an instance of a class defined in ``heta_framework``.

    Looks only at the type's module name, so it never imports heta-framework.
    """
    module = getattr(type(obj), "__module__", "") or ""
    return module == "heta_framework" or module.startswith("heta_framework.")

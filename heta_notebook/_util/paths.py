"""The one place where names (knowledge bases, report ids, cache keys) become path parts.

Every file the library writes goes through :func:`safe_name` and :func:`safe_join`, so a
name taken from a report, a notebook or a model can never escape the store root; files are
written whole through :func:`atomic_write_text`; scratch space without a store is
:func:`temp_folder`.
"""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
import time
from pathlib import Path, PurePosixPath, PureWindowsPath

# hyphenated: a folder named like the package in /tmp would shadow it for scripts run there
_TEMP_ROOT = "heta-notebook-cache"


class UnsafeNameError(ValueError):
    """A name that would escape its folder or is not a single path part."""


def slug(value: str) -> str:
    """heta-framework's key slug: lower case, runs of whitespace joined by ``_``."""
    return "_".join(value.strip().lower().split())


def safe_name(value: str, *, what: str = "name") -> str:
    """Return ``value`` slugged as heta-framework does, or raise if it is not one safe path part.

    Rejected: empty names, ``.`` and ``..``, path separators (``/`` and ``\\``), NUL and other
    control characters, drive letters and absolute paths, and names Windows reserves
    (``CON``, ``NUL``, ``COM1``, ``aux.txt``, ``<>:"|?*``, a trailing dot or space).
    """
    if not isinstance(value, str):
        raise UnsafeNameError(f"{what} must be a string, got {type(value).__name__}")
    if any(ord(ch) < 32 for ch in value):
        raise UnsafeNameError(f"{what} {value!r} contains a control character (NUL, newline, ...)")
    name = slug(value)
    if not name:
        raise UnsafeNameError(f"{what} must not be empty")
    if name in {".", ".."}:
        raise UnsafeNameError(f"{what} {value!r} is not allowed as a path part")
    if "/" in name or "\\" in name:
        raise UnsafeNameError(f"{what} {value!r} must not contain path separators")
    if PurePosixPath(name).is_absolute() or PureWindowsPath(name).drive:
        raise UnsafeNameError(f"{what} {value!r} must not be an absolute path")
    if is_windows_reserved(name):
        raise UnsafeNameError(
            f"{what} {value!r} is reserved on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9, "
            "or a name ending in a dot or space); a store must open on every system"
        )
    return name


_WINDOWS_DEVICES = frozenset(
    ["con", "prn", "aux", "nul", "conin$", "conout$"]
    + [
        f"{kind}{n}"
        for kind in ("com", "lpt")
        for n in [*"123456789", "\u00b9", "\u00b2", "\u00b3"]
    ]
)


def is_windows_reserved(name: str) -> bool:
    """True for names Windows cannot create: devices (also with an extension), or a trailing dot/space."""
    device = name.split(".", 1)[0].rstrip(" ").lower()
    return (
        device in _WINDOWS_DEVICES or name.endswith((".", " ")) or any(c in name for c in '<>:"|?*')
    )


def safe_join(root: str | os.PathLike[str], *parts: str) -> Path:
    """Join ``root`` with already-safe ``parts`` and refuse a result outside ``root``.

    Symlinks are resolved, so a link inside the store that points elsewhere is refused too.
    """
    base = Path(root).resolve()
    target = base.joinpath(*parts)
    resolved = target.resolve()
    if resolved != base and base not in resolved.parents:
        raise UnsafeNameError(f"{target} resolves to {resolved}, outside the store root {base}")
    return target


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; stores are meant to be shared
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    remove_stale_temps(path)


STALE_TEMP_SECONDS = 300.0  # a temp file untouched this long belongs to a killed write


def remove_stale_temps(path: Path, *, older_than: float = STALE_TEMP_SECONDS) -> list[Path]:
    """Remove the temp files killed writes of ``path`` left (``.{name}.*.tmp`` untouched for
    ``older_than`` seconds: a live writer's file is younger); return what was removed."""
    removed = []
    now = time.time()
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        with contextlib.suppress(OSError):  # gone already, or not ours to remove
            if now - tmp.lstat().st_mtime > older_than and not tmp.is_symlink():
                tmp.unlink()
                removed.append(tmp)
    return removed


def temp_folder(*parts: str) -> Path:
    """``{tmp}/heta-notebook-cache/{parts}``, created: the one scratch place when no store is given.

    Builds and prepared benchmarks there are keyed by content hashes, so sharing it is safe.
    """
    path = Path(tempfile.gettempdir(), _TEMP_ROOT, *(safe_name(p, what="folder") for p in parts))
    path.mkdir(parents=True, exist_ok=True)
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask

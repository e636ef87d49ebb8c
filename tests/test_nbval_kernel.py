"""The notebooks' nbval run starts a kernel again when it dies while starting, and says why
when it dies every time (tests/_nbval_kernel.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests import _nbval_kernel


def _kernelspec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, code: str) -> None:
    spec = tmp_path / "jupyter" / "kernels" / name
    spec.mkdir(parents=True)
    argv = [sys.executable, "-c", code, "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": name}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))


@pytest.mark.slow
def test_a_kernel_that_always_dies_fails_with_its_stderr(tmp_path, monkeypatch):
    _kernelspec(tmp_path, monkeypatch, "dying", "import sys; sys.exit('no ports for me')")
    with pytest.raises(RuntimeError, match="failed to start 3 times") as raised:
        _nbval_kernel.start_new_kernel(startup_timeout=20, kernel_name="dying")
    assert "no ports for me" in str(raised.value)


@pytest.mark.slow
def test_a_kernel_that_dies_once_is_started_again(tmp_path, monkeypatch):
    marker = tmp_path / "died-once"
    code = (
        "import pathlib, sys\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "if not marker.exists():\n"
        "    marker.touch(); sys.exit('first start dies')\n"
        "from ipykernel import kernelapp\n"
        "kernelapp.launch_new_instance(argv=sys.argv[1:])\n"
    )
    _kernelspec(tmp_path, monkeypatch, "flaky", code)
    km, kc = _nbval_kernel.start_new_kernel(startup_timeout=60, kernel_name="flaky")
    try:
        assert marker.exists() and km.is_alive()
        reply = kc.execute_interactive("print(6 * 7)", timeout=30)
        assert reply["content"]["status"] == "ok"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)

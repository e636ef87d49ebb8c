"""A throw-away JupyterLab server and headless Chromium for the browser tests.

The server listens on 127.0.0.1 (free port, no token) with private config, data, settings,
workspace, runtime and IPython dirs, so nothing from the user's Jupyter setup leaks in and
the kernel is this interpreter's ipykernel. ``stop()`` always shuts it down, then kills any
child process (kernels) it left behind, by PID.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import suppress
from pathlib import Path
from urllib.parse import urlsplit

CHROMIUM = Path(os.environ.get("HETA_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
PROBLEM_TEXTS = (
    "Error displaying widget",
    "Loading widget",
    "model not found",
    "Javascript Error",
    "Failed to load model class",
    "Traceback",
)


def unavailable(reason: str) -> None:
    """Skip with ``reason``; on CI (CI=true), where browser tests must run, fail instead."""
    import pytest

    if os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}:
        pytest.fail(f"browser tests must run on CI: {reason}")
    pytest.skip(reason)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _children(pid: int) -> list[int]:
    """PIDs of every descendant of ``pid`` (from /proc; empty elsewhere)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        with suppress(OSError, IndexError, ValueError):
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class LabServer:
    """``python -m jupyterlab`` rooted at ``root`` with everything private to ``home``."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root, self.home = root, home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = home / "server.log"

    def _environment(self) -> dict[str, str]:
        dirs = {n: self.home / n for n in ("config", "data", "runtime", "settings", "ws", "ipy")}
        for folder in dirs.values():
            folder.mkdir(parents=True, exist_ok=True)
        config = {
            "IdentityProvider": {"token": ""},
            "ServerApp": {
                "password": "",
                "disable_check_xsrf": True,
                "open_browser": False,
                "root_dir": str(self.root),
                "ip": "127.0.0.1",
                "port": self.port,
                "port_retries": 0,
                "allow_root": True,
            },
            "LabApp": {
                "expose_app_in_browser": True,
                "news_url": None,
                "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
                "extension_manager": "readonly",
                "user_settings_dir": str(dirs["settings"]),
                "workspaces_dir": str(dirs["ws"]),
            },
        }
        for name in ("jupyter_server_config.json", "jupyter_lab_config.json"):
            (dirs["config"] / name).write_text(json.dumps(config))
        settings = {
            # render every cell (no virtual scrolling), so off-screen charts are drawn too
            "@jupyterlab/notebook-extension/tracker": {
                "windowingMode": "none",
                "scrollPastEnd": False,
            },
            "@jupyterlab/apputils-extension/notification": {
                "fetchNews": "false",
                "checkForUpdates": False,
            },
            "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
        }
        for plugin, values in settings.items():
            path = dirs["settings"] / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
        env.update(
            JUPYTER_CONFIG_DIR=str(dirs["config"]),
            JUPYTER_DATA_DIR=str(dirs["data"]),
            JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
            JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
            JUPYTERLAB_WORKSPACES_DIR=str(dirs["ws"]),
            IPYTHONDIR=str(dirs["ipy"]),
            PYTHONUNBUFFERED="1",
        )
        return env

    def start(self, timeout: float = 120) -> None:
        """Start the server and wait until ``/api/status`` answers."""
        env = self._environment()
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "jupyterlab", "--no-browser"],
                cwd=self.root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyterlab exited early:\n{self.log.read_text()[-3000:]}")
            with (
                suppress(OSError),
                urllib.request.urlopen(f"{self.url}/api/status", timeout=2) as answer,
            ):
                if answer.status == 200:
                    return
            time.sleep(0.25)  # polling the port, not synchronising on a guess
        raise RuntimeError(
            f"jupyterlab did not answer in {timeout}s:\n{self.log.read_text()[-3000:]}"
        )

    def stop(self) -> None:
        """``/api/shutdown``, then SIGTERM/SIGKILL; then any kernel it left behind."""
        if self.proc is None:
            return
        children = _children(self.proc.pid)
        if self.proc.poll() is None:
            with suppress(OSError):
                request = urllib.request.Request(
                    f"{self.url}/api/shutdown", method="POST", data=b""
                )
                urllib.request.urlopen(request, timeout=5).read()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        for pid in children:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


class NetworkGuard:
    """Playwright route handler: local requests pass, every other one is aborted and recorded."""

    def __init__(self) -> None:
        self.blocked: list[str] = []

    def __call__(self, route) -> None:  # noqa: ANN001 - playwright.sync_api.Route
        url = route.request.url
        parts = urlsplit(url)
        if parts.scheme in ("file", "data", "blob", "about") or parts.hostname in LOCAL_HOSTS:
            route.continue_()
            return
        self.blocked.append(url)
        route.abort("internetdisconnected")

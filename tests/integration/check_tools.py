"""Runs vireo-check-aof / vireo-check-rdb (built next to the server binary the suite uses) for
test_check_aof.py and test_check_rdb.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import server_binary


def tool_path(name: str) -> Path:
    path = Path(server_binary()).absolute().parent / name
    if not path.exists():
        raise RuntimeError(f"{path} not built (cmake --build build --target {name})")
    return path


def run_tool(name: str, *args, stdin: str = "", cwd: Path | None = None) -> tuple[int, str]:
    """The tool's exit code and its output (stdout and stderr together)."""
    done = subprocess.run([str(tool_path(name)), *map(str, args)], input=stdin, text=True,
                          capture_output=True, cwd=cwd, timeout=60)
    return done.returncode, done.stdout + done.stderr

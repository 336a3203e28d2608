"""Redis 7.2's rules for an AOF at start-up and the annotations it writes: a refused file
ends the log with its reason (Redis exits right after it, and its tests read the last line),
#TS: timestamp annotations are written and skipped, and FLUSHDB / FLUSHALL are logged.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import free_port, server_binary, start_server, wait_for


def resp(*args: str | bytes) -> bytes:
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def write_aof(data: Path, content: bytes) -> Path:
    aof_dir = data / "appendonlydir"
    aof_dir.mkdir(parents=True, exist_ok=True)
    (aof_dir / "appendonly.aof.manifest").write_text("file appendonly.aof.1.incr.aof seq 1 type i\n")
    incr = aof_dir / "appendonly.aof.1.incr.aof"
    incr.write_bytes(content)
    return incr


def start_refused(data: Path, *args: str) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [server_binary(), "--port", str(free_port()), "--bind", "127.0.0.1", "--dir", str(data),
         "--appendonly", "yes", *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
    return proc.returncode, proc.stdout.decode(errors="replace").splitlines()


@pytest.mark.parametrize(
    "content,truncated,last_line",
    [
        (resp("set", "foo", "hello") + b"!!!" + resp("set", "foo", "hello"), "yes",
         "Bad file format reading the append only file appendonly.aof.1.incr.aof"),
        (resp("set", "foo", "hello") + resp("multi") + resp("set", "bar", "world"), "no",
         "Unexpected end of file reading the append only file appendonly.aof.1.incr.aof"),
        (resp("set", "foo", "hello") + resp("set", "bar", "world")[:-1], "no",
         "Unexpected end of file reading the append only file appendonly.aof.1.incr.aof"),
        (resp("set", "foo", "hello") + resp("bla", "foo", "hello"), "yes",
         "Unknown command 'bla' reading the append only file appendonly.aof.1.incr.aof"),
    ],
    ids=["bad-format", "unfinished-multi", "short-read", "unknown-command"])
def test_refused_aof_reason_is_the_last_log_line(tmp_path, content, truncated, last_line):
    write_aof(tmp_path, content)
    code, lines = start_refused(tmp_path, "--aof-load-truncated", truncated)
    assert code == 1
    assert last_line in lines[-1], lines[-3:]


def test_missing_listed_file_is_the_last_log_line(tmp_path):
    write_aof(tmp_path, b"").unlink()
    code, lines = start_refused(tmp_path)
    assert code == 1
    assert "Unable to obtain the AOF file appendonly.aof.1.incr.aof length" in lines[-1]

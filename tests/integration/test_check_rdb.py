"""vireo-check-rdb: redis-check-rdb's command line, exit codes and report on an RDB the server
saved (every type, TTLs) and on crafted ones: keys already expired, a checksum that doesn't
match or is off, a file cut short, an unknown type, a wrong signature or version."""

from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest
import redis

from check_tools import run_tool
from conftest import start_server
from rdb_helpers import crc64, fill, rdb_str


def check(*args):
    return run_tool("vireo-check-rdb", *args)


def image(body: bytes, version: int = 11, checksum: bool = True) -> bytes:
    data = b"REDIS%04d" % version + body + b"\xff"
    return data + (struct.pack("<Q", crc64(data)) if checksum else b"\0" * 8)


def string_key(key: bytes, value: bytes, expire_ms: int | None = None) -> bytes:
    prefix = b"\xfc" + struct.pack("<q", expire_ms) if expire_ms is not None else b""
    return prefix + b"\x00" + rdb_str(key) + rdb_str(value)


AUX = b"\xfa" + rdb_str(b"redis-ver") + rdb_str(b"7.2.6")
SELECT0 = b"\xfe\x00"


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "dump.rdb"
    path.write_bytes(data)
    return path


def test_report_on_what_the_server_saved(tmp_path):
    h = start_server(["--dir", str(tmp_path)])
    try:
        r = redis.Redis(port=h.port)
        keys = fill(r)
        r.select(2)
        r.set("other-db", "v", ex=1000)
        r.function_load("#!lua name=lib1\nredis.register_function('f1', function() return 1 end)")
        r.save()
    finally:
        h.stop()
        h.cleanup()
    code, out = check(tmp_path / "dump.rdb")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == f"[offset 0] Checking RDB file {tmp_path}/dump.rdb"
    assert any(line.startswith("[offset ") and "] AUX FIELD redis-ver = '" in line for line in lines)
    assert any(line.endswith("] Selecting DB ID 2") for line in lines)
    size = (tmp_path / "dump.rdb").stat().st_size
    assert lines[-5:] == [
        f"[offset {size}] Checksum OK",
        f"[offset {size}] \\o/ RDB looks OK! \\o/",
        f"[info] {len(keys) + 1} keys read",
        "[info] 2 expires",
        "[info] 0 already expired",
    ]


def test_counts_keys_already_expired(tmp_path):
    now = int(time.time() * 1000)
    body = AUX + SELECT0 + string_key(b"old", b"v", now - 60_000) + \
        string_key(b"new", b"v", now + 3_600_000) + string_key(b"plain", b"v")
    code, out = check(write(tmp_path, image(body)))
    assert code == 0, out
    assert "[offset 26] AUX FIELD redis-ver = '7.2.6'" in out
    assert "[offset 28] Selecting DB ID 0" in out
    assert out.endswith("[info] 3 keys read\n[info] 2 expires\n[info] 1 already expired\n")


def test_checksum_off_is_not_checked(tmp_path):
    code, out = check(write(tmp_path, image(SELECT0 + string_key(b"k", b"v"), checksum=False)))
    assert code == 0
    assert "RDB file was saved with checksum disabled: no check performed." in out


def error_report(out: str) -> list[str]:
    lines = out.splitlines()
    assert "--- RDB ERROR DETECTED ---" in lines, out
    return lines[lines.index("--- RDB ERROR DETECTED ---") + 1:]


def test_checksum_mismatch(tmp_path):
    data = bytearray(image(SELECT0 + string_key(b"k", b"v")))
    data[-1] ^= 0xFF
    code, out = check(write(tmp_path, bytes(data)))
    assert code == 1
    report = error_report(out)
    assert report[0] == f"[offset {len(data)}] RDB CRC error"
    assert report[1] == "[additional info] While doing: check-sum"
    assert "looks OK" not in out


def test_file_cut_short_inside_a_value(tmp_path):
    data = image(SELECT0 + string_key(b"first", b"v") + string_key(b"second", b"x" * 50))
    cut = data.index(b"x" * 50) + 10
    code, out = check(write(tmp_path, data[:cut]))
    assert code == 1
    assert error_report(out) == [
        f"[offset {data.index(b'x' * 50)}] Unexpected EOF reading RDB file",
        "[additional info] While doing: read-object-value",
        "[additional info] Reading key 'second'",
        "[additional info] Reading type 0 (string)",
        "[info] 2 keys read",
        "[info] 0 expires",
        "[info] 0 already expired",
    ]


def test_unknown_type(tmp_path):
    code, out = check(write(tmp_path, image(SELECT0 + b"\x1e" + rdb_str(b"k") + rdb_str(b"v"))))
    assert code == 1
    report = error_report(out)
    assert report[0] == "[offset 12] Invalid object type: 30"
    assert report[1] == "[additional info] While doing: read-type"


@pytest.mark.parametrize("head, message", [
    (b"XEDIS0011", "Wrong signature trying to load DB from file"),
    (b"REDIS0099", "Can't handle RDB format version 99"),
])
def test_bad_header(tmp_path, head, message):
    code, out = check(write(tmp_path, head + SELECT0 + b"\xff" + b"\0" * 8))
    assert code == 1 and error_report(out)[0] == f"[offset 9] {message}"


def test_empty_file(tmp_path):
    code, out = check(write(tmp_path, b""))
    assert code == 1 and error_report(out)[0] == "[offset 0] Unexpected EOF reading RDB file"


def test_command_line(tmp_path):
    code, out = check()
    assert code == 1 and "Usage:" in out and "<rdb-file-name>" in out
    code, out = check("--version")
    assert code == 0 and out.split()[0].endswith("-check-rdb")
    code, out = check(tmp_path / "missing.rdb")
    assert code == 1

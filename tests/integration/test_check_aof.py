"""vireo-check-aof: redis-check-aof's command line, exit codes and report lines on plain AOFs,
RDB-preamble AOFs and multi-part AOFs (through their manifest); --fix and
--truncate-to-timestamp, which only ever cut the last file; and a repaired AOF that the server
then loads."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from check_tools import run_tool
from conftest import start_server, wait_for

MANIFEST = "appendonly.aof.manifest"
BASE = "appendonly.aof.1.base.aof"
INCR = "appendonly.aof.1.incr.aof"


def resp(*args: str) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()))
    return b"".join(out)


SET_FOO = resp("set", "foo", "hello")  # 33 bytes, 7 lines
SET_BAR = resp("set", "bar", "world")


def check(*args, stdin=""):
    return run_tool("vireo-check-aof", *args, stdin=stdin)


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def multi_part(tmp_path: Path, base: bytes, incr: bytes) -> Path:
    write(tmp_path / BASE, base)
    write(tmp_path / INCR, incr)
    (tmp_path / MANIFEST).write_text(f"file {BASE} seq 1 type b\nfile {INCR} seq 1 type i\n")
    return tmp_path / MANIFEST


def test_valid_old_style_aof(tmp_path):
    aof = write(tmp_path / "a.aof", SET_FOO + SET_BAR)
    code, out = check(aof)
    assert code == 0, out
    assert out.splitlines() == [
        "Start checking Old-Style AOF",
        f"AOF analyzed: filename={aof}, size=66, ok_up_to=66, ok_up_to_line=15, diff=0",
        f"AOF {aof} is valid",
    ]


def test_empty_aof_is_reported_as_empty(tmp_path):
    aof = write(tmp_path / "a.aof", b"")
    code, out = check(aof)
    assert code == 0 and f"AOF {aof} is empty" in out


def test_truncated_tail_is_not_valid(tmp_path):
    aof = write(tmp_path / "a.aof", SET_FOO + SET_BAR[:-1])
    code, out = check(aof)
    assert code == 1
    # The offset of the read that came up short, then what it got.
    assert "0x              3b: Expected to read 7 bytes, got 6 bytes" in out
    assert "size=65, ok_up_to=33, ok_up_to_line=14, diff=32" in out
    assert f"AOF {aof} is not valid. Use the --fix option to try fixing it." in out


def test_format_error_reports_the_last_good_line(tmp_path):
    aof = write(tmp_path / "a.aof", SET_FOO + b"!!!")
    code, out = check(aof)
    assert code == 1
    assert f"AOF {aof} format error" in out
    assert "ok_up_to=33, ok_up_to_line=8, diff=3" in out


@pytest.mark.parametrize("tail, message", [
    (b"*2\r\n$3\r\nget\rx$1\r\na\r\n", "Expected \\r\\n, got: 0d78"),
    (b"*2\r\n+3\r\nget\r\n", "Expected prefix '$', got: '+'"),
    (b"*2\r\n$-5\r\nget\r\n", "Expected to read string of -5 bytes, which is not in the suitable range"),
    (b"*2\r\n$99999\r\nget\r\n", "Expected to read 100001 bytes, got 5 bytes"),
    (resp("exec"), "Unexpected EXEC in AOF"),
    (resp("multi") + resp("multi"), "Unexpected MULTI in AOF"),
])
def test_malformed_commands(tmp_path, tail, message):
    aof = write(tmp_path / "a.aof", SET_FOO + tail)
    code, out = check(aof)
    assert code == 1 and message in out, out
    assert "ok_up_to=33," in out


def test_fix_truncates_after_confirmation(tmp_path):
    aof = write(tmp_path / "a.aof", SET_FOO + SET_BAR[:-1])
    code, out = check("--fix", aof, stdin="n\n")
    assert code == 1 and "Continue? [y/N]: Aborting..." in out
    assert aof.stat().st_size == 65
    code, out = check("--fix", aof, stdin="y\n")
    assert code == 0, out
    assert f"This will shrink the AOF {aof} from 65 bytes, with 32 bytes, to 33 bytes" in out
    assert f"Successfully truncated AOF {aof}" in out
    assert aof.read_bytes() == SET_FOO
    assert check(aof)[0] == 0


def test_unfinished_multi_is_cut_before_the_multi(tmp_path):
    aof = write(tmp_path / "a.aof", SET_FOO + resp("multi") + SET_BAR)
    code, out = check(aof)
    assert code == 1
    assert "Reached EOF before reading EXEC for MULTI" in out
    assert "ok_up_to=33," in out
    assert check("--fix", aof, stdin="y\n")[0] == 0
    assert aof.read_bytes() == SET_FOO


def test_complete_transaction_is_valid(tmp_path):
    aof = write(tmp_path / "a.aof", resp("multi") + SET_FOO + resp("exec"))
    assert check(aof)[0] == 0


TIMESTAMPED = (b"#TS:1628217470\r\n" + resp("set", "foo1", "bar1") + b"#TS:1628217471\r\n" +
               resp("set", "foo2", "bar2") + b"#TS:1628217472\r\n#TS:1628217473\r\n" +
               resp("set", "foo3", "bar3") + b"#TS:1628217474\r\n")


def test_truncate_to_timestamp(tmp_path):
    aof = write(tmp_path / "a.aof", TIMESTAMPED)
    code, out = check("--truncate-to-timestamp", "1628217473", aof)
    assert code == 0 and f"Successfully truncated AOF {aof} to timestamp 1628217473" in out
    assert aof.read_bytes() == TIMESTAMPED[:TIMESTAMPED.index(b"#TS:1628217474")]
    code, out = check("--truncate-to-timestamp", "1628217473", aof)
    assert code == 0 and f"Truncate nothing in AOF {aof} to timestamp 1628217473" in out
    check("--truncate-to-timestamp", "1628217471", aof)
    assert aof.read_bytes() == TIMESTAMPED[:TIMESTAMPED.index(b"#TS:1628217472")]
    code, out = check("--truncate-to-timestamp", "1628217469", aof)
    assert code == 1 and f"AOF {aof} has nothing before timestamp 1628217469, aborting..." in out
    code, out = check("--truncate-to-timestamp", "x", aof)
    assert code == 1 and "Invalid timestamp, aborting..." in out


def test_multi_part_with_resp_base(tmp_path):
    manifest = multi_part(tmp_path, SET_FOO + SET_BAR, SET_FOO + SET_BAR)
    code, out = check(manifest)
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0:2] == ["Start checking Multi Part AOF", "Start to check BASE AOF (RESP format)."]
    assert f"BASE AOF {BASE} is valid" in lines
    assert "Start to check INCR files." in lines
    assert f"INCR AOF {INCR} is valid" in lines
    # The line count runs on across the files.
    assert f"AOF analyzed: filename={INCR}, size=66, ok_up_to=66, ok_up_to_line=29, diff=0" in lines
    assert lines[-1] == "All AOF files and manifest are valid"


def test_manifest_errors(tmp_path):
    manifest = multi_part(tmp_path, SET_FOO, SET_FOO)
    manifest.write_text(f"file {BASE} seq 1 type b\nfile {INCR} seq 1 type i\n!!!\n")
    code, out = check(manifest)
    assert code == 1
    assert "*** FATAL AOF MANIFEST FILE ERROR ***" in out
    assert "Reading the manifest file, at line 3" in out
    assert "Invalid AOF manifest file format" in out
    manifest.write_text(f"file {BASE} seq 1 type b\nfile missing.aof seq 1 type i\n")
    code, out = check(manifest)
    assert code == 1 and f"Cannot open file {tmp_path}/missing.aof: No such file or directory" in out


def test_only_the_last_file_may_be_cut(tmp_path):
    manifest = multi_part(tmp_path, SET_FOO + resp("multi") + SET_BAR, SET_FOO + SET_BAR)
    code, out = check(manifest)
    assert code == 1 and f"AOF {BASE} is not valid" in out
    code, out = check("--fix", manifest, stdin="y\n")
    assert code == 1
    assert f"Failed to truncate AOF {BASE} because it is not the last file" in out
    write(tmp_path / BASE, TIMESTAMPED)
    code, out = check("--truncate-to-timestamp", "1628217473", manifest)
    assert code == 1
    cut = TIMESTAMPED.index(b"#TS:1628217474")
    assert (f"Failed to truncate AOF {tmp_path}/{BASE} to timestamp 1628217473 to offset {cut} "
            "because it is not the last file.") in out
    assert (tmp_path / BASE).read_bytes() == TIMESTAMPED


def test_usage(tmp_path):
    for args in ([], ["--bogus", "a"], ["a", "b", "c", "d"]):
        code, out = check(*args)
        assert code == 1 and "Usage:" in out
        assert "[--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>" in out


@pytest.fixture
def servers():
    started = []
    yield started
    for handle in started:
        handle.stop()
        handle.cleanup()


def test_checks_and_repairs_what_the_server_wrote(tmp_path, servers):
    """An RDB-preamble base written by BGREWRITEAOF plus an incremental file: valid; a cut-off
    write at the end of the last file: --fix repairs it and the server starts on the result
    with aof-load-truncated no."""
    data = tmp_path / "data"
    data.mkdir()
    args = ["--dir", str(data), "--appendonly", "yes", "--aof-use-rdb-preamble", "yes"]
    h = start_server(args)
    servers.append(h)
    r = redis.Redis(port=h.port)
    r.set("k1", "v1")
    r.bgrewriteaof()
    wait_for(lambda: r.info("persistence")["aof_rewrites"] >= 1
             and not r.info("persistence")["aof_rewrite_in_progress"], 20)
    r.set("k2", "v2")
    r.set("k3", "v3", px=3_600_000)
    h.stop()

    aof_dir = data / "appendonlydir"
    manifest = aof_dir / MANIFEST
    code, out = check(manifest)
    assert code == 0, out
    assert "Start to check BASE AOF (RDB format)." in out
    assert "RDB preamble is OK, proceeding with AOF tail..." in out
    assert "All AOF files and manifest are valid" in out

    incr = sorted(aof_dir.glob("*.incr.aof"))[-1]
    good = incr.stat().st_size
    with incr.open("ab") as f:
        f.write(resp("set", "k4", "v4")[:-3])
    code, out = check(manifest)
    assert code == 1 and f"AOF {incr.name} is not valid" in out
    code, out = check("--fix", manifest, stdin="y\n")
    assert code == 0 and f"Successfully truncated AOF {incr.name}" in out, out
    assert incr.stat().st_size == good

    h = start_server([*args, "--aof-load-truncated", "no"])
    servers.append(h)
    r = redis.Redis(port=h.port)
    wait_for(lambda: r.info("persistence")["loading"] == 0)
    assert r.mget("k1", "k2", "k3", "k4") == [b"v1", b"v2", b"v3", None]

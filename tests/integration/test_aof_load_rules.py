"""Redis 7.2's rules for an AOF at start-up and the annotations it writes: a refused file
ends the log with its reason (Redis exits right after it, and its tests read the last line),
#TS: timestamp annotations are written and skipped, and FLUSHDB / FLUSHALL are logged.
"""

from __future__ import annotations

import os
import signal
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


def logged_commands(path: Path) -> list[list[bytes]]:
    """The commands of an AOF made of commands, annotations left out."""
    lines = path.read_bytes().split(b"\r\n")
    out, i = [], 0
    while i < len(lines) and lines[i]:
        if lines[i].startswith(b"#"):
            i += 1
            continue
        argc = int(lines[i][1:])
        out.append([lines[i + 2 + 2 * j] for j in range(argc)])
        i += 1 + 2 * argc
    return out


def aof_files(data: Path, kind: str) -> list[Path]:
    return sorted((data / "appendonlydir").glob(f"*.{kind}.aof"))


@pytest.fixture
def aof_server(tmp_path):
    h = start_server(["--dir", str(tmp_path), "--appendonly", "yes"])
    yield h, tmp_path
    h.stop()
    h.cleanup()


def test_timestamp_annotations_head_the_incr_and_a_command_base(aof_server):
    h, data = aof_server
    r = h.client()
    r.config_set("aof-timestamp-enabled", "yes")
    r.config_set("aof-use-rdb-preamble", "no")
    r.set("foo", "bar")
    assert aof_files(data, "incr")[-1].read_bytes().startswith(b"#TS:")
    r.bgrewriteaof()
    wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0
             and r.info("persistence")["aof_rewrite_scheduled"] == 0
             and aof_files(data, "base")[-1].name.endswith(".2.base.aof"))
    base = aof_files(data, "base")[-1].read_bytes()
    assert base.startswith(b"#TS:")
    assert [b"SET", b"foo", b"bar"] in [[c[0].upper(), *c[1:]] for c in
                                        logged_commands(aof_files(data, "base")[-1])]


def test_timestamp_annotations_are_skipped_when_loading(tmp_path):
    write_aof(tmp_path, b"#TS:1628217470\r\n" + resp("set", "foo1", "bar1") + b"#TS:1628217471\r\n"
              + b"#TS:1628217472\r\n" + resp("set", "foo2", "bar2") + b"#TS:1628217474\r\n")
    h = start_server(["--dir", str(tmp_path), "--appendonly", "yes"])
    try:
        r = h.client()
        assert r.get("foo1") == b"bar1" and r.get("foo2") == b"bar2"
    finally:
        h.stop()
        h.cleanup()


def test_flushdb_and_flushall_of_empty_databases_are_logged(aof_server):
    h, data = aof_server
    r = h.client()
    incr = aof_files(data, "incr")[-1]
    r.set("key", "value")
    r.flushdb()
    r.flushdb()
    r.flushdb()
    r.flushall()
    r.flushall()
    wait_for(lambda: len(logged_commands(incr)) >= 7)
    names = [c[0].lower() for c in logged_commands(incr)]
    assert names == [b"select", b"set", b"flushdb", b"flushdb", b"flushdb", b"flushall",
                     b"flushall"]


# --------------------------------------------------------------------------------------------
# The manifest: history lines and sequence numbers as Redis keeps them


def manifest_lines(data: Path) -> list[str]:
    return (data / "appendonlydir" / "appendonly.aof.manifest").read_text().splitlines()


def rewrite(r) -> None:
    done = r.info("persistence")["aof_rewrites"]
    r.bgrewriteaof()
    wait_for(lambda: r.info("persistence")["aof_rewrites"] > done
             and not r.info("persistence")["aof_rewrite_in_progress"], timeout=20)


def test_history_stays_listed_while_auto_gc_is_off(aof_server):
    h, data = aof_server
    r = h.client()
    r.config_set("aof-disable-auto-gc", "yes")
    rewrite(r)
    rewrite(r)
    # Newest history first; the files stay on disk.
    assert manifest_lines(data) == [
        "file appendonly.aof.3.base.rdb seq 3 type b",
        "file appendonly.aof.2.incr.aof seq 2 type h",
        "file appendonly.aof.2.base.rdb seq 2 type h",
        "file appendonly.aof.1.incr.aof seq 1 type h",
        "file appendonly.aof.1.base.rdb seq 1 type h",
        "file appendonly.aof.3.incr.aof seq 3 type i",
    ]
    assert (data / "appendonlydir" / "appendonly.aof.1.base.rdb").exists()
    r.config_set("aof-disable-auto-gc", "no")
    assert manifest_lines(data) == ["file appendonly.aof.3.base.rdb seq 3 type b",
                                    "file appendonly.aof.3.incr.aof seq 3 type i"]
    wait_for(lambda: not (data / "appendonlydir" / "appendonly.aof.1.base.rdb").exists())


def test_debug_loadaof_adopts_the_manifest_on_disk(aof_server):
    h, data = aof_server
    r = h.client()
    r.set("k", "v")
    r.config_set("appendonly", "no")
    rewrite(r)  # AOF off: only a base, every incremental file becomes history
    assert manifest_lines(data) == ["file appendonly.aof.2.base.rdb seq 2 type b"]
    assert r.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert r.get("k") == b"v"
    # The incremental numbering restarts from the manifest just loaded, as in Redis.
    r.config_set("appendonly", "yes")
    wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0
             and r.info("persistence")["aof_rewrite_scheduled"] == 0
             and len(manifest_lines(data)) == 2, timeout=20)
    assert manifest_lines(data) == ["file appendonly.aof.3.base.rdb seq 3 type b",
                                    "file appendonly.aof.1.incr.aof seq 1 type i"]
    assert r.execute_command("DEBUG", "LOADAOF") == b"OK"
    rewrite(r)
    assert manifest_lines(data) == ["file appendonly.aof.4.base.rdb seq 4 type b",
                                    "file appendonly.aof.2.incr.aof seq 2 type i"]


def child_pids(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(p) for p in (task / "children").read_text().split()]
    return out


def test_repeated_rewrite_failures_trigger_the_limit(aof_server):
    h, data = aof_server
    r = h.client()
    r.config_set("rdb-key-save-delay", 10000000)  # a rewrite child that never finishes alone
    r.set("k", "v")
    for failures in range(1, 4):
        r.bgrewriteaof()
        wait_for(lambda: child_pids(h.proc.pid), timeout=10)
        for pid in child_pids(h.proc.pid):
            os.kill(pid, signal.SIGKILL)
        wait_for(lambda: r.info("persistence")["aof_rewrites_consecutive_failures"] == failures,
                 timeout=10)
    r.config_set("auto-aof-rewrite-percentage", 1)
    r.config_set("auto-aof-rewrite-min-size", "1kb")
    r.set("x", "x" * 1024)
    wait_for(lambda: "Background AOF rewrite has repeatedly failed and triggered the limit, "
             "will retry in 1 minutes" in h.log_text(100000), timeout=10)
    # The limit holds back the automatic rewrite (and logs once), not BGREWRITEAOF.
    assert r.info("persistence")["aof_rewrite_in_progress"] == 0
    assert h.log_text(100000).count("triggered the limit") == 1
    r.config_set("rdb-key-save-delay", 0)
    r.config_set("auto-aof-rewrite-percentage", 0)
    rewrite(r)
    assert r.info("persistence")["aof_rewrites_consecutive_failures"] == 0


def test_failed_rewrite_while_enabling_removes_the_temp_incr(tmp_path):
    h = start_server(["--dir", str(tmp_path), "--appendonly", "no"])
    try:
        r = h.client()
        r.config_set("rdb-key-save-delay", 10000000)
        r.set("k", "v")
        r.config_set("appendonly", "yes")
        assert r.info("persistence")["aof_rewrite_in_progress"] == 1
        temp_incr = tmp_path / "appendonlydir" / "temp-appendonly.aof.incr"
        r.set("during", "1")
        wait_for(lambda: temp_incr.exists())
        first = child_pids(h.proc.pid)
        for pid in first:
            os.kill(pid, signal.SIGKILL)
        wait_for(lambda: "Removing the temp incr aof file temp-appendonly.aof.incr in the background"
                 in h.log_text(100000), timeout=10)
        assert not (tmp_path / "appendonlydir" / "appendonly.aof.manifest").exists()
        # The next attempt is scheduled and then succeeds: base 1 and incr 1.
        wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 1
                 and child_pids(h.proc.pid) != first, timeout=10)
        r.config_set("rdb-key-save-delay", 0)
        for pid in child_pids(h.proc.pid):
            os.kill(pid, signal.SIGKILL)
        wait_for(lambda: r.info("persistence")["aof_enabled"] == 1
                 and r.info("persistence")["aof_rewrite_in_progress"] == 0
                 and (tmp_path / "appendonlydir" / "appendonly.aof.manifest").exists(), timeout=20)
        assert h.log_text(100000).count("Removing the temp incr aof file") == 2
        # The retry's own temp file survives the removal of the failed one.
        assert "Error trying to rename the temporary AOF incr file" not in h.log_text(100000)
        assert r.get("k") == b"v"
        assert manifest_lines(tmp_path) == ["file appendonly.aof.1.base.rdb seq 1 type b",
                                            "file appendonly.aof.1.incr.aof seq 1 type i"]
    finally:
        h.stop()
        h.cleanup()


def test_debug_loadaof_leaves_no_changes_to_save(aof_server):
    h, data = aof_server
    r = h.client()
    for i in range(20):
        r.set(f"k{i}", i)
    r.config_set("appendonly", "no")
    assert r.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert r.dbsize() == 20
    assert r.info("persistence")["rdb_changes_since_last_save"] == 0

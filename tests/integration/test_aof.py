"""The append-only file: Redis 7's multi-part layout, the command log's exact contents,
restarts, BGREWRITEAOF, CONFIG SET appendonly, truncated and corrupted tails, and loading
each other's AOF directories with redis-server.

Each test runs servers with --dir pointing at its own temporary data directory, so a restart
(a new process) finds the files the previous one wrote.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
import redis

from conftest import free_port, start_server, wait_for
from rdb_helpers import dump_payload, intset, rdb_str

SANITIZED = os.environ.get("VIREO_SANITIZED") == "1"
REDIS_SERVER = shutil.which("redis-server")


def aof_dir(data: Path) -> Path:
    return data / "appendonlydir"


def manifest(data: Path) -> str:
    return (aof_dir(data) / "appendonly.aof.manifest").read_text()


def incr_files(data: Path) -> list[Path]:
    return sorted(aof_dir(data).glob("*.incr.aof"))


def start(data: Path, *args, appendonly="yes"):
    return start_server(["--dir", str(data), "--appendonly", appendonly, *args])


def resp(*args) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def info(r) -> dict:
    return r.info("persistence")


def wait_rewrite_done(r, rewrites_before=None, timeout=20):
    def done():
        i = info(r)
        if i["aof_rewrite_in_progress"] or i["aof_rewrite_scheduled"]:
            return False
        return rewrites_before is None or i["aof_rewrites"] > rewrites_before
    wait_for(done, timeout, interval=0.02, message="AOF rewrite did not finish")
    assert info(r)["aof_last_bgrewrite_status"] == "ok"


def restart(handle, data: Path, *args, kill=False, appendonly="yes"):
    if kill:
        handle.proc.kill()
        handle.proc.wait()
        handle.expect_exit = True
    else:
        handle.stop()
    return start(data, *args, appendonly=appendonly)


@pytest.fixture
def data(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    return d


@pytest.fixture
def servers():
    """Servers started by a test; all stopped at teardown (those killed on purpose too)."""
    started = []
    yield started
    for h in started:
        h.stop()
        h.cleanup()


def run(servers, data, *args, **kw):
    h = start(data, *args, **kw)
    servers.append(h)
    return h


# --------------------------------------------------------------------------------------------
# Layout and the log's contents


def test_layout_on_first_start(servers, data):
    h = run(servers, data)
    r = h.client()
    assert sorted(p.name for p in aof_dir(data).iterdir()) == [
        "appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof", "appendonly.aof.manifest"]
    assert manifest(data) == ("file appendonly.aof.1.base.rdb seq 1 type b\n"
                              "file appendonly.aof.1.incr.aof seq 1 type i\n")
    assert (aof_dir(data) / "appendonly.aof.1.base.rdb").read_bytes().startswith(b"REDIS")
    i = info(r)
    assert i["aof_enabled"] == 1
    assert i["aof_last_write_status"] == "ok"
    for field in ("aof_current_size", "aof_base_size", "aof_pending_rewrite", "aof_buffer_length",
                  "aof_pending_bio_fsync", "aof_delayed_fsync"):
        assert field in i


def test_layout_names_follow_config(servers, data):
    h = run(servers, data, "--appendfilename", "my.aof", "--appenddirname", "logs",
            "--aof-use-rdb-preamble", "no")
    r = h.client()
    r.set("k", "v")
    assert (data / "logs" / "my.aof.manifest").read_text() == (
        "file my.aof.1.base.aof seq 1 type b\nfile my.aof.1.incr.aof seq 1 type i\n")
    assert r.config_get("appenddirname")["appenddirname"] in ("logs", b"logs")
    with pytest.raises(redis.ResponseError, match="immutable"):
        r.config_set("appenddirname", "x")


def test_log_holds_deterministic_forms(servers, data):
    h = run(servers, data)
    r = h.client()
    raw = h.raw()
    for cmd in (("set", "a", "1"), ("SET", "b", "2", "EX", "100"), ("EXPIRE", "a", "50"),
                ("RPUSH", "l", "x", "y"), ("SETEX", "y", "10", "v"),
                ("INCRBYFLOAT", "f", "1.5"), ("GETSET", "g", "1"), ("GETDEL", "g"),
                ("GETEX", "a", "PERSIST"), ("BLPOP", "l", "0"), ("SELECT", "3"),
                ("SET", "z", "1"), ("MULTI",), ("SET", "q", "1"), ("EXEC",),
                ("MULTI",), ("SET", "c", "1"), ("INCR", "c"), ("EXEC",), ("GET", "nothing"),
                ("SET", "gone", "v", "PX", "1")):
        raw.execute(*cmd)
    time.sleep(0.01)
    raw.execute("GET", "gone")  # expires lazily: logged as DEL
    raw.execute("PING")
    b_at = r.pexpiretime("b")
    a_at = None
    log = incr_files(data)[-1].read_bytes()
    pos = 0

    def expect(*args):
        nonlocal pos
        want = resp(*args)
        found = log.find(want, pos)
        assert found == pos, f"expected {want!r} at {pos}, log continues {log[pos:pos + 120]!r}"
        pos += len(want)

    expect("SELECT", "0")
    expect("set", "a", "1")
    expect("SET", "b", "2", "PXAT", str(b_at))
    a_at = log[pos:].split(b"\r\n")[6].decode()  # PEXPIREAT a <ms>
    expect("PEXPIREAT", "a", a_at)
    expect("RPUSH", "l", "x", "y")
    y_at = log[pos:].split(b"\r\n")[10].decode()
    expect("SET", "y", "v", "PXAT", y_at)
    expect("SET", "f", "1.5", "KEEPTTL")
    expect("SET", "g", "1")
    expect("DEL", "g")
    expect("PERSIST", "a")
    expect("LPOP", "l")
    expect("SELECT", "3")
    expect("SET", "z", "1")
    expect("SET", "q", "1")  # a transaction of one command is logged bare, as in Redis
    expect("MULTI")
    expect("SET", "c", "1")
    expect("INCR", "c")
    expect("EXEC")
    gone_at = log[pos:].split(b"\r\n")[10].decode()
    expect("SET", "gone", "v", "PXAT", gone_at)
    expect("DEL", "gone")
    assert pos == len(log)
    assert int(a_at) > 0 and int(y_at) > 0


def test_past_expire_logs_del(servers, data):
    h = run(servers, data)
    raw = h.raw()
    raw.execute("SET", "k", "v")
    raw.execute("EXPIREAT", "k", "1")
    raw.execute("SET", "k2", "v")
    raw.execute("GETEX", "k2", "PXAT", "1")
    raw.execute("PING")
    log = incr_files(data)[-1].read_bytes()
    assert log.endswith(resp("SET", "k", "v") + resp("DEL", "k") + resp("SET", "k2", "v") +
                        resp("DEL", "k2"))


def test_blocked_client_served_later_logs_pop(servers, data):
    h = run(servers, data)
    r = h.client()
    blocker = h.client()
    results = []
    t = threading.Thread(target=lambda: results.append(blocker.blmove("src", "dst", 0, "RIGHT",
                                                                      "LEFT")))
    t.start()
    wait_for(lambda: r.info("clients")["blocked_clients"] == 1)
    r.rpush("src", "a", "b")
    t.join(5)
    assert results == [b"b"]
    r.ping()
    log = incr_files(data)[-1].read_bytes()
    assert log.endswith(resp("RPUSH", "src", "a", "b") +
                        resp("LMOVE", "src", "dst", "RIGHT", "LEFT"))


# --------------------------------------------------------------------------------------------
# Restarts


def populate(r):
    """Every type the server knows, with TTLs; returns a dump of it."""
    r.set("str", "hello")
    r.set("int", 12345)
    r.set("big", "x" * 100000)
    r.set("bin", bytes(range(256)))
    r.set("ttl", "v", px=500000)
    r.rpush("list", *[f"e{i}" for i in range(300)])
    r.rpush("small", "a", 1, "b")
    r.execute_command("SELECT", 0)
    for name, fill in (("hash", lambda: r.hset("hash", mapping={f"f{i}": i for i in range(200)})),
                       ("set", lambda: r.sadd("set", *range(600))),
                       ("sset", lambda: r.sadd("sset", "a", "b")),
                       ("zset", lambda: r.zadd("zset", {f"m{i}": i / 3 for i in range(200)})),
                       ("stream", lambda: [r.xadd("stream", {"f": i}) for i in range(50)])):
        try:
            fill()
        except redis.ResponseError as e:
            if "unknown command" not in str(e):
                raise
    r.pexpire("list", 900000)
    c = r  # database 5 too
    c.execute_command("SELECT", 5)
    c.set("other-db", "yes")
    c.execute_command("SELECT", 0)


def snapshot(h) -> dict:
    out = {}
    for db in (0, 5):
        c = h.client(db=db)
        for key in c.keys("*"):
            t = c.type(key).decode()
            if t == "string":
                v = c.get(key)
            elif t == "list":
                v = c.lrange(key, 0, -1)
            elif t == "hash":
                v = c.hgetall(key)
            elif t == "set":
                v = sorted(c.smembers(key))
            elif t == "zset":
                v = c.zrange(key, 0, -1, withscores=True)
            elif t == "stream":
                v = c.xrange(key)
            else:
                v = t
            pexpiretime = c.pexpiretime(key)
            out[(db, key)] = (t, v, pexpiretime)
        c.close()
    return out


@pytest.mark.parametrize("kill", [False, True], ids=["sigterm", "sigkill"])
def test_round_trip_every_type(servers, data, kill):
    h = run(servers, data)
    r = h.client()
    populate(r)
    before = snapshot(h)
    h2 = restart(h, data, kill=kill)
    servers.append(h2)
    assert snapshot(h2) == before


def test_rewrite_without_preamble_keeps_functions(servers, data):
    # A base written as commands starts with FUNCTION LOAD for each library, as Redis's does.
    # (unit/aofrw's "AOF rewrite functions": with the AOF off, the FUNCTION FLUSH after the
    # rewrite isn't logged, so DEBUG LOADAOF brings the library back from the base alone.)
    h = run(servers, data, "--aof-use-rdb-preamble", "no", appendonly="no")
    r = h.client()
    r.function_load("#!lua name=test\nredis.register_function('test', function() return 1 end)")
    rewrites = info(r)["aof_rewrites"]
    r.bgrewriteaof()
    wait_rewrite_done(r, rewrites)
    base = next(aof_dir(data).glob("*.base.aof")).read_bytes()
    assert base.startswith(b"*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n")
    r.function_flush()
    r.execute_command("DEBUG", "LOADAOF")
    assert r.fcall("test", 0) == 1


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_round_trip_after_rewrite(servers, data, preamble):
    h = run(servers, data, "--aof-use-rdb-preamble", preamble)
    r = h.client()
    populate(r)
    r.set("before-rewrite", 1)
    rewrites = info(r)["aof_rewrites"]
    assert r.bgrewriteaof() in (True, b"Background append only file rewriting started")
    wait_rewrite_done(r, rewrites)
    r.set("after-rewrite", 2)
    r.lpush("list", "new-head")
    ext = "rdb" if preamble == "yes" else "aof"
    assert manifest(data) == (f"file appendonly.aof.2.base.{ext} seq 2 type b\n"
                              "file appendonly.aof.2.incr.aof seq 2 type i\n")
    # The old files go in the background.
    wait_for(lambda: not (aof_dir(data) / "appendonly.aof.1.incr.aof").exists())
    before = snapshot(h)
    h2 = restart(h, data, kill=True)
    servers.append(h2)
    assert snapshot(h2) == before


def test_expired_keys_stay_deleted_after_restart(servers, data):
    h = run(servers, data)
    r = h.client()
    r.set("short", "v", px=50)
    r.set("keep", "v")
    time.sleep(0.1)
    assert r.get("short") is None
    r.incr("counter")
    h2 = restart(h, data)
    servers.append(h2)
    r2 = h2.client()
    assert r2.get("short") is None
    assert r2.get("keep") == b"v"
    assert r2.get("counter") == b"1"


def test_replay_ignores_ttls_until_loaded(servers, data):
    # Keys whose TTL passed between the write and the restart must still be there for the
    # commands that followed them in the log: INCR and PERSIST ran on the live keys.
    h = run(servers, data)
    r = h.client()
    r.set("k", "10", px=300)
    r.incr("k")
    r.persist("k")
    r.rpush("l", "a")
    r.pexpire("l", 300)
    r.rpush("l", "b")
    r.persist("l")
    r.set("gone", "v", px=300)
    time.sleep(0.4)
    h2 = restart(h, data, kill=True)
    servers.append(h2)
    r2 = h2.client()
    assert r2.get("k") == b"11"
    assert r2.lrange("l", 0, -1) == [b"a", b"b"]
    assert r2.get("gone") is None


# --------------------------------------------------------------------------------------------
# BGREWRITEAOF, automatic rewrite, CONFIG SET appendonly


def test_bgrewriteaof_replies_and_info(servers, data):
    h = run(servers, data)
    r = h.client()
    raw = h.raw()
    assert raw.execute("BGREWRITEAOF") == b"+Background append only file rewriting started\r\n"
    wait_rewrite_done(r)
    i = info(r)
    assert i["aof_rewrites"] >= 1
    assert i["aof_last_rewrite_time_sec"] >= 0
    assert i["aof_current_rewrite_time_sec"] == -1
    assert i["aof_rewrites_consecutive_failures"] == 0
    assert raw.execute("BGREWRITEAOF", "x").startswith(b"-ERR wrong number of arguments")
    # Inside MULTI it is scheduled, as in Redis.
    raw.execute("MULTI")
    raw.execute("BGREWRITEAOF")
    assert raw.execute("EXEC") == (b"*1\r\n+Background append only file rewriting scheduled\r\n")
    wait_rewrite_done(r, i["aof_rewrites"])
    assert raw.execute("COMMAND", "INFO", "bgrewriteaof").startswith(
        b"*1\r\n*10\r\n$12\r\nbgrewriteaof\r\n:1\r\n")


@pytest.mark.load
def test_bgrewriteaof_already_in_progress(servers, data):
    if SANITIZED:
        pytest.skip("needs a rewrite that takes a while")
    h = run(servers, data, "--aof-use-rdb-preamble", "no")
    r = h.client()
    pipe = r.pipeline(transaction=False)
    for i in range(300000):
        pipe.rpush(f"l{i % 1000}", i)
    pipe.execute()
    raw = h.raw()
    assert raw.execute("BGREWRITEAOF") == b"+Background append only file rewriting started\r\n"
    reply = raw.execute("BGREWRITEAOF")
    if info(r)["aof_rewrite_in_progress"]:
        assert reply == b"-ERR Background append only file rewriting already in progress\r\n"
    wait_rewrite_done(r)


def test_automatic_rewrite(servers, data):
    h = run(servers, data, "--auto-aof-rewrite-min-size", "100kb",
            "--auto-aof-rewrite-percentage", "100")
    r = h.client()
    assert r.config_get("auto-aof-rewrite-min-size")["auto-aof-rewrite-min-size"] in (
        "102400", b"102400")
    for i in range(400):
        r.set(f"k{i % 10}", "v" * 500)
    wait_for(lambda: info(r)["aof_rewrites"] >= 1, 10, interval=0.05)
    wait_rewrite_done(r)
    assert info(r)["aof_current_size"] < 100 * 1024
    assert "seq 2 type b" in manifest(data)


def test_config_set_appendonly_at_runtime(servers, data):
    h = run(servers, data, appendonly="no")
    r = h.client()
    populate(r)
    assert info(r)["aof_enabled"] == 0
    assert not aof_dir(data).exists()
    assert r.config_set("appendonly", "yes")
    wait_for(lambda: info(r)["aof_rewrite_in_progress"] == 0 and not info(r)["aof_rewrite_scheduled"],
             10)
    assert info(r)["aof_enabled"] == 1
    r.set("after-enable", "1")
    assert manifest(data) == ("file appendonly.aof.1.base.rdb seq 1 type b\n"
                              "file appendonly.aof.1.incr.aof seq 1 type i\n")
    before = snapshot(h)
    h2 = restart(h, data, kill=True)
    servers.append(h2)
    r2 = h2.client()
    assert snapshot(h2) == before
    # Off again: nothing more is logged, the files stay.
    assert r2.config_set("appendonly", "no")
    assert info(r2)["aof_enabled"] == 0
    size = incr_files(data)[-1].stat().st_size
    r2.set("not-logged", 1)
    assert incr_files(data)[-1].stat().st_size == size


def test_appendfsync_modes(servers, data):
    h = run(servers, data, "--appendfsync", "always")
    r = h.client()
    r.set("a", 1)
    for mode in ("everysec", "no", "always"):
        assert r.config_set("appendfsync", mode)
        r.incr("a")
    with pytest.raises(redis.ResponseError):
        r.config_set("appendfsync", "sometimes")
    h2 = restart(h, data, kill=True)
    servers.append(h2)
    assert h2.client().get("a") == b"4"


# --------------------------------------------------------------------------------------------
# Damaged files


def write_then_stop(servers, data, *args):
    h = run(servers, data, *args)
    r = h.client()
    for i in range(10):
        r.set(f"k{i}", i)
    h.stop()
    return incr_files(data)[-1]


def expect_start_fails(data, *args) -> str:
    port = free_port()
    proc = subprocess.run(
        [os.environ.get("VIREO_SERVER", ""), "--port", str(port), "--bind", "127.0.0.1", "--dir",
         str(data), "--appendonly", "yes", *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
    assert proc.returncode != 0
    return proc.stdout.decode(errors="replace")


@pytest.mark.skipif(not os.environ.get("VIREO_SERVER"), reason="needs VIREO_SERVER")
def test_truncated_tail_is_cut_and_loaded(servers, data):
    incr = write_then_stop(servers, data)
    good_size = incr.stat().st_size
    with open(incr, "ab") as f:
        f.write(b"*3\r\n$3\r\nSET\r\n$2\r\nk9\r\n$5\r\nhal")  # a crash mid-write
    h = run(servers, data)
    r = h.client()
    assert r.get("k9") == b"9" and r.dbsize() == 10
    assert incr.stat().st_size >= good_size
    assert "Truncating the AOF" in h.log_text(20000)
    assert "loaded anyway because aof-load-truncated is enabled" in h.log_text(20000)
    # The cut file continues cleanly.
    r.set("new", "1")
    h2 = restart(h, data)
    servers.append(h2)
    assert h2.client().get("new") == b"1"


@pytest.mark.skipif(not os.environ.get("VIREO_SERVER"), reason="needs VIREO_SERVER")
def test_truncated_tail_refused_without_aof_load_truncated(servers, data):
    incr = write_then_stop(servers, data)
    with open(incr, "ab") as f:
        f.write(b"*2\r\n$3\r\nDEL\r\n")
    out = expect_start_fails(data, "--aof-load-truncated", "no")
    assert "Unexpected end of file reading the append only file" in out


@pytest.mark.skipif(not os.environ.get("VIREO_SERVER"), reason="needs VIREO_SERVER")
def test_incomplete_multi_is_reverted(servers, data):
    incr = write_then_stop(servers, data)
    with open(incr, "ab") as f:
        f.write(resp("MULTI") + resp("SET", "k0", "changed"))
    h = run(servers, data)
    assert h.client().get("k0") == b"0"
    assert "Revert incomplete MULTI/EXEC transaction" in h.log_text(20000)


@pytest.mark.skipif(not os.environ.get("VIREO_SERVER"), reason="needs VIREO_SERVER")
def test_corrupted_tail_refuses_to_start(servers, data):
    incr = write_then_stop(servers, data)
    with open(incr, "ab") as f:
        f.write(b"!garbage\r\n")
    out = expect_start_fails(data)
    assert "Bad file format reading the append only file" in out


@pytest.mark.skipif(not os.environ.get("VIREO_SERVER"), reason="needs VIREO_SERVER")
def test_bad_manifest_refuses_to_start(servers, data):
    write_then_stop(servers, data)
    (aof_dir(data) / "appendonly.aof.manifest").write_text("file x seq 1 type z\n")
    out = expect_start_fails(data)
    assert "FATAL AOF MANIFEST FILE ERROR" in out and "Unknown AOF file type" in out


@pytest.mark.skipif(not os.environ.get("VIREO_SERVER"), reason="needs VIREO_SERVER")
@pytest.mark.parametrize("tail", [b"*2147483647\r\n", b"*3\r\n$3\r\nSET\r\n$9999999999\r\nab",
                                  b"*99999999999999999999\r\n"])
def test_impossible_count_at_the_tail_is_a_truncated_tail(servers, data, tail):
    # These headers claim more than the rest of the file holds: a cut-off tail, never an
    # allocation of the claimed size (`*2147483647` aborted the loader).
    incr = write_then_stop(servers, data)
    good_size = incr.stat().st_size
    with open(incr, "ab") as f:
        f.write(tail)
    out = expect_start_fails(data, "--aof-load-truncated", "no")
    assert "Unexpected end of file reading the append only file" in out
    assert incr.stat().st_size == good_size + len(tail)  # refused: the file is left alone
    h = run(servers, data)
    r = h.client()
    assert r.dbsize() == 10 and r.get("k9") == b"9"
    assert "Truncating the AOF" in h.log_text(20000)
    assert incr.stat().st_size == good_size


@pytest.mark.skipif(not os.environ.get("VIREO_SERVER"), reason="needs VIREO_SERVER")
@pytest.mark.parametrize("which", ["incr", "base"])
def test_manifest_naming_a_missing_file_refuses_to_start(servers, data, which):
    # Starting without a listed file would serve part of the data (or none) and then log on
    # top of it; Redis refuses with this error, and so do we, touching nothing.
    write_then_stop(servers, data)
    before = manifest(data)
    victim = incr_files(data)[-1] if which == "incr" else next(aof_dir(data).glob("*.base.*"))
    victim.unlink()
    files_before = sorted(p.name for p in aof_dir(data).iterdir())
    out = expect_start_fails(data)
    # Once: Redis's suite counts the line (it was logged by the loader and again at exit).
    line = f"Unable to obtain the AOF file {victim.name} length. stat: No such file or directory"
    assert out.count(line) == 1
    assert manifest(data) == before
    assert sorted(p.name for p in aof_dir(data).iterdir()) == files_before


@pytest.mark.parametrize("mode,loaded", [("clients", True), ("no", True), ("yes", False)])
def test_sanitize_dump_payload_clients_trusts_the_aof(servers, data, mode, loaded):
    # An intset out of order passes shallow validation only. "clients" validates deeply what
    # clients send, not what the AOF replays (as Redis); "yes" validates both.
    incr = write_then_stop(servers, data)
    payload = dump_payload(b"\x0b" + rdb_str(intset([5, 3, 9])), 10)
    with open(incr, "ab") as f:
        f.write(resp("RESTORE", "restored", "0", payload))
    h = run(servers, data, "--sanitize-dump-payload", mode)
    r = h.client()
    assert r.exists("restored") == (1 if loaded else 0)
    assert r.dbsize() == (11 if loaded else 10)
    if mode == "clients":
        with pytest.raises(redis.ResponseError, match="Bad data format"):
            r.execute_command("RESTORE", "other", "0", payload)


def test_old_single_file_aof_is_upgraded(servers, data):
    (data / "appendonly.aof").write_bytes(resp("SELECT", "0") + resp("SET", "old", "style") +
                                          resp("RPUSH", "l", "a", "b"))
    h = run(servers, data)
    r = h.client()
    assert r.get("old") == b"style" and r.lrange("l", 0, -1) == [b"a", b"b"]
    assert not (data / "appendonly.aof").exists()
    assert manifest(data) == ("file appendonly.aof seq 1 type b\n"
                              "file appendonly.aof.1.incr.aof seq 1 type i\n")


# --------------------------------------------------------------------------------------------
# Interoperability with redis-server 7.0


def start_redis(data: Path):
    port = free_port()
    proc = subprocess.Popen(
        [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data),
         "--appendonly", "yes", "--save", "", "--daemonize", "no", "--logfile",
         str(data / "redis.log")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c = redis.Redis(port=port, socket_timeout=15)
    wait_for(lambda: c.ping(), 10)
    # Redis answers -LOADING while it reads the files.
    wait_for(lambda: c.info("persistence")["loading"] == 0, 20)
    return proc, c


def stop_redis(proc, c):
    try:
        c.shutdown(nosave=True)
    except redis.ConnectionError:
        pass
    proc.wait(10)


def snapshot_redis(c) -> dict:
    class H:
        def client(self, db=0):
            return redis.Redis(port=c.connection_pool.connection_kwargs["port"], db=db)
    return snapshot(H())


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed")
@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_redis_server_loads_vireo_aof(servers, data, preamble):
    h = run(servers, data, "--aof-use-rdb-preamble", preamble)
    r = h.client()
    populate(r)
    wait_rewrite_done(r)
    r.bgrewriteaof()
    wait_rewrite_done(r, 0)
    r.set("in-incr", "yes")
    r.expire("in-incr", 1000)
    before = snapshot(h)
    h.stop()
    proc, c = start_redis(data)
    try:
        assert snapshot_redis(c) == before
    finally:
        stop_redis(proc, c)


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed")
def test_vireo_loads_redis_server_aof(servers, data):
    proc, c = start_redis(data)
    try:
        populate(c)
        c.bgrewriteaof()
        wait_for(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0 and
                 c.info("persistence")["aof_rewrites"] >= 1, 20)
        c.set("in-incr", "yes")
        c.lpush("list", "head")
        c.execute_command("SELECT", 5)
        c.incr("counter")
        c.execute_command("SELECT", 0)
        before = snapshot_redis(c)
    finally:
        stop_redis(proc, c)
    h = run(servers, data)
    assert snapshot(h) == before
    # And vireo keeps appending to Redis's incremental file.
    h.client().set("from-vireo", 1)
    h.stop()
    proc, c = start_redis(data)
    try:
        assert c.get("from-vireo") == b"1"
    finally:
        stop_redis(proc, c)


# --------------------------------------------------------------------------------------------
# Writes while rewriting


@pytest.mark.load
def test_bgrewriteaof_while_50_clients_write(servers, data):
    if SANITIZED:
        pytest.skip("load test")
    h = run(servers, data)
    r = h.client()
    pipe = r.pipeline(transaction=False)
    for i in range(100000):
        pipe.set(f"pre:{i}", "x" * 50)
    pipe.execute()
    stop = threading.Event()
    acked: list[list[int]] = [[] for _ in range(50)]
    latencies: list[float] = []
    lock = threading.Lock()

    def writer(n):
        c = h.client()
        i = 0
        local = []
        while not stop.is_set():
            t0 = time.perf_counter()
            c.set(f"w{n}:{i}", i)
            local.append(time.perf_counter() - t0)
            acked[n].append(i)
            i += 1
        with lock:
            latencies.extend(local)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(50)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    rewrites = info(r)["aof_rewrites"]
    r.bgrewriteaof()
    wait_rewrite_done(r, rewrites, timeout=30)
    time.sleep(0.3)
    stop.set()
    for t in threads:
        t.join(30)
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99)] * 1000
    print(f"\n{len(latencies)} writes by 50 clients during BGREWRITEAOF: p99 {p99:.2f} ms, "
          f"max {latencies[-1] * 1000:.2f} ms")
    h2 = restart(h, data, kill=True)
    servers.append(h2)
    r2 = h2.client()
    assert r2.dbsize() == 100000 + sum(len(a) for a in acked)
    for n in range(0, 50, 7):
        if acked[n]:
            assert r2.get(f"w{n}:{acked[n][-1]}") == str(acked[n][-1]).encode()


def test_stream_group_times_survive_replay(servers, data):
    # The log replays with the command clock stopped at 0 (nothing expires mid-replay); the
    # consumer's seen-time and the pending entry's delivery time must still be real times.
    h = run(servers, data)
    r = h.client()
    r.xadd("s", {"f": "v"}, id="1-0")
    r.xgroup_create("s", "g", id="0")
    r.xreadgroup("g", "alice", {"s": ">"})
    h2 = restart(h, data, kill=True)
    servers.append(h2)
    r2 = h2.client()
    consumers = r2.xinfo_consumers("s", "g")
    assert consumers[0]["name"] == b"alice"
    assert 0 <= consumers[0]["idle"] < 60_000
    pending = r2.xpending_range("s", "g", "-", "+", 10)
    assert pending[0]["time_since_delivered"] < 60_000


def logged_commands(log: bytes) -> list[list[bytes]]:
    """The RESP arrays of a command log, in order."""
    out, pos = [], 0
    while pos < len(log):
        assert log[pos:pos + 1] == b"*", log[pos:pos + 40]
        end = log.index(b"\r\n", pos)
        n, pos = int(log[pos + 1:end]), end + 2
        args = []
        for _ in range(n):
            end = log.index(b"\r\n", pos)
            size, pos = int(log[pos + 1:end]), end + 2
            args.append(log[pos:pos + size])
            pos += size + 2
        out.append(args)
    return out


def test_xreadgroup_logs_as_redis_72(servers, data):
    # Redis 7.2's unit/multi "MULTI propagation of XREADGROUP": each delivery is an XCLAIM whose
    # LASTID moves the group, inside the transaction; the consumer's creation and the group's
    # last ID go out only with NOACK (which has no XCLAIM to carry them). Checked against a
    # Redis 7.2.6 AOF of the same sequence.
    h = run(servers, data)
    r = h.client()
    for n in range(3):
        r.xadd("s", {"f": n}, id=f"{n + 1}-0")
    r.xgroup_create("s", "g", id="0")
    tx = r.pipeline(transaction=True)
    tx.xreadgroup("g", "c1", {"s": ">"}, count=2)
    tx.xreadgroup("g", "c1", {"s": ">"})
    tx.execute()
    r.xreadgroup("g", "nobody", {"s": ">"})  # nothing left: nothing logged
    r.xadd("s", {"f": 3}, id="4-0")
    r.xreadgroup("g", "c2", {"s": ">"}, noack=True)
    r.ping()
    log = incr_files(data)[-1].read_bytes()
    commands = [[a.decode() for a in c] for c in logged_commands(log)]
    shapes = [c[0].upper() if c[0].upper() != "XGROUP" else "XGROUP " + c[1].upper()
              for c in commands]
    assert shapes == ["SELECT", "XADD", "XADD", "XADD", "XGROUP CREATE", "MULTI", "XCLAIM",
                      "XCLAIM", "XCLAIM", "EXEC", "XADD", "MULTI", "XGROUP CREATECONSUMER",
                      "XGROUP SETID", "EXEC"]
    claims = [c for c in commands if c[0].upper() == "XCLAIM"]
    assert [(c[3], c[5], c[-1]) for c in claims] == [("c1", "1-0", "1-0"), ("c1", "2-0", "2-0"),
                                                     ("c1", "3-0", "3-0")]
    assert commands[-3][2:] == ["s", "g", "c2"]
    assert commands[-2][2:] == ["s", "g", "4-0", "ENTRIESREAD", "4"]

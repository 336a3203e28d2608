"""RDB snapshots: SAVE/BGSAVE, load at start-up, cross-checks with redis-server and
redis-check-rdb, INFO persistence, MISCONF, SHUTDOWN SAVE/NOSAVE, DEBUG RELOAD."""

import os
import subprocess
import time

import pytest
import redis
from conftest import start_server, wait_for
from rdb_helpers import (REDIS_CHECK_RDB, REDIS_SERVER, RedisServer, fill, intset, rdb_file, rdb_len,
                         rdb_str, snapshot)

ALL_TYPES = ("string", "list", "hash", "set", "zset", "stream")


def available_types(r):
    """The types this server build implements (the families land one by one)."""
    have = []
    probes = {"string": ("SET", "p", "1"), "list": ("RPUSH", "p", "1"), "hash": ("HSET", "p", "f", "1"),
              "set": ("SADD", "p", "1"), "zset": ("ZADD", "p", "1", "m"),
              "stream": ("XADD", "p", "*", "f", "1")}
    for t, cmd in probes.items():
        r.delete("p")
        try:
            r.execute_command(*cmd)
            have.append(t)
        except redis.ResponseError:
            pass
    r.delete("p")
    return tuple(have)


@pytest.fixture
def datadir(tmp_path):
    return tmp_path


def vireo(server_factory, datadir, *extra):
    return server_factory(["--dir", str(datadir), "--save", "", *extra])


def info(r):
    return r.info("persistence")


def wait_bgsave(r):
    wait_for(lambda: info(r)["rdb_bgsave_in_progress"] == 0, timeout=30)


def test_save_and_restart(server_factory, datadir):
    s1 = vireo(server_factory, datadir)
    r = s1.client()
    keys = fill(r, available_types(r))
    r.select(3)
    r.set("in-db3", "x")
    r.select(0)
    before = snapshot(r, keys)
    assert r.save() is True
    assert os.path.exists(datadir / "dump.rdb")
    assert info(r)["rdb_changes_since_last_save"] == 0
    s1.stop()
    s2 = vireo(server_factory, datadir)
    r2 = s2.client()
    assert snapshot(r2, keys) == before
    assert r2.execute_command("SELECT", 3) and r2.get("in-db3") == b"x"
    assert info(r2)["rdb_last_load_keys_loaded"] == len(keys) + 1


def test_expired_keys_are_not_loaded(server_factory, datadir):
    s1 = vireo(server_factory, datadir)
    r = s1.client()
    r.set("short", "v", px=300)
    r.set("long", "v", ex=1000)
    r.save()
    s1.stop()
    time.sleep(0.4)
    s2 = vireo(server_factory, datadir)
    r2 = s2.client()
    assert r2.exists("short") == 0
    assert r2.exists("long") == 1
    assert 990_000 < r2.pttl("long") <= 1_000_000
    assert info(r2)["rdb_last_load_keys_expired"] == 1


def test_bgsave(server_factory, datadir):
    s = vireo(server_factory, datadir)
    r = s.client()
    r.set("a", "1")
    assert info(r)["rdb_changes_since_last_save"] == 1
    last = r.lastsave()
    assert r.bgsave() is True
    wait_bgsave(r)
    i = info(r)
    assert i["rdb_last_bgsave_status"] == "ok"
    assert i["rdb_changes_since_last_save"] == 0
    assert i["rdb_saves"] >= 1
    assert r.lastsave() >= last
    assert os.path.exists(datadir / "dump.rdb")
    assert not [f for f in os.listdir(datadir) if f.startswith("temp-")]
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("BGSAVE", "NOW")
    assert r.execute_command("BGSAVE", "SCHEDULE") in (b"Background saving started", b"OK", True)
    wait_bgsave(r)


def test_bgsave_while_writing(server_factory, datadir):
    s = vireo(server_factory, datadir)
    r = s.client()
    pipe = r.pipeline(transaction=False)
    for i in range(200_000):
        pipe.set(f"key:{i}", i)
    pipe.execute()
    r.bgsave()
    # The parent keeps serving while the child writes.
    for i in range(1000):
        r.set(f"late:{i}", i)
    wait_bgsave(r)
    assert info(r)["rdb_last_bgsave_status"] == "ok"
    s.stop()
    s2 = vireo(server_factory, datadir)
    r2 = s2.client()
    assert r2.dbsize() >= 200_000
    assert r2.get("key:199999") == b"199999"


def test_save_points_trigger_bgsave(server_factory, datadir):
    s = server_factory(["--dir", str(datadir), "--save", "1 2"])
    r = s.client()
    r.set("a", 1)
    r.set("b", 2)
    wait_for(lambda: info(r)["rdb_saves"] >= 1, timeout=10)
    assert r.config_get("save") == {"save": "1 2"}
    r.config_set("save", "")
    assert r.config_get("save") == {"save": ""}


def test_info_persistence_fields(server_factory, datadir):
    r = vireo(server_factory, datadir).client()
    i = info(r)
    for f in ("loading", "async_loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress",
              "rdb_last_save_time", "rdb_last_bgsave_status", "rdb_last_bgsave_time_sec",
              "rdb_current_bgsave_time_sec", "rdb_saves", "rdb_last_load_keys_loaded",
              "rdb_last_load_keys_expired", "aof_enabled"):
        assert f in i, f
    assert i["rdb_last_save_time"] == r.lastsave().timestamp() or abs(
        i["rdb_last_save_time"] - int(r.lastsave().timestamp())) <= 1


def test_config_options(server_factory, datadir):
    r = vireo(server_factory, datadir).client()
    for name, default in (("rdbcompression", "yes"), ("rdbchecksum", "yes"),
                          ("stop-writes-on-bgsave-error", "yes"), ("dbfilename", "dump.rdb"),
                          ("rdb-del-sync-files", "no")):
        assert r.config_get(name) == {name: default}
    # rdbchecksum is settable only at start-up, as in Redis 7.
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        r.config_set("rdbchecksum", "no")
    r = vireo(server_factory, datadir, "--rdbchecksum", "no").client()
    r.config_set("rdbcompression", "no")
    r.set("k", "a" * 1000)
    r.save()
    data = (datadir / "dump.rdb").read_bytes()
    assert b"a" * 1000 in data  # not compressed
    assert data.endswith(b"\0" * 8)  # no checksum


def test_misconf_after_failed_bgsave(server_factory, datadir):
    # A directory where the dump should go makes the rename fail (works as root, too).
    s = server_factory(["--dir", str(datadir), "--dbfilename", "blocked.rdb", "--save", "3600 1"])
    os.mkdir(datadir / "blocked.rdb")
    r = s.client()
    r.set("a", 1)
    r.bgsave()
    wait_for(lambda: info(r)["rdb_bgsave_in_progress"] == 0 and
             info(r)["rdb_last_bgsave_status"] == "err", timeout=10)
    with pytest.raises(redis.ResponseError, match="^MISCONF Redis is configured to save RDB"):
        r.set("b", 2)
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        r.ping()
    assert r.get("a") == b"1"  # reads still work
    with pytest.raises(redis.ResponseError):  # a bare "-ERR"
        r.save()
    r.config_set("stop-writes-on-bgsave-error", "no")
    assert r.set("b", 2)
    r.config_set("stop-writes-on-bgsave-error", "yes")
    os.rmdir(datadir / "blocked.rdb")
    r.bgsave()
    wait_for(lambda: info(r)["rdb_last_bgsave_status"] == "ok", timeout=10)
    assert r.set("c", 3)
    s.stop()  # saves on SIGTERM (save points are set), so the next start finds a file


def test_misconf_refuses_script_writes(server_factory, datadir):
    # Scripts' writes are refused like clients' (Redis's scriptVerifyWriteCommandAllow): a
    # script without flags at its redis.call, one with a shebang (a write script) before it
    # runs; read-only scripts still run.
    s = server_factory(["--dir", str(datadir), "--dbfilename", "blocked.rdb", "--save", "3600 1"])
    os.mkdir(datadir / "blocked.rdb")
    r = s.client()
    r.set("x", "x")
    r.bgsave()
    wait_for(lambda: info(r)["rdb_bgsave_in_progress"] == 0 and
             info(r)["rdb_last_bgsave_status"] == "err", timeout=10)
    with pytest.raises(redis.ResponseError, match="^MISCONF Redis is configured to save RDB"):
        r.eval("return redis.call('set','x',1)", 1, "x")
    assert r.eval("return redis.call('get','x')", 1, "x") == b"x"
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        r.eval("#!lua\nreturn redis.call('set','x',1)", 1, "x")
    assert r.eval("#!lua flags=no-writes\nreturn redis.call('get','x')", 1, "x") == b"x"
    assert r.get("x") == b"x"
    os.rmdir(datadir / "blocked.rdb")
    r.bgsave()
    wait_for(lambda: info(r)["rdb_last_bgsave_status"] == "ok", timeout=10)
    assert r.eval("return redis.call('set','x',1)", 1, "x") == b"OK"


def test_shutdown_save_and_nosave(server_factory, datadir):
    s = vireo(server_factory, datadir)
    r = s.client()
    r.set("k", "v")
    s.expect_exit = True
    r.shutdown(nosave=True)  # redis-py returns once the connection closes
    s.proc.wait(10)
    assert not os.path.exists(datadir / "dump.rdb")
    s = vireo(server_factory, datadir)
    r = s.client()
    r.set("k", "v")
    s.expect_exit = True
    r.shutdown(save=True)
    s.proc.wait(10)
    assert os.path.exists(datadir / "dump.rdb")
    r2 = vireo(server_factory, datadir).client()
    assert r2.get("k") == b"v"


def test_sigterm_saves_with_save_points(server_factory, datadir):
    s = server_factory(["--dir", str(datadir), "--save", "3600 1"])
    s.client().set("k", "v")
    assert s.stop() == 0
    assert os.path.exists(datadir / "dump.rdb")


def test_debug_reload(server_factory, datadir):
    r = vireo(server_factory, datadir).client()
    keys = fill(r, available_types(r))
    before = snapshot(r, keys)
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert snapshot(r, keys) == before


def test_corrupt_file_refuses_to_start(server_factory, datadir):
    s = vireo(server_factory, datadir)
    r = s.client()
    r.set("k", "v" * 50)
    r.save()
    s.stop()
    data = bytearray((datadir / "dump.rdb").read_bytes())
    data[-12] ^= 0xFF
    (datadir / "dump.rdb").write_bytes(bytes(data))
    with pytest.raises(RuntimeError):
        start_server(["--dir", str(datadir), "--save", ""])


# ---- hostile files: refused before anything of the claimed size is allocated ----------------

def start_fails(datadir, *extra) -> str:
    """Starts vireo on datadir, expects it to refuse (exit status 1, no sanitizer report)."""
    with pytest.raises(RuntimeError) as info:
        start_server(["--dir", str(datadir), "--save", "", *extra])
    text = str(info.value)
    assert "exited with status 1 during startup" in text
    assert "Sanitizer" not in text and "runtime error:" not in text
    return text


@pytest.mark.parametrize("value", [
    rdb_len(8 << 30) + b"x" * 100,                       # an 8 GB string, 100 bytes present
    b"\xc3" + rdb_len(1 << 40) + rdb_len(8 << 30) + b"\x01ab",  # LZF claiming 1 TB / 8 GB
], ids=["8GB-string", "LZF-8GB"])
def test_rdb_claiming_a_huge_string_is_refused(datadir, value):
    (datadir / "dump.rdb").write_bytes(rdb_file(b"k", 0, value))
    assert "Bad RDB value for key 'k' (type 0): short read" in start_fails(datadir)


@pytest.mark.parametrize("type_byte,value", [
    (2, rdb_len(1 << 62) + rdb_str(b"a")),   # set
    (3, rdb_len(1 << 62) + rdb_str(b"a") + b"\x011"),  # zset
    (4, rdb_len(1 << 62) + rdb_str(b"f") + rdb_str(b"v")),  # hash
    (18, rdb_len(1 << 62)),  # quicklist
], ids=["set", "zset", "hash", "quicklist"])
def test_rdb_claiming_huge_counts_is_refused(datadir, type_byte, value):
    (datadir / "dump.rdb").write_bytes(rdb_file(b"k", type_byte, value))
    assert "Bad RDB value for key 'k'" in start_fails(datadir)


def test_sanitize_dump_payload_applies_at_start_up(server_factory, datadir):
    # An intset out of order: loadable as it is, refused by deep sanitization (as Redis).
    (datadir / "dump.rdb").write_bytes(rdb_file(b"k", 11, rdb_str(intset([5, 3, 9]))))
    assert "Bad RDB value for key 'k'" in start_fails(datadir, "--sanitize-dump-payload", "yes")
    s = vireo(server_factory, datadir, "--sanitize-dump-payload", "no")
    assert sorted(s.client().smembers("k")) == [b"3", b"5", b"9"]


def fuzz_binary():
    server = os.environ.get("VIREO_SERVER", "")
    path = os.path.join(os.path.dirname(server), "restore_fuzz") if server else ""
    return path if os.path.isfile(path) else None


@pytest.mark.skipif(fuzz_binary() is None, reason="needs VIREO_SERVER and restore_fuzz next to it")
def test_mutated_rdb_files_through_the_process(server_factory, tmp_path):
    # restore_fuzz's generator (tests/fuzz) writes mutated dump.rdb files; the real process
    # either loads one (and serves) or refuses it with an error and exit status 1.
    files = tmp_path / "files"
    files.mkdir()
    subprocess.run([fuzz_binary(), "--seed", "7", "--emit-rdb", str(files), "16"], check=True,
                   capture_output=True, timeout=60)
    outcomes = {"loaded": 0, "refused": 0}
    for f in sorted(files.iterdir()):
        d = tmp_path / f.stem
        d.mkdir()
        (d / "dump.rdb").write_bytes(f.read_bytes())
        try:
            s = vireo(server_factory, d)
        except RuntimeError as e:
            text = str(e)
            assert "exited with status 1 during startup" in text, f.name
            assert "Sanitizer" not in text and "runtime error:" not in text, f.name
            outcomes["refused"] += 1
            continue
        r = s.client()
        assert r.dbsize() <= 1 and r.ping()
        for k in r.keys():
            r.type(k), r.dump(k)
        outcomes["loaded"] += 1
    assert outcomes["refused"] > 0 and outcomes["loaded"] > 0, outcomes


# ---- cross-checks with Debian's redis-server and redis-check-rdb ----------------------------


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed")
def test_redis_check_rdb_and_redis_server_load_our_dump(server_factory, datadir):
    s = vireo(server_factory, datadir)
    r = s.client()
    keys = fill(r, available_types(r))
    before = snapshot(r, keys)
    for compression in ("yes", "no"):
        r.config_set("rdbcompression", compression)
        r.save()
        check = subprocess.run([REDIS_CHECK_RDB, str(datadir / "dump.rdb")], capture_output=True,
                               text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        assert "RDB looks OK" in check.stdout
        red = RedisServer(datadir)
        try:
            assert snapshot(red.client, keys) == before
            assert red.client.execute_command("SELECT", 0)
        finally:
            red.stop()


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed")
def test_we_load_redis_dump_with_every_type(server_factory, datadir):
    red = RedisServer(datadir)
    try:
        have = available_types(red.client)
        s = vireo(server_factory, datadir / "..")  # any server just to ask what we support
        mine = available_types(s.client())
        keys = fill(red.client, mine)
        # Small listpack-encoded ones and big hashtable/skiplist/quicklist ones, both.
        before = snapshot(red.client, keys)
        encodings = {k: red.client.object("encoding", k) for k in keys}
        red.client.save()
    finally:
        red.stop()
    assert have
    r = vireo(server_factory, datadir).client()
    assert snapshot(r, keys) == before
    # Redis 7.0 has no listpack lists or sets (7.2 does, and so do we): compare the rest.
    for k, enc in encodings.items():
        if r.type(k) in (b"hash", b"zset"):
            assert r.object("encoding", k) == enc, k


LIB = "#!lua name=rdblib\nredis.register_function('rdbfn', function(keys, args) return 42 end)"


def test_function_libraries_persist(server_factory, datadir):
    s = vireo(server_factory, datadir)
    r = s.client()
    try:
        r.function_load(LIB)
    except redis.ResponseError as e:
        pytest.skip(f"FUNCTION not available: {e}")
    r.save()
    s.stop()
    r2 = vireo(server_factory, datadir).client()
    assert r2.fcall("rdbfn", 0) == 42
    assert r2.execute_command("DEBUG", "RELOAD") == b"OK"
    assert r2.fcall("rdbfn", 0) == 42
    if REDIS_SERVER is not None:
        red = RedisServer(datadir)
        try:
            assert red.client.fcall("rdbfn", 0) == 42
        finally:
            red.stop()


def _child_pids(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


def _gone_or_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.startswith("State:") and "Z" in line for line in f)
    except FileNotFoundError:
        return True


def test_bgsave_child_dies_with_a_killed_server_and_frees_the_port(server_factory):
    import signal
    import socket

    srv = server_factory()
    srv.expect_exit = True  # SIGKILLed below
    r = srv.client()
    r.set("k", "v")
    r.config_set("rdb-key-save-delay", 10000000)  # the child would run for ages
    r.bgsave()
    wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 1)
    children = _child_pids(srv.proc.pid)
    assert children
    # The child let go of the listening socket at once: while it runs, the port is bound only
    # by the server, so after the server dies a new one can listen there at once.
    os.kill(srv.proc.pid, signal.SIGKILL)
    srv.proc.wait()
    wait_for(lambda: all(_gone_or_zombie(c) for c in children))
    sock = socket.socket()
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", srv.port))
        sock.listen(1)
    finally:
        sock.close()


def test_bgsave_child_reports_its_progress_and_copy_on_write(server_factory, datadir):
    # The child measures its private dirty memory about once a second and reports it with the
    # keys it wrote; pages the server writes during the save are copied, so the size grows.
    s = vireo(server_factory, datadir, "--rdb-key-save-delay", "300")
    r = s.client()
    i = info(r)
    assert (i["current_cow_size"], i["current_save_keys_processed"], i["current_save_keys_total"],
            i["rdb_last_cow_size"], i["current_fork_perc"]) == (0, 0, 0, 0, 0)
    pipe = r.pipeline(transaction=False)
    for k in range(8000):
        pipe.set(f"key{k}", "A" * 500)
    pipe.execute()
    r.bgsave()
    assert info(r)["current_save_keys_total"] == 8000
    modified = 0

    def dirty_and_reported(before_cow, before_keys):
        nonlocal modified
        for _ in range(16):
            r.setrange(f"key{modified}", 0, "B" * 500)
            modified += 1
        i = info(r)
        return (i["current_cow_size"] >= before_cow + 4096 and
                i["current_save_keys_processed"] > before_keys and i["current_fork_perc"] > 0)

    wait_for(lambda: dirty_and_reported(0, 0), timeout=10, interval=0.1,
             message="no copy-on-write report from the child")
    i = info(r)
    assert i["rdb_bgsave_in_progress"] == 1
    assert 0 < i["current_save_keys_processed"] <= 8000
    assert i["current_cow_peak"] >= i["current_cow_size"]
    assert i["current_cow_size_age"] >= 0
    reported = i["current_cow_size"]
    r.config_set("rdb-key-save-delay", 0)  # the running child keeps its own delay
    wait_bgsave(r)
    i = info(r)
    # The child's last measurement, taken when the image was written, and then all reset.
    assert i["rdb_last_cow_size"] >= reported * 0.9
    assert (i["current_cow_size"], i["current_cow_peak"], i["current_save_keys_processed"],
            i["current_save_keys_total"], i["current_fork_perc"]) == (0, 0, 0, 0, 0)
    assert "Fork CoW for RDB: current" in s.log_text(200_000)

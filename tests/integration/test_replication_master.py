"""vireo as a replication master: real Redis 7 replicas (Debian's redis-server) follow it over
PSYNC2, full and partial resynchronization, the live stream, WAIT, ROLE / INFO replication,
min-replicas-to-write, output limits of replicas, REPLCONF, rdb-only transfers."""

from __future__ import annotations

import socket
import subprocess

import pytest
import redis

from conftest import RawConnection, wait_for
from repl_helpers import (procs, start_vireo, REDIS_SERVER, assert_same_data, populate, start_redis, wait_in_sync,
                          wait_link_up)


def redis_replica(procs, master, *args):
    h = start_redis(["--replicaof", "127.0.0.1", str(master.port), *args])
    procs.append(h)
    return h


def synced_pair(procs, *master_args, data=False):
    """A vireo master (with the populated dataset when `data`) and a Redis replica in sync."""
    m = start_vireo(procs, *master_args)
    mc = m.client()
    if data:
        populate(mc)
    rep = redis_replica(procs, m)
    rc = rep.client()
    wait_link_up(rc)
    wait_in_sync(mc, rc)
    return m, mc, rep, rc


def resync_after_link_kill(mc, rc, writes):
    """Drops the replica's link, writes while it is down, waits until it caught up again."""
    # A password keeps the replica out (its handshake fails) while we write; this connection
    # stays authenticated.
    mc.config_set("requirepass", "keep-out")
    assert mc.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    wait_for(lambda: rc.info("replication")["master_link_status"] == "down")
    pipe = mc.pipeline(transaction=False)
    for key, value in writes:
        pipe.set(key, value)
    pipe.execute()
    mc.config_set("requirepass", "")
    wait_link_up(rc)
    wait_in_sync(mc, rc)
    assert_same_data(mc, rc)
    return mc.info("stats")


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_full_sync_every_type_then_live_stream(procs, diskless):
    m = start_vireo(procs, "--repl-diskless-sync", diskless)
    mc = m.client()
    populate(mc)
    rep = redis_replica(procs, m)
    rc = rep.client()
    wait_link_up(rc)
    wait_in_sync(mc, rc)
    assert_same_data(mc, rc)
    assert mc.info("stats")["sync_full"] == 1

    # The live stream: effects of non-deterministic commands, scripts, blocking pops,
    # transactions, other databases.
    mc.incr("int")
    mc.spop("set:big", 3)
    mc.eval("redis.call('set', KEYS[1], ARGV[1]); redis.call('lpush', KEYS[2], ARGV[1])", 2,
            "from-lua", "list:small", "v")
    mc.expire("str", 1000)
    mc.xadd("stream", {"live": 1})
    mc.xreadgroup("g2", "carol", {"stream": ">"}, count=2)
    mc.xack("stream", "g1", mc.xpending_range("stream", "g1", "-", "+", 1)[0]["message_id"])
    pipe = mc.pipeline(transaction=True)
    pipe.set("tx1", 1).incrbyfloat("tx2", 1.5).hincrby("hash:small", "a", 10)
    pipe.execute()
    blocked = m.client()
    import threading

    got = {}
    t = threading.Thread(target=lambda: got.setdefault("v", blocked.blpop("queue", 10)))
    t.start()
    wait_for(lambda: mc.info("clients")["blocked_clients"] == 1)
    mc.rpush("queue", "job1", "job2")
    t.join()
    assert got["v"] == (b"queue", b"job1")
    db5 = redis.Redis(port=m.port, db=5)
    db5.set("five", 5)
    mc.swapdb(5, 6)
    assert mc.wait(1, 5000) == 1
    wait_in_sync(mc, rc)
    assert_same_data(mc, rc)
    # The replica's offset and ours agree.
    assert rc.info("replication")["slave_repl_offset"] == mc.info("replication")["master_repl_offset"]


def test_expired_keys_reach_the_replica_as_deletes(procs):
    m, mc, rep, rc = synced_pair(procs)
    mc.set("short", "v", px=50)
    wait_in_sync(mc, rc)
    assert rc.exists("short") in (0, 1)
    wait_for(lambda: mc.info("stats")["expired_keys"] >= 1, timeout=10)
    wait_in_sync(mc, rc)
    # The master's DEL arrived: the key is gone from the replica's keyspace, not just hidden.
    assert rc.dbsize() == 0


def test_partial_resync_after_the_link_drops(procs):
    m, mc, rep, rc = synced_pair(procs, data=True)
    assert len([c for c in mc.client_list() if "S" in c["flags"]]) == 1
    stats = resync_after_link_kill(mc, rc, [(f"during-{i}", i) for i in range(100)])
    assert (stats["sync_full"], stats["sync_partial_ok"]) == (1, 1)


def test_backlog_overrun_means_full_resync(procs):
    m, mc, rep, rc = synced_pair(procs, "--repl-backlog-size", "16kb")
    stats = resync_after_link_kill(mc, rc, [(f"k{i}", "v" * 500) for i in range(200)])
    assert (stats["sync_full"], stats["sync_partial_ok"], stats["sync_partial_err"]) == (2, 0, 1)


def test_wait_and_role_and_info(procs):
    m = start_vireo(procs)
    mc = m.client()
    assert mc.wait(0, 0) == 0
    assert mc.wait(1, 50) == 0  # times out with the count at that moment
    with pytest.raises(redis.ResponseError, match="timeout is negative"):
        mc.wait(1, -1)
    assert mc.execute_command("ROLE") == [b"master", 0, []]
    rep = redis_replica(procs, m)
    rc = rep.client()
    wait_link_up(rc)
    mc.set("k", "v")
    assert mc.wait(1, 0) == 1
    role = mc.execute_command("ROLE")
    assert role[0] == b"master"
    assert role[1] == mc.info("replication")["master_repl_offset"]
    wait_for(lambda: mc.execute_command("ROLE")[2] != [])
    ip, port, offset = mc.execute_command("ROLE")[2][0]
    assert (ip, int(port)) == (b"127.0.0.1", rep.port)
    i = mc.info("replication")
    assert i["role"] == "master"
    assert i["connected_slaves"] == 1
    assert i["slave0"]["state"] == "online"
    assert i["slave0"]["port"] == rep.port
    assert i["repl_backlog_active"] == 1
    assert i["master_replid"] == rc.info("replication")["master_replid"]
    flags = [c["flags"] for c in mc.client_list()]
    assert "S" in flags
    # A write WAIT can't confirm with 2 replicas: the count after the timeout.
    mc.set("k2", "v")
    assert mc.wait(2, 100) == 1


def test_wait_blocks_until_the_replica_acknowledges(procs):
    m, mc, rep, rc = synced_pair(procs)
    for i in range(50):
        mc.set(f"w{i}", i)
        assert mc.wait(1, 5000) == 1
    assert rc.get("w49") == b"49"


def test_min_replicas_to_write(procs):
    m, mc, rep, rc = synced_pair(procs)
    wait_for(lambda: mc.info("replication")["slave0"]["state"] == "online")
    mc.config_set("min-replicas-to-write", 2)
    with pytest.raises(redis.ResponseError, match="NOREPLICAS Not enough good replicas to write."):
        mc.set("x", 1)
    assert mc.get("x") is None  # reads still work
    mc.config_set("min-replicas-to-write", 1)
    assert mc.set("x", 1)
    assert mc.info("replication")["min_slaves_good_slaves"] == 1


def test_replconf_errors(procs):
    m = start_vireo(procs)
    mc = m.client()
    with pytest.raises(redis.ResponseError, match="Unrecognized REPLCONF option: foo"):
        mc.execute_command("REPLCONF", "foo", "bar")
    with pytest.raises(redis.ResponseError, match="syntax error"):
        mc.execute_command("REPLCONF", "listening-port")
    assert mc.execute_command("REPLCONF", "listening-port", "1234", "capa", "eof") in (b"OK", "OK", True)
    # ACK from a client that is not a replica: no reply at all, the next command answers.
    raw = m.raw()
    raw.send(RawConnection.encode("REPLCONF", "ACK", "10") + RawConnection.encode("PING"))
    assert raw.read_reply() == b"+PONG\r\n"
    raw.close()


def test_sync_old_protocol_gets_a_disk_payload(procs):
    m = start_vireo(procs)
    mc = m.client()
    mc.set("k", "v")
    raw = m.raw(timeout=10)
    raw.send(RawConnection.encode("SYNC"))
    buf = b""
    while b"\r\n" not in buf.lstrip(b"\n"):
        buf += raw.sock.recv(65536)
    buf = buf.lstrip(b"\n")
    header, rest = buf.split(b"\r\n", 1)
    assert header.startswith(b"$") and not header.startswith(b"$EOF:")
    size = int(header[1:])
    while len(rest) < size:
        rest += raw.sock.recv(65536)
    assert rest[:5] == b"REDIS"
    raw.close()


def test_redis_cli_rdb_only_transfer(procs, tmp_path):
    m = start_vireo(procs)
    mc = m.client()
    populate(mc)
    out = tmp_path / "dump.rdb"
    res = subprocess.run(["redis-cli", "-p", str(m.port), "--rdb", str(out)], capture_output=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    data = out.read_bytes()
    assert data[:5] == b"REDIS" and len(data) > 1000
    # The rdb-only client is gone afterwards; the server serves on.
    wait_for(lambda: mc.info("replication")["connected_slaves"] == 0)
    assert mc.ping()


def test_replica_that_never_reads_is_dropped(procs):
    m = start_vireo(procs, "--client-output-buffer-limit", "replica 256kb 0 0")
    mc = m.client()
    raw = m.raw()
    raw.send(RawConnection.encode("REPLCONF", "capa", "eof", "capa", "psync2"))
    assert raw.read_reply() == b"+OK\r\n"
    raw.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.send(RawConnection.encode("PSYNC", "?", "-1"))
    wait_for(lambda: mc.info("replication").get("slave0", {}).get("state") == "online")
    # More than the kernel's socket buffers can absorb, so the stream piles up in our buffer.
    pipe = mc.pipeline(transaction=False)
    for i in range(300):
        pipe.set(f"fill{i}", "x" * 100_000)
    pipe.execute()
    wait_for(lambda: mc.info("replication")["connected_slaves"] == 0, timeout=10)
    assert mc.info("stats")["client_output_buffer_limit_disconnections"] >= 1
    assert mc.ping()
    raw.close()


def test_two_replicas_share_one_diskless_sync(procs):
    m = start_vireo(procs, "--repl-diskless-sync-delay", "1")
    mc = m.client()
    populate(mc)
    a = redis_replica(procs, m)
    b = redis_replica(procs, m)
    ac, bc = a.client(), b.client()
    wait_link_up(ac)
    wait_link_up(bc)
    mc.set("after", 1)
    assert mc.wait(2, 5000) == 2
    assert_same_data(mc, ac)
    assert_same_data(mc, bc)
    assert mc.info("stats")["sync_full"] == 2


def test_set_repl_chooses_where_script_effects_go(procs, tmp_path):
    m, mc, rep, rc = synced_pair(procs, "--appendonly", "yes")
    mc.eval(
        "redis.set_repl(redis.REPL_NONE); redis.call('set', 'nowhere', 1);"
        "redis.set_repl(redis.REPL_AOF); redis.call('set', 'aof-only', 1);"
        "redis.set_repl(redis.REPL_REPLICA); redis.call('set', 'replica-only', 1);"
        "redis.set_repl(redis.REPL_ALL); redis.call('set', 'everywhere', 1)", 0)
    mc.set("marker", 1)
    wait_in_sync(mc, rc)
    assert rc.get("marker") == b"1"
    assert rc.exists("nowhere", "aof-only") == 0
    assert rc.exists("replica-only", "everywhere") == 2
    # The AOF got what was meant for it (written before the reply went out).
    aof = b"".join(f.read_bytes() for f in (m.workdir / "appendonlydir").glob("*.incr.aof"))
    assert b"aof-only" in aof and b"everywhere" in aof and b"marker" in aof
    assert b"nowhere" not in aof and b"replica-only" not in aof


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_redis_cli_functions_rdb_holds_only_functions(procs, tmp_path, diskless):
    # Redis 7.2's integration/redis-cli "Dumping an RDB - functions only": REPLCONF
    # rdb-filter-only functions gets a snapshot of the libraries alone, over the socket even
    # when repl-diskless-sync is off (the dump file stays untouched).
    m = start_vireo(procs, "--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0",
                    "--dir", str(tmp_path))
    mc = m.client()
    mc.execute_command("DEBUG", "POPULATE", 1000, "key", 100)
    mc.function_load("#!lua name=lib1\nredis.register_function('func1', function() return 123 end)")
    out = tmp_path / "cli.rdb"
    res = subprocess.run(["redis-cli", "-p", str(m.port), "--functions-rdb", str(out)],
                         capture_output=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert b"Transfer finished with success" in res.stderr + res.stdout
    assert not (tmp_path / "dump.rdb").exists()
    loaded = start_vireo(procs, "--dir", str(tmp_path), "--dbfilename", "cli.rdb").client()
    assert loaded.dbsize() == 0
    libs = [dict(zip(lib[::2], lib[1::2])) for lib in loaded.function_list()]
    assert [lib[b"library_name"] for lib in libs] == [b"lib1"]
    assert loaded.fcall("func1", 0) == 123
    wait_for(lambda: mc.info("replication")["connected_slaves"] == 0)
    assert mc.dbsize() == 1000


def test_rdb_filter_only_options(procs):
    m = start_vireo(procs)
    mc = m.client()
    mc.set("k", "v")
    raw = m.raw()
    raw.send(RawConnection.encode("REPLCONF", "rdb-filter-only", "functions keys"))
    assert raw.read_reply() == b"-ERR Unsupported rdb-filter-only option: keys\r\n"
    # A filtered snapshot is only made for the socket: a replica that can't read one is refused.
    raw.send(RawConnection.encode("REPLCONF", "rdb-filter-only", ""))
    assert raw.read_reply() == b"+OK\r\n"
    raw.send(RawConnection.encode("SYNC"))
    assert raw.read_reply() == b"-ERR Filtered replica requires EOF capability\r\n"
    raw.close()
    # "" asks for neither keys nor functions: an empty image, in the EOF form.
    raw = m.raw()
    raw.send(RawConnection.encode("REPLCONF", "capa", "eof", "rdb-filter-only", ""))
    assert raw.read_reply() == b"+OK\r\n"
    raw.send(RawConnection.encode("SYNC"))
    buf = b""
    while b"\r\n" not in buf.lstrip(b"\n"):
        buf += raw.sock.recv(65536)
    header, rest = buf.lstrip(b"\n").split(b"\r\n", 1)
    assert header.startswith(b"$EOF:")
    mark = header[5:]
    while not rest.endswith(mark):
        rest += raw.sock.recv(65536)
    image = rest[:-len(mark)]
    assert image[:5] == b"REDIS" and b"\x00\x01k\x01v" not in image
    raw.close()

"""Cluster mode on one node, without the bus: nodes.conf written and reloaded like Redis's, the
CLUSTER subcommands that only change local state, their reply shapes and errors side by side
with Debian's redis-server 7.0, a single node owning every slot that redis-cli --cluster check
accepts, and the commands cluster mode refuses (SELECT n>0, MOVE, SWAPDB, COPY ... DB)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import redis

from conftest import start_server, wait_for

REDIS_SERVER = shutil.which("redis-server")
REDIS_CLI = shutil.which("redis-cli")
NODE_ID = re.compile(r"^[0-9a-f]{40}$")


def cluster_args(conf: Path | None = None, timeout_ms: int = 500):
    args = ["--cluster-enabled", "yes", "--cluster-node-timeout", str(timeout_ms)]
    if conf is not None:
        args += ["--cluster-config-file", str(conf)]
    return args


def plain_client(handle):
    client = handle.client(decode_responses=True)
    client.response_callbacks.clear()
    return client


def info_fields(text: str) -> dict:
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


def wait_ok(client, timeout=15):
    wait_for(lambda: "cluster_state:ok" in client.execute_command("CLUSTER", "INFO"),
             timeout=timeout, message="cluster_state never turned ok")


@pytest.fixture
def tmpdir_path():
    path = Path(tempfile.mkdtemp(prefix="vireo-cluster-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def node():
    handle = start_server(cluster_args(timeout_ms=2000))
    yield handle
    handle.stop()
    handle.cleanup()


@pytest.fixture
def c(node):
    client = plain_client(node)
    yield client
    client.close()


def test_fresh_node_identity_and_nodes_conf(node, c):
    myid = c.execute_command("CLUSTER", "MYID")
    assert NODE_ID.match(myid)
    shard = c.execute_command("CLUSTER", "MYSHARDID")
    assert NODE_ID.match(shard) and shard != myid
    text = (node.workdir / "nodes.conf").read_text()
    lines = text.splitlines()
    assert lines[-1] == "vars currentEpoch 0 lastVoteEpoch 0"
    me = [l for l in lines if l.startswith(myid)]
    assert len(me) == 1
    assert re.match(rf"^{myid} :{node.port}@{node.port + 10000},,tls-port=0,shard-id={shard} "
                    r"myself,master - 0 0 0 connected$", me[0]), me[0]
    info = c.execute_command("INFO", "cluster")
    assert "cluster_enabled:1" in info
    assert "redis_mode:cluster" in c.execute_command("INFO", "server")


def test_single_node_with_every_slot_serves_and_passes_check(node, c):
    assert c.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383") == "OK"
    wait_ok(c)
    info = info_fields(c.execute_command("CLUSTER", "INFO"))
    assert info["cluster_slots_assigned"] == "16384"
    assert info["cluster_slots_ok"] == "16384"
    assert info["cluster_known_nodes"] == "1"
    assert info["cluster_size"] == "1"
    assert info["cluster_stats_messages_sent"] == "0"
    assert c.execute_command("SET", "foo", "bar") == "OK"
    assert c.execute_command("GET", "foo") == "bar"
    myid = c.execute_command("CLUSTER", "MYID")
    nodes = c.execute_command("CLUSTER", "NODES")
    assert nodes == f"{myid} :{node.port}@{node.port + 10000} myself,master - 0 0 0 connected 0-16383\n"
    slots = c.execute_command("CLUSTER", "SLOTS")
    assert slots == [[0, 16383, ["", node.port, myid, []]]]
    shards = c.execute_command("CLUSTER", "SHARDS")
    assert len(shards) == 1
    shard = dict(zip(shards[0][0::2], shards[0][1::2]))
    assert shard["slots"] == [0, 16383]
    member = dict(zip(shard["nodes"][0][0::2], shard["nodes"][0][1::2]))
    assert member["id"] == myid and member["port"] == node.port
    assert member["role"] == "master" and member["health"] == "online"
    assert list(member) == ["id", "port", "ip", "endpoint", "role", "replication-offset", "health"]
    assert c.execute_command("CLUSTER", "COUNTKEYSINSLOT", "12182") == 1
    assert c.execute_command("CLUSTER", "GETKEYSINSLOT", "12182", "10") == ["foo"]
    assert c.execute_command("CLUSTER", "KEYSLOT", "{foo}x") == 12182
    if REDIS_CLI:
        out = subprocess.run([REDIS_CLI, "--cluster", "check", f"127.0.0.1:{node.port}"],
                             capture_output=True, text=True, timeout=30).stdout
        assert "[OK] All nodes agree about slots configuration." in out, out
        assert "[OK] All 16384 slots covered." in out, out
        assert "[ERR]" not in out and "[WARNING]" not in out, out
    c.execute_command("DEL", "foo")


def test_cluster_mode_refusals(c):
    assert c.execute_command("SELECT", "0") == "OK"
    with pytest.raises(redis.ResponseError, match="SELECT is not allowed in cluster mode"):
        c.execute_command("SELECT", "1")
    with pytest.raises(redis.ResponseError, match="MOVE is not allowed in cluster mode"):
        c.execute_command("MOVE", "k", "1")
    with pytest.raises(redis.ResponseError, match="SWAPDB is not allowed in cluster mode"):
        c.execute_command("SWAPDB", "0", "1")
    # Redis 7.2 gives a cluster node a single database (7.0 said "Copying to another database is
    # not allowed in cluster mode").
    with pytest.raises(redis.ResponseError, match="DB index is out of range"):
        c.execute_command("COPY", "{t}a", "{t}b", "DB", "1")


def test_disabled_cluster_says_so():
    handle = start_server()
    try:
        c = plain_client(handle)
        for sub in ("INFO", "NODES", "MYID", "SLOTS"):
            with pytest.raises(redis.ResponseError, match="This instance has cluster support disabled"):
                c.execute_command("CLUSTER", sub)
        assert "cluster_enabled:0" in c.execute_command("INFO", "cluster")
    finally:
        handle.stop()
        handle.cleanup()


def test_meet_forget_and_blacklist(c):
    with pytest.raises(redis.ResponseError, match="Invalid node address specified: nope:7000"):
        c.execute_command("CLUSTER", "MEET", "nope", "7000")
    with pytest.raises(redis.ResponseError, match="Invalid base port specified: x"):
        c.execute_command("CLUSTER", "MEET", "127.0.0.1", "x")
    assert c.execute_command("CLUSTER", "MEET", "127.0.0.1", "25999") == "OK"
    lines = c.execute_command("CLUSTER", "NODES").splitlines()
    handshake = [l for l in lines if " handshake " in l]
    assert len(handshake) == 1 and "127.0.0.1:25999@35999 handshake - " in handshake[0]
    other = handshake[0].split()[0]
    assert c.execute_command("CLUSTER", "FORGET", other) == "OK"
    assert c.execute_command("CLUSTER", "FORGET", other) == "OK"  # blacklisted: already gone
    with pytest.raises(redis.ResponseError, match="Unknown node abc"):
        c.execute_command("CLUSTER", "FORGET", "abc")
    with pytest.raises(redis.ResponseError, match="I tried hard but I can't forget myself"):
        c.execute_command("CLUSTER", "FORGET", c.execute_command("CLUSTER", "MYID"))
    assert c.execute_command("CLUSTER", "LINKS") == []


def test_state_survives_a_restart(tmpdir_path):
    conf = tmpdir_path / "nodes.conf"
    first = start_server(cluster_args(conf))
    try:
        c = plain_client(first)
        myid = c.execute_command("CLUSTER", "MYID")
        assert c.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "100", "200", "300") == "OK"
        assert c.execute_command("CLUSTER", "BUMPEPOCH") == "BUMPED 1"
        assert c.execute_command("CLUSTER", "BUMPEPOCH") == "STILL 1"
        # A node in handshake is never saved.
        assert c.execute_command("CLUSTER", "MEET", "127.0.0.1", "25998") == "OK"
    finally:
        first.stop()
        first.cleanup()
    assert "handshake" not in conf.read_text()
    other = "a" * 40
    text = conf.read_text().replace(
        "vars ", f"{other} 127.0.0.1:25997@35997,,tls-port=0,shard-id={'b' * 40} master - 0 0 0 "
                 f"disconnected 101-199\nvars ")
    conf.write_text(text)
    second = start_server(cluster_args(conf))
    try:
        c = plain_client(second)
        assert c.execute_command("CLUSTER", "MYID") == myid
        assert c.execute_command("CLUSTER", "SETSLOT", "5", "MIGRATING", other) == "OK"
        assert c.execute_command("CLUSTER", "SETSLOT", "150", "IMPORTING", other) == "OK"
        info = info_fields(c.execute_command("CLUSTER", "INFO"))
        assert info["cluster_current_epoch"] == "1" and info["cluster_my_epoch"] == "1"
        assert info["cluster_known_nodes"] == "2"
        second.stop()
        saved = conf.read_text()
        assert f"[5->-{other}]" in saved and f"[150-<-{other}]" in saved
        third = start_server(cluster_args(conf))
        try:
            c = plain_client(third)
            me = [l for l in c.execute_command("CLUSTER", "NODES").splitlines() if "myself" in l][0]
            assert me.split()[0] == myid
            assert me.endswith(f" 1 connected 0-100 200-300 [5->-{other}] [150-<-{other}]"), me
            slots = c.execute_command("CLUSTER", "SLOTS")
            assert [s[:2] for s in slots] == [[0, 100], [101, 199], [200, 300]]
            assert slots[1][2][:3] == ["127.0.0.1", 25997, other]
            assert c.execute_command("CLUSTER", "SETSLOT", "5", "STABLE") == "OK"
            assert "->-" not in c.execute_command("CLUSTER", "NODES")
        finally:
            third.stop()
            third.cleanup()
    finally:
        second.stop()
        second.cleanup()


def test_corrupt_nodes_conf_is_a_startup_error(tmpdir_path):
    conf = tmpdir_path / "nodes.conf"
    conf.write_text(f"{'c' * 40} :7000@17000 myself,master - 0 0 0 connected\nthis is not valid\n")
    with pytest.raises(RuntimeError) as e:
        start_server(cluster_args(conf))
    assert "corrupted cluster config file" in str(e.value)
    assert "line 2" in str(e.value)


def test_second_node_on_the_same_file_is_refused(tmpdir_path):
    conf = tmpdir_path / "nodes.conf"
    first = start_server(cluster_args(conf))
    try:
        with pytest.raises(RuntimeError) as e:
            start_server(cluster_args(conf))
        assert "is already used by a different Redis Cluster node" in str(e.value)
    finally:
        first.stop()
        first.cleanup()


def test_slot_commands_errors(c):
    c.execute_command("CLUSTER", "FLUSHSLOTS")
    c.execute_command("CLUSTER", "ADDSLOTS", "1", "2")
    checks = [
        (("ADDSLOTS", "1"), "Slot 1 is already busy"),
        (("ADDSLOTS", "16384"), "Invalid or out of range slot"),
        (("ADDSLOTS", "x"), "Invalid or out of range slot"),
        (("ADDSLOTS", "5", "5"), "Slot 5 specified multiple times"),
        (("DELSLOTS", "9"), "Slot 9 is already unassigned"),
        (("ADDSLOTSRANGE", "10", "5"), "start slot number 10 is greater than end slot number 5"),
        # The RANGE forms check each range as it parses; the plain forms parse all slots first.
        (("DELSLOTSRANGE", "9", "9", "10", "5"), "Slot 9 is already unassigned"),
        (("DELSLOTS", "9", "x"), "Invalid or out of range slot"),
        (("SETSLOT", "9", "MIGRATING", "a" * 40), "I'm not the owner of hash slot 9"),
        (("SETSLOT", "1", "MIGRATING", "zz"), "I don't know about node zz"),
        (("SETSLOT", "1", "IMPORTING", "zz"), "I'm already the owner of hash slot 1"),
        (("SETSLOT", "1", "NODE", "zz"), "Unknown node zz"),
        (("SETSLOT", "1", "BOGUS"), "Invalid CLUSTER SETSLOT action or number of arguments"),
        (("COUNTKEYSINSLOT", "20000"), "Invalid slot"),
        (("GETKEYSINSLOT", "1", "-1"), "Invalid slot or number of keys"),
        (("REPLICATE", c.execute_command("CLUSTER", "MYID")), "Can't replicate myself"),
        (("FAILOVER",), "You should send CLUSTER FAILOVER to a replica"),
        (("FAILOVER", "NOW"), "syntax error"),
        (("RESET", "MEDIUM"), "syntax error"),
        (("SET-CONFIG-EPOCH", "-1"), "Invalid config epoch specified: -1"),
        (("COUNT-FAILURE-REPORTS", "zz"), "Unknown node zz"),
        (("REPLICAS", "zz"), "Unknown node zz"),
        (("NOSUCH",), "unknown subcommand 'NOSUCH'. Try CLUSTER HELP."),
    ]
    for args, message in checks:
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command("CLUSTER", *args)
        assert message in str(e.value), (args, str(e.value))
    assert c.execute_command("CLUSTER", "DELSLOTSRANGE", "1", "2") == "OK"
    assert c.execute_command("CLUSTER", "REPLICAS", c.execute_command("CLUSTER", "MYID")) == []


# --- side by side with Redis 7.0 -----------------------------------------------------------------


@pytest.fixture
def pair(tmpdir_path):
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed")
    vireo = start_server(cluster_args())
    ref = start_server(cluster_args(tmpdir_path / "ref-nodes.conf") + ["--appendonly", "no"],
                       binary=REDIS_SERVER)
    clients = (plain_client(vireo), plain_client(ref))
    yield clients
    for h in (vireo, ref):
        h.stop()
        h.cleanup()


def shape(value):
    """A reply with ids, ports and free text replaced by their types."""
    if isinstance(value, list):
        return [shape(v) for v in value]
    if isinstance(value, str):
        return "id" if NODE_ID.match(value) else "str"
    return type(value).__name__


def test_replies_have_redis_shapes(pair):
    vireo, ref = pair
    for c in pair:
        c.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    for c in pair:
        wait_ok(c)
    # CLUSTER INFO: the same fields in the same order.
    keys = [list(info_fields(c.execute_command("CLUSTER", "INFO"))) for c in pair]
    assert keys[0] == keys[1]
    # CLUSTER NODES: the same line once ids and ports are masked.
    def mask(text, c):
        myid = c.execute_command("CLUSTER", "MYID")
        port = c.connection_pool.connection_kwargs["port"]
        return text.replace(myid, "ID").replace(str(port + 10000), "BUS").replace(str(port), "PORT")
    assert mask(vireo.execute_command("CLUSTER", "NODES"), vireo) == \
        mask(ref.execute_command("CLUSTER", "NODES"), ref)
    for sub in ("SLOTS", "SHARDS", "LINKS"):
        assert shape(vireo.execute_command("CLUSTER", sub)) == shape(ref.execute_command("CLUSTER", sub)), sub
    # HELP: 7.2 adds MYSHARDID and shows the bus port and hostname in the NODES format.
    help_v = vireo.execute_command("CLUSTER", "HELP")
    help_r = ref.execute_command("CLUSTER", "HELP")
    help_v = [l.replace("<ip:port@bus-port[,hostname]>", "<ip:port>") for l in help_v
              if "MYSHARDID" not in l and "shard id" not in l]
    assert help_v == help_r
    assert vireo.execute_command("CLUSTER", "BUMPEPOCH") == ref.execute_command("CLUSTER", "BUMPEPOCH")
    for args in (("KEYSLOT", "{user1000}.following"), ("COUNTKEYSINSLOT", "7"),
                 ("GETKEYSINSLOT", "7", "3")):
        assert vireo.execute_command("CLUSTER", *args) == ref.execute_command("CLUSTER", *args)


ERROR_CALLS = [
    ("ADDSLOTS", "0"), ("ADDSLOTS", "-1"), ("ADDSLOTS", "abc"), ("DELSLOTS", "16384"),
    ("ADDSLOTSRANGE", "5", "1"), ("ADDSLOTSRANGE", "1", "2", "3"), ("DELSLOTSRANGE", "0", "x"),
    ("SETSLOT", "0", "MIGRATING", "nobody"), ("SETSLOT", "0", "IMPORTING", "nobody"),
    ("SETSLOT", "0", "NODE", "nobody"), ("SETSLOT", "0", "STABLE", "extra"),
    ("SETSLOT", "99999", "STABLE"), ("SETSLOT", "0", "WHAT", "x"), ("COUNTKEYSINSLOT", "x"),
    ("COUNTKEYSINSLOT", "-1"), ("GETKEYSINSLOT", "1", "x"), ("GETKEYSINSLOT", "16384", "1"),
    ("MEET", "1.2.3.4", "x"), ("MEET", "1.2.3.4", "1", "y"), ("MEET", "bad-ip", "7000"),
    ("MEET", "1.2.3.4", "70000"), ("FORGET", "x"), ("REPLICATE", "x"), ("REPLICAS", "x"),
    ("SLAVES", "x"), ("COUNT-FAILURE-REPORTS", "x"), ("FAILOVER",), ("FAILOVER", "FORCE"),
    ("FAILOVER", "X"), ("FAILOVER", "FORCE", "X"), ("RESET", "X"), ("RESET", "HARD", "X"),
    ("SET-CONFIG-EPOCH", "x"), ("SET-CONFIG-EPOCH", "-5"), ("SET-CONFIG-EPOCH", "5"),
    ("FLUSHSLOTS",), ("INFO", "x"), ("NOPE",), ("KEYSLOT",),
]


# 7.2 dropped "TCP" from CLUSTER MEET's port errors.
KNOWN_72_ERRORS = {
    ("MEET", "1.2.3.4", "x"): "Invalid base port specified: x",
    ("MEET", "1.2.3.4", "1", "y"): "Invalid bus port specified: y",
}


def test_errors_match_redis(pair):
    vireo, ref = pair
    for c in pair:
        c.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
        c.execute_command("CLUSTER", "BUMPEPOCH")
    for c in pair:
        wait_ok(c)
        c.execute_command("SET", "somekey", "1")  # FLUSHSLOTS needs an empty db
    mismatches = []
    for args in ERROR_CALLS:
        got = []
        for c in pair:
            try:
                got.append(("ok", c.execute_command("CLUSTER", *args)))
            except redis.ResponseError as e:
                got.append(("err", str(e)))
        if args in KNOWN_72_ERRORS:
            got[1] = ("err", KNOWN_72_ERRORS[args])
        if got[0] != got[1]:
            mismatches.append(f"{args}: vireo {got[0]!r}, redis {got[1]!r}")
    assert not mismatches, "\n".join(mismatches)


def test_keys_loaded_at_startup_claim_their_slots(tmpdir_path):
    conf = tmpdir_path / "nodes.conf"
    args = cluster_args(conf) + ["--dir", str(tmpdir_path), "--dbfilename", "dump.rdb"]
    first = start_server(args)
    try:
        c = plain_client(first)
        c.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
        wait_ok(c)
        c.execute_command("SET", "foo", "1")  # slot 12182
        c.execute_command("SAVE")
        c.execute_command("CLUSTER", "DELSLOTS", "12182")
    finally:
        first.stop()
        first.cleanup()
    second = start_server(args)
    try:
        c = plain_client(second)
        me = [l for l in c.execute_command("CLUSTER", "NODES").splitlines() if "myself" in l][0]
        assert me.endswith(" 0-16383"), me  # slot 12182 claimed again: it holds "foo"
        assert c.execute_command("CLUSTER", "COUNTKEYSINSLOT", "12182") == 1
    finally:
        second.stop()
        second.cleanup()


def test_replication_commands_refused_in_cluster_mode(node):
    client = plain_client(node)
    with pytest.raises(redis.ResponseError, match="REPLICAOF not allowed in cluster mode"):
        client.execute_command("REPLICAOF", "127.0.0.1", "1234")
    with pytest.raises(redis.ResponseError, match="FAILOVER not allowed in cluster mode"):
        client.execute_command("FAILOVER")
    assert client.execute_command("ROLE")[0] == "master"
    # A cluster node has a single database, as in Redis 7.2.
    assert client.execute_command("CONFIG", "GET", "databases") == ["databases", "1"]


def test_announced_hostname_validation_error():
    """unit/cluster/hostnames: Redis's wording of a bad cluster-announce-hostname."""
    handle = start_server()
    try:
        c = handle.client(decode_responses=True)
        with pytest.raises(redis.ResponseError,
                           match="Hostnames may only contain alphanumeric characters, hyphens "
                                 "or dots"):
            c.execute_command("CONFIG", "SET", "cluster-announce-hostname", "vireo_host")
    finally:
        handle.stop()
        handle.cleanup()

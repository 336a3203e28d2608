"""A cluster replica's own state, as Redis 7.2's legacy cluster units check it: a restarted
replica keeps the keys whose TTL passed (its master's DELs expire them, unit 14), a shebang
script that may write is MOVED from a READONLY replica (unit 16), a replica loading a full sync
is hidden from CLUSTER SLOTS and "loading" in CLUSTER SHARDS (units 22, 28), and INFO counts the
bus links in cluster_connections.

One master with all slots and one replica, joined by CLUSTER MEET / CLUSTER REPLICATE. Runs
against $VIREO_CLUSTER_NODE_BINARY too (e.g. redis-server)."""

from __future__ import annotations

import pytest
import redis

from cluster_helpers import HOST, cluster, info_dict, wait_for  # noqa: F401

DEBUG_ARGS = ("--enable-debug-command", "yes")


def replication(node) -> dict:
    return info_dict(node.call("INFO", "replication"))


@pytest.fixture
def pair(cluster):  # noqa: F811
    master, replica = cluster.start_nodes(2, extra_args=DEBUG_ARGS)
    master.call("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    replica.call("CLUSTER", "MEET", HOST, master.port)
    master_id = master.myid()
    wait_for(lambda: master_id in replica.call("CLUSTER", "NODES"), timeout=30, interval=0.05)
    wait_for(lambda: replica.call("CLUSTER", "REPLICATE", master_id) == "OK", timeout=10,
             interval=0.05)
    wait_for(lambda: replication(replica).get("master_link_status") == "up", timeout=30,
             interval=0.05)
    # A first write gives the replica a non-zero offset (CLUSTER SLOTS lists it only then).
    master.call("SET", "primer", "1")
    assert int(master.call("WAIT", 1, 10000)) == 1
    wait_for(lambda: replica.myid() in str(master.call("CLUSTER", "SLOTS")), timeout=30,
             interval=0.05)
    return master, replica


def test_restarted_replica_keeps_keys_whose_ttl_passed(pair):
    master, replica = pair
    master.call("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    now_ms = int(master.call("TIME")[0]) * 1000
    expire_at = now_ms + 1000
    for i in range(20):
        master.call("SET", f"volatile:{i}", "v", "PXAT", expire_at)
    assert int(master.call("WAIT", 1, 10000)) == 1
    total = int(master.call("DBSIZE"))
    wait_for(lambda: int(replica.call("DBSIZE")) == total, timeout=10, interval=0.05)
    replica.call("SAVE")
    replica.stop()
    # Every volatile key is logically expired now (the master's clock says so).
    wait_for(lambda: int(master.call("TIME")[0]) * 1000 > expire_at + 100, timeout=10,
             interval=0.05)
    replica.start()
    # Loaded as a replica (nodes.conf says so): the keys are there until the master's DELs.
    assert int(replica.call("DBSIZE")) == total
    wait_for(lambda: replication(replica).get("master_link_status") == "up", timeout=30,
             interval=0.05)
    assert int(replica.call("DBSIZE")) == total
    master.call("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    wait_for(lambda: int(replica.call("DBSIZE")) == total - 20, timeout=30, interval=0.05)


def test_shebang_script_that_may_write_is_moved_from_a_readonly_replica(pair):
    master, replica = pair
    master.call("SET", "a", "1")
    assert int(master.call("WAIT", 1, 10000)) == 1
    c = replica.client()
    c.execute_command("READONLY")
    with pytest.raises(redis.ResponseError, match="^MOVED"):
        c.execute_command("EVAL", "#!lua\nreturn redis.call('del','a')", 1, "a")
    # Inside MULTI it is refused when queued, and the transaction with it.
    c.execute_command("MULTI")
    with pytest.raises(redis.ResponseError, match="^MOVED"):
        c.execute_command("EVAL", "#!lua\nreturn redis.call('del','a')", 1, "a")
    with pytest.raises(redis.exceptions.ExecAbortError):
        c.execute_command("EXEC")
    # A script that declares no-writes reads here, as does one without a shebang.
    assert c.execute_command("EVAL", "#!lua flags=no-writes\nreturn redis.call('get','a')", 1,
                             "a") == "1"
    assert c.execute_command("EVAL", "return redis.call('get','a')", 1, "a") == "1"


def test_cluster_connections_counts_two_bus_links_per_peer(pair):
    master, replica = pair
    for node in (master, replica):
        assert info_dict(node.call("INFO", "clients"))["cluster_connections"] == "2"


def shard_health(node, node_id: str) -> str | None:
    for shard in node.call("CLUSTER", "SHARDS"):
        fields = dict(zip(shard[::2], shard[1::2]))
        for entry in fields["nodes"]:
            entry = dict(zip(entry[::2], entry[1::2]))
            if entry["id"] == node_id:
                return entry["health"]
    return None


def test_replica_loading_a_full_sync_is_hidden_from_cluster_slots(pair):
    master, replica = pair
    replica_id = replica.myid()
    master.call("DEBUG", "POPULATE", 1000, "key", 1000)
    assert int(master.call("WAIT", 1, 10000)) == 1
    # A slow load (4 ms a key) that still serves the bus every KB.
    replica.call("CONFIG", "SET", "key-load-delay", 4000)
    replica.call("CONFIG", "SET", "loading-process-events-interval-bytes", 1024)
    # Too much written for the backlog while the replica is cut off: a full sync.
    master.call("CONFIG", "SET", "repl-backlog-size", 16384)
    c = master.client()
    pipe = c.pipeline(transaction=True)
    pipe.execute_command("CLIENT", "KILL", "TYPE", "replica")
    for j in range(100):
        pipe.execute_command("SET", f"{{0}}{j}", "A" * 1024)
    pipe.execute()
    wait_for(lambda: replica_id not in str(master.call("CLUSTER", "SLOTS")), timeout=30,
             interval=0.02, message="the loading replica stayed in CLUSTER SLOTS")
    # Hidden from the FULLRESYNC on (its offset is 0 then, as in Redis), which comes a moment
    # before the load starts: wait for the load, then it is still hidden and shown loading.
    wait_for(lambda: info_dict(replica.call("INFO", "persistence"))["loading"] == "1",
             timeout=30, interval=0.02, message="the replica never started loading")
    assert replica_id not in str(master.call("CLUSTER", "SLOTS"))
    assert shard_health(master, replica_id) == "loading"
    replica.call("CONFIG", "SET", "key-load-delay", 0)
    replica.call("CONFIG", "SET", "loading-process-events-interval-bytes", 2097152)
    wait_for(lambda: replication(replica).get("master_link_status") == "up", timeout=60,
             interval=0.05)
    wait_for(lambda: replica_id in str(master.call("CLUSTER", "SLOTS")), timeout=30,
             interval=0.05, message="the replica never came back to CLUSTER SLOTS")
    assert replica_id in str(replica.call("CLUSTER", "SLOTS"))
    wait_for(lambda: shard_health(master, replica_id) == "online", timeout=30, interval=0.05)

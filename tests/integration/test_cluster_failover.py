"""Failover in a 6-node cluster (3 masters + 3 replicas, cluster-node-timeout 1500 ms):
SIGKILL a master and its replica is promoted within a few node timeouts, the cluster is ok
again with every slot served and no acknowledged (WAIT) write lost, and the old master, restarted
on its nodes.conf, comes back as a replica of its successor; a manual CLUSTER FAILOVER on a
replica swaps the roles without losing a key.

Runs against $VIREO_CLUSTER_NODE_BINARY (e.g. redis-server) or vireo; see cluster_helpers."""

from __future__ import annotations

import time

import pytest

# cluster and module_cluster are fixtures: importing them is what makes them visible here.
from cluster_helpers import (cluster, cluster_info, describe_failure, get_all, module_cluster,  # noqa: F401
                             needs_redis, parse_nodes, parse_nodes_self, redis_cli, set_all,
                             sum_dbsize, wait_for)

pytestmark = needs_redis

NODE_TIMEOUT_MS = 1500


def build_six(cluster):  # noqa: F811
    cluster.node_timeout = NODE_TIMEOUT_MS
    cluster.start_nodes(6)
    cluster.create(replicas=1)
    return cluster


@pytest.fixture
def six(cluster):  # noqa: F811
    """A cluster of its own, for the test that kills a master."""
    return build_six(cluster)


@pytest.fixture(scope="module")
def shared_six(module_cluster):  # noqa: F811
    """One cluster for the manual failover and then the forgotten replica (on another shard)."""
    return build_six(module_cluster)


def write_acknowledged(cl, n, prefix):
    """n keys through RedisCluster, then WAIT on every master for its replica: all are safe."""
    keys = [f"{prefix}:{i}" for i in range(n)]
    set_all(cl.cluster_client(), keys)
    for m in cl.masters():
        m.sync_replicas(1)
    return keys


def read_all(cl, keys):
    return get_all(cl.cluster_client(), keys)


def test_sigkill_master_replica_takes_over(six):
    cl = six
    base = sum_dbsize(cl.masters())
    keys = write_acknowledged(cl, 2000, "fo")
    victim = cl.masters()[0]
    heir = cl.replicas_of(victim)[0]
    victim_id, heir_id = victim.myid(), heir.myid()
    survivors = [n for n in cl.nodes if n is not victim]

    start = time.monotonic()
    victim.kill()
    cl.wait_role(heir, "master", timeout=NODE_TIMEOUT_MS / 1000 * 10)
    elapsed = time.monotonic() - start
    # Redis: PFAIL after one node timeout, FAIL once a majority agrees, then the replica's
    # election (0.5-1 s delay + rank); a few node timeouts in all.
    assert elapsed < NODE_TIMEOUT_MS / 1000 * 5, f"promotion took {elapsed:.1f}s\n{describe_failure(cl)}"
    cl.wait_ok(survivors)
    cl.wait_full_coverage(survivors)
    for n in survivors:
        seen = {e["id"]: e for e in parse_nodes(n.call("CLUSTER", "NODES"))}
        wait_for(lambda: "fail" in {e["id"]: e for e in parse_nodes(n.call("CLUSTER", "NODES"))}
                 [victim_id]["flags"], timeout=10, message=f"{n!r} never flagged the dead master fail")
        assert seen[heir_id]["master"] == "-"
    assert read_all(cl, keys) == keys
    assert sum_dbsize(cl.masters()) - base == len(keys)
    print(f"replica promoted {elapsed:.2f}s after the SIGKILL")

    # Back from the dead with its old nodes.conf: it learns it lost its slots and follows the heir.
    victim.start()
    cl.wait_role(victim, "slave", timeout=30)
    wait_for(lambda: parse_nodes_self(victim)["master"] == heir_id, timeout=30,
             message="the old master never became a replica of its successor")
    cl.wait_agree(timeout=30)
    cl.wait_replication()
    cl.wait_ok()
    out = cl.check()
    assert "[OK] All nodes agree about slots configuration." in out
    assert read_all(cl, keys) == keys


def test_manual_failover_swaps_roles_without_loss(shared_six):
    cl = shared_six
    base = sum_dbsize(cl.masters())
    keys = write_acknowledged(cl, 2000, "mf")
    master = cl.masters()[1]
    replica = cl.replicas_of(master)[0]
    slots = parse_nodes_self(master)["slots"]

    assert replica.call("CLUSTER", "FAILOVER") == "OK"
    cl.wait_role(replica, "master", timeout=20)
    cl.wait_role(master, "slave", timeout=20)
    cl.wait_agree(timeout=30)
    cl.wait_replication()
    cl.wait_ok()
    assert parse_nodes_self(replica)["slots"] == slots
    assert parse_nodes_self(master)["master"] == replica.myid()
    assert read_all(cl, keys) == keys
    assert sum_dbsize(cl.masters()) - base == len(keys)
    # The new master takes writes and its replica (the old master) follows.
    rc = cl.cluster_client()
    for k in keys[:200]:
        rc.set(k, "after")
    replica.sync_replicas(1)
    assert int(master.call("DBSIZE")) == int(replica.call("DBSIZE"))
    out = cl.check()
    assert "[OK] All nodes agree about slots configuration." in out
    assert "[WARNING]" not in out and "[ERR]" not in out, out


def test_forget_a_dead_replica(shared_six):
    """A replica lost for good: every live node is told CLUSTER FORGET (redis-cli --cluster
    call reaches the reachable ones; del-node cannot, it skips failed nodes)."""
    cl = shared_six
    master = next(m for m in cl.masters() if 0 in parse_nodes_self(m)["slots"])
    dead = cl.replicas_of(master)[0]
    dead_id = dead.myid()
    dead.kill()
    survivors = [n for n in cl.nodes if n is not dead]
    for n in survivors:
        wait_for(lambda: "fail" in {e["id"]: e for e in parse_nodes(n.call("CLUSTER", "NODES"))}
                 [dead_id]["flags"], timeout=20, message=f"{n!r} never flagged the dead replica fail")
    out = redis_cli("--cluster", "call", survivors[0].addr, "CLUSTER", "FORGET", dead_id).stdout
    assert out.count(": OK") == 5, out
    cl.wait_agree(survivors, timeout=20)
    for n in survivors:
        assert dead_id not in n.call("CLUSTER", "NODES")
        assert cluster_info(n)["cluster_known_nodes"] == "5"
    # The master has no replica left: a new node takes the dead one's place.
    newcomer = cl.start_node()
    redis_cli("--cluster", "add-node", newcomer.addr, master.addr, "--cluster-slave",
              "--cluster-master-id", master.myid())
    cl.wait_role(newcomer, "slave")
    cl.wait_agree(timeout=30)
    cl.wait_replication()
    master.sync_replicas(1)
    out = cl.check()
    assert "[WARNING]" not in out and "[ERR]" not in out, out

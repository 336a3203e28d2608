"""Mixed clusters: a Debian redis-server 7.0 node joins a cluster of the node binary (vireo) with
CLUSTER MEET, takes slots with `redis-cli --cluster reshard` and serves them to RedisCluster; and
a node-binary node joins a redis-server 7.0 cluster the same way. In each, a node of the other
binary is also added as a replica with `--cluster add-node --cluster-slave` (PSYNC across the
two implementations inside a cluster).

With VIREO_CLUSTER_NODE_BINARY=redis-server both sides are Redis, which is how the test itself
is checked."""

from __future__ import annotations

from cluster_helpers import (REDIS_SERVER, cluster, get_all, info_dict, keys_in_slots,  # noqa: F401
                             needs_redis, node_binary, parse_nodes_self, redis_cli, set_all, slot_map)

pytestmark = needs_redis


def join_take_slots_and_serve(cluster, home: str, guest: str):  # noqa: F811
    """A 3-master cluster of `home` nodes; a `guest` master joins with CLUSTER MEET and takes 200
    slots (with their keys); a `guest` replica is added to a `home` master."""
    home_nodes = cluster.start_nodes(3, binary=home)
    cluster.create(home_nodes, replicas=0)
    src = home_nodes[0]
    moving = sorted(parse_nodes_self(src)["slots"])[:200]
    keys = keys_in_slots(moving, 2000, prefix="mixed")
    set_all(cluster.cluster_client(), keys)

    newcomer = cluster.start_node(binary=guest)
    # The newcomer introduces itself: it sends MEET, the home node answers and gossips it on.
    assert newcomer.call("CLUSTER", "MEET", "127.0.0.1", src.port) == "OK"
    cluster.wait_agree(timeout=30)
    cluster.wait_ok()
    redis_cli("--cluster", "reshard", src.addr, "--cluster-from", src.myid(), "--cluster-to",
              newcomer.myid(), "--cluster-slots", len(moving), "--cluster-yes", timeout=60)
    cluster.wait_agree(timeout=30)
    new_id = newcomer.myid()
    for n in cluster.live():
        owners = slot_map(n)
        assert all(owners[s] == new_id for s in moving), n
    assert sum(int(newcomer.call("CLUSTER", "COUNTKEYSINSLOT", s)) for s in moving) == len(keys)
    rc2 = cluster.cluster_client()
    assert get_all(rc2, keys) == keys
    assert rc2.set(keys[0], "changed") and newcomer.call("GET", keys[0]) == "changed"

    # A replica of the other kind for a home master: add-node has it MEET, then REPLICATE.
    master = home_nodes[1]
    replica = cluster.start_node(binary=guest)
    redis_cli("--cluster", "add-node", replica.addr, master.addr, "--cluster-slave",
              "--cluster-master-id", master.myid(), timeout=60)
    cluster.wait_role(replica, "slave")
    cluster.wait_agree(timeout=30)
    cluster.wait_replication()
    mkeys = keys_in_slots(parse_nodes_self(master)["slots"], 500, prefix="rep")
    set_all(rc2, mkeys)
    master.sync_replicas(1)
    assert int(replica.call("DBSIZE")) == int(master.call("DBSIZE"))
    role = replica.call("ROLE")
    assert role[0] == "slave" and int(role[2]) == master.port and role[3] == "connected"
    assert parse_nodes_self(replica)["master"] == master.myid()
    cluster.wait_ok()
    out = cluster.check()
    assert "[OK] All nodes agree about slots configuration." in out
    assert "[WARNING]" not in out and "[ERR]" not in out, out
    assert int(info_dict(src.call("CLUSTER", "INFO"))["cluster_known_nodes"]) == 5


def test_redis_node_joins_a_cluster_of_the_node_binary(cluster):  # noqa: F811
    join_take_slots_and_serve(cluster, home=node_binary(), guest=REDIS_SERVER)


def test_node_binary_joins_a_redis_cluster(cluster):  # noqa: F811
    join_take_slots_and_serve(cluster, home=REDIS_SERVER, guest=node_binary())

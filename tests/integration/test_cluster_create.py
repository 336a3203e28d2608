"""Six nodes (3 masters + 3 replicas) built with `redis-cli --cluster create --cluster-replicas 1`:
cluster_state:ok everywhere, `redis-cli --cluster check` clean, replicas replicating (ROLE, INFO
replication, a write read back from the replica with READONLY), and CLUSTER SHARDS / SLOTS /
NODES / INFO telling the same story on every node.

Runs against $VIREO_CLUSTER_NODE_BINARY (e.g. redis-server) or vireo; see cluster_helpers."""

from __future__ import annotations

from cluster_helpers import (HOST, SLOTS, cluster_info, keys_in_slots, module_cluster,  # noqa: F401
                             needs_redis, parse_nodes, parse_nodes_self, redis_cli, six_nodes,
                             wait_for)

pytestmark = needs_redis


def norm_slots(reply):
    """CLUSTER SLOTS without per-observer ordering: (start, end, master, sorted replicas)."""
    out = []
    for entry in reply:
        start, end, master, *replicas = entry
        out.append((int(start), int(end), (master[0], int(master[1]), master[2]),
                    tuple(sorted((r[0], int(r[1]), r[2]) for r in replicas))))
    return sorted(out)


def norm_shards(reply):
    """CLUSTER SHARDS as (slot ranges, sorted (id, port, ip, role, health)) per shard."""
    out = []
    for shard in reply:
        fields = dict(zip(shard[::2], shard[1::2]))
        nodes = []
        for node in fields["nodes"]:
            n = dict(zip(node[::2], node[1::2]))
            nodes.append((n["id"], int(n["port"]), n["ip"], n["role"], n["health"]))
        slots = [int(s) for s in fields["slots"]]
        out.append((tuple(slots), tuple(sorted(nodes))))
    return sorted(out)


def test_create_converges_and_check_is_clean(six_nodes):
    cluster = six_nodes
    for n in cluster.nodes:
        info = cluster_info(n)
        assert info["cluster_state"] == "ok"
        assert info["cluster_slots_assigned"] == str(SLOTS)
        assert info["cluster_slots_ok"] == str(SLOTS)
        assert info["cluster_slots_pfail"] == "0" and info["cluster_slots_fail"] == "0"
        assert info["cluster_known_nodes"] == "6"
        assert info["cluster_size"] == "3"
    out = cluster.check()
    assert "[OK] All nodes agree about slots configuration." in out
    assert "[ERR]" not in out and "[WARNING]" not in out, out
    # check from every node, not just the first: each one's view is complete.
    for n in cluster.nodes[1:]:
        assert "[OK] All 16384 slots covered" in redis_cli("--cluster", "check", n.addr).stdout
    info = redis_cli("--cluster", "info", cluster.nodes[0].addr).stdout
    assert info.count("| 1 slaves.") == 3, info


def test_replicas_replicate(six_nodes):
    cluster = six_nodes
    masters = cluster.masters()
    assert len(masters) == 3
    for m in masters:
        role = m.call("ROLE")
        assert role[0] == "master"
        replicas = cluster.replicas_of(m)
        assert len(replicas) == 1
        r = replicas[0]
        assert [int(x[1]) for x in role[2]] == [r.port]
        rrole = r.call("ROLE")
        assert rrole[0] == "slave" and int(rrole[2]) == m.port and rrole[3] == "connected"
        rinfo = r.call("INFO", "replication")
        assert "master_link_status:up" in rinfo and f"master_port:{m.port}" in rinfo
        # A write on the master shows up on its replica (read with READONLY, no redirect).
        slots = parse_nodes_self(m)["slots"]
        key = keys_in_slots(slots, 1, prefix=f"repl{m.port}")[0]
        mc = m.client()
        mc.execute_command("SET", key, "v")
        assert mc.execute_command("WAIT", 1, 5000) == 1
        rc = r.client()
        assert rc.execute_command("READONLY") == "OK"
        assert rc.execute_command("GET", key) == "v"
        rc.execute_command("READWRITE")
        err = None
        try:
            rc.execute_command("GET", key)
        except Exception as exc:
            err = str(exc)
        assert err and err.startswith("MOVED ") and err.endswith(f"{HOST}:{m.port}"), err


def test_views_agree_on_every_node(six_nodes):
    cluster = six_nodes
    view = cluster.agreement()
    assert view is not None
    masters = [v for v in view if v[2] == "master"]
    replicas = [v for v in view if v[2] == "slave"]
    assert len(masters) == 3 and len(replicas) == 3
    assert sorted(len(m[4]) for m in masters) == sorted([5461, 5461, 5462])
    assert {r[3] for r in replicas} == {m[0] for m in masters}

    def slots_agree():
        views = [norm_slots(n.call("CLUSTER", "SLOTS")) for n in cluster.nodes]
        return views if all(v == views[0] and all(e[3] for e in v) for v in views) else None

    slots = wait_for(slots_agree, timeout=20, interval=0.05, message="CLUSTER SLOTS differ")
    assert sum(e - s + 1 for s, e, _, _ in slots[0]) == SLOTS
    by_master = {m[0]: m for m in masters}
    for start, end, master, reps in slots[0]:
        m = by_master[master[2]]
        assert master[:2] == (HOST, int(m[1].split(":")[1]))
        assert set(range(start, end + 1)) <= m[4]
        assert [r[2] for r in reps] == [r[0] for r in replicas if r[3] == master[2]]

    # Health is what each observer thinks of a replica's sync; wait until all call it online.
    def shards_agree():
        shards = [norm_shards(n.call("CLUSTER", "SHARDS")) for n in cluster.nodes]
        return shards[0] if all(s == shards[0] for s in shards) and all(
            node[4] == "online" for shard in shards[0] for node in shard[1]) else None

    shards = wait_for(shards_agree, timeout=20, interval=0.05, message="CLUSTER SHARDS differ")
    assert len(shards) == 3
    for ranges, nodes in shards:
        covered = set()
        for lo, hi in zip(ranges[::2], ranges[1::2]):
            covered.update(range(lo, hi + 1))
        owner = [n for n in nodes if n[3] == "master"]
        assert len(owner) == 1 and len(nodes) == 2
        assert by_master[owner[0][0]][4] == covered
        assert all(n[2] == HOST for n in nodes)

    # Each node's own line agrees with what it says about itself.
    for n in cluster.nodes:
        me = parse_nodes_self(n)
        assert me["id"] == n.myid()
        assert me["addr"] == n.addr
        assert all(e["link"] == "connected" for e in parse_nodes(n.call("CLUSTER", "NODES")))

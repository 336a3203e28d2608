"""Partitions: a master cut off from the cluster (SIGSTOP: it hears nothing and says nothing)
for longer than the node timeout is failed over; when it comes back its stale claim loses to the
newer config epoch and it follows its successor, so once epochs settle no slot has two masters.
A lone node's lies (a PING claiming slots with an old epoch) get it an UPDATE and change nothing.

Runs against $VIREO_CLUSTER_NODE_BINARY (e.g. redis-server) or vireo; see cluster_helpers."""

from __future__ import annotations

import os
import signal

import pytest

from cluster_helpers import (cluster, needs_redis, parse_nodes, parse_nodes_self,  # noqa: F401
                             wait_for)

pytestmark = needs_redis

NODE_TIMEOUT_MS = 1000


def masters_by_slot(node) -> dict[int, str]:
    """slot -> the id of the master `node` believes serves it."""
    out = {}
    for e in parse_nodes(node.call("CLUSTER", "NODES")):
        if "master" in e["flags"]:
            for s in e["slots"]:
                out[s] = e["id"]
    return out


def test_stopped_master_is_replaced_and_follows_on_return(cluster):  # noqa: F811
    cluster.node_timeout = NODE_TIMEOUT_MS
    cluster.start_nodes(6)
    cluster.create(replicas=1)
    cl = cluster
    victim = cl.masters()[0]
    heir = cl.replicas_of(victim)[0]
    victim_id, heir_id = victim.myid(), heir.myid()
    victim_slots = set(parse_nodes_self(victim)["slots"])
    others = [n for n in cl.nodes if n is not victim]

    os.kill(victim.proc.pid, signal.SIGSTOP)
    try:
        cl.wait_role(heir, "master", timeout=NODE_TIMEOUT_MS / 1000 * 15)
        cl.wait_ok(others)
    finally:
        os.kill(victim.proc.pid, signal.SIGCONT)

    # Back in the cluster it still claims its slots with its old epoch, but everyone answers
    # with the heir's newer claim: it gives them up and replicates the heir.
    wait_for(lambda: parse_nodes_self(victim)["master"] == heir_id, timeout=30,
             message="the partitioned master never followed its successor")
    cl.wait_agree(timeout=30)
    cl.wait_ok()
    views = [masters_by_slot(n) for n in cl.nodes]
    assert all(v == views[0] for v in views)
    assert len(views[0]) == 16384
    assert all(views[0][s] == heir_id for s in victim_slots)
    assert victim.call("ROLE")[0] == "slave"
    assert heir.call("ROLE")[0] == "master"
    # The old master's own view agrees: it serves nothing now.
    assert not parse_nodes_self(victim)["slots"]
    assert victim_id not in set(views[0].values())

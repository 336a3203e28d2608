"""Failure detection as Redis 7.2's unit/cluster/failure-marking and human-announced-nodename
check it: the only master of a cluster marks its unreachable replica FAIL by itself (it is the
whole quorum), and the failure-report log lines name the nodes' human nodenames.

Nodes joined by CLUSTER MEET on loopback; a node is made unreachable with SIGSTOP (SIGCONT
before teardown). Runs against $VIREO_CLUSTER_NODE_BINARY too."""

from __future__ import annotations

import os
import signal

import pytest

from cluster_helpers import HOST, cluster, info_dict, parse_nodes, wait_for  # noqa: F401


def join(nodes) -> None:
    for n in nodes[1:]:
        nodes[0].call("CLUSTER", "MEET", HOST, n.port)
    ids = [n.myid() for n in nodes]
    for n in nodes:
        wait_for(lambda n=n: all(i in n.call("CLUSTER", "NODES") for i in ids), timeout=30,
                 interval=0.05, message=f"{n!r} never learned every node")


def flags_of(observer, node_id: str) -> set:
    for e in parse_nodes(observer.call("CLUSTER", "NODES")):
        if e["id"] == node_id:
            return e["flags"]
    return set()


@pytest.fixture
def paused():
    """Processes a test stopped: continued at teardown, so the nodes can shut down."""
    stopped = []
    yield stopped
    for node in stopped:
        os.kill(node.proc.pid, signal.SIGCONT)


def test_single_master_marks_its_replica_failed(cluster, paused):  # noqa: F811
    master, replica = cluster.start_nodes(2)
    master.call("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    join([master, replica])
    master_id, replica_id = master.myid(), replica.myid()
    wait_for(lambda: replica.call("CLUSTER", "REPLICATE", master_id) == "OK", timeout=10,
             interval=0.05)
    wait_for(lambda: info_dict(replica.call("INFO", "replication")).get("master_link_status")
             == "up", timeout=30, interval=0.05)
    os.kill(replica.proc.pid, signal.SIGSTOP)
    paused.append(replica)
    wait_for(lambda: "fail" in flags_of(master, replica_id), timeout=30, interval=0.05,
             message="the only master never marked its replica FAIL")


def test_failure_reports_name_human_nodenames(cluster, paused):  # noqa: F811
    # Redis logs failure reports at verbose level.
    nodes = cluster.start_nodes(3, extra_args=("--loglevel", "verbose"))
    join(nodes)
    for j, n in enumerate(nodes):
        n.call("CONFIG", "SET", "cluster-announce-hostname", f"host-{j}.com")
        n.call("CONFIG", "SET", "cluster-announce-human-nodename", f"nodename-{j}")
    ids = [n.myid() for n in nodes]
    # Hostnames travel with the nodenames: once CLUSTER NODES shows every hostname everywhere,
    # every node knows every nodename too.
    for n in nodes:
        wait_for(lambda n=n: n.call("CLUSTER", "NODES").count(".com") == 3, timeout=30,
                 interval=0.05, message=f"{n!r}: hostnames never propagated")
    os.kill(nodes[0].proc.pid, signal.SIGSTOP)
    paused.append(nodes[0])
    line = f"Node {ids[2]} (nodename-2) reported node {ids[0]} (nodename-0) as not reachable."
    wait_for(lambda: line in nodes[1].log_text(1000000), timeout=30, interval=0.1,
             message="no failure report naming the human nodenames")

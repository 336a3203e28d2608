"""The DEBUG subcommands Redis's cluster test suites use to break the bus on purpose:
DROP-CLUSTER-PACKET-FILTER (ignore every incoming message of one type, still counted in CLUSTER
INFO's stats), CLOSE-CLUSTER-LINK-ON-PACKET-DROP (also free the link it came on) and
CLUSTERLINK KILL <to|from|all> (free the links with a node; CLUSTER LINKS shows them recreated).

Three nodes joined by CLUSTER MEET on loopback (no slots needed). Runs against
$VIREO_CLUSTER_NODE_BINARY too (Redis 7.2 lacks CLOSE-CLUSTER-LINK-ON-PACKET-DROP)."""

from __future__ import annotations

import pytest
import redis

from cluster_helpers import HOST, cluster, cluster_info, wait_for  # noqa: F401
from conftest import start_server

DEBUG_ARGS = ("--enable-debug-command", "yes")
PUBLISH = 4


def links(node) -> list[dict]:
    out = []
    for entry in node.call("CLUSTER", "LINKS"):
        out.append(dict(zip(entry[::2], entry[1::2])))
    return out


def link(node, peer_id: str, direction: str) -> dict | None:
    return next((lk for lk in links(node) if lk["node"] == peer_id and lk["direction"] == direction),
                None)


def publish_received(node) -> int:
    return int(cluster_info(node).get("cluster_stats_messages_publish_received", 0))


@pytest.fixture
def trio(cluster):  # noqa: F811
    nodes = cluster.start_nodes(3, extra_args=DEBUG_ARGS)
    for n in nodes[1:]:
        nodes[0].call("CLUSTER", "MEET", HOST, n.port)
    for n in nodes:
        wait_for(lambda n=n: len(links(n)) == 4, timeout=30, interval=0.05,
                 message=f"{n!r}: links to both peers never came up")
    return nodes


def test_drop_filter_ignores_one_message_type_until_reset(trio):
    a, b, _ = trio
    sub = a.client().pubsub()
    sub.subscribe("ch")
    assert sub.get_message(timeout=5)["type"] == "subscribe"
    assert a.call("DEBUG", "DROP-CLUSTER-PACKET-FILTER", PUBLISH) == "OK"

    before = publish_received(a)
    b.call("PUBLISH", "ch", "lost")
    # The dropped message is still counted, as Redis counts it before the filter.
    wait_for(lambda: publish_received(a) > before, timeout=10, interval=0.05)
    assert sub.get_message(timeout=0) is None
    assert "Dropping packet that matches debug drop filter" in a.log_text()
    assert len(links(a)) == 4  # without CLOSE-CLUSTER-LINK-ON-PACKET-DROP the link stays

    assert a.call("DEBUG", "DROP-CLUSTER-PACKET-FILTER", -1) == "OK"
    b.call("PUBLISH", "ch", "heard")
    msg = sub.get_message(timeout=10)
    assert msg is not None and msg["data"] == "heard"
    sub.close()


def test_drop_filter_can_close_the_link(trio):
    a, b, _ = trio
    if a.is_redis:
        pytest.skip("CLOSE-CLUSTER-LINK-ON-PACKET-DROP came after Redis 7.2")
    b_id = b.myid()
    old = link(a, b_id, "from")
    assert a.call("DEBUG", "CLOSE-CLUSTER-LINK-ON-PACKET-DROP", 1) == "OK"
    assert a.call("DEBUG", "DROP-CLUSTER-PACKET-FILTER", PUBLISH) == "OK"
    b.call("PUBLISH", "ch", "x")
    # B notices the closed connection and connects again: a newer inbound link.
    wait_for(lambda: (lk := link(a, b_id, "from")) is not None
             and lk["create-time"] > old["create-time"], timeout=30, interval=0.05)
    assert "Closing link for matching packet type 4" in a.log_text()


@pytest.mark.parametrize("direction,gone", [("to", {"to"}), ("from", {"from"}),
                                            ("ALL", {"to", "from"})])
def test_clusterlink_kill_frees_links_that_come_back(trio, direction, gone):
    a, b, c = trio
    b_id, c_id = b.myid(), c.myid()
    old = {d: link(a, b_id, d) for d in ("to", "from")}
    client = a.client()
    pipe = client.pipeline(transaction=True)
    pipe.execute_command("DEBUG", "CLUSTERLINK", "KILL", direction, b_id)
    pipe.execute_command("CLUSTER", "LINKS")
    ok, after = pipe.execute()
    assert ok == "OK"
    seen = {dict(zip(e[::2], e[1::2]))["direction"] for e in after
            if dict(zip(e[::2], e[1::2]))["node"] == b_id}
    assert seen == {"to", "from"} - gone
    assert sum(1 for e in after if c_id in e) == 2  # the other peer's links are untouched

    def recreated():
        now = {d: link(a, b_id, d) for d in ("to", "from")}
        return all(now[d] is not None and now[d]["create-time"] > old[d]["create-time"]
                   for d in gone)
    wait_for(recreated, timeout=30, interval=0.05, message="killed links never came back")
    wait_for(lambda: len(links(a)) == 4, timeout=30, interval=0.05)


def test_clusterlink_kill_errors(trio):
    a, b, _ = trio
    with pytest.raises(redis.ResponseError, match="^Unknown node nosuchnode$"):
        a.call("DEBUG", "CLUSTERLINK", "KILL", "to", "nosuchnode")
    with pytest.raises(redis.ResponseError, match="^Unknown direction sideways$"):
        a.call("DEBUG", "CLUSTERLINK", "KILL", "sideways", b.myid())
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        a.call("DEBUG", "DROP-CLUSTER-PACKET-FILTER", "ping")
    assert len(links(a)) == 4


def test_outside_cluster_mode():
    server = start_server(list(DEBUG_ARGS))
    try:
        c = server.client()
        assert c.execute_command("DEBUG", "DROP-CLUSTER-PACKET-FILTER", "1") in (b"OK", "OK", True)
        with pytest.raises(redis.ResponseError,
                           match="^Debug option only available for cluster mode enabled setup!$"):
            c.execute_command("DEBUG", "CLUSTERLINK", "KILL", "all", "x" * 40)
    finally:
        server.stop()
        server.cleanup()


def mem_links(info_text: str) -> int:
    line = next(ln for ln in info_text.splitlines() if ln.startswith("mem_cluster_links:"))
    return int(line.split(":")[1])


def test_link_memory_grows_with_queued_publishes_and_falls_back(trio):
    """Bus messages are written when the socket is next writable, so what one MULTI publishes
    is queued, and counted in mem_cluster_links, until the transaction is done; once written,
    the burst's buffers are released."""
    a = trio[0]
    client = a.client()
    idle = mem_links(client.execute_command("INFO", "memory"))
    pipe = client.pipeline(transaction=True)
    pipe.execute_command("INFO", "memory")
    for _ in range(10):
        pipe.execute_command("PUBLISH", "ch", "x" * 10000)
    pipe.execute_command("INFO", "memory")
    replies = pipe.execute()
    # At least the ten messages (Redis shares one copy between the links, vireo does not).
    assert mem_links(replies[-1]) - mem_links(replies[0]) > 10 * 10000
    wait_for(lambda: mem_links(client.execute_command("INFO", "memory")) <= idle, timeout=30,
             interval=0.05, message="link memory never fell back")


def test_links_to_gossiped_nodes_connect_with_fast_pings(cluster):  # noqa: F811
    """A ping queued on a link still connecting (the cron pings right after connecting when
    cluster-ping-interval is short, as Redis's test clusters set it) must not take away the
    EPOLLOUT that reports the connect: B and C, which only hear of each other, link up."""
    nodes = cluster.start_nodes(3, extra_args=(*DEBUG_ARGS, "--cluster-ping-interval", "100"))
    for n in nodes[1:]:
        nodes[0].call("CLUSTER", "MEET", HOST, n.port)
    for n in nodes:
        wait_for(lambda n=n: len(links(n)) == 4 and all(lk["send-buffer-used"] == 0
                                                        for lk in links(n)),
                 timeout=30, interval=0.05, message=f"{n!r}: links never all connected")


def test_config_rewrite_on_a_cluster_replica_writes_no_replicaof(cluster):  # noqa: F811
    """nodes.conf says whom a cluster replica follows; Redis leaves replicaof out of the
    rewritten file, and a replicaof line there would stop the node's restart (Redis's legacy
    cluster units rewrite the config and restart a replica)."""
    conf = "cluster-enabled yes\ncluster-config-file nodes.conf\nenable-debug-command yes\n"
    master = cluster.start_node()
    replica = start_server(config_text=conf)
    try:
        master.call("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        c = replica.client(decode_responses=True)
        c.execute_command("CLUSTER", "MEET", HOST, master.port)
        wait_for(lambda: master.myid() in c.execute_command("CLUSTER", "NODES"), timeout=30,
                 interval=0.05)
        wait_for(lambda: c.execute_command("CLUSTER", "REPLICATE", master.myid()) in ("OK", b"OK"),
                 timeout=10, interval=0.1)
        assert c.execute_command("CONFIG", "REWRITE") in ("OK", b"OK", True)
        text = (replica.workdir / "server.conf").read_text()
        assert "replicaof" not in text and "slaveof" not in text
    finally:
        replica.stop()
        replica.cleanup()

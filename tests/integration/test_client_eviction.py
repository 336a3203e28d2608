"""Client eviction (maxmemory-clients), after Redis 7.2's unit/client-eviction.tcl.

Clients are grown with requests that never complete (a bulk announced bigger than what is
sent: it sits in the query buffer), with MULTI queues, WATCH lists, subscriptions and with
replies they never read. The controlling connection sets CLIENT NO-EVICT on so it is never the
one evicted. Every wait polls CLIENT LIST / INFO.
"""

from __future__ import annotations

import socket

import pytest
import redis

from conftest import RawConnection, start_server, wait_for

KB = 1024
MB = 1024 * 1024


@pytest.fixture
def srv():
    handle = start_server()
    yield handle
    handle.stop()
    handle.cleanup()


@pytest.fixture
def ctl(srv):
    """The controlling connection: never evicted."""
    c = srv.client(decode_responses=True)
    c.client_setname("control")
    c.execute_command("CLIENT", "NO-EVICT", "on")
    return c


def clients_by_name(ctl) -> dict:
    return {c["name"]: c for c in ctl.client_list() if c["name"]}


def field(ctl, name, key) -> int:
    return int(clients_by_name(ctl)[name][key])


def exists(ctl, name) -> bool:
    return name in clients_by_name(ctl)


def named_raw(srv, name, rcvbuf=None) -> RawConnection:
    raw = srv.raw(timeout=10)
    if rcvbuf is not None:
        raw.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    assert raw.execute("CLIENT", "SETNAME", name) == b"+OK\r\n"
    return raw


def send_partial_bulk(raw, announced, sent, argc=1) -> bool:
    """Sends a command whose last bulk announces `announced` bytes but carries `sent`:
    it stays in the query buffer. False if the server closed the connection meanwhile."""
    head = b""
    if argc == 2:
        head = b"$3\r\nset\r\n"
    try:
        raw.send(b"*%d\r\n%s$%d\r\n" % (argc, head, announced) + b"v" * sent)
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False


def assert_closed(raw, timeout=10.0):
    raw.settimeout(timeout)
    try:
        while True:
            data = raw.sock.recv(65536)
            if not data:
                return
    except ConnectionResetError:
        return


def evicted(ctl) -> int:
    return int(ctl.info("stats")["evicted_clients"])


# ---------------------------------------------------------------------------------------------
# The setting


def test_config_values(ctl):
    assert ctl.config_get("maxmemory-clients") == {"maxmemory-clients": "0"}
    ctl.config_set("maxmemory-clients", "10%")
    assert ctl.config_get("maxmemory-clients") == {"maxmemory-clients": "10%"}
    ctl.config_set("maxmemory-clients", "1mb")
    assert ctl.config_get("maxmemory-clients") == {"maxmemory-clients": "1048576"}
    ctl.config_set("maxmemory-clients", "0%")
    assert ctl.config_get("maxmemory-clients") == {"maxmemory-clients": "0"}
    for bad, reason in [
        ("101%", "percentage argument must be less or equal to 100"),
        ("-5", "argument must be a memory or percent value"),
        ("abc", "argument must be a memory or percent value"),
        ("5.5%", "argument must be a memory or percent value"),
    ]:
        with pytest.raises(redis.ResponseError) as e:
            ctl.config_set("maxmemory-clients", bad)
        assert str(e.value) == (
            "CONFIG SET failed (possibly related to argument 'maxmemory-clients') - " + reason)
    assert ctl.config_get("maxmemory-clients") == {"maxmemory-clients": "0"}
    assert ctl.info("stats")["evicted_clients"] == 0


# ---------------------------------------------------------------------------------------------
# What CLIENT LIST reports


def test_client_list_memory_fields_follow_query_buffer(srv, ctl):
    raw = named_raw(srv, "q")
    # A bulk still arriving: all of it is qbuf, and tot-mem covers it.
    assert send_partial_bulk(raw, 1 * MB, 400 * KB)
    wait_for(lambda: field(ctl, "q", "qbuf") == 400 * KB)
    c = clients_by_name(ctl)["q"]
    assert int(c["argv-mem"]) == 0
    assert int(c["tot-mem"]) >= 400 * KB + int(c["qbuf-free"]) > 400 * KB
    raw.close()

    # Complete arguments of a command still arriving are argv-mem, as Redis moves them to argv.
    raw = named_raw(srv, "a")
    assert send_partial_bulk(raw, 1 * MB, 100 * KB, argc=2)
    wait_for(lambda: field(ctl, "a", "qbuf") == 100 * KB)
    assert field(ctl, "a", "argv-mem") == 3

    # The caller's own command: Redis's figures for CLIENT INFO.
    info = ctl.client_info()
    assert (int(info["qbuf"]), int(info["argv-mem"]), int(info["multi-mem"])) == (26, 10, 0)


def test_client_list_memory_fields_follow_output_and_multi(srv, ctl):
    ctl.setrange("big", 300 * KB - 1, "v")
    raw = named_raw(srv, "o", rcvbuf=4 * KB)
    before = field(ctl, "o", "tot-mem")
    # Replies it never reads pile up in its output buffer.
    for _ in range(40):
        raw.send_command("GET", "big")
    wait_for(lambda: field(ctl, "o", "omem") > 2 * MB, timeout=10)
    c = clients_by_name(ctl)["o"]
    assert int(c["obl"]) <= 16 * KB and int(c["oll"]) > 0
    assert int(c["tot-mem"]) > int(c["omem"]) + int(c["obl"]) > before
    raw.close()

    m = named_raw(srv, "m")
    assert m.execute("MULTI") == b"+OK\r\n"
    for _ in range(3):
        assert m.execute("SET", "k", "x" * 1000) == b"+QUEUED\r\n"
    c = clients_by_name(ctl)["m"]
    # Redis 7.2: the queued arguments' bytes (7.0 added its bookkeeping).
    assert c["multi"] == "3" and int(c["multi-mem"]) == 3 * (3 + 1 + 1000)
    assert int(c["tot-mem"]) > 3000


def test_big_argument_buffer_is_sized_to_it(srv, ctl):
    # Not rounded up to a power of two: a 750 KB argument holds about 750 KB, even when its
    # final CRLF comes in a read of its own.
    n = 750_000
    raw = named_raw(srv, "exact")
    raw.send(b"*1\r\n$%d\r\n" % n + b"v" * n)
    wait_for(lambda: field(ctl, "exact", "qbuf") == n)
    raw.send(b"\r")
    wait_for(lambda: field(ctl, "exact", "qbuf") == n + 1)
    assert n < field(ctl, "exact", "tot-mem") < n + 32 * KB
    raw.close()

    # Once queued by MULTI, the argument is the queue's. The emptied read buffer stays until
    # the clients cron (as Redis keeps one of the argument's size, expecting another).
    m = named_raw(srv, "queued")
    assert m.execute("MULTI") == b"+OK\r\n"
    for _ in range(2):
        m.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % n + b"v" * n)
        m.send(b"\r\n")
        assert m.read_reply() == b"+QUEUED\r\n"
    assert 2 * n < field(ctl, "queued", "tot-mem") < 3 * n + 32 * KB


def query_buffer(ctl, name) -> int:
    c = clients_by_name(ctl)[name]
    return int(c["qbuf"]) + int(c["qbuf-free"])


def test_query_buffer_follows_redis_sizes(srv, ctl):
    # Redis 7.2's model (its unit/querybuf): reads of 16 KB, a buffer idle for more than 2 s
    # given back by the clients cron, a busy one shrunk to its recent peak, and a big argument's
    # buffer sized for all of it as soon as its length is known.
    ctl.config_set("hz", 100)
    fresh = named_raw(srv, "fresh")
    assert 16 * KB <= query_buffer(ctl, "fresh") < 32 * KB
    wait_for(lambda: query_buffer(ctl, "fresh") == 0, timeout=10)
    assert field(ctl, "fresh", "idle") >= 2
    assert fresh.execute("PING") == b"+PONG\r\n"  # and it reads again
    fresh.close()

    # Busy: a 400 KB argument leaves its buffer; small commands after it let the cron shrink
    # it to their peak (a 16 KB read), not to nothing.
    busy = named_raw(srv, "busy")
    assert busy.execute("SET", "x", "A" * 400_000) == b"+OK\r\n"
    big = query_buffer(ctl, "busy")
    assert big > 32 * KB

    def shrunk():
        assert busy.execute("SET", "x", "A" * 100) == b"+OK\r\n"
        return 0 < query_buffer(ctl, "busy") < big
    wait_for(shrunk, timeout=10)
    busy.close()

    # A 1 MB argument announced: its buffer is there before the bytes come, and an idle client
    # gives the room back while it waits.
    fat = named_raw(srv, "fat")
    fat.send(b"*3\r\n$3\r\nset\r\n$1\r\na\r\n$1000000\r\n")
    wait_for(lambda: query_buffer(ctl, "fat") >= 1_000_000)
    wait_for(lambda: query_buffer(ctl, "fat") < 1_000_000, timeout=10)
    fat.send(b"v" * 1_000_000 + b"\r\n")
    assert fat.read_reply() == b"+OK\r\n"
    assert ctl.strlen("a") == 1_000_000
    fat.close()


def test_mem_clients_normal_counts_client_memory(srv, ctl):
    base = int(ctl.info("memory")["mem_clients_normal"])
    raw = named_raw(srv, "q")
    assert send_partial_bulk(raw, 2 * MB, 1 * MB)
    wait_for(lambda: int(ctl.info("memory")["mem_clients_normal"]) >= base + 1 * MB)


# ---------------------------------------------------------------------------------------------
# Eviction


def test_large_query_buffer_is_evicted(srv, ctl):
    ctl.config_set("maxmemory-clients", 3_000_000)
    small = named_raw(srv, "small")
    # Under the limit: it stays and works.
    assert small.execute("MSET", "k", "v", "k2", "v" * 1_000_000) == b"+OK\r\n"
    assert small.execute("GET", "k") == b"$1\r\nv\r\n"
    big = named_raw(srv, "big")
    send_partial_bulk(big, 3_500_000, 3_200_000)
    assert_closed(big)
    wait_for(lambda: not exists(ctl, "big"))
    assert exists(ctl, "small") and exists(ctl, "control")
    assert small.execute("PING") == b"+PONG\r\n"
    assert evicted(ctl) == 1
    wait_for(lambda: "Evicting client: id=" in srv.log_text() and "name=big" in srv.log_text())


def test_large_argv_is_evicted(srv, ctl):
    ctl.config_set("maxmemory-clients", 3_000_000)
    raw = named_raw(srv, "argv")
    try:
        raw.send_command("MSET", "k", "v", "k2", "v" * 3_000_000)
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert_closed(raw)
    wait_for(lambda: not exists(ctl, "argv"))
    assert evicted(ctl) == 1
    assert ctl.exists("k2") == 0


def test_unread_pipelined_replies_are_evicted(srv, ctl):
    ctl.config_set("maxmemory-clients", 3_000_000)
    ctl.setrange("big", 200 * KB, "v")
    raw = named_raw(srv, "reader", rcvbuf=4 * KB)
    # Within the limit while it reads.
    assert len(raw.execute("GET", "big")) > 200 * KB
    assert field(ctl, "reader", "tot-mem") < 3_000_000
    # Then it stops reading: it goes before its buffer reaches the limit by much.
    while (reader := clients_by_name(ctl).get("reader")) is not None:
        assert int(reader["tot-mem"]) < 2 * 3_000_000
        try:
            for _ in range(5):
                raw.send_command("GET", "big")
        except (BrokenPipeError, ConnectionResetError):
            break
    wait_for(lambda: not exists(ctl, "reader"))
    assert evicted(ctl) == 1


def test_subscriber_with_unread_messages_is_evicted(srv, ctl):
    ctl.config_set("maxmemory-clients", 2 * MB)
    sub = named_raw(srv, "sub", rcvbuf=4 * KB)
    sub.execute("SUBSCRIBE", "news")
    assert field(ctl, "sub", "sub") == 1
    payload = "m" * (64 * KB)
    for _ in range(1000):
        if ctl.publish("news", payload) == 0:
            break
    wait_for(lambda: not exists(ctl, "sub"))
    assert evicted(ctl) == 1
    assert ctl.pubsub_numsub("news") == [("news", 0)]


def test_multi_queue_is_evicted(srv, ctl):
    ctl.config_set("maxmemory-clients", 3_000_000)
    raw = named_raw(srv, "multi")
    assert raw.execute("MULTI") == b"+OK\r\n"
    value = "v" * (3_000_000 // 4)
    assert raw.execute("SET", "k", value) == b"+QUEUED\r\n"
    assert raw.execute("SET", "k", value) == b"+QUEUED\r\n"
    assert raw.execute("EXEC") == b"*2\r\n+OK\r\n+OK\r\n"
    assert raw.execute("MULTI") == b"+OK\r\n"
    with pytest.raises((ConnectionError, OSError)):
        for _ in range(5):
            assert raw.execute("SET", "k", value) == b"+QUEUED\r\n"
    assert not exists(ctl, "multi")
    assert evicted(ctl) == 1


def test_watched_keys_are_evicted(srv, ctl):
    ctl.config_set("maxmemory-clients", 200_000)
    raw = named_raw(srv, "watch")
    with pytest.raises((ConnectionError, OSError)):
        for batch in range(200):
            keys = [f"key:{batch}:{i}" for i in range(500)]
            assert raw.execute("WATCH", *keys) == b"+OK\r\n"
    assert not exists(ctl, "watch")
    assert evicted(ctl) == 1


@pytest.mark.parametrize("command", ["SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE"])
def test_subscriptions_are_evicted(srv, ctl, command):
    ctl.config_set("maxmemory-clients", 200_000)
    raw = named_raw(srv, "subs")
    with pytest.raises((ConnectionError, OSError)):
        for batch in range(200):
            names = [f"chan:{batch}:{i}" for i in range(200)]
            raw.send_command(command, *names)
            for _ in names:
                raw.read_reply()
    assert not exists(ctl, "subs")
    assert evicted(ctl) == 1


def test_tracking_prefixes_are_evicted(srv, ctl):
    # Redis counts a BCAST client's prefixes: adding them grows the client until it goes.
    ctl.config_set("maxmemory-clients", 200_000)
    raw = named_raw(srv, "prefixes")
    before = field(ctl, "prefixes", "tot-mem")
    assert raw.execute("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x", "PREFIX", "y") == \
        b"+OK\r\n"
    assert field(ctl, "prefixes", "tot-mem") > before
    with pytest.raises((ConnectionError, OSError)):
        for batch in range(1, 2000):
            args = []
            for letter in "abc":
                args += ["PREFIX", f"{letter}{batch:09d}"]
            assert raw.execute("CLIENT", "TRACKING", "on", "BCAST", *args) == b"+OK\r\n"
    assert not exists(ctl, "prefixes")
    assert evicted(ctl) == 1


@pytest.mark.parametrize("no_evict", ["on", "off"])
def test_no_evict(srv, ctl, no_evict):
    limit = 3_000_000
    ctl.config_set("maxmemory-clients", limit)
    raw = named_raw(srv, "c")
    assert raw.execute("CLIENT", "NO-EVICT", no_evict) == b"+OK\r\n"
    assert "e" in clients_by_name(ctl)["c"]["flags"] or no_evict == "off"
    size = limit + 1
    sent = send_partial_bulk(raw, size, size - 1)
    if no_evict == "off":
        assert_closed(raw)
        wait_for(lambda: not exists(ctl, "c"))
        assert evicted(ctl) == 1
    else:
        assert sent
        wait_for(lambda: field(ctl, "c", "qbuf") == size - 1)
        assert field(ctl, "c", "tot-mem") > limit
        assert evicted(ctl) == 0


def test_no_evict_off_makes_client_evictable(srv, ctl):
    ctl.config_set("maxmemory-clients", 1)  # Redis's floor: 128 KB
    ctl.setrange("big", 512 * KB, "v")
    raw = named_raw(srv, "c", rcvbuf=4 * KB)
    assert raw.execute("CLIENT", "NO-EVICT", "on") == b"+OK\r\n"
    for _ in range(30):
        raw.send_command("GET", "big")
    wait_for(lambda: field(ctl, "c", "tot-mem") > 4 * MB, timeout=10)
    assert exists(ctl, "c")
    raw.send_command("CLIENT", "NO-EVICT", "off")
    wait_for(lambda: not exists(ctl, "c"))
    assert evicted(ctl) == 1


def test_disabled_limit_evicts_nothing_until_set(srv, ctl):
    ctl.setrange("big", 512 * KB, "v")
    raw = named_raw(srv, "c", rcvbuf=4 * KB)
    for _ in range(30):
        raw.send_command("GET", "big")
    wait_for(lambda: field(ctl, "c", "tot-mem") > 4 * MB, timeout=10)
    assert exists(ctl, "c")
    ctl.config_set("maxmemory-clients", 1)
    assert not exists(ctl, "c")  # gone before CONFIG SET's reply
    assert evicted(ctl) == 1


def test_percentage_of_maxmemory(srv, ctl):
    ctl.config_set("maxmemory", 100 * MB)
    ctl.config_set("maxmemory-clients", "3%")
    limit = 100 * MB * 3 // 100
    half = named_raw(srv, "half")
    assert send_partial_bulk(half, limit // 2 + 1, limit // 2)
    wait_for(lambda: field(ctl, "half", "qbuf") == limit // 2)
    assert limit // 2 <= field(ctl, "half", "tot-mem") < limit
    half.close()
    wait_for(lambda: not exists(ctl, "half"))

    full = named_raw(srv, "full")
    send_partial_bulk(full, limit + 1, limit)
    assert_closed(full)
    wait_for(lambda: not exists(ctl, "full"))
    assert evicted(ctl) == 1

    # A percentage of no maxmemory is no limit.
    ctl.config_set("maxmemory", 0)
    other = named_raw(srv, "other")
    assert send_partial_bulk(other, 2 * limit, 2 * limit - 1)
    wait_for(lambda: field(ctl, "other", "qbuf") == 2 * limit - 1)
    assert evicted(ctl) == 1


def fill_clients(srv, ctl, sizes: dict) -> dict:
    """One client per name with a partial bulk of the given size; their tot-mem."""
    conns = {}
    for name, size in sizes.items():
        conns[name] = named_raw(srv, name)
        assert send_partial_bulk(conns[name], size + 1, size)
    for name, size in sizes.items():
        wait_for(lambda: field(ctl, name, "qbuf") == size)
    listed = clients_by_name(ctl)
    return conns, {name: int(listed[name]["tot-mem"]) for name in sizes}


def evictable_total(ctl) -> int:
    return sum(int(c["tot-mem"]) for c in ctl.client_list() if "e" not in c["flags"])


def test_lowering_the_limit_evicts_at_once_and_only_until_under(srv, ctl):
    sizes = {f"client{i}": 300 * KB for i in range(10)}
    conns, mem = fill_clients(srv, ctl, sizes)
    total = evictable_total(ctl)
    assert total >= sum(mem.values())
    # Room for about half of them.
    limit = total // 2 + 1
    ctl.config_set("maxmemory-clients", limit)
    left = [n for n in sizes if exists(ctl, n)]
    assert 0 < len(left) < len(sizes)
    assert evictable_total(ctl) < limit
    # It stopped as soon as it was under: one more client would be over.
    assert evictable_total(ctl) + max(mem.values()) >= limit
    assert evicted(ctl) == len(sizes) - len(left)


def test_largest_clients_go_first(srv, ctl):
    sizes = {}
    for i, size in enumerate([128 * KB, 1 * MB, 3 * MB]):
        for j in range(3):
            sizes[f"client-{i}-{j}"] = size
    # Same-bucket neighbours too: within a bucket vireo goes by size as well (Redis evicts a
    # bucket's clients in the order they entered it).
    sizes["near-a"] = 1200 * KB
    sizes["near-b"] = 1400 * KB
    conns, mem = fill_clients(srv, ctl, sizes)
    by_size = sorted(mem, key=lambda n: mem[n], reverse=True)
    total = evictable_total(ctl)
    gone = 0
    # Lower the limit step by step: exactly the biggest remaining client goes each time.
    for name in by_size[:-1]:
        total -= mem[name]
        ctl.config_set("maxmemory-clients", total + 1)
        gone += 1
        present = [n for n in sizes if exists(ctl, n)]
        # Equal sizes may go in any order.
        assert sorted(mem[n] for n in present) == sorted(mem[n] for n in by_size[gone:]), name
    assert evicted(ctl) == len(by_size) - 1


def test_output_buffer_limit_takes_precedence(srv, ctl):
    ctl.config_set("maxmemory-clients", 10 * MB)
    ctl.config_set("client-output-buffer-limit", f"normal {3 * MB} 0 0")
    ctl.setrange("k", 4 * MB, "v")
    qb = named_raw(srv, "qbuf-client")
    qbsize = 10 * MB - 4 * MB - 512 * KB
    assert send_partial_bulk(qb, qbsize + 1, qbsize)
    wait_for(lambda: field(ctl, "qbuf-client", "qbuf") == qbsize)
    readers = [named_raw(srv, f"obuf-client{i}", rcvbuf=4 * KB) for i in range(2)]
    for r in readers:
        r.send_command("GET", "k")
    for r in readers:
        assert_closed(r)
    wait_for(lambda: not exists(ctl, "obuf-client0") and not exists(ctl, "obuf-client1"))
    assert exists(ctl, "qbuf-client")
    assert evicted(ctl) == 0
    # (Redis 7.2's counter; 7.0 has none.)
    assert int(ctl.info("stats").get("client_output_buffer_limit_disconnections", 2)) == 2


def test_limit_from_the_command_line_applies_from_the_start():
    handle = start_server(["--maxmemory", "100mb", "--maxmemory-clients", "3%"])
    try:
        ctl = handle.client(decode_responses=True)
        ctl.execute_command("CLIENT", "NO-EVICT", "on")
        assert ctl.config_get("maxmemory-clients") == {"maxmemory-clients": "3%"}
        big = named_raw(handle, "big")
        send_partial_bulk(big, 4 * MB, 4 * MB - 1)
        assert_closed(big)
        wait_for(lambda: not exists(ctl, "big"))
        assert evicted(ctl) == 1
        ctl.config_resetstat()
        assert evicted(ctl) == 0
    finally:
        handle.stop()
        handle.cleanup()

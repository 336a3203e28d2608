"""MULTI / EXEC / DISCARD / WATCH / UNWATCH."""
import pytest
import redis


def test_multi_exec_queues(raw):
    assert raw.execute("MULTI") == b"+OK\r\n"
    assert raw.execute("SET", "a", "1") == b"+QUEUED\r\n"
    assert raw.execute("INCR", "a") == b"+QUEUED\r\n"
    assert raw.execute("GET", "a") == b"+QUEUED\r\n"
    assert raw.execute("EXEC") == b"*3\r\n+OK\r\n:2\r\n$1\r\n2\r\n"


def test_runtime_error_does_not_abort(raw):
    raw.execute("SET", "s", "abc")
    raw.execute("MULTI")
    raw.execute("INCR", "s")
    raw.execute("SET", "t", "1")
    assert raw.execute("EXEC") == (
        b"*2\r\n-ERR value is not an integer or out of range\r\n+OK\r\n")
    assert raw.execute("GET", "t") == b"$1\r\n1\r\n"


def test_queue_error_gives_execabort(raw):
    raw.execute("MULTI")
    assert raw.execute("SET", "a") == b"-ERR wrong number of arguments for 'set' command\r\n"
    assert raw.execute("NOPE").startswith(b"-ERR unknown command 'NOPE'")
    raw.execute("SET", "b", "1")
    assert raw.execute("EXEC") == (
        b"-EXECABORT Transaction discarded because of previous errors.\r\n")
    assert raw.execute("EXISTS", "b") == b":0\r\n"


def test_errors(raw):
    assert raw.execute("EXEC") == b"-ERR EXEC without MULTI\r\n"
    assert raw.execute("DISCARD") == b"-ERR DISCARD without MULTI\r\n"
    raw.execute("MULTI")
    assert raw.execute("MULTI") == b"-ERR MULTI calls can not be nested\r\n"
    assert raw.execute("WATCH", "x") == b"-ERR WATCH inside MULTI is not allowed\r\n"
    # Those errors don't poison the transaction.
    raw.execute("SET", "x", "1")
    assert raw.execute("EXEC") == b"*1\r\n+OK\r\n"


def test_discard(raw):
    raw.execute("MULTI")
    raw.execute("SET", "a", "1")
    assert raw.execute("DISCARD") == b"+OK\r\n"
    assert raw.execute("GET", "a") == b"$-1\r\n"
    assert raw.execute("EXEC") == b"-ERR EXEC without MULTI\r\n"


def test_empty_exec(raw):
    raw.execute("MULTI")
    assert raw.execute("EXEC") == b"*0\r\n"


def test_watch_broken_by_other_client(server):
    a = server.raw()
    b = server.client()
    b.set("w", "1")
    a.execute("WATCH", "w")
    b.set("w", "2")
    a.execute("MULTI")
    a.execute("SET", "w", "3")
    assert a.execute("EXEC") == b"*-1\r\n"
    assert b.get("w") == b"2"


def test_watch_null_in_resp3(server):
    a = server.raw()
    a.execute("HELLO", "3")
    a.execute("WATCH", "w")
    server.client().set("w", "x")
    a.execute("MULTI")
    a.execute("PING")
    assert a.execute("EXEC") == b"_\r\n"


def test_watch_not_broken_without_write(server):
    a = server.raw()
    b = server.client()
    b.set("w", "1")
    a.execute("WATCH", "w")
    b.get("w")
    b.set("other", "1")
    a.execute("MULTI")
    a.execute("INCR", "w")
    assert a.execute("EXEC") == b"*1\r\n:2\r\n"


def test_own_write_before_multi_breaks_watch(raw):
    raw.execute("WATCH", "k")
    raw.execute("SET", "k", "1")
    raw.execute("MULTI")
    raw.execute("PING")
    assert raw.execute("EXEC") == b"*-1\r\n"


def test_unwatch(server):
    a = server.raw()
    a.execute("WATCH", "w")
    server.client().set("w", "x")
    assert a.execute("UNWATCH") == b"+OK\r\n"
    a.execute("MULTI")
    a.execute("PING")
    assert a.execute("EXEC") == b"*1\r\n+PONG\r\n"


@pytest.mark.parametrize("breaker", [
    lambda c: c.delete("w"),
    lambda c: c.expire("w", 100),
    lambda c: c.rename("w", "w2"),
    lambda c: c.flushdb(),
    lambda c: c.flushall(),
    lambda c: c.swapdb(0, 1),
    lambda c: c.append("w", "x"),
    lambda c: c.incr("w"),
])
def test_watch_broken_by_writes(server, breaker):
    c = server.client()
    c.flushall()
    c.set("w", "1")
    a = server.raw()
    a.execute("WATCH", "w")
    breaker(c)
    a.execute("MULTI")
    a.execute("PING")
    assert a.execute("EXEC") == b"*-1\r\n"


def test_watch_broken_by_expiry(server):
    c = server.client()
    c.set("w", "1", px=30)
    a = server.raw()
    a.execute("WATCH", "w")
    import time
    time.sleep(0.06)  # the test is about the TTL passing
    a.execute("MULTI")
    a.execute("PING")
    assert a.execute("EXEC") == b"*-1\r\n"


def test_watch_race_between_clients(server):
    """Two clients doing optimistic increments: every EXEC that succeeds counts exactly once."""
    c1, c2 = server.client(), server.client()
    c1.set("counter", 0)
    successes = 0
    for i in range(200):
        for c in (c1, c2):
            with c.pipeline() as p:
                try:
                    p.watch("counter")
                    v = int(p.get("counter"))
                    # The other client sneaks a write in between on odd rounds.
                    if i % 2 and c is c1:
                        c2.incr("counter")
                    p.multi()
                    p.set("counter", v + 1)
                    p.execute()
                    successes += 1
                except redis.WatchError:
                    pass
    extra = 100  # c2.incr calls made between c1's WATCH and EXEC
    assert int(c1.get("counter")) == successes + extra
    assert successes == 300


def test_exec_time_frozen(raw):
    # Keys set with a TTL inside one EXEC all see the same clock.
    raw.execute("MULTI")
    for i in range(50):
        raw.execute("SET", f"t{i}", "v", "PX", "100000")
    raw.execute("EXEC")
    raw.execute("MULTI")
    for i in range(50):
        raw.execute("PEXPIRETIME", f"t{i}")
    reply = raw.execute("EXEC")
    values = set(reply.split(b"\r\n")[1:-1])
    assert len(values) == 1

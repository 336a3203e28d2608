"""Client-side caching: CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO, RESP3 invalidate
pushes, the RESP2 __redis__:invalidate channel through REDIRECT, and invalidation from every
write path (commands, expiry, eviction, FLUSHALL/FLUSHDB/SWAPDB, scripts, MULTI)."""

import time

import pytest

from conftest import arr, err, wait_for, wait_blocked


def push(*keys):
    """A RESP3 invalidate push for `keys` (None: the null a flush sends)."""
    if keys == (None,):
        return b">2\r\n$10\r\ninvalidate\r\n_\r\n"
    return b">2\r\n$10\r\ninvalidate\r\n" + arr(*keys)


def message(*keys):
    """The RESP2 pub/sub message a redirect target subscribed to __redis__:invalidate gets."""
    head = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
    return head + (b"$-1\r\n" if keys == (None,) else arr(*keys))


def resp3(server):
    conn = server.raw()
    assert conn.execute("HELLO", "3").startswith(b"%")
    return conn


def client_id(conn):
    return int(conn.execute("CLIENT", "ID")[1:-2])


@pytest.fixture
def redirect(server, r):
    """A RESP2 connection subscribed to __redis__:invalidate, and its id."""
    conn = server.raw()
    cid = client_id(conn)
    conn.execute("SUBSCRIBE", "__redis__:invalidate")
    yield conn, cid
    conn.close()


def test_resp2_redirect_gets_pubsub_messages(server, r, redirect):
    rd, rid = redirect
    c = server.raw()
    assert c.execute("CLIENT", "TRACKING", "ON", "REDIRECT", rid) == b"+OK\r\n"
    c.execute("SET", "a", "1")
    c.execute("SET", "b", "1")
    c.execute("GET", "a")
    c.execute("INCR", "b")  # never read: no message
    c.execute("INCR", "a")
    assert rd.read_reply() == message("a")
    # Once invalidated, a key must be read again before its next change is announced.
    c.execute("INCR", "a")
    c.execute("GET", "b")
    r.set("b", "2")
    assert rd.read_reply() == message("b")
    assert c.execute("CLIENT", "GETREDIR") == b":%d\r\n" % rid
    assert c.execute("CLIENT", "TRACKING", "OFF") == b"+OK\r\n"
    assert c.execute("CLIENT", "GETREDIR") == b":-1\r\n"


def test_resp3_push_follows_the_reply_of_the_command_that_changed_the_key(server, r):
    c = resp3(server)
    c.execute("CLIENT", "TRACKING", "ON")
    c.execute("HSET", "h", "f", "1")
    c.execute("HGET", "h", "f")
    assert c.execute("HDEL", "h", "f") == b":1\r\n"
    assert c.read_reply() == push("h")
    # Another client's write arrives as a push on its own.
    c.execute("GET", "k")
    r.set("k", "v")
    assert c.read_reply() == push("k")
    assert c.execute("PING") == b"+PONG\r\n"


def test_resp2_without_redirect_gets_nothing(server, r):
    c = server.raw()
    c.execute("CLIENT", "TRACKING", "ON")
    c.execute("GET", "k")
    r.set("k", "v")
    assert c.execute("PING") == b"+PONG\r\n"
    assert r.info()["tracking_total_keys"] == 0


def test_multi_invalidation_after_exec_reply(server, r):
    c = resp3(server)
    c.execute("CLIENT", "TRACKING", "ON")
    c.execute("MSET", "a", "1", "b", "2")
    c.execute("GET", "a")
    c.execute("MULTI")
    c.execute("INCR", "a")
    c.execute("GET", "b")
    assert c.execute("EXEC") == b"*2\r\n:2\r\n$1\r\n2\r\n"
    assert c.read_reply() == push("a")
    # Keys read inside the transaction are tracked too.
    r.set("b", "3")
    assert c.read_reply() == push("b")


def test_mget_lazy_expiry_push_after_reply(server, r):
    c = resp3(server)
    c.execute("CLIENT", "TRACKING", "ON")
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        c.execute("MSET", "x", "1", "y", "2")
        c.execute("PEXPIRE", "y", "50")
        c.execute("GET", "y")
        time.sleep(0.1)  # the TTL has to pass; nothing to poll with active expiry off
        assert c.execute("MGET", "x", "y") == b"*2\r\n$1\r\n1\r\n_\r\n"
        assert c.read_reply() == push("y")
    finally:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_active_expiry_invalidates(server, r):
    c = resp3(server)
    c.execute("CLIENT", "TRACKING", "ON")
    c.execute("SET", "e", "v", "PX", "20")
    c.execute("GET", "e")
    assert c.read_reply() == push("e")  # the expiry cycle deletes it


def test_bcast_prefixes_and_noloop(server, r, redirect):
    rd, rid = redirect
    c = server.raw()
    assert c.execute("CLIENT", "TRACKING", "ON", "BCAST", "REDIRECT", rid, "PREFIX", "a:",
                     "PREFIX", "b:") == b"+OK\r\n"
    c.execute("MULTI")
    for k in ("a:1", "a:2", "b:1", "c:1"):
        c.execute("INCR", k)
    c.execute("EXEC")
    # One message per prefix, after the transaction.
    got = {rd.read_reply(), rd.read_reply()}
    assert got == {message("a:1", "a:2"), message("b:1")}
    # Adding a prefix keeps the others.
    assert c.execute("CLIENT", "TRACKING", "ON", "BCAST", "REDIRECT", rid, "PREFIX",
                     "c:") == b"+OK\r\n"
    r.incr("c:9")
    assert rd.read_reply() == message("c:9")
    info = c.execute("CLIENT", "TRACKINGINFO")
    assert info == (b"*6\r\n$5\r\nflags\r\n*2\r\n$2\r\non\r\n$5\r\nbcast\r\n$8\r\nredirect\r\n"
                    b":%d\r\n$8\r\nprefixes\r\n" % rid + arr("a:", "b:", "c:"))
    assert r.info()["tracking_total_prefixes"] == 3
    # NOLOOP: the client's own writes are not announced to it.
    c.execute("CLIENT", "TRACKING", "OFF")
    c.execute("CLIENT", "TRACKING", "ON", "BCAST", "REDIRECT", rid, "NOLOOP")
    r.set("other1", "1")
    assert rd.read_reply() == message("other1")
    c.execute("SET", "loop", "1")
    r.set("other2", "1")
    assert rd.read_reply() == message("other2")


def test_default_mode_noloop(server, r, redirect):
    rd, rid = redirect
    c = server.raw()
    c.execute("CLIENT", "TRACKING", "ON", "REDIRECT", rid, "NOLOOP")
    c.execute("MGET", "o1", "loop", "o2")
    r.set("o1", "1")
    c.execute("SET", "loop", "1")
    r.set("o2", "1")
    assert rd.read_reply() == message("o1")
    assert rd.read_reply() == message("o2")


def test_optin_and_optout(server, r):
    c = resp3(server)
    c.execute("CLIENT", "TRACKING", "ON", "OPTIN")
    c.execute("GET", "k1")
    r.set("k1", "1")
    assert c.execute("PING") == b"+PONG\r\n"  # not cached without CACHING YES
    assert c.execute("CLIENT", "CACHING", "YES") == b"+OK\r\n"
    c.execute("GET", "k1")
    c.execute("GET", "k2")  # CACHING covers one command only
    r.set("k2", "1")
    r.set("k1", "2")
    assert c.read_reply() == push("k1")
    # ... or one whole transaction.
    c.execute("CLIENT", "CACHING", "YES")
    c.execute("MULTI")
    c.execute("GET", "m1")
    c.execute("GET", "m2")
    c.execute("EXEC")
    r.mset({"m1": "1", "m2": "2"})
    assert c.read_reply() == push("m1")
    assert c.read_reply() == push("m2")
    c.execute("CLIENT", "TRACKING", "OFF")
    c.execute("CLIENT", "TRACKING", "ON", "OPTOUT")
    c.execute("GET", "o1")
    r.set("o1", "1")
    assert c.read_reply() == push("o1")
    c.execute("CLIENT", "CACHING", "NO")
    c.execute("GET", "o2")
    r.set("o2", "1")
    assert c.execute("PING") == b"+PONG\r\n"


def test_errors(server, r):
    c = server.raw()
    assert err(c, "CLIENT", "TRACKING", "ON", "REDIRECT", "999999") == (
        "ERR The client ID you want redirect to does not exist")
    assert err(c, "CLIENT", "TRACKING", "ON", "REDIRECT", "1", "REDIRECT", "2").startswith("ERR")
    assert err(c, "CLIENT", "TRACKING", "ON", "PREFIX", "a") == (
        "ERR PREFIX option requires BCAST mode to be enabled")
    assert err(c, "CLIENT", "TRACKING", "ON", "BCAST", "OPTIN") == (
        "ERR OPTIN and OPTOUT are not compatible with BCAST")
    assert err(c, "CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT") == (
        "ERR You can't specify both OPTIN mode and OPTOUT mode")
    assert err(c, "CLIENT", "TRACKING", "ON", "FOO") == "ERR syntax error"
    assert err(c, "CLIENT", "TRACKING", "MAYBE") == "ERR syntax error"
    assert err(c, "CLIENT", "CACHING", "YES") == (
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN "
        "or OPTOUT mode enabled")
    assert err(c, "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "FOOBAR", "PREFIX", "FOO") == (
        "ERR Prefix 'FOOBAR' overlaps with another provided prefix 'FOO'. Prefixes for a single "
        "client must not overlap.")
    c.execute("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "FOO", "PREFIX", "BAR")
    assert err(c, "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "FO") == (
        "ERR Prefix 'FO' overlaps with an existing prefix 'FOO'. Prefixes for a single client "
        "must not overlap.")
    assert err(c, "CLIENT", "TRACKING", "ON") == (
        "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and "
        "then re-enabling it with a different mode.")
    c.execute("CLIENT", "TRACKING", "OFF")
    c.execute("CLIENT", "TRACKING", "ON", "OPTIN")
    assert err(c, "CLIENT", "TRACKING", "ON", "OPTOUT") == (
        "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
        "then re-enabling it with a different mode.")
    assert err(c, "CLIENT", "CACHING", "NO") == (
        "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
    assert err(c, "CLIENT", "CACHING", "MAYBE") == "ERR syntax error"
    c.execute("CLIENT", "TRACKING", "OFF")
    c.execute("CLIENT", "TRACKING", "ON")
    assert err(c, "CLIENT", "CACHING", "YES") == (
        "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")


def test_flushall_flushdb_swapdb_send_null(server, r, redirect):
    rd, rid = redirect
    c = server.raw()
    c.execute("CLIENT", "TRACKING", "ON", "REDIRECT", rid)
    c.execute("GET", "k1")
    c.execute("GET", "k2")
    assert r.info()["tracking_total_keys"] == 2
    r.flushall()
    assert r.info()["tracking_total_keys"] == 0
    assert rd.read_reply() == message(None)
    r.execute_command("FLUSHALL", "ASYNC")
    assert rd.read_reply() == message(None)
    r.flushdb()
    assert rd.read_reply() == message(None)
    # RESP3, in a transaction: after the EXEC reply.
    c3 = resp3(server)
    c3.execute("CLIENT", "TRACKING", "ON")
    c3.execute("GET", "a")
    c3.execute("MULTI")
    c3.execute("FLUSHDB")
    assert c3.execute("EXEC") == b"*1\r\n+OK\r\n"
    assert c3.read_reply() == push(None)
    assert rd.read_reply() == message(None)


def test_swapdb_sends_null(server, r, redirect):
    """vireo's extension: Redis 7.2 doesn't invalidate on SWAPDB, though cached keys carry no
    database and may read differently afterwards."""
    if "vireo_version" not in r.info("server"):
        pytest.skip("Redis keeps client caches across SWAPDB")
    rd, rid = redirect
    c = server.raw()
    c.execute("CLIENT", "TRACKING", "ON", "REDIRECT", rid)
    c.execute("GET", "k")
    r.swapdb(0, 1)
    assert rd.read_reply() == message(None)


def test_scripts(server, r):
    c = resp3(server)
    c.execute("CLIENT", "TRACKING", "ON")
    r.set("s", "1")
    # EVAL isn't read-only, but the GET it runs is: the key is tracked for the caller.
    assert c.execute("EVAL", "return redis.call('get', KEYS[1])", "1", "s") == b"$1\r\n1\r\n"
    r.set("s", "2")
    assert c.read_reply() == push("s")
    # A script that only declares the key doesn't read it.
    c.execute("EVAL", "return 1", "1", "t")
    r.set("t", "2")
    assert c.execute("PING") == b"+PONG\r\n"
    # A write inside a script invalidates, after the script's reply.
    c.execute("GET", "u")
    assert c.execute("EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "u") == b"+OK\r\n"
    assert c.read_reply() == push("u")


def test_eviction_invalidates_before_reply(server_factory):
    srv = server_factory(["--maxmemory-policy", "volatile-random"])
    r = srv.client()
    c = resp3(srv)
    c.execute("CLIENT", "TRACKING", "ON")
    c.execute("SETEX", "victim", "10000", "x")
    c.execute("GET", "victim")
    # Every command used below runs once first: its first call allocates its latency histogram
    # (about 24 KB, as Redis's), which would eat into the margin.
    # Setting a limit allocates the eviction state once, so set a high one first too.
    r.config_set("maxmemory", 1 << 30)
    r.info("memory")
    r.setbit("warm", 0, 0)
    r.delete("warm")
    c.execute("GETBIT", "warm", "0")
    used = r.info("memory")["used_memory"]
    r.config_set("maxmemory", used + 100 * 1024)
    r.setbit("big", 1600000, 0)  # ~200 KB: the next command has to evict
    # The eviction runs before the command, so its push comes before the reply.
    c.send_command("GETBIT", "big", "0")
    assert c.read_reply() == push("victim")
    assert c.read_reply() == b":0\r\n"
    r.config_set("maxmemory", 0)


def test_table_max_keys(server, r, redirect):
    rd, rid = redirect
    c = server.raw()
    c.execute("CLIENT", "TRACKING", "ON", "REDIRECT", rid)
    for i in range(250):
        c.execute("GET", f"key{i}")
    assert r.info()["tracking_total_keys"] == 250
    r.config_set("tracking-table-max-keys", 1)
    try:
        seen = set()
        for _ in range(249):
            reply = rd.read_reply()
            assert reply.startswith(message()[:-4])
            seen.add(reply)
        assert len(seen) == 249
        wait_for(lambda: r.info()["tracking_total_keys"] == 1)
        rd.send_command("PING")
        assert rd.read_reply() == arr("pong", "")
    finally:
        r.config_set("tracking-table-max-keys", 1000000)


def test_redirect_broken(server, r):
    target = server.raw()
    tid = client_id(target)
    c = resp3(server)
    cid = client_id(c)
    c.execute("CLIENT", "TRACKING", "ON", "REDIRECT", tid)
    c.execute("GET", "k")
    target.close()
    wait_for(lambda: all(cl["id"] != tid for cl in r.client_list()))
    r.set("k", "1")
    assert c.read_reply() == b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n" % tid
    line = [cl for cl in r.client_list() if cl["id"] == str(cid)][0]
    assert line["flags"] == "tR"
    assert line["redir"] == str(tid)
    info = c.execute("CLIENT", "TRACKINGINFO")
    assert b"broken_redirect" in info


def test_introspection(server, r, redirect):
    rd, rid = redirect
    c = server.raw()
    base = r.info()["tracking_clients"]
    assert c.execute("CLIENT", "TRACKINGINFO") == (
        b"*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n"
        b"*0\r\n")
    c.execute("CLIENT", "TRACKING", "ON", "REDIRECT", rid, "OPTIN", "NOLOOP")
    c.execute("CLIENT", "CACHING", "YES")
    assert c.execute("CLIENT", "TRACKINGINFO") == (
        b"*6\r\n$5\r\nflags\r\n" + arr("on", "optin", "caching-yes", "noloop") +
        b"$8\r\nredirect\r\n:%d\r\n$8\r\nprefixes\r\n*0\r\n" % rid)
    c.execute("MGET", "a", "b")
    info = r.info()
    assert info["tracking_clients"] == base + 1
    assert info["tracking_total_keys"] >= 2
    assert info["tracking_total_items"] >= 2
    me = c.execute("CLIENT", "INFO").decode()
    assert " flags=t " in me and f" redir={rid} " in me
    c.execute("RESET")
    assert r.info()["tracking_clients"] == base
    c.execute("CLIENT", "TRACKING", "ON", "BCAST")
    assert " flags=tB " in c.execute("CLIENT", "INFO").decode()


def test_blmove_served_push_after_reply(server, r):
    c = resp3(server)
    r.rpush("dst", "a")
    c.execute("CLIENT", "TRACKING", "ON")
    c.execute("LRANGE", "dst", "0", "-1")
    c.send_command("BLMOVE", "src", "dst", "LEFT", "LEFT", "0")
    wait_blocked(r, 1)
    r.rpush("src", "foo")
    assert c.read_reply() == b"$3\r\nfoo\r\n"
    assert c.read_reply() == push("dst")


def test_client_reply_off_still_gets_pushes(server, r):
    c = resp3(server)
    c.execute("CLIENT", "TRACKING", "ON")
    c.execute("GET", "k")
    c.send_command("CLIENT", "REPLY", "OFF")
    c.send_command("SET", "k", "1")
    assert c.read_reply() == push("k")
    assert c.execute("CLIENT", "REPLY", "ON") == b"+OK\r\n"


def test_node_redis_handshake(server):
    """node-redis with client-side caching pipelines HELLO 3 and CLIENT TRACKING ON."""
    c = server.raw()
    c.send(c.encode("HELLO", "3") + c.encode("CLIENT", "TRACKING", "ON") + c.encode("PING"))
    assert c.read_reply().startswith(b"%")
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"+PONG\r\n"

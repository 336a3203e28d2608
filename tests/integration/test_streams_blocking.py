"""Blocking stream reads: XREAD BLOCK fan-out, XREADGROUP BLOCK work sharing, what deleting,
flushing, swapping or retyping the key does to blocked readers (Redis 7.2), MULTI, timeouts,
propagation-visible state, and a stress run of groups, consumers and producers.

Every wait for a client to block polls INFO (wait_blocked); nothing sleeps to synchronise.
"""

import os
import random
import threading
import time

import pytest

from conftest import arr, wait_blocked, wait_for

NIL_ARRAY = b"*-1\r\n"


def one_entry(key, entry_id, *fv):
    return arr([key, [[entry_id, list(fv)]]])


@pytest.fixture
def conns(server, r):
    # Plain replies for the stream commands (redis-py would reshape them).
    for name in ("XPENDING", "XINFO CONSUMERS", "XRANGE", "XREAD", "XREADGROUP"):
        r.response_callbacks.pop(name, None)
    made = []

    def make():
        c = server.raw(timeout=10)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()
    wait_for(lambda: int(r.info("clients")["blocked_clients"]) == 0)


# ---------------------------------------------------------------------------------------------
# XREAD BLOCK


def test_xread_block_every_reader_gets_the_entry(r, conns):
    r.xadd("s", {"old": "1"}, id="1-0")
    readers = [conns() for _ in range(3)]
    for c in readers:
        c.send_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 3)
    r.xadd("s", {"f": "v"}, id="2-0")
    for c in readers:
        assert c.read_reply() == one_entry("s", "2-0", "f", "v")


def test_xread_block_dollar_is_pinned_at_block_time(r, conns):
    c = conns()
    c.send_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 1)
    # The key is created by the first XADD: everything after 0-0 (the "$" of a missing key).
    r.execute_command("MULTI")
    r.execute_command("XADD", "s", "1-0", "a", "1")
    r.execute_command("XADD", "s", "2-0", "b", "2")
    r.execute_command("EXEC")
    assert c.read_reply() == arr(["s", [["1-0", ["a", "1"]], ["2-0", ["b", "2"]]]])


def test_xread_block_timeout_and_count(r, conns):
    c = conns()
    start = time.monotonic()
    assert c.execute("XREAD", "BLOCK", "50", "STREAMS", "s", "$") == NIL_ARRAY
    assert time.monotonic() - start >= 0.05
    c.send_command("XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "0")
    wait_blocked(r, 1)
    r.execute_command("MULTI")
    r.execute_command("XADD", "s", "1-0", "a", "1")
    r.execute_command("XADD", "s", "2-0", "b", "2")
    r.execute_command("EXEC")
    assert c.read_reply() == one_entry("s", "1-0", "a", "1")


def test_xread_block_several_streams(r, conns):
    c = conns()
    c.send_command("XREAD", "BLOCK", "0", "STREAMS", "a", "b", "$", "$")
    wait_blocked(r, 1)
    r.xadd("b", {"f": "v"}, id="3-0")
    assert c.read_reply() == one_entry("b", "3-0", "f", "v")


def test_xread_stays_blocked_on_delete_and_type_change(r, conns):
    r.xadd("s", {"f": "v"}, id="1-0")
    c = conns()
    c.send_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 1)
    r.delete("s")
    r.set("s", "string")
    r.delete("s")
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    r.xadd("other", {"f": "v"})
    assert int(r.info("clients")["blocked_clients"]) == 1
    # A stream re-created with any entry after the pinned 1-0 serves it.
    r.xadd("s", {"f": "new"}, id="1-5")
    assert c.read_reply() == one_entry("s", "1-5", "f", "new")


def test_xread_ignores_writes_that_add_nothing(r, conns):
    r.xadd("s", {"f": "v"}, id="5-0")
    c = conns()
    c.send_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 1)
    r.execute_command("XDEL", "s", "5-0")
    r.execute_command("XSETID", "s", "9-0")
    assert int(r.info("clients")["blocked_clients"]) == 1
    r.xadd("s", {"f": "w"}, id="10-0")
    assert c.read_reply() == one_entry("s", "10-0", "f", "w")


def test_blocking_in_multi_returns_nil(r, raw):
    raw.execute("MULTI")
    raw.execute("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    raw.execute("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    raw.execute("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    assert raw.execute("EXEC") == b"*3\r\n*-1\r\n+OK\r\n*-1\r\n"


def test_client_unblock(r, conns):
    c = conns()
    c.send_command("CLIENT", "ID")
    cid = int(c.read_reply()[1:-2])
    c.send_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 1)
    assert r.client_unblock(cid) == 1
    assert c.read_reply() == NIL_ARRAY
    c.send_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    assert c.read_reply().startswith(b"-NOGROUP")
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    c.send_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 1)
    assert r.client_unblock(cid, error=True) == 1
    assert c.read_reply() == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"


# ---------------------------------------------------------------------------------------------
# XREADGROUP BLOCK


def test_xreadgroup_block_each_entry_to_one_consumer_fifo(r, conns):
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    consumers = [conns() for _ in range(3)]
    for i, c in enumerate(consumers):
        c.send_command("XREADGROUP", "GROUP", "g", f"c{i}", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">")
        wait_blocked(r, i + 1)
    r.xadd("s", {"n": "1"}, id="1-0")
    assert consumers[0].read_reply() == one_entry("s", "1-0", "n", "1")
    wait_blocked(r, 2)
    r.xadd("s", {"n": "2"}, id="2-0")
    assert consumers[1].read_reply() == one_entry("s", "2-0", "n", "2")
    r.xadd("s", {"n": "3"}, id="3-0")
    assert consumers[2].read_reply() == one_entry("s", "3-0", "n", "3")
    pending = r.execute_command("XPENDING", "s", "g", "-", "+", "10")
    assert [(p[0], p[1]) for p in pending] == [(b"1-0", b"c0"), (b"2-0", b"c1"), (b"3-0", b"c2")]


def test_xreadgroup_block_batch_goes_to_first_waiter(r, conns):
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    a, b = conns(), conns()
    a.send_command("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 1)
    b.send_command("XREADGROUP", "GROUP", "g", "b", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 2)
    r.execute_command("MULTI")
    r.execute_command("XADD", "s", "1-0", "a", "1")
    r.execute_command("XADD", "s", "2-0", "b", "2")
    r.execute_command("EXEC")
    assert a.read_reply() == arr(["s", [["1-0", ["a", "1"]], ["2-0", ["b", "2"]]]])
    assert int(r.info("clients")["blocked_clients"]) == 1
    r.xadd("s", {"c": "3"}, id="3-0")
    assert b.read_reply() == one_entry("s", "3-0", "c", "3")


def test_xreadgroup_block_and_xread_block_together(r, conns):
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    g1, g2, plain = conns(), conns(), conns()
    g1.send_command("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">")
    g2.send_command("XREADGROUP", "GROUP", "g", "b", "BLOCK", "0", "STREAMS", "s", ">")
    plain.send_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 3)
    r.xadd("s", {"f": "v"}, id="1-0")
    expected = one_entry("s", "1-0", "f", "v")
    assert plain.read_reply() == expected
    assert g1.read_reply() == expected
    assert int(r.info("clients")["blocked_clients"]) == 1


NOGROUP = b"-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option\r\n"
WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"


def blocked_reader(r, conns, noack=False):
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    c = conns()
    args = ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0"] + (["NOACK"] if noack else []) + ["STREAMS", "s", ">"]
    c.send_command(*args)
    wait_blocked(r, 1)
    return c


def test_xreadgroup_key_deleted(r, conns, only_72):
    c = blocked_reader(r, conns)
    r.delete("s")
    assert c.read_reply() == NOGROUP


def test_xreadgroup_key_expired(r, conns, only_72):
    c = blocked_reader(r, conns)
    r.pexpire("s", 20)
    # Lazy or active expiry, either way the reader hears about it.
    wait_for(lambda: r.exists("s") == 0)
    assert c.read_reply() == NOGROUP


def test_xreadgroup_key_type_changed_with_set(r, conns, only_72):
    c = blocked_reader(r, conns)
    r.set("s", "x")
    assert c.read_reply() == WRONGTYPE


def test_xreadgroup_key_type_changed_in_transaction(r, conns, only_72):
    c = blocked_reader(r, conns)
    tx = r.pipeline(transaction=True)
    tx.delete("s")
    tx.sadd("s", "m")
    tx.execute()
    assert c.read_reply() == WRONGTYPE


def test_xreadgroup_db_flushed(r, conns, only_72):
    c = blocked_reader(r, conns)
    r.flushall()
    assert c.read_reply() == NOGROUP


def test_xreadgroup_db_swapped(r, conns, only_72):
    c = blocked_reader(r, conns)
    r.execute_command("SWAPDB", "0", "9")
    assert c.read_reply() == NOGROUP
    r.execute_command("FLUSHALL")
    c = blocked_reader(r, conns)
    r.execute_command("SELECT", "9")
    r.rpush("s", "a")
    r.execute_command("SWAPDB", "0", "9")
    r.execute_command("SELECT", "0")
    assert c.read_reply() == WRONGTYPE


def test_xreadgroup_group_destroyed(r, conns):
    c = blocked_reader(r, conns)
    r.execute_command("XGROUP", "DESTROY", "s", "g")
    assert c.read_reply().startswith(b"-NOGROUP")


def test_xreadgroup_unaffected_by_other_writes(r, conns):
    c = blocked_reader(r, conns)
    r.execute_command("XGROUP", "CREATE", "s", "other", "$")
    r.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "someone")
    r.execute_command("XSETID", "s", "5-0")
    assert int(r.info("clients")["blocked_clients"]) == 1
    r.xadd("s", {"f": "v"}, id="6-0")
    assert c.read_reply() == one_entry("s", "6-0", "f", "v")


def test_xreadgroup_renamed_stream_with_group_serves(r, conns):
    c = blocked_reader(r, conns)
    r.xadd("src", {"f": "v"}, id="1-0")
    r.execute_command("XGROUP", "CREATE", "src", "g", "0")
    r.rename("src", "s")
    assert c.read_reply() == one_entry("s", "1-0", "f", "v")


def test_xreadgroup_block_timeout(r, conns, is_70):
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    c = conns()
    assert c.execute("XREADGROUP", "GROUP", "g", "c", "BLOCK", "30", "STREAMS", "s", ">") == NIL_ARRAY
    if not is_70:  # 7.2 creates the consumer on the attempt (its seen-time counts attempts)
        assert r.execute_command("XINFO", "CONSUMERS", "s", "g")[0][1] == b"c"


def test_xreadgroup_noack_block(r, conns):
    c = blocked_reader(r, conns, noack=True)
    r.xadd("s", {"f": "v"}, id="1-0")
    assert c.read_reply() == one_entry("s", "1-0", "f", "v")
    assert r.execute_command("XPENDING", "s", "g")[0] == 0


# ---------------------------------------------------------------------------------------------
# Stress: 3 groups x 8 consumers, 4 producers


@pytest.mark.load
def test_stress_groups_consumers_producers(server, r):
    sanitized = os.environ.get("VIREO_SANITIZED") == "1"
    total = 10_000 if sanitized else 100_000
    groups, per_group, producers = 3, 8, 4
    r.execute_command("XGROUP", "CREATE", "st", "g0", "$", "MKSTREAM")
    for gi in range(1, groups):
        r.execute_command("XGROUP", "CREATE", "st", f"g{gi}", "$")
    seen = [dict() for _ in range(groups)]
    lock = threading.Lock()
    done = threading.Event()
    errors = []

    def consumer(gi, ci):
        try:
            c = server.client()
            c.response_callbacks.clear()
            while True:
                reply = c.execute_command("XREADGROUP", "GROUP", f"g{gi}", f"c{ci}", "COUNT", "200",
                                          "BLOCK", "100", "STREAMS", "st", ">")
                if reply is None:
                    if done.is_set():
                        break
                    continue
                entries = reply[0][1]
                ids = [e[0] for e in entries]
                with lock:
                    for e in ids:
                        seen[gi][e] = seen[gi].get(e, 0) + 1
                c.execute_command("XACK", "st", f"g{gi}", *ids)
            c.close()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def producer(pi):
        try:
            c = server.client()
            per = total // producers
            pipe = c.pipeline(transaction=False)
            for i in range(per):
                pipe.execute_command("XADD", "st", "*", "p", str(pi), "i", str(i))
                if len(pipe) >= 200:
                    pipe.execute()
            pipe.execute()
            c.close()
        except Exception as exc:  # pragma: no cover
            errors.append(exc)

    start = time.monotonic()
    threads = [threading.Thread(target=consumer, args=(gi, ci)) for gi in range(groups) for ci in range(per_group)]
    for t in threads:
        t.start()
    prods = [threading.Thread(target=producer, args=(pi,)) for pi in range(producers)]
    for t in prods:
        t.start()
    for t in prods:
        t.join()
    wait_for(lambda: all(len(s) >= total for s in seen), timeout=60,
             message="consumers did not see every entry")
    done.set()
    for t in threads:
        t.join(timeout=30)
    elapsed = time.monotonic() - start
    assert not errors, errors
    assert r.xlen("st") == total
    for gi in range(groups):
        assert len(seen[gi]) == total
        assert all(v == 1 for v in seen[gi].values()), "an entry was delivered twice in a group"
        assert r.xpending("st", f"g{gi}")["pending"] == 0
    assert elapsed < 60, f"stress run took {elapsed:.1f}s"


# ---------------------------------------------------------------------------------------------
# INFO counters and errors of woken XREADGROUP readers (Redis 7.2, unit/type/stream-cgroups)


def _blocking_keys(r):
    info = r.info("clients")
    return int(info["total_blocking_keys"]), int(info["total_blocking_keys_on_nokey"])


def test_blocking_keys_on_nokey_counts_xreadgroup_keys(r, conns, only_72):
    lister = conns()
    lister.send_command("BLPOP", "s", "0")
    wait_blocked(r, 1)
    assert _blocking_keys(r) == (1, 0)
    r.xadd("s", {"key": "value"}, id="666-0")
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    readers = [conns() for _ in range(2)]
    for c in readers:
        c.send_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 3)
    # One key, waited on by list and stream readers; counted once in each total.
    assert _blocking_keys(r) == (1, 1)
    r.delete("s")
    for c in readers:
        assert c.read_reply() == NOGROUP
    assert _blocking_keys(r) == (1, 0)
    lister.close()
    wait_blocked(r, 0)
    assert _blocking_keys(r) == (0, 0)


def test_group_destroyed_counts_a_failed_call(r, conns):
    r.execute_command("CONFIG", "RESETSTAT")
    c = blocked_reader(r, conns)
    r.execute_command("XGROUP", "DESTROY", "s", "g")
    assert c.read_reply().startswith(b"-NOGROUP")
    stats = r.info("commandstats")["cmdstat_xreadgroup"]
    assert stats["calls"] == 1 and stats["failed_calls"] == 1 and stats["rejected_calls"] == 0
    assert r.info("errorstats")["errorstat_NOGROUP"] in ("count=1", {"count": 1})
    assert int(r.info("stats")["total_error_replies"]) == 1


def test_rename_without_group_unblocks_with_nogroup(r, conns, only_72):
    c = blocked_reader(r, conns)
    r.xadd("src", {"f1": "v1"}, id="100-0")
    r.rename("src", "s")
    assert c.read_reply() == NOGROUP


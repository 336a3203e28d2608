"""CLIENT PAUSE WRITE|ALL and CLIENT UNPAUSE: paused commands wait and run in order when the
pause ends; reads go on under a write pause; expiry and eviction stand still."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from conftest import wait_for


def postponed(r):
    return [c for c in r.client_list() if "b" in c["flags"]]


def test_write_pause_holds_writes_not_reads(server, r):
    r.set("k", "before")
    other = server.client()
    assert r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    done = {}
    t = threading.Thread(target=lambda: done.setdefault("set", other.set("k", "after")))
    t.start()
    wait_for(lambda: len(postponed(r)) == 1)
    assert r.get("k") == b"before"       # reads are served
    assert r.info("clients")["blocked_clients"] == 1  # postponed clients count as blocked
    assert r.execute_command("CLIENT", "UNPAUSE")
    t.join(5)
    assert done["set"] is True
    assert r.get("k") == b"after"
    other.close()


def test_write_pause_holds_scripts_by_their_declared_flags(server, r):
    # Redis 7.2: a script's declared flags replace EVAL's/FCALL's, so no-writes scripts and
    # functions run through a write pause; a script without a shebang, or one that may write,
    # waits (it may replicate).
    r.function_load("#!lua name=lib\nredis.register_function{function_name='ro', "
                    "callback=function() return 'hello' end, flags={'no-writes'}}")
    cached = r.script_load("#!lua flags=no-writes\nreturn 'cached'")
    other = server.client()
    assert r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    try:
        assert other.eval("#!lua flags=no-writes\nreturn 'fresh'", 0) == b"fresh"
        assert other.evalsha(cached, 0) == b"cached"
        assert other.fcall("ro", 0) == b"hello"
        assert other.fcall_ro("ro", 0) == b"hello"
        done = {}
        for name, body in [("plain", "return 1"), ("writer", "#!lua\nreturn 2")]:
            c = server.client()
            t = threading.Thread(target=lambda c=c, n=name, b=body: done.setdefault(n, c.eval(b, 0)))
            t.start()
        wait_for(lambda: len(postponed(r)) == 2)
        assert done == {}
    finally:
        assert r.execute_command("CLIENT", "UNPAUSE")
    wait_for(lambda: done == {"plain": 1, "writer": 2})
    other.close()


def test_write_pause_holds_exec_of_queued_scripts_that_may_write(server, r):
    c = server.client()
    pipe = c.pipeline(transaction=True)
    pipe.eval("#!lua\nreturn 12", 0)
    assert r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    done = {}
    t = threading.Thread(target=lambda: done.setdefault("exec", pipe.execute()))
    t.start()
    try:
        wait_for(lambda: len(postponed(r)) == 1)
        assert done == {}
    finally:
        assert r.execute_command("CLIENT", "UNPAUSE")
    t.join(5)
    assert done["exec"] == [12]
    c.close()


def test_read_only_scripts_may_not_publish(r):
    # What may replicate counts as a write in a read-only script (so it can't get past a pause).
    for run in (lambda: r.eval_ro("return redis.call('publish','ch','msg')", 0),
                lambda: r.eval("#!lua flags=no-writes\nreturn redis.call('publish','ch','msg')", 0)):
        with pytest.raises(redis.ResponseError, match="^Write commands are not allowed from "
                                                       "read-only scripts"):
            run()
    assert r.eval("return redis.call('publish','ch','msg')", 0) == 0


def test_expired_keys_stay_until_the_pause_ends(server, r):
    # Expired keys read as missing during the pause, but neither active nor lazy expiry
    # deletes them (expired_keys stands still) until it ends.
    before = r.info("stats")["expired_keys"]
    with r.pipeline(transaction=True) as p:
        p.set("foo{t}", "bar", px=10).set("bar{t}", "foo", px=10)
        p.execute_command("CLIENT", "PAUSE", 50000, "WRITE")
        p.execute()
    try:
        wait_for(lambda: r.get("foo{t}") is None and r.get("bar{t}") is None)
        assert r.info("stats")["expired_keys"] == before
    finally:
        assert r.execute_command("CLIENT", "UNPAUSE")
    r.get("foo{t}")
    r.get("bar{t}")
    assert r.info("stats")["expired_keys"] == before + 2
    r.config_resetstat()  # later tests count expirations from zero


def test_all_pause_holds_everything_and_ends_by_itself(server, r):
    other = server.client()
    start = time.monotonic()
    assert r.execute_command("CLIENT", "PAUSE", 300, "ALL")
    assert other.ping()
    assert time.monotonic() - start >= 0.25
    other.close()


def test_pipelined_commands_run_in_order_after_the_pause(server, r):
    other = server.client()
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    result = {}

    def pipeline():
        p = other.pipeline(transaction=False)
        p.rpush("l", "a").get("nothing").rpush("l", "b").lrange("l", 0, -1)
        result["r"] = p.execute()

    t = threading.Thread(target=pipeline)
    t.start()
    wait_for(lambda: len(postponed(r)) == 1)
    r.execute_command("CLIENT", "UNPAUSE")
    t.join(5)
    assert result["r"] == [1, None, 2, [b"a", b"b"]]
    other.close()


def test_keys_do_not_expire_during_a_write_pause(server, r):
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    r.set("short", "v", px=30)
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    time.sleep(0.3)  # several active-expiry cycles would have run
    assert r.info("stats")["expired_keys"] == 0
    r.execute_command("CLIENT", "UNPAUSE")
    wait_for(lambda: r.info("stats")["expired_keys"] == 1)


def test_pause_errors(r):
    with pytest.raises(redis.ResponseError, match="timeout is negative"):
        r.execute_command("CLIENT", "PAUSE", -1)
    with pytest.raises(redis.ResponseError, match="CLIENT PAUSE mode must be WRITE or ALL"):
        r.execute_command("CLIENT", "PAUSE", 10, "READ")
    with pytest.raises(redis.ResponseError, match="timeout is not an integer"):
        r.execute_command("CLIENT", "PAUSE", "abc")
    assert r.execute_command("CLIENT", "UNPAUSE")


def test_disconnecting_while_postponed(server, r):
    other = server.client()
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    def write():
        try:
            other.set("gone", 1)
        except redis.ConnectionError:
            pass  # killed while waiting, as intended

    t = threading.Thread(target=write, daemon=True)
    t.start()
    wait_for(lambda: len(postponed(r)) == 1)
    victim = postponed(r)[0]["id"]
    assert r.client_kill_filter(_id=victim) == 1
    r.execute_command("CLIENT", "UNPAUSE")
    assert r.get("gone") is None
    assert r.ping()

"""Per-key access data (issue 19): OBJECT IDLETIME / FREQ, what counts as an access (reads,
TOUCH, CLIENT NO-TOUCH), the LFU counter's growth and decay, RESTORE IDLETIME / FREQ, the RDB
IDLE / FREQ opcodes (DEBUG RELOAD, restart, AOF preamble), RENAME / MOVE / COPY, DEBUG OBJECT.

Idle times are mostly set with RESTORE ... IDLETIME rather than waited for; one test waits
about two seconds because it checks that idle time grows with the wall clock."""

import re
import time

import pytest
from conftest import call, call_error

# redis-py drops the "ERR " prefix of error replies.
LFU_OFF = ("An LFU maxmemory policy is not selected, access frequency not tracked. Please "
           "note that when switching between policies at runtime LRU and LFU data will take "
           "some time to adjust.")
LRU_OFF = ("An LFU maxmemory policy is selected, idle time not tracked. Please note that "
           "when switching between policies at runtime LRU and LFU data will take some time to "
           "adjust.")
DEBUG_OBJECT = re.compile(
    r"^Value at:0x[0-9a-f]+ refcount:(\d+) encoding:(\S+) serializedlength:(\d+) lru:(\d+) "
    r"lru_seconds_idle:(\d+)(.*)$")


@pytest.fixture
def c(plain):
    """A plain client; the policy and LFU settings go back to the defaults afterwards."""
    yield plain
    plain.execute_command("CONFIG", "SET", "maxmemory-policy", "noeviction", "lfu-log-factor", "10",
                          "lfu-decay-time", "1")


def policy(c, name):
    call(c, "CONFIG", "SET", "maxmemory-policy", name)


def idle(c, key):
    return call(c, "OBJECT", "IDLETIME", key)


def freq(c, key):
    return call(c, "OBJECT", "FREQ", key)


@pytest.fixture
def bc(server):
    """A bytes client (DUMP payloads are binary) with its reply conversions off."""
    client = server.client()
    client.response_callbacks.clear()
    yield client
    client.close()


def restored(bc, key, *opts, value=b"v"):
    bc.execute_command("SET", "__src", value)
    payload = bc.execute_command("DUMP", "__src")
    bc.execute_command("DEL", "__src")
    return bc.execute_command("RESTORE", key, 0, payload, *opts)


def debug_object(c, key):
    m = DEBUG_OBJECT.match(call(c, "DEBUG", "OBJECT", key))
    assert m, call(c, "DEBUG", "OBJECT", key)
    return m


# ---- idle time ------------------------------------------------------------------------------


def test_idle_time_grows_with_the_clock(c):
    call(c, "SET", "k", "v")
    assert idle(c, "k") <= 1
    time.sleep(2.1)  # the thing under test is the passing of wall-clock time
    assert 2 <= idle(c, "k") <= 4
    assert 2 <= int(debug_object(c, "k").group(5)) <= 4


def test_a_read_resets_idle_time(c, bc):
    restored(bc, "k", "IDLETIME", 1000)
    assert 999 <= idle(c, "k") <= 1001
    call(c, "GET", "k")
    assert idle(c, "k") <= 1


@pytest.mark.parametrize("cmd", [("TYPE",), ("TTL",), ("PTTL",), ("EXISTS",), ("EXPIRETIME",),
                                 ("OBJECT", "ENCODING"), ("OBJECT", "REFCOUNT"),
                                 ("OBJECT", "IDLETIME"), ("DEBUG", "OBJECT")])
def test_introspection_is_not_an_access(c, bc, cmd):
    restored(bc, "k", "IDLETIME", 1000)
    call(c, *cmd, "k")
    assert idle(c, "k") >= 999


def test_touch_is_an_access(c, bc):
    restored(bc, "k", "IDLETIME", 1000)
    assert call(c, "TOUCH", "k", "missing") == 1
    assert idle(c, "k") <= 1


def test_client_no_touch(c, bc, only_72):
    restored(bc, "a", "IDLETIME", 1000)
    restored(bc, "b", "IDLETIME", 1000)
    assert call(c, "CLIENT", "NO-TOUCH", "ON") == "OK"
    call(c, "GET", "a")
    assert idle(c, "a") >= 999
    # TOUCH still counts: touching is what it is for.
    call(c, "TOUCH", "b")
    assert idle(c, "b") <= 1
    call(c, "CLIENT", "NO-TOUCH", "OFF")
    call(c, "GET", "a")
    assert idle(c, "a") <= 1


# ---- LFU counter ----------------------------------------------------------------------------


def test_frequency_starts_at_five_and_grows_logarithmically(c):
    policy(c, "allkeys-lfu")
    call(c, "SET", "k", "v")
    assert freq(c, "k") == 5
    pipe = c.pipeline(transaction=False)
    for _ in range(1000):
        pipe.get("k")
    pipe.execute()
    # About 18 after 1000 hits with lfu-log-factor 10 (redis.conf's table).
    assert 10 <= freq(c, "k") <= 30
    for _ in range(10):
        for _ in range(10000):
            pipe.get("k")
        pipe.execute()
    # About 142 after 100k hits: far from saturating.
    assert 90 <= freq(c, "k") <= 200


def test_log_factor_zero_counts_every_access(c):
    policy(c, "allkeys-lfu")
    call(c, "CONFIG", "SET", "lfu-log-factor", "0")
    call(c, "SET", "k", "v")
    for _ in range(100):
        call(c, "GET", "k")
    assert freq(c, "k") == 105
    for _ in range(200):
        call(c, "GET", "k")
    assert freq(c, "k") == 255


def test_idle_time_and_frequency_need_their_policy(c):
    call(c, "SET", "k", "v")
    for lru_ish in ("noeviction", "allkeys-lru", "volatile-ttl", "allkeys-random"):
        policy(c, lru_ish)
        assert call_error(c, "OBJECT", "FREQ", "k") == LFU_OFF
        assert idle(c, "k") <= 1
    for lfu in ("allkeys-lfu", "volatile-lfu"):
        policy(c, lfu)
        assert call_error(c, "OBJECT", "IDLETIME", "k") == LRU_OFF
        assert freq(c, "k") >= 0
    assert call(c, "OBJECT", "FREQ", "missing") is None


def expected_decay(clock, decay_time, now_ms):
    """The counter an LFU reading gives for the 24-bit `clock` (Redis's LFUDecrAndReturn)."""
    then, counter = clock >> 8, clock & 0xff
    now = (now_ms // 60000) & 0xffff
    elapsed = now - then if now >= then else 65535 - then + now
    periods = elapsed // decay_time if decay_time else 0
    return 0 if periods >= counter else counter - periods


def test_lfu_decay_time(c):
    # Switching policies reinterprets the clock's bits (as in Redis): an LRU stamp read as LFU
    # has an arbitrary counter and an arbitrary (long past) decay minute, which shows decay
    # without waiting minutes.
    call(c, "SET", "k", "v")
    clock = int(debug_object(c, "k").group(4))
    call(c, "CONFIG", "SET", "lfu-decay-time", "0")
    policy(c, "allkeys-lfu")
    assert freq(c, "k") == clock & 0xff  # never decays
    call(c, "CONFIG", "SET", "lfu-decay-time", "1")
    before = expected_decay(clock, 1, int(time.time() * 1000))
    got = freq(c, "k")
    after = expected_decay(clock, 1, int(time.time() * 1000))
    assert got in (before, after)


# ---- RESTORE IDLETIME / FREQ ----------------------------------------------------------------


def test_restore_idletime_and_freq(c, bc):
    assert restored(bc, "i", "IDLETIME", 1000) == b"OK"
    assert 999 <= idle(c, "i") <= 1001
    # FREQ is ignored under a non-LFU policy: the key is new.
    restored(bc, "f", "FREQ", 100)
    assert idle(c, "f") <= 1
    policy(c, "allkeys-lfu")
    restored(bc, "f2", "FREQ", 100)
    assert freq(c, "f2") == 100
    restored(bc, "i2", "IDLETIME", 1000)
    assert freq(c, "i2") == 5
    restored(bc, "f3", "REPLACE", "FREQ", 0, "ABSTTL")
    assert freq(c, "f3") == 0


def test_restore_option_errors(c, bc):
    call(c, "SET", "s", "v")
    payload = bc.execute_command("DUMP", "s")
    cases = [(("IDLETIME", -1), "ERR Invalid IDLETIME value, must be >= 0"),
             (("FREQ", -1), "ERR Invalid FREQ value, must be >= 0 and <= 255"),
             (("FREQ", 256), "ERR Invalid FREQ value, must be >= 0 and <= 255"),
             (("IDLETIME", "x"), "ERR value is not an integer or out of range"),
             (("IDLETIME", 10, "FREQ", 10), "ERR syntax error"),
             (("FREQ", 10, "IDLETIME", 10), "ERR syntax error"),
             (("IDLETIME",), "ERR syntax error")]
    for opts, error in cases:
        assert call_error(bc, "RESTORE", "t", 0, payload, *opts) == error.removeprefix("ERR ")
    assert call(c, "EXISTS", "t") == 0


# ---- keys that move keep their clock; copies start afresh ----------------------------------


def test_rename_and_move_keep_the_clock(c, bc, only_72):
    restored(bc, "a", "IDLETIME", 1000)
    call(c, "CLIENT", "NO-TOUCH", "ON")  # RENAME's own lookup would count as an access
    call(c, "RENAME", "a", "b")
    assert idle(c, "b") >= 999
    call(c, "RENAMENX", "b", "c")
    assert idle(c, "c") >= 999
    call(c, "MOVE", "c", 5)
    call(c, "SELECT", 5)
    assert idle(c, "c") >= 999
    call(c, "FLUSHDB")
    call(c, "SELECT", 0)


def test_rename_move_copy_under_lfu(c, bc):
    policy(c, "allkeys-lfu")
    restored(bc, "a", "FREQ", 100)
    call(c, "RENAME", "a", "b")
    assert freq(c, "b") >= 100  # the lookup may have counted one more access
    call(c, "MOVE", "b", 5)
    call(c, "SELECT", 5)
    assert freq(c, "b") >= 100
    # COPY builds a new value, which starts as a new key.
    call(c, "COPY", "b", "copy")
    assert freq(c, "copy") == 5
    call(c, "FLUSHDB")
    call(c, "SELECT", 0)


def test_rename_is_an_access_of_the_source(c, bc):
    restored(bc, "a", "IDLETIME", 1000)
    call(c, "RENAME", "a", "b")
    assert idle(c, "b") <= 1


# ---- RDB IDLE / FREQ ------------------------------------------------------------------------


def test_debug_reload_keeps_idle_time_under_lru(c, bc):
    policy(c, "allkeys-lru")
    restored(bc, "k", "IDLETIME", 1000)
    assert call(c, "DEBUG", "RELOAD") == "OK"
    assert 999 <= idle(c, "k") <= 1002


def test_debug_reload_keeps_frequency_under_lfu(c, bc):
    policy(c, "volatile-lfu")
    restored(bc, "k", "FREQ", 77)
    assert call(c, "DEBUG", "RELOAD") == "OK"
    assert freq(c, "k") == 77


def test_idle_time_is_not_saved_without_an_lru_policy(c, bc):
    # Redis writes IDLE only under volatile-lru / allkeys-lru: a reload makes the key new.
    restored(bc, "k", "IDLETIME", 1000)
    assert call(c, "DEBUG", "RELOAD") == "OK"
    assert idle(c, "k") <= 1


def test_restart_keeps_idle_time_and_frequency(server_factory, tmp_path):
    s1 = server_factory(["--dir", str(tmp_path), "--maxmemory-policy", "allkeys-lru"])
    r = s1.client()
    r.set("src", "v")
    payload = r.dump("src")
    r.restore("old", 0, payload, idletime=5000)
    r.save()
    s1.stop()
    s2 = server_factory(["--dir", str(tmp_path), "--maxmemory-policy", "allkeys-lru"])
    r2 = s2.client()
    assert 4999 <= r2.object("idletime", "old") <= 5002
    assert r2.object("idletime", "src") <= 5000 - 1  # saved recently, not as old
    r2.config_set("maxmemory-policy", "allkeys-lfu")
    r2.restore("hot", 0, payload, frequency=200)
    r2.save()
    s2.stop()
    s3 = server_factory(["--dir", str(tmp_path), "--maxmemory-policy", "allkeys-lfu"])
    assert s3.client().object("freq", "hot") == 200


def test_aof_preamble_keeps_idle_time(server_factory, tmp_path):
    args = ["--dir", str(tmp_path), "--maxmemory-policy", "allkeys-lru", "--appendonly", "yes",
            "--aof-use-rdb-preamble", "yes"]
    s1 = server_factory(args)
    r = s1.client()
    r.set("src", "v")
    r.restore("old", 0, r.dump("src"), idletime=3000)
    r.bgrewriteaof()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        info = r.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            break
        time.sleep(0.02)
    s1.stop()
    s2 = server_factory(args)
    assert 2999 <= s2.client().object("idletime", "old") <= 3002


# ---- DEBUG OBJECT ---------------------------------------------------------------------------


def test_debug_object_reply(c, bc):
    call(c, "SET", "s", "bar")
    m = debug_object(c, "s")
    assert m.group(1) == "1" and m.group(2) == "embstr" and m.group(6) == ""
    # serializedlength is the value's RDB encoding: the DUMP payload less type byte and footer.
    assert int(m.group(3)) == len(bc.execute_command("DUMP", "s")) - 1 - 10
    call(c, "SET", "n", "12")
    assert debug_object(c, "n").group(1) == "2147483647"  # a shared integer, as OBJECT REFCOUNT
    restored(bc, "old", "IDLETIME", 1000)
    assert 999 <= int(debug_object(c, "old").group(5)) <= 1001
    assert call_error(c, "DEBUG", "OBJECT", "missing") == "no such key"


def test_debug_object_quicklist_fields(c, is_70):
    call(c, "CONFIG", "SET", "list-max-listpack-size", "2")
    try:
        call(c, "RPUSH", "q", 1, 2, 3, 4, 5)
        m = debug_object(c, "q")
        assert m.group(2) == "quicklist"
        assert m.group(6) == (" ql_nodes:3 ql_avg_node:1.67 ql_listpack_max:2 ql_compressed:0 "
                              "ql_uncompressed_size:31")
        if not is_70:  # 7.0 lists are always quicklists; 7.2 starts them as listpacks
            call(c, "RPUSH", "small", "a")
            assert debug_object(c, "small").group(6) == ""
    finally:
        call(c, "CONFIG", "SET", "list-max-listpack-size", "-2")


def test_debug_object_lru_field_under_lfu(c):
    policy(c, "allkeys-lfu")
    call(c, "SET", "k", "v")
    lru = int(debug_object(c, "k").group(4))
    assert lru & 0xff == 5  # the LFU counter in the low byte
    minute = int(time.time()) // 60
    assert lru >> 8 in (minute & 0xffff, (minute - 1) & 0xffff)


def test_swapdb_keeps_the_clock(c, bc):
    restored(bc, "k", "IDLETIME", 1000)
    call(c, "SWAPDB", 0, 7)
    call(c, "SELECT", 7)
    assert idle(c, "k") >= 999
    call(c, "FLUSHDB")
    call(c, "SELECT", 0)

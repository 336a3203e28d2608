"""FUNCTION LOAD/DELETE/FLUSH/LIST/STATS/DUMP/RESTORE/KILL, FCALL and FCALL_RO."""
import threading

import pytest
import redis

from conftest import wait_for

LIB_A = "#!lua name=liba\nredis.register_function('echo1', function(keys, args) return args[1] end)"
LIB_W = ("#!lua name=libw\n"
         "redis.register_function{function_name='setk', callback=function(keys, args) "
         "return redis.call('set', keys[1], args[1]) end, description='sets a key'}\n"
         "redis.register_function{function_name='getk', callback=function(keys, args) "
         "return redis.call('get', keys[1]) end, flags={'no-writes'}}")


def error_of(r, *args) -> str:
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


@pytest.fixture(autouse=True)
def clean(r):
    r.execute_command("FUNCTION", "FLUSH")
    yield


def test_load_and_call(r):
    assert r.execute_command("FUNCTION", "LOAD", LIB_A) == b"liba"
    assert r.execute_command("FCALL", "echo1", 0, "hi") == b"hi"
    assert r.execute_command("FUNCTION", "LOAD", LIB_W) == b"libw"
    assert r.execute_command("FCALL", "setk", 1, "k", "v") == b"OK"
    assert r.execute_command("FCALL_RO", "getk", 1, "k") == b"v"
    assert error_of(r, "FCALL_RO", "setk", 1, "k", "v") == (
        "Can not execute a script with write flag using *_ro command.")
    assert error_of(r, "FCALL", "nosuch", 0) == "Function not found"
    assert error_of(r, "FCALL", "echo1", "x") == "Bad number of keys provided"
    assert error_of(r, "FCALL", "echo1", -1) == "Number of keys can't be negative"
    assert error_of(r, "FCALL", "echo1", 2, "a") == "Number of keys can't be greater than number of args"


def test_load_errors(r):
    assert error_of(r, "FUNCTION", "LOAD", "return 1") == "Missing library metadata"
    assert error_of(r, "FUNCTION", "LOAD", "#!lua\nreturn 1") == "Library name was not given"
    assert error_of(r, "FUNCTION", "LOAD", "#!lua name=a foo=b\nreturn 1") == (
        "Invalid metadata value given: foo=b")
    assert error_of(r, "FUNCTION", "LOAD", "#!lux name=a\nreturn 1") == "Engine 'lux' not found"
    assert error_of(r, "FUNCTION", "LOAD", "#!lua name=a-b\nreturn 1").startswith(
        "Library names can only contain letters, numbers, or underscores(_)")
    assert error_of(r, "FUNCTION", "LOAD", "#!lua name=a\nreturn 1") == "No functions registered"
    assert error_of(r, "FUNCTION", "LOAD", "#!lua name=a\nx==") == (
        "Error compiling function: user_function:2: '=' expected near '=='")
    assert error_of(r, "FUNCTION", "LOAD", "#!lua name=a\nerror('boom')") == (
        "Error registering functions: ERR user_function:2: Script attempted to access "
        "nonexistent global variable 'error'")
    assert error_of(r, "FUNCTION", "LOAD", "#!lua name=a\nredis.call('ping')") == (
        "Error registering functions: ERR user_function:2: Script attempted to access "
        "nonexistent global variable 'call'")
    assert error_of(r, "FUNCTION", "LOAD", "#!lua name=a\nredis.register_function('f-1', function() end)") == (
        "Error registering functions: ERR Library names can only contain letters, numbers, or "
        "underscores(_) and must be at least one character long")
    # The whole name counts: an embedded NUL makes it invalid (Redis 7.2 unit/functions).
    assert error_of(r, "FUNCTION", "LOAD",
                    "#!lua name=a\nredis.register_function('ok\\0bad', function() end)") == (
        "Error registering functions: ERR Library names can only contain letters, numbers, or "
        "underscores(_) and must be at least one character long")
    assert "wrong number of arguments to redis.register_function" in error_of(
        r, "FUNCTION", "LOAD", "#!lua name=a\nredis.register_function()")
    assert "unknown flag given" in error_of(
        r, "FUNCTION", "LOAD",
        "#!lua name=a\nredis.register_function{function_name='f', callback=function() end, flags={'bad'}}")
    r.execute_command("FUNCTION", "LOAD", LIB_A)
    assert error_of(r, "FUNCTION", "LOAD", LIB_A) == "Library 'liba' already exists"
    assert error_of(r, "FUNCTION", "LOAD",
                    "#!lua name=other\nredis.register_function('echo1', function() end)") == (
        "Function echo1 already exists")
    assert r.execute_command("FUNCTION", "LOAD", "REPLACE", LIB_A) == b"liba"
    assert error_of(r, "FUNCTION", "LOAD", "BAD", LIB_A) == "Unknown option given: BAD"


def test_runtime_errors(r):
    r.execute_command("FUNCTION", "LOAD", "#!lua name=d\n"
                      "redis.register_function{function_name='h', callback=function() return x end}")
    assert error_of(r, "FCALL", "h", 0) == (
        "user_function:2: Script attempted to access nonexistent global variable 'x' "
        "script: h, on @user_function:2.")
    r.execute_command("FUNCTION", "LOAD", "#!lua name=c\n"
                      "redis.register_function{function_name='g', callback=function() "
                      "return redis.call('set','x',1) end, flags={'no-writes'}}")
    assert error_of(r, "FCALL", "g", 0) == (
        "Write commands are not allowed from read-only scripts. script: g, on @user_function:2.")


def test_list_delete_stats(r):
    r.execute_command("FUNCTION", "LOAD", LIB_A)
    r.execute_command("FUNCTION", "LOAD", LIB_W)
    libs = r.execute_command("FUNCTION", "LIST")
    assert len(libs) == 2
    listed = r.execute_command("FUNCTION", "LIST", "LIBRARYNAME", "libw", "WITHCODE")
    assert len(listed) == 1
    lib = dict(zip(listed[0][::2], listed[0][1::2]))
    assert lib[b"library_name"] == b"libw"
    assert lib[b"engine"] == b"LUA"
    assert lib[b"library_code"] == LIB_W.encode()
    fns = {dict(zip(f[::2], f[1::2]))[b"name"]: dict(zip(f[::2], f[1::2])) for f in lib[b"functions"]}
    assert fns[b"setk"][b"description"] == b"sets a key"
    assert fns[b"getk"][b"description"] is None
    assert fns[b"getk"][b"flags"] == [b"no-writes"]
    assert error_of(r, "FUNCTION", "LIST", "BAD") == "Unknown argument BAD"
    assert error_of(r, "FUNCTION", "LIST", "LIBRARYNAME") == "library name argument was not given"
    stats = r.execute_command("FUNCTION", "STATS")
    assert stats[0] == b"running_script" and stats[1] is None
    assert stats[3] == [b"LUA", [b"libraries_count", 2, b"functions_count", 3]]
    assert r.execute_command("FUNCTION", "DELETE", "liba") == b"OK"
    assert error_of(r, "FUNCTION", "DELETE", "liba") == "Library not found"
    assert error_of(r, "FCALL", "echo1", 0) == "Function not found"
    assert error_of(r, "FUNCTION", "FLUSH", "BAD") == "FUNCTION FLUSH only supports SYNC|ASYNC option"
    assert r.execute_command("FUNCTION", "FLUSH", "ASYNC") == b"OK"
    assert r.execute_command("FUNCTION", "LIST") == []
    assert error_of(r, "FUNCTION", "KILL") == "NOTBUSY No scripts in execution right now."


def test_dump_restore(r):
    r.execute_command("FUNCTION", "LOAD", LIB_A)
    r.execute_command("FUNCTION", "LOAD", LIB_W)
    payload = r.execute_command("FUNCTION", "DUMP")
    assert payload[0] == 0xF5
    r.execute_command("FUNCTION", "FLUSH")
    assert r.execute_command("FUNCTION", "RESTORE", payload) == b"OK"
    assert r.execute_command("FCALL", "echo1", 0, "back") == b"back"
    assert error_of(r, "FUNCTION", "RESTORE", payload).startswith("Library ")
    assert r.execute_command("FUNCTION", "RESTORE", payload, "REPLACE") == b"OK"
    assert r.execute_command("FUNCTION", "RESTORE", payload, "FLUSH") == b"OK"
    assert error_of(r, "FUNCTION", "RESTORE", payload, "BAD") == (
        "Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
    bad = payload[:-1] + bytes([payload[-1] ^ 1])
    assert error_of(r, "FUNCTION", "RESTORE", bad) == "payload version or checksum are wrong"
    assert len(r.execute_command("FUNCTION", "LIST")) == 2


def test_restore_payload_from_redis(r):
    # FUNCTION DUMP of LIB_A taken from redis-server 7.0 (RDB version 10).
    import shutil
    import subprocess
    import tempfile
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed")
    from conftest import free_port
    port = free_port()
    # In an empty directory: a dump.rdb where the tests run (vireo's, maybe with types Redis
    # can't load) must not stop the reference server from starting.
    workdir = tempfile.TemporaryDirectory(prefix="ref-redis-")
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, cwd=workdir.name)
    try:
        ref = redis.Redis(port=port)
        wait_for(lambda: _ping(ref), timeout=5)
        ref.execute_command("FUNCTION", "LOAD", LIB_A)
        payload = ref.execute_command("FUNCTION", "DUMP")
        assert r.execute_command("FUNCTION", "RESTORE", payload) == b"OK"
        assert r.execute_command("FCALL", "echo1", 0, "x") == b"x"
        # And ours loads into Redis.
        ref.execute_command("FUNCTION", "FLUSH")
        assert ref.execute_command("FUNCTION", "RESTORE", r.execute_command("FUNCTION", "DUMP")) == b"OK"
    finally:
        proc.terminate()
        proc.wait()
        workdir.cleanup()


def _ping(c):
    try:
        return c.ping()
    except redis.ConnectionError:
        return False


def test_function_kill(server_factory):
    s = server_factory(["--busy-reply-threshold", "100"])
    a = s.client()
    b = s.client(socket_timeout=5)
    a.execute_command("FUNCTION", "LOAD", "#!lua name=spin\nredis.register_function('spin', "
                      "function() local i = 0 while true do i = i + 1 end end)")
    box = {}

    def run():
        try:
            a.execute_command("FCALL", "spin", 0)
        except redis.ResponseError as e:
            box["error"] = str(e)

    t = threading.Thread(target=run)
    t.start()

    def busy():
        try:
            b.ping()
            return False
        except redis.ResponseError as e:
            return "FUNCTION KILL" in str(e)

    wait_for(busy, timeout=5)
    stats = b.execute_command("FUNCTION", "STATS")
    running = dict(zip(stats[1][::2], stats[1][1::2]))
    assert running[b"name"] == b"spin"
    assert [a.lower() for a in running[b"command"]] == [b"fcall", b"spin", b"0"]
    assert "BUSY" in error_of(b, "SCRIPT", "KILL") or True
    assert b.execute_command("FUNCTION", "KILL") == b"OK"
    t.join(5)
    assert "Script killed by user" in box["error"]


def test_allow_stale_on_stale_replica(r):
    # replica-serve-stale-data no and the master unreachable: a function runs only if it
    # declares allow-stale (its flags replace FCALL's), and inside it only stale commands do.
    r.execute_command("FUNCTION", "LOAD", "#!lua name=st\n"
                      "redis.register_function{function_name='f1', callback=function() "
                      "return 'hello' end, flags={'no-writes'}}\n"
                      "redis.register_function{function_name='f2', callback=function() "
                      "return 'hello' end, flags={'allow-stale', 'no-writes'}}\n"
                      "redis.register_function{function_name='f3', callback=function() "
                      "return redis.call('get', 'x') end, flags={'allow-stale', 'no-writes'}}\n"
                      "redis.register_function{function_name='f4', callback=function() "
                      "return redis.call('info', 'server') end, "
                      "flags={'allow-stale', 'no-writes'}}")
    r.config_set("replica-serve-stale-data", "no")
    r.execute_command("REPLICAOF", "127.0.0.1", "1")
    try:
        assert error_of(r, "FCALL", "f1", 0).startswith("MASTERDOWN ")
        assert error_of(r, "EVAL", "#!lua flags=no-writes\nreturn 1", 0).startswith("MASTERDOWN ")
        assert r.execute_command("EVAL", "#!lua flags=no-writes,allow-stale\nreturn 1", 0) == 1
        assert r.execute_command("FCALL", "f2", 0) == b"hello"
        assert "Can not execute the command on a stale replica" in error_of(r, "FCALL", "f3", 1,
                                                                             "x")
        assert b"redis_version" in r.execute_command("FCALL", "f4", 0)
    finally:
        r.execute_command("REPLICAOF", "NO", "ONE")
        r.config_set("replica-serve-stale-data", "yes")

"""EVAL / EVALSHA / EVAL_RO / SCRIPT: conversions, errors, sandbox, libraries, semantics."""
import threading
import time

import pytest
import redis

from conftest import wait_for, wait_blocked


def sha1(body: str) -> str:
    import hashlib
    return hashlib.sha1(body.encode()).hexdigest()


def error_of(r, *args) -> str:
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


# ---- basics and conversions -------------------------------------------------------------

def test_keys_and_argv(r):
    assert r.eval("return {KEYS[1], KEYS[2], ARGV[1], ARGV[2]}", 2, "k1", "k2", "a1", "a2") == [
        b"k1", b"k2", b"a1", b"a2"]
    assert r.eval("return #KEYS + #ARGV * 10", 0) == 0


def test_lua_to_resp2(r):
    assert r.eval("return 3.99", 0) == 3
    assert r.eval("return -3.99", 0) == -3
    assert r.eval("return 'x'", 0) == b"x"
    assert r.eval("return true", 0) == 1
    assert r.eval("return false", 0) is None
    assert r.eval("return nil", 0) is None
    assert r.eval("return {1, 2, nil, 3}", 0) == [1, 2]
    assert r.eval("return {1, 'a', {2, {3}}}", 0) == [1, b"a", [2, [3]]]
    assert r.eval("return {ok='fine'}", 0) == b"fine"
    assert r.eval("return redis.status_reply('ST')", 0) == b"ST"
    assert error_of(r, "eval", "return {err='MY thing'}", 0) == "MY thing"
    assert error_of(r, "eval", "return redis.error_reply('oops')", 0) == "oops"
    with pytest.raises(redis.ResponseError) as e:
        r.eval("return redis.error_reply('oops')", 0)
    assert str(e.value) == "oops"  # redis-py strips the code "ERR"


def test_resp2_to_lua(r):
    r.set("s", "v")
    r.rpush("l", "a", "b")
    assert r.eval("return redis.call('get', 's')", 0) == b"v"
    assert r.eval("return redis.call('get', 'nokey') == false", 0) == 1
    assert r.eval("return type(redis.call('incr', 'n'))", 0) == b"number"
    assert r.eval("return redis.call('lrange', 'l', 0, -1)", 0) == [b"a", b"b"]
    assert r.eval("return redis.call('set', 'x', 1).ok", 0) == b"OK"
    assert r.eval("local t = redis.pcall('incr', 's'); return t.err", 0) == (
        b"ERR value is not an integer or out of range")
    # Numbers go to commands as Redis 7.2 writes them: integral values (|v| <= 2^62) as
    # integers, others in the shortest round-trip form (Redis 7.0 used "%.17g").
    for number, text in [("0.1", b"0.1"), ("3", b"3"), ("1e9", b"1000000000"),
                         ("1e17", b"100000000000000000"), ("1e20", b"1e+20"), ("-0.0", b"0"),
                         ("-2.5", b"-2.5"), ("1/3", b"0.3333333333333333"),
                         ("2^53 + 1", b"9007199254740992"), ("1.5e-7", b"1.5e-7")]:
        r.eval(f"redis.call('set', KEYS[1], {number})", 1, "f")
        assert r.get("f") == text, number


def test_resp3_conversions(server):
    raw = server.raw()
    raw.execute("HELLO", "3")
    raw.execute("DEL", "h")
    raw.execute("HSET", "h", "f", "v")
    assert raw.execute("EVAL", "redis.setresp(3); return redis.call('ping')", "0") == b"+PONG\r\n"
    assert raw.execute("EVAL", "return {double=3.5}", "0") == b",3.5\r\n"
    assert raw.execute("EVAL", "return {big_number='123456789012345678901234567890'}", "0") == (
        b"(123456789012345678901234567890\r\n")
    assert raw.execute("EVAL", "return {map={a=1}}", "0") == b"%1\r\n$1\r\na\r\n:1\r\n"
    assert raw.execute("EVAL", "return {set={a=true}}", "0") == b"~1\r\n$1\r\na\r\n"
    assert raw.execute("EVAL", "redis.setresp(3); return true", "0") == b"#t\r\n"
    assert raw.execute("EVAL", "redis.setresp(3); return false", "0") == b"#f\r\n"
    assert raw.execute("EVAL", "return false", "0") == b"_\r\n"
    # Replies of commands in RESP3 come back as typed tables.
    raw.execute("SET", "k", "1")
    assert raw.execute("EVAL", "redis.setresp(3); local t = redis.call('hgetall', 'h'); "
                       "return t.map.f", "0") == b"$1\r\nv\r\n"
    assert raw.execute("EVAL", "redis.setresp(3); return redis.call('get', 'nokey') == nil",
                       "0") == b"#t\r\n"
    assert raw.execute("EVAL", "redis.setresp(3); "
                       "return redis.call('eval', 'return 1', 0)", "0").startswith(b"-")
    # RESP2 client: doubles become bulk strings, maps flat arrays.
    raw2 = server.raw()
    assert raw2.execute("EVAL", "return {double=3.5}", "0") == b"$3\r\n3.5\r\n"
    assert raw2.execute("EVAL", "return {map={a=1}}", "0") == b"*2\r\n$1\r\na\r\n:1\r\n"
    assert raw2.execute("EVAL", "redis.setresp(3); return true", "0") == b":1\r\n"
    assert raw2.execute("EVAL", "redis.setresp(3); return false", "0") == b":0\r\n"
    assert raw2.execute("EVAL", "redis.setresp(4)", "0").startswith(
        b"-ERR RESP version must be 2 or 3.")


# ---- errors -----------------------------------------------------------------------------

def test_error_shapes(r):
    body = "return x"
    assert error_of(r, "eval", body, 0) == (
        "user_script:1: Script attempted to access nonexistent global variable 'x' "
        f"script: {sha1(body)}, on @user_script:1.")
    r.set("s", "abc")
    body = "return redis.call('incr','s')"
    assert error_of(r, "eval", body, 0) == (
        f"value is not an integer or out of range script: {sha1(body)}, on @user_script:1.")
    assert error_of(r, "eval", "x=", 0) == (
        "Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'")
    body = "error('boom')"
    assert error_of(r, "eval", body, 0) == f"user_script:1: boom script: {sha1(body)}, on @user_script:1."
    body = "error({err='MY boom'})"
    assert error_of(r, "eval", body, 0) == f"MY boom script: {sha1(body)}, on @user_script:1."
    body = "\n\nreturn redis.call('nosuch')"
    assert error_of(r, "eval", body, 0) == (
        f"Unknown Redis command called from script script: {sha1(body)}, on @user_script:3.")
    body = "return redis.call('get')"
    assert "Wrong number of args calling Redis command from script" in error_of(r, "eval", body, 0)
    assert "Please specify at least one argument for this redis lib call" in error_of(
        r, "eval", "return redis.call()", 0)
    assert "Lua redis lib command arguments must be strings or integers" in error_of(
        r, "eval", "return redis.call('get', {})", 0)
    assert "This Redis command is not allowed from script" in error_of(
        r, "eval", "return redis.call('multi')", 0)
    assert "This Redis command is not allowed from script" in error_of(
        r, "eval", "return redis.call('eval', 'return 1', 0)", 0)


def test_numkeys_errors(r):
    assert error_of(r, "eval", "return 1", 3, "a") == "Number of keys can't be greater than number of args"
    assert error_of(r, "eval", "return 1", -1) == "Number of keys can't be negative"
    assert error_of(r, "eval", "return 1", "x") == "value is not an integer or out of range"
    assert error_of(r, "eval", "return 1") == "wrong number of arguments for 'eval' command"


def test_pcall_catches_command_errors(r):
    r.set("s", "abc")
    assert r.eval("local ok, e = pcall(redis.call, 'incr', 's'); return {tostring(ok), e}", 0) == [
        b"false", b"ERR value is not an integer or out of range"]
    assert r.eval("local ok, e = pcall(error, 'x', 0); return e", 0) == b"x"
    assert r.eval("return redis.pcall('incr', 's')['err']", 0) == (
        b"ERR value is not an integer or out of range")


def test_writes_before_an_error_stay(r):
    with pytest.raises(redis.ResponseError):
        r.eval("redis.call('set', 'a', '1'); redis.call('incr', 'nonint_is_fine_below'); "
               "redis.call('set', 's2', 'x'); redis.call('incr', 's2')", 0)
    assert r.get("a") == b"1"
    assert r.get("s2") == b"x"


# ---- script cache ---------------------------------------------------------------------

def test_evalsha_and_script_commands(r):
    sha = r.script_load("return 'hi'")
    assert sha == sha1("return 'hi'")
    assert r.evalsha(sha, 0) == b"hi"
    assert r.evalsha(sha.upper(), 0) == b"hi"
    assert r.script_exists(sha, "0" * 40) == [True, False]
    # EVAL caches too.
    r.eval("return 2", 0)
    assert r.script_exists(sha1("return 2")) == [True]
    assert r.script_flush() is True
    assert r.script_exists(sha) == [False]
    assert error_of(r, "evalsha", sha, 0) == "No matching script. Please use EVAL."
    assert error_of(r, "evalsha", "abc", 0) == "No matching script. Please use EVAL."
    assert r.execute_command("SCRIPT", "FLUSH", "ASYNC") == b"OK"
    assert error_of(r, "script", "flush", "bad") == "SCRIPT FLUSH only support SYNC|ASYNC option"
    assert error_of(r, "script", "load", "x=") .startswith("Error compiling script (new function)")
    assert error_of(r, "script", "kill") == "NOTBUSY No scripts in execution right now."
    assert error_of(r, "script", "foo") == "unknown subcommand 'foo'. Try SCRIPT HELP."


# ---- shebang and read-only ------------------------------------------------------------

def test_shebang_flags(r):
    body = "#!lua flags=no-writes\nreturn redis.call('set','a','b')"
    assert error_of(r, "eval", body, 0) == (
        f"Write commands are not allowed from read-only scripts. script: {sha1(body)}, on @user_script:2.")
    assert error_of(r, "eval", "#!lua flags=foo\nreturn 1", 0) == "Unexpected flag in script shebang: foo"
    assert error_of(r, "eval", "#!lux\nreturn 1", 0) == "Unexpected engine in script shebang: #!lux"
    assert error_of(r, "eval", "#!lua name=x\nreturn 1", 0) == "Unknown lua shebang option: name=x"
    assert r.eval("#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\n"
                  "return 1", 0) == 1
    body = "#!lua\nreturn x"
    assert error_of(r, "eval", body, 0).endswith(f"script: {sha1(body)}, on @user_script:2.")


def test_eval_ro(r):
    assert error_of(r, "eval_ro", "#!lua\nreturn 1", 0) == (
        "Can not execute a script with write flag using *_ro command.")
    assert r.execute_command("EVAL_RO", "return 1", 0) == 1
    r.set("k", "v")
    assert r.execute_command("EVAL_RO", "return redis.call('get', KEYS[1])", 1, "k") == b"v"
    body = "return redis.call('set','a','b')"
    assert error_of(r, "eval_ro", body, 0) == (
        f"Write commands are not allowed from read-only scripts. script: {sha1(body)}, on @user_script:1.")
    sha = r.script_load("return redis.call('get', 'k')")
    assert r.execute_command("EVALSHA_RO", sha, 0) == b"v"


# ---- sandbox --------------------------------------------------------------------------

def test_sandbox(r):
    for name in ("os", "io", "loadfile", "dofile", "require", "package", "print", "debug"):
        assert "Script attempted to access nonexistent global variable" in error_of(
            r, "eval", f"return {name}", 0), name
    assert "Attempt to modify a readonly table" in error_of(r, "eval", "x = 1", 0)
    assert "Attempt to modify a readonly table" in error_of(r, "eval", "redis = nil", 0)
    assert "Attempt to modify a readonly table" in error_of(r, "eval", "redis.call = nil", 0)
    assert "Attempt to modify a readonly table" in error_of(r, "eval", "string.x = 1", 0)
    assert "Attempt to modify a readonly table" in error_of(r, "eval", "rawset(_G, 'x', 1)", 0)
    assert "Attempt to modify a readonly table" in error_of(r, "eval", "getfenv(0).redis = nil", 0)
    assert "Attempt to modify a readonly table" in error_of(
        r, "eval", "loadstring('redis = 1')()", 0)
    assert "Attempt to modify a readonly table" in error_of(
        r, "eval", "setmetatable(_G, nil)", 0)
    # Still intact afterwards.
    assert r.eval("return redis.call('ping')", 0) == b"PONG"
    assert r.eval("local t = {}; t.x = 1; return t.x", 0) == 1
    assert r.eval("return loadstring('return 1 + 1')()", 0) == 2
    assert r.eval("return _G.redis ~= nil", 0) == 1


def test_redis_api_misc(r):
    assert r.eval("return redis.sha1hex('')", 0) == b"da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert r.eval("return redis.REDIS_VERSION", 0) == b"7.2.4"
    assert r.eval("return redis.REDIS_VERSION_NUM", 0) == 0x070204
    assert r.eval("return redis.replicate_commands()", 0) == 1
    assert r.eval("redis.set_repl(redis.REPL_ALL); return 1", 0) == 1
    assert r.eval("redis.log(redis.LOG_WARNING, 'hello from', 'lua'); return 1", 0) == 1
    assert r.eval("return redis.breakpoint()", 0) is None
    assert r.eval("redis.debug('x'); return 1", 0) == 1
    assert r.eval("return redis.acl_check_cmd('get', 'x')", 0) == 1
    assert "redis.log() requires two arguments or more." in error_of(
        r, "eval", "redis.log(1)", 0)
    assert "Invalid replication flags" in error_of(r, "eval", "redis.set_repl(12)", 0)


def test_math_random_matches_redis(server_factory):
    # Redis 7: one rand48 generator from the default seed, carried across scripts (not
    # reseeded per call); the values of a fresh redis-server 7.
    s = server_factory()
    c = s.client()
    assert c.eval("return {math.random(100), math.random(100), math.random(100)}", 0) == [40, 85, 36]
    assert c.eval("math.randomseed(0); return math.floor(math.random() * 1000000)", 0) == 170828


def test_libraries(r):
    assert r.eval("return cjson.encode({1, 2, 'x'})", 0) == b'[1,2,"x"]'
    assert r.eval("return cjson.decode('{\"a\":[1,2]}').a[2]", 0) == 2
    assert r.eval("return bit.band(0xff, 0x0f)", 0) == 15
    assert r.eval("return bit.tohex(65535)", 0) == b"0000ffff"
    assert r.eval("return struct.pack('>HB', 258, 3)", 0) == b"\x01\x02\x03"
    assert r.eval("return {struct.unpack('<i', struct.pack('<i', -5))}", 0) == [-5, 5]
    assert r.eval("return struct.size('>iHd')", 0) == 14
    assert r.eval("return struct.unpack('s', 'abc\\0')", 0) == b"abc"
    assert r.eval("return {struct.unpack('Bc0', struct.pack('Bc0', 3, 'xyz'))}", 0) == [b"xyz", 5]
    assert r.eval("return cmsgpack.pack({1, 2, 3})", 0) == b"\x93\x01\x02\x03"
    assert r.eval("return cmsgpack.pack({a=1})", 0) == b"\x81\xa1a\x01"
    assert r.eval("return cmsgpack.pack(1, 'a', true)", 0) == b"\x01\xa1a\xc3"
    assert r.eval("return cmsgpack.pack(0.5, -1, 300, -200)", 0) == (
        b"\xca\x3f\x00\x00\x00\xff\xcd\x01\x2c\xd1\xff\x38")
    assert r.eval("local a, b = cmsgpack.unpack(cmsgpack.pack({1, {2, {x='y'}}}, 7)); "
                  "return {a[2][2].x, b}", 0) == [b"y", 7]
    assert r.eval("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), 0)}", 0) == [1, 1]
    assert r.eval("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}", 0) == [2, 1, 2]
    assert "Missing bytes in input." in error_of(r, "eval", "return cmsgpack.unpack('\\147')", 0)
    assert "MessagePack pack needs input." in error_of(r, "eval", "return cmsgpack.pack()", 0)


# ---- semantics ------------------------------------------------------------------------

def test_blocking_commands_do_not_block(r):
    assert r.eval("return redis.call('blpop', 'empty', 0)", 0) is None
    r.rpush("l", "x")
    assert r.eval("return redis.call('blpop', 'l', 0)", 0) == [b"l", b"x"]
    assert r.eval("return redis.call('blmove', 'empty', 'b', 'LEFT', 'LEFT', 0)", 0) is None


def test_stream_block_refused_in_scripts(r):
    # Redis 7.2 (before 7.4) refuses XREAD/XREADGROUP BLOCK from scripts, even with data there.
    r.xadd("s", {"f": "v"}, id="1-0")
    for command, name in [("'XREAD', 'BLOCK', 0, 'STREAMS', 's', '0'", "XREAD"),
                          ("'XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', 10, 'STREAMS', 's', '>'",
                           "XREADGROUP")]:
        assert r.eval(f"return redis.pcall({command})['err']", 0) == (
            f"ERR {name} command is not allowed with BLOCK option from scripts").encode()
    assert r.eval("return redis.call('XREAD', 'STREAMS', 's', '0')", 0) == [
        [b"s", [[b"1-0", [b"f", b"v"]]]]]


def test_waiters_served_after_script(server, r):
    other = server.client()
    result = {}

    def waiter():
        result["v"] = other.blpop("q", 5)

    t = threading.Thread(target=waiter)
    t.start()
    wait_blocked(r, 1)
    # Pushed and popped inside the script: the waiter gets nothing from it.
    r.eval("redis.call('rpush', 'q', 'a'); redis.call('lpop', 'q')", 0)
    r.eval("redis.call('rpush', 'q', 'b', 'c')", 0)
    t.join(5)
    assert result["v"] == (b"q", b"b")
    assert r.lrange("q", 0, -1) == [b"c"]


def test_script_write_invalidates_watch(server, r):
    w = server.client()
    p = w.pipeline()
    p.watch("wk")
    r.eval("redis.call('set', KEYS[1], 'x')", 1, "wk")
    p.multi()
    p.set("wk", "y")
    with pytest.raises(redis.WatchError):
        p.execute()


def test_select_inside_script_does_not_leak(r):
    r.eval("redis.call('select', 1); redis.call('set', 'in1', 'v')", 0)
    assert r.get("in1") is None
    r.select(1) if False else None
    assert r.eval("redis.call('select', 1); return redis.call('get', 'in1')", 0) == b"v"
    r.execute_command("SELECT", 1)
    r.delete("in1")
    r.execute_command("SELECT", 0)


def test_time_and_random_commands_allowed(r):
    t = r.eval("return redis.call('time')", 0)
    assert len(t) == 2
    r.set("rk", "1")
    assert r.eval("return redis.call('randomkey')", 0) == b"rk"


def test_eval_in_multi(r):
    p = r.pipeline(transaction=True)
    p.eval("return redis.call('incr', 'm')", 0)
    p.eval("return redis.call('incr', 'm')", 0)
    assert p.execute() == [1, 2]


def test_script_monitor_and_commandstats(server, r):
    r.config_resetstat()
    r.eval("redis.call('set', 'a', 1); redis.call('get', 'a')", 0)
    stats = r.info("commandstats")
    assert stats["cmdstat_set"]["calls"] == 1
    assert stats["cmdstat_eval"]["calls"] == 1


def test_command_info(r, raw):
    info = raw.execute("COMMAND", "INFO", "eval")
    assert info.startswith(b"*1\r\n*10\r\n$4\r\neval\r\n:-3\r\n")
    for flag in (b"noscript", b"skip_monitor", b"stale", b"movablekeys"):
        assert b"+" + flag + b"\r\n" in info
    assert raw.execute("COMMAND", "GETKEYS", "EVAL", "return 1", "2", "a", "b", "c") == (
        b"*2\r\n$1\r\na\r\n$1\r\nb\r\n")


# ---- long scripts ---------------------------------------------------------------------

@pytest.fixture
def busy_server(server_factory):
    s = server_factory(["--busy-reply-threshold", "100"])
    yield s


def run_in_thread(fn):
    box = {}

    def target():
        try:
            box["value"] = fn()
        except Exception as exc:  # noqa: BLE001
            box["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    return t, box


def test_busy_and_script_kill(busy_server):
    a = busy_server.client()
    b = busy_server.client(socket_timeout=5)
    t, box = run_in_thread(lambda: a.eval("local i = 0 while true do i = i + 1 end", 0))
    wait_for(lambda: _is_busy(b), timeout=5)
    with pytest.raises(redis.exceptions.BusyLoadingError if False else redis.ResponseError) as e:
        b.get("x")
    assert str(e.value).startswith("Redis is busy running a script") or "BUSY" in str(e.value)
    # New connections are accepted and answered meanwhile.
    c = busy_server.client(socket_timeout=5)
    with pytest.raises(redis.ResponseError):
        c.set("k", "v")
    assert b.script_kill() is True
    t.join(5)
    assert "Script killed by user with SCRIPT KILL..." in str(box["error"])
    assert b.ping() is True
    assert a.ping() is True


def _is_busy(client):
    try:
        client.ping()
        return False
    except redis.ResponseError as e:
        return "busy" in str(e).lower()


def test_unkillable_after_write_and_shutdown_nosave(busy_server):
    a = busy_server.client()
    b = busy_server.client(socket_timeout=5)
    t, box = run_in_thread(lambda: a.eval(
        "redis.call('set', 'w', 1) local i = 0 while true do i = i + 1 end", 0))
    wait_for(lambda: _is_busy(b), timeout=5)
    with pytest.raises(redis.ResponseError) as e:
        b.script_kill()
    assert "UNKILLABLE" in str(e.value) or str(e.value).startswith("Sorry the script already")
    with pytest.raises(redis.ResponseError) as e:
        b.execute_command("FUNCTION", "KILL")
    busy_server.expect_exit = True
    try:
        b.execute_command("SHUTDOWN", "NOSAVE")
    except redis.ConnectionError:
        pass
    busy_server.proc.wait(10)
    t.join(5)


def test_pcall_cannot_swallow_kill(busy_server):
    a = busy_server.client()
    b = busy_server.client(socket_timeout=5)
    t, box = run_in_thread(lambda: a.eval(
        "while true do pcall(function() local i = 0 while true do i = i + 1 end end) end", 0))
    wait_for(lambda: _is_busy(b), timeout=5)
    assert b.script_kill() is True
    t.join(5)
    assert not t.is_alive()
    assert "Script killed" in str(box["error"])

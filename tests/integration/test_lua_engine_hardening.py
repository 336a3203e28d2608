"""The Lua engine's sandbox and bounds against hostile scripts (issues 14 and 20).

Each test carries the public reproduction of a Redis Lua CVE class or of a finding of the
hardening issues: bytecode loading (CVE-2015-4335), writable string metatable (CVE-2025-46818),
finalizers and SCRIPT FLUSH (CVE-2024-46981), the parser's chunk name (CVE-2025-49844), Lua
stack growth from redis.call (CVE-2021-32626), pattern matching that never yields, and memory
exhaustion.
"""

import threading

import pytest
import redis

from conftest import wait_for

READONLY = "Attempt to modify a readonly table"
# Exponential backtracking inside one string.find call (issue 20, finding 8).
BACKTRACK = ("return string.find(string.rep('a', 5000), "
             "string.rep('a?', 5000) .. string.rep('a', 5000))")


def busy(client):
    """Whether the server answers BUSY (a script is past busy-reply-threshold)."""
    try:
        client.ping()
        return False
    except redis.ResponseError as e:
        return str(e).startswith("BUSY")


def run_in_thread(call, *args):
    """Runs a client call in a thread; the dict gets its reply or error text."""
    result = {}

    def run():
        try:
            result["reply"] = call(*args)
        except redis.RedisError as e:
            result["error"] = str(e)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def eval_error(r, script, *args):
    with pytest.raises(redis.ResponseError) as info:
        r.eval(script, 0, *args)
    return str(info.value)


# ---- CVE-2015-4335: precompiled bytecode ------------------------------------------------------


def test_loadstring_refuses_bytecode(r):
    # string.dump makes a valid binary chunk; Lua 5.1 would load it unverified.
    assert r.eval("local f, e = loadstring(string.dump(function() return 1 end)) "
                  "return {tostring(f), e}", 0) == [
        b"nil", b'[string "\x1bLuaQ"]:1: unexpected symbol near \'char(27)\'']
    assert r.eval("local f, e = loadstring('\\27Lua', '=chunk') return {tostring(f), e}", 0) == [
        b"nil", b"chunk:1: unexpected symbol near 'char(27)'"]


def test_load_refuses_bytecode(r):
    script = """
        local code = string.dump(function() return 1 end)
        local done = false
        local f, e = load(function() if done then return nil end done = true return code end)
        return {tostring(f), e}"""
    assert r.eval(script, 0) == [b"nil", b"(load):1: unexpected symbol near 'char(27)'"]


def test_eval_and_function_load_refuse_bytecode(r):
    assert eval_error(r, "\x1bLuaQ\x00\x01") == (
        "Error compiling script (new function): user_script:1: unexpected symbol near 'char(27)'")
    r.function_load("#!lua name=dumper\n"
                    "redis.register_function('try', function() "
                    "local f = loadstring(string.dump(function() return 1 end)) "
                    "return tostring(f) end)", replace=True)
    assert r.fcall("try", 0) == b"nil"


def test_text_chunks_still_load(r):
    assert r.eval("return loadstring('return 1 + 1')()", 0) == 2
    assert r.eval("local p = {'return ', '4', '0'} local i = 0 "
                  "return load(function() i = i + 1 return p[i] end)()", 0) == 40
    assert r.eval("local f, e = load(function() return {} end) return e", 0) == (
        b"user_script:1: reader function must return a string")


# ---- CVE-2025-46818: the string metatable and library tables -----------------------------------


@pytest.mark.parametrize("attack", [
    "getmetatable('').__index = {upper = function() return 'pwned' end}",
    "getmetatable('').__index.upper = function() return 'pwned' end",
    "getmetatable('').__newkey = 1",
    "rawset(getmetatable(''), '__index', {})",
    "setmetatable(getmetatable(''), {})",
    "string.upper = function() return 'pwned' end",
    "rawset(string, 'upper', function() return 'pwned' end)",
    "table.insert = nil",
    "math.floor = nil",
])
def test_string_metatable_is_readonly(r, attack):
    assert READONLY in eval_error(r, attack)
    # A later script still sees the real string methods.
    assert r.eval("return ('abc'):upper() .. string.upper('d')", 0) == b"ABCD"


def test_string_metatable_still_works(r):
    assert r.eval("return getmetatable('').__index == string", 0) == 1
    assert r.eval("return ('a,b'):find(',')", 0) == 2


def test_function_engine_string_metatable_is_readonly(r):
    r.function_load("#!lua name=meta\n"
                    "redis.register_function('attack', function() "
                    "getmetatable('').__index.upper = function() return 'x' end end)\n"
                    "redis.register_function('upper', function() return ('q'):upper() end)",
                    replace=True)
    with pytest.raises(redis.ResponseError, match=READONLY):
        r.fcall("attack", 0)
    assert r.fcall("upper", 0) == b"Q"


# ---- finalizers, CVE-2024-46981 ----------------------------------------------------------------


def test_no_newproxy(r):
    # The reproduction: 20,000 finalizers that raise, collected during later EVALs.
    script = """
        for i = 1, 20000 do
          local p = newproxy(true)
          getmetatable(p).__gc = function() error('x') end
        end"""
    assert "nonexistent global variable 'newproxy'" in eval_error(r, script)
    for i in range(100):
        assert r.eval("local t = {} for i = 1, 1000 do t[i] = {i} end return #t", 0) == 1000
    assert r.ping()


def test_flush_with_finalizer_loop_is_bounded(r):
    # Tables have no finalizers in Lua 5.1, and newproxy is gone: nothing a script leaves
    # behind can run at lua_close.
    with pytest.raises(redis.ResponseError):
        r.eval("local p = newproxy(true) getmetatable(p).__gc = function() while true do end end "
               "P = p", 0)
    r.eval("local t = setmetatable({}, {__gc = function() while true do end end}) return 1", 0)
    r.function_load("#!lua name=gcloop\n"
                    "redis.register_function('f', function() "
                    "local keep = setmetatable({}, {__gc = function() while true do end end}) "
                    "return 1 end)", replace=True)
    assert r.fcall("f", 0) == 1
    assert r.script_flush() is True
    assert r.function_flush() is True
    assert r.eval("collectgarbage('collect') return 7", 0) == 7


# ---- CVE-2025-49844: the parser's chunk name -------------------------------------------------


def test_load_reader_collects_while_parsing(r):
    # The reader runs mid-parse and forces full collections; the chunk name (default or a
    # freshly built string that only the call holds) must survive them.
    script = """
        local out = {}
        for round = 1, 20 do
          local pieces = {'local x = ', tostring(round), '\\n', 'return x +', ' {', '}'}
          local i = 0
          local reader = function()
            collectgarbage('collect')
            i = i + 1
            return pieces[i]
          end
          local name = round % 2 == 0 and ('=chunk' .. string.rep('n', round)) or nil
          local f = assert(load(reader, name))
          local ok, err = pcall(f)
          out[#out + 1] = err
        end
        return out"""
    out = r.eval(script, 0)
    assert len(out) == 20
    for round, message in enumerate(out, start=1):
        prefix = b"chunk" + b"n" * round if round % 2 == 0 else b"(load)"
        assert message == prefix + b":2: attempt to perform arithmetic on a table value"


def test_loadstring_name_collected_while_parsing(r):
    script = """
        for i = 1, 200 do
          local name = 'name' .. i
          local f, e = loadstring('x = = 1', name)
          collectgarbage('collect')
          if e ~= '[string "' .. name .. '"]:1: unexpected symbol near \\'=\\'' then return e end
        end
        return 'ok'"""
    assert r.eval(script, 0) == b"ok"


# ---- CVE-2021-32626: Lua stack growth ---------------------------------------------------------


def test_call_with_massive_arguments(r):
    # Redis's own test: 7999 arguments leave almost no stack for the reply.
    assert r.eval("local a = {} for i = 1, 7999 do a[i] = 1 end "
                  "return redis.call('lpush', KEYS[1], unpack(a))", 1, "l") == 7999


def test_nested_reply_after_massive_arguments(r):
    # A deeply nested RESP3 reply parsed with thousands of arguments below it.
    script = """
        redis.setresp(3)
        local t = {'command', 'docs'}
        for i = 1, 7996 do t[#t + 1] = 'xadd' end
        local reply = redis.call(unpack(t))
        return type(reply.map.xadd.map.arguments)"""
    assert r.eval(script, 0) == b"table"


# ---- pattern matching ---------------------------------------------------------------------


PATTERN_CASES = [
    # (expression, expected reply) — the replies of Redis 7.0's Lua 5.1.
    ("{string.find('hello world', 'o w')}", [5, 7]),
    ("{string.find('hello world', '(o)(r)')}", [8, 9, b"o", b"r"]),
    ("{string.find('hello', 'l+')}", [3, 4]),
    ("{string.find('abc', 'b', 10)}", []),
    ("{string.find('abc', '', 4)}", [4, 3]),
    ("{string.find('a+b', '+', 1, true)}", [2, 2]),
    ("{string.find('abc', 'c', -1)}", [3, 3]),
    ("{string.match('key=val', '(%w+)=(%w*)')}", [b"key", b"val"]),
    ("{string.match('  x', '^%s*()')}", [3]),
    ("string.match('[[x]]', '%[(%b[])%]')", b"[x]"),
    ("string.match('THE (quick) fox', '%f[%a]%a+')", b"THE"),
    ("{string.gsub('hello world', '(%w+)', '<%1>')}", [b"<hello> <world>", 2]),
    ("{string.gsub('hello', '', '-')}", [b"-h-e-l-l-o-", 6]),
    ("{string.gsub('abc', '%w', '%0%0', 2)}", [b"aabbc", 2]),
    ("{string.gsub('abc', '%w', {a = '1', b = false})}", [b"1bc", 3]),
    ("{pcall(string.gsub, 'abc', '%w', {b = true})}", [None, b"invalid replacement value (a boolean)"]),
    ("{string.gsub('abc', '(%w)(%w)', function(a, b) return b .. a end)}", [b"bac", 1]),
    ("{string.gsub('THE (quick) fox', '%f[%a]%a+', string.lower)}", [b"the (quick) fox", 3]),
    ("{string.gsub('abc', 'x*', '-')}", [b"-a-b-c-", 4]),
    ("{string.gsub('a.b.c', '%.', '/')}", [b"a/b/c", 2]),
    ("(function() local t = {} for k, v in string.gmatch('a=1, b=2', '(%w+)=(%w+)') do "
     "t[#t + 1] = k .. v end return t end)()", [b"a1", b"b2"]),
    ("(function() local t = {} for w in string.gmatch('one two', '%a+') do t[#t + 1] = w end "
     "return t end)()", [b"one", b"two"]),
    ("(function() local t = {} for p in string.gmatch('abc', '()') do t[#t + 1] = p end "
     "return t end)()", [1, 2, 3, 4]),
    ("string.match('a' .. string.char(0) .. 'b', '%z')", b"\x00"),
    ("string.find('x[1]y', '[]]')", 4),
    ("string.rep('ab', 3)", b"ababab"),
    ("string.rep('x', 2^32 + 3)", b"xxx"),
    ("string.rep('x', -1)", b""),
    ("{pcall(string.find, 'a', '%')}", [None, b"malformed pattern (ends with '%')"]),
    ("{pcall(string.find, 'a', '[a')}", [None, b"malformed pattern (missing ']')"]),
    ("{pcall(string.find, 'a', '(()')}", [None, b"unfinished capture"]),
    ("{pcall(string.find, 'a', '%1')}", [None, b"invalid capture index"]),
    ("{pcall(string.find, 'a', '.)')}", [None, b"invalid pattern capture"]),
    ("{pcall(string.find, 'a', '%b')}", [None, b"unbalanced pattern"]),
    ("{pcall(string.find, 'a', '%fa')}", [None, b"missing '[' after '%f' in pattern"]),
    ("{pcall(string.gsub, 'a', 'a', true)}",
     [None, b"bad argument #3 to '?' (string/function/table expected)"]),
    ("{pcall(string.gsub, 'abc', '%w', {a = {}})}", [None, b"invalid replacement value (a table)"]),
    ("{pcall(string.find, string.rep('a', 33), string.rep('(a)', 33))}",
     [None, b"too many captures"]),
]


@pytest.mark.parametrize("expr,expected", PATTERN_CASES)
def test_patterns_match_lua51(r, expr, expected):
    assert r.eval(f"return {expr}", 0) == expected


_SUBJECT = "string.rep('a', 5000), string.rep('a?', 5000) .. string.rep('a', 5000)"
LONG_PATTERN_CALLS = [
    BACKTRACK,
    f"return string.match({_SUBJECT})",
    f"return string.gsub({_SUBJECT}, 'x')",
    f"for m in string.gmatch({_SUBJECT}) do end",
    # Quadratic rather than exponential: a lazy '.-' retried from every start position.
    "return string.find(string.rep('a', 2^22), '.-b')",
]


@pytest.mark.parametrize("script", LONG_PATTERN_CALLS)
def test_backtracking_pattern_is_killable(server_factory, script):
    srv = server_factory(["--busy-reply-threshold", "50"])
    other = srv.client()
    thread, result = run_in_thread(srv.client().eval, script, 0)
    wait_for(lambda: busy(other), timeout=10, message="the pattern never made the server BUSY")
    assert other.script_kill() is True
    thread.join(10)
    assert not thread.is_alive()
    assert result["error"].startswith("Script killed by user with SCRIPT KILL...")
    assert other.ping()


@pytest.mark.parametrize("body", [BACKTRACK, "local i = 0 while true do i = i + 1 end"])
def test_long_function_is_killable(server_factory, body):
    srv = server_factory(["--busy-reply-threshold", "50"])
    other = srv.client()
    other.function_load("#!lua name=bt\nredis.register_function{function_name='bt', "
                        "callback=function() " + body + " end, flags={'no-writes'}}")
    thread, result = run_in_thread(srv.client().fcall, "bt", 0)
    wait_for(lambda: busy(other), timeout=10, message="the pattern never made the server BUSY")
    assert other.execute_command("FUNCTION", "KILL") == b"OK"
    thread.join(10)
    assert not thread.is_alive()
    assert "killed" in result["error"]
    assert other.ping()


def test_pattern_after_write_is_unkillable(server_factory):
    srv = server_factory(["--busy-reply-threshold", "50"])
    other = srv.client()
    thread, _ = run_in_thread(srv.client().eval, "redis.call('set', 'k', 'v') " + BACKTRACK, 0)
    wait_for(lambda: busy(other), timeout=10, message="the pattern never made the server BUSY")
    with pytest.raises(redis.ResponseError, match="^UNKILLABLE"):
        other.script_kill()
    # Only SHUTDOWN NOSAVE ends it, as in Redis.
    srv.expect_exit = True
    other.shutdown(nosave=True)
    thread.join(10)
    assert not thread.is_alive()
    srv.proc.wait(10)


def test_deep_pattern_is_an_error_not_a_crash(r):
    # The stock matcher recurses once per optional item and can exhaust the C stack.
    reply = r.eval("return {pcall(string.find, string.rep('a', 200000), "
                   "string.rep('a?', 200000))}", 0)
    assert reply == [None, b"pattern too complex"]
    # As deep as Lua 5.1 goes safely still matches.
    assert r.eval("return {string.find(string.rep('a', 20000), string.rep('a?', 20000))}",
                  0) == [1, 20000]
    assert r.eval("return {string.find(string.rep('a', 40), "
                  "string.rep('a?', 20) .. string.rep('a', 20))}", 0) == [1, 40]


# ---- memory ----------------------------------------------------------------------------------


def test_string_rep_out_of_memory_is_a_lua_error(r):
    # 4 GB in one string: past the Lua heap's bound, refused before anything is touched.
    assert r.eval("return {pcall(string.rep, 'aaaa', 2^30)}", 0) == [None, b"not enough memory"]
    assert "not enough memory" in eval_error(r, "return #string.rep('aaaa', 2^30)")
    assert r.eval("return #string.rep('ab', 2^20)", 0) == 2 ** 21

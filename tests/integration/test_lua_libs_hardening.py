"""Regression tests for the Lua library CVE classes vireo closes with its own cjson, bit, struct,
cmsgpack and unpack (issues 14 and 20): each public reproduction, sent to vireo and, when Debian's
redis-server is installed, to Redis too; the replies must be byte for byte the same, and the
server must keep serving afterwards.

The expected replies are also written down (recorded from Redis), so the tests still check
vireo on a machine without redis-server.
"""

from __future__ import annotations

import shutil

import pytest

from conftest import start_server, _finish

REDIS_SERVER = shutil.which("redis-server")

# (script, expected reply) — the reply as RESP bytes; error texts name the script's SHA-1, so
# they are compared by prefix and suffix around it.
CASES = [
    # CVE-2024-31449: bit.tohex with INT32_MIN as the width.
    ("return bit.tohex(65535, -2147483648)", b"$8\r\n0000FFFF\r\n"),
    ("return bit.tohex(65535, 2147483647)", b"$8\r\n0000ffff\r\n"),
    ("return bit.tohex(-1, -4)", b"$4\r\nFFFF\r\n"),
    ("return {bit.band(0xff, 0x0f), bit.lshift(1, 31), bit.arshift(-256, 4), bit.bswap(1)}",
     b"*4\r\n:15\r\n:-2147483648\r\n:-16\r\n:16777216\r\n"),
    # CVE-2025-46817: unpack ranges whose element count overflows an int.
    ("return unpack({}, 0, 2147483647)", b"-ERR user_script:1: too many results to unpack"),
    ("return unpack({}, -2147483648, 2147483647)", b"-ERR user_script:1: too many results to unpack"),
    ("return unpack({}, -2, 2147483647)", b"-ERR user_script:1: too many results to unpack"),
    ("return unpack({}, 1, 1000000)", b"-ERR user_script:1: too many results to unpack"),
    ("return {unpack({1, 2, 3}, 2)}", b"*2\r\n:2\r\n:3\r\n"),
    ("return #{unpack({}, 2147483647, 2147483646)}", b":0\r\n"),
    # CVE-2020-14147 / CVE-2018-11219 and issue 20 finding 6: struct sizes and offsets.
    ("return {struct.unpack('i0', 'abcd')}", b"*2\r\n:0\r\n:1\r\n"),
    ("return struct.unpack('f', 'xxxxxxxxxxxxx', -3)",
     b"-ERR user_script:1: bad argument #2 to 'unpack' (data string too short)"),
    ("return struct.unpack('c2147483647', 'abcd')",
     b"-ERR user_script:1: bad argument #2 to 'unpack' (data string too short)"),
    ("return struct.pack('i2147483648', 1)", b"-ERR user_script:1: integral size overflow"),
    ("return struct.pack('!4294967296i', 1)", b"-ERR user_script:1: integral size overflow"),
    ("return struct.size('c4294967297')", b"-ERR user_script:1: integral size overflow"),
    ("return struct.pack('i33', 1)",
     b"-ERR user_script:1: integral size 33 is larger than limit of 32"),
    ("return struct.size('c2147483647c2147483647')", b":4294967294\r\n"),
    ("return {struct.unpack('bc0', '\\2abc')}", b"*2\r\n$2\r\nab\r\n:4\r\n"),
    ("return struct.unpack('bc0', '\\255abc')",
     b"-ERR user_script:1: bad argument #2 to 'unpack' (data string too short)"),
    ("return struct.pack('n', 1)",
     b"-ERR user_script:1: bad argument #1 to 'pack' (invalid format option 'n')"),
    ("return struct.pack('!3i', 1)", b"-ERR user_script:1: alignment 3 is not a power of 2"),
    ("return struct.pack('>i8', -1e300)", b"$8\r\n\x80\x00\x00\x00\x00\x00\x00\x00\r\n"),
    ("return struct.pack('i5H', 1)",
     b"-ERR user_script:1: bad argument #3 to 'pack' (number expected, got nil)"),
    ("return {struct.unpack('bc0', struct.pack('bc0', -0.5, 'x'))}", b"*2\r\n$0\r\n\r\n:2\r\n"),
    # CVE-2018-11218: cmsgpack stack use with many arguments, deep nesting and huge counts.
    ("local t = {} for i = 1, 3999 do t[i] = i end return #cmsgpack.pack(unpack(t))",
     b":11615\r\n"),
    ("local t = {} for i = 1, 7000 do t[i] = i end return #cmsgpack.pack(unpack(t))",
     b"-ERR user_script:1: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)"),
    ("return cmsgpack.unpack(string.rep('\\145', 100000) .. '\\1')",
     b"-ERR user_script:1: stack overflow (in function mp_decode_to_lua_array)"),
    ("return #{cmsgpack.unpack(string.rep('\\1', 100000))}",
     b"-ERR user_script:1: stack overflow (too many return values at once; use unpack_one or "
     b"unpack_limit instead.)"),
    ("return cmsgpack.unpack('\\221\\255\\255\\255\\255')",
     b"-ERR user_script:1: Missing bytes in input."),
    ("return cmsgpack.unpack('\\223\\255\\255\\255\\255\\1')",
     b"-ERR user_script:1: Missing bytes in input."),
    ("return tostring(cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\254'))",
     b"$2\r\n-2\r\n"),
    ("return cmsgpack.unpack('\\196\\1a')", b"-ERR user_script:1: Bad data format in input."),
    ("return cmsgpack.unpack('\\129\\192\\1')", b"-ERR table index is nil"),
    ("local t = {} for i = 1, 100000 do t[i] = i end "
     "return #cmsgpack.unpack(cmsgpack.pack(t))", b":100000\r\n"),
    ("local m = {} for i = 1, 100000 do m['k' .. i] = i end "
     "local n = 0 for k, v in pairs(cmsgpack.unpack(cmsgpack.pack(m))) do n = n + v end return n",
     b":5000050000\r\n"),
    ("local t = {} local c = t for i = 1, 100 do c[1] = {} c = c[1] end "
     "return #cmsgpack.pack(t)", b":17\r\n"),
    # cjson: output format, limits and errors.
    ("return cjson.encode({1, 2, nil, 4, 'a/b', 0.1, 1e20, true, cjson.null})",
     b"$39\r\n[1,2,null,4,\"a\\/b\",0.1,1e+20,true,null]\r\n"),
    ("return cjson.encode({[20] = 1})",
     b"-ERR user_script:1: Cannot serialise table: excessively sparse array"),
    ("local t = {} local c = t for i = 1, 2000 do c[1] = {} c = c[1] end return cjson.encode(t)",
     b"-ERR user_script:1: Cannot serialise, excessive nesting (1001)"),
    ("return cjson.decode(string.rep('[', 100000))",
     b"-ERR user_script:1: Found too many nested data structures (1001) at character 1001"),
    ("return cjson.decode('{\"a\":[1,2,{\"b\":\"\\\\u00e9\"}]}').a[3].b", b"$2\r\n\xc3\xa9\r\n"),
    ("return cjson.decode('[1,2')",
     b"-ERR user_script:1: Expected comma or array end but found T_END at character 5"),
    ("return #cjson.encode(string.rep('\\1', 1000000))", b":6000002\r\n"),
]


def same_reply(got: bytes, want: bytes) -> bool:
    # Errors end in " script: <sha>, on @user_script:1.": compare the message before it.
    if want.startswith(b"-"):
        return got.startswith(want + b" script: ")
    return got == want


@pytest.fixture(scope="module")
def reference():
    if REDIS_SERVER is None:
        yield None
        return
    handle = start_server(binary=REDIS_SERVER)
    yield handle
    _finish(handle)


def run_case(handle, script: str) -> bytes:
    conn = handle.raw(timeout=60)
    try:
        return conn.execute("EVAL", script, "0")
    finally:
        conn.close()


@pytest.mark.parametrize("script,want", CASES, ids=[c[0][:60] for c in CASES])
def test_public_reproduction(server, reference, script, want):
    got = run_case(server, script)
    assert same_reply(got, want), f"vireo replied {got[:300]!r}"
    assert server.client().ping()
    if reference is not None:
        theirs = run_case(reference, script)
        assert same_reply(theirs, want), f"redis-server replied {theirs[:300]!r}"
        assert got == theirs


def test_cjson_encode_360mb_string(server, reference):
    """CVE-2022-24834: the escaped length of a 360 MB string overflowed lua-cjson's buffer."""
    script = "local s = string.rep('a', 360000000) return #cjson.encode(s)"
    assert run_case(server, script) == b":360000002\r\n"
    assert server.client().ping()
    if reference is not None:
        assert run_case(reference, script) == b":360000002\r\n"


def test_cjson_settings_survive_between_scripts(server):
    """The setters change the shared instance as in Redis; restoring them is the script's job."""
    c = server.client()
    assert c.eval("return cjson.encode_max_depth(2)", 0) == 2
    try:
        assert c.eval("return cjson.encode({{1}})", 0) == b"[[1]]"
        with pytest.raises(Exception, match=r"excessive nesting \(3\)"):
            c.eval("return cjson.encode({{{1}}})", 0)
    finally:
        c.eval("return cjson.encode_max_depth(1000)", 0)


# ---------------------------------------------------------------------------------------------
# Seeded differential run: random scripts over cjson, struct, cmsgpack, bit and unpack, each
# sent to vireo and redis-server; every reply must be identical. A failure prints the script;
# the seed reproduces the whole run.

DIFF_SEED = 20261201
DIFF_SCRIPTS = 3000

LUA_NUMBERS = ["0", "-0.0", "1", "-1", "0.1", "1/3", "1e20", "-1e-20", "123456789012345", "2^53",
               "2^63", "-2^63", "2^64", "-2^31", "2^31", "2^32", "3.5", "-0.5", "1e300", "-1e300",
               "0/0", "1/0", "-1/0", "255", "256", "-129", "65535", "1.5e-7"]
LUA_CHARS = ["a", "/", '\\"', "\\\\", "\\n", "\\0", "\\1", "\\31", "\\127", "\\128", "\\255",
             " ", "\\t", "\\r", "\\b", "\\f", "u", "1", "\\195\\169"]
JSON_TOKENS = ["{", "}", "[", "]", ",", ":", '"a"', '"\\\\u00e9"', '"\\\\ud83d\\\\ude00"',
               '"\\\\uD800"', '"\\\\x"', "1", "-1.5e3", "0x1F", "+1", "01", "inf", "-Infinity",
               "nan", "true", "false", "null", "nul", " ", "\\n", '"abc', "1e999", "-", ".5", "5.",
               "\\0", "1 2", "[1,]", '{"a":1,}', '{"a" 1}']
STRUCT_OPTIONS = ["b", "B", "h", "H", "l", "L", "T", "i", "I", "i0", "i3", "i8", "I9", "i16",
                  "i33", "f", "d", "x", "s", "c0", "c1", "c5", "c2147483647", ">", "<", "!", "!2",
                  "!8", "!3", " ", "n", "=", "I2147483648"]


class ScriptGen:
    def __init__(self, seed):
        import random
        self.rnd = random.Random(seed)

    def pick(self, items):
        return self.rnd.choice(items)

    def num(self):
        return self.pick(LUA_NUMBERS + [str(self.rnd.randrange(-2**40, 2**40)),
                                        repr(self.rnd.uniform(-1e6, 1e6))])

    def string(self):
        return "'" + "".join(self.pick(LUA_CHARS) for _ in range(self.rnd.randrange(0, 8))) + "'"

    def value(self, depth=0):
        k = self.rnd.randrange(10 if depth < 4 else 6)
        if k < 2:
            return self.string()
        if k < 4:
            return self.num()
        if k == 4:
            return self.pick(["true", "false", "nil", "cjson.null"])
        if k == 5:
            return self.pick(["print", "'x'"])
        items = []
        for _ in range(self.rnd.randrange(0, 5)):
            t = self.rnd.randrange(3)
            if t == 0:
                items.append(self.value(depth + 1))
            elif t == 1:
                key = self.pick(["1", "2", "3", "5", "11", "20", "-1", "0", "1.5", "1e10", "true",
                                 "'k'", "2^31", "2^31-1"])
                items.append(f"[{key}]={self.value(depth + 1)}")
            else:
                items.append(f"{self.pick(['a', 'b', 'c1'])}={self.value(depth + 1)}")
        return "{" + ",".join(items) + "}"

    def json_text(self):
        text = "".join(self.pick(JSON_TOKENS) for _ in range(self.rnd.randrange(1, 10)))
        return "'" + text.replace("'", "\\'") + "'"

    def struct_format(self):
        return "".join(self.pick(STRUCT_OPTIONS) for _ in range(self.rnd.randrange(1, 5)))

    def msgpack(self):
        if self.rnd.randrange(3) == 0:
            return "'" + "".join(f"\\{self.rnd.randrange(256)}"
                                 for _ in range(self.rnd.randrange(1, 12))) + "'"
        return f"cmsgpack.pack({self.value()}, {self.value()})"

    def script(self):
        k = self.rnd.randrange(10)
        # Values are turned into strings with cjson or type(): tostring of a table would print
        # an address.
        show = "for i = 1, #t do t[i] = type(t[i]) == 'table' and cjson.encode(t[i]) or tostring(t[i]) end return t"
        if k < 2:
            return f"return cjson.encode({self.value()})"
        if k < 4:
            return (f"local ok, v = pcall(cjson.decode, {self.json_text()}) "
                    "if not ok then return 'E:' .. v end return cjson.encode(v)")
        if k == 4:
            setting = self.pick(["encode_sparse_array(true)", "encode_sparse_array(true, 1, 0)",
                                 "encode_invalid_numbers(true)", "encode_invalid_numbers('null')",
                                 f"encode_number_precision({self.rnd.randrange(0, 16)})",
                                 f"encode_max_depth({self.rnd.randrange(0, 4)})",
                                 "decode_invalid_numbers(false)", "decode_max_depth(2)",
                                 "encode_keep_buffer('on')", "encode_sparse_array()"])
            return (f"local j = cjson.new() local t = {{pcall(j.{setting})}} "
                    f"t[#t + 1] = select(2, pcall(j.encode, {self.value()})) "
                    f"t[#t + 1] = select(2, pcall(j.decode, {self.json_text()})) {show}")
        if k == 5:
            args = ", ".join(self.pick([self.num(), self.string()]) for _ in range(3))
            return f"return {{struct.pack('{self.struct_format()}', {args})}}"
        if k == 6:
            offset = self.pick(["1", "2", "0", "-1", "-3", "100", "nil", "2^40", "2^64"])
            return (f"local t = {{struct.unpack('{self.struct_format()}', {self.string()}, "
                    f"{offset})}} {show}")
        if k == 7:
            call = self.pick([f"unpack({self.msgpack()})",
                              f"unpack_one({self.msgpack()}, {self.pick(['0', '1', '2', '-1'])})",
                              f"unpack_limit({self.msgpack()}, {self.pick(['0', '1', '-1'])}, "
                              f"{self.pick(['0', '1', '-1', '3'])})"])
            return f"local t = {{cmsgpack.{call}}} {show}"
        if k == 8:
            op = self.pick(["tohex", "band", "bor", "bxor", "lshift", "rshift", "arshift", "rol",
                            "ror"])
            return f"return {{bit.{op}({self.num()}, {self.num()}), bit.bswap({self.num()})}}"
        bounds = ["nil", "0", "1", "-1", "3", "-2147483648", "2147483647", "2^31", "7990", "8000",
                  "1.5"]
        return f"return select('#', unpack({{1, 2, 3}}, {self.pick(bounds)}, {self.pick(bounds)}))"


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed")
def test_differential_random_scripts(server, reference):
    gen = ScriptGen(DIFF_SEED)
    ours, theirs = server.raw(timeout=30), reference.raw(timeout=30)
    try:
        for i in range(DIFF_SCRIPTS):
            script = gen.script()
            got, want = ours.execute("EVAL", script, "0"), theirs.execute("EVAL", script, "0")
            assert got == want, (f"script {i} of seed {DIFF_SEED}: {script}\n"
                                 f"  vireo {got[:300]!r}\n  redis {want[:300]!r}")
    finally:
        ours.close()
        theirs.close()

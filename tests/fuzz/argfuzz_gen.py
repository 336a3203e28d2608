"""Hostile argument generation for tests/fuzz/argfuzz.py.

The generator walks one command's argument tree, as the server under test describes it in
COMMAND DOCS (type, token, optional / multiple flags, oneof / block children), and fills every
slot with a value drawn from pools of hostile values. A policy layer (POLICY below) keeps the
fuzzer from sending what would legitimately stop, reconfigure or block the server, so every
failure it reports is the server's fault.
"""

from __future__ import annotations

import re

MB = 1 << 20

# ----------------------------------------------------------------------------------------------
# Value pools. "Big" values (allocations near the 512 MB string limit, 1 MB arguments) are drawn
# rarely: each costs both servers real memory and time.

INT_EDGES = [
    "9223372036854775807", "9223372036854775806", "-9223372036854775808", "-9223372036854775807",
    "9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
    "4611686018427387904", "-4611686018427387904", "2147483647", "2147483648", "-2147483648",
    "-2147483649", "4294967295", "4294967296", "4294967297", "0", "-0", "-1", "1", "2", "3", "-2",
    "100", "65535", "65536", "1" * 40, "-" + "9" * 40, "01", "+1", " 1", "1 ", "1.0", "1e3",
    "0x10", "", "abc", "3.5", "-3.5", "1\x00",
]
# Offsets and counts that are valid but make the server allocate close to 512 MB.
BIG_INTS = ["536870911", "536870910", "536870912", "4294967295", "4294967294", "536870900"]
FLOATS = [
    "nan", "NaN", "-nan", "inf", "-inf", "+inf", "Infinity", "-0.0", "0.0", "1e308", "-1e308",
    "1e309", "-1e309", "1.7976931348623157e308", "4.9e-324", "2.2250738585072014e-308",
    "1e-400", "0x1p3", "1.5", "-1.5", "3", "1e", ".", "", "(1", "(-inf", "(+inf", "(nan", "[a",
    "9223372036854775807.5", "1" * 400, "0.1", "-1", "1,5", " 1.5",
]
PATTERNS = [
    "*", "", "?", "[", "[]", "[^", "\\", "[a-", "[z-a]", "*a*a*a*a*a*a*a*a*a*a*a*b",
    "*" * 200 + "b", "a*" * 60 + "b", "?" * 300, "[a-z]*[0-9]*[!a]*", "[[[[[[[[[[", "*\\*\\[",
    "s:*", "h:*", "*:*", "x*", "\x00*", "*[^a]*[^a]*[^a]*[^a]*b",
]


def big_string(ch: bytes = b"a") -> bytes:
    return ch * MB


STRINGS = [
    b"", b"a", b"abc", b"0", b"-1", b"1.5", b"hello world", b"\x00", b"a\x00b", b"\r\n",
    b"a\r\nb", b"\r\n*1\r\n$4\r\nPING\r\n", b"\xff\xfe\x00\x01", b"$-1", b"*-1", b"nil",
    "k\u00e9".encode(), b"\"quoted\"", b"'", b"{}", b"%s%n%x", b"\\x00", b"x" * 300,
    b"9223372036854775807", b"-9223372036854775808", b"nan", b"inf",
]

# The small keyspace every batch starts from (see KEYSPACE_SETUP): every type, every
# encoding vireo distinguishes, so wrong-type keys reach every command.
TYPED_KEYS = [
    b"s:int", b"s:str", b"s:big", b"s:float", b"l:small", b"l:big", b"h:small", b"h:big",
    b"S:int", b"S:str", b"S:big", b"z:small", b"z:big", b"x:s", b"x:empty",
]
OTHER_KEYS = [b"missing", b"", b"s:\x00bin", b"{tag}k", b"l:small:dst", b"z:dst", b"S:dst"]


def keyspace_setup() -> list[list[bytes]]:
    """Commands that rebuild the keyspace at the start of every batch (both servers)."""
    n = 130  # past the 128-element listpack limits
    big = [str(i).encode() for i in range(n)]
    cmds = [
        [b"SET", b"s:int", b"12345"],
        [b"SET", b"s:str", b"hello"],
        [b"SET", b"s:big", b"x" * 5000],
        [b"SET", b"s:float", b"3.25"],
        [b"RPUSH", b"l:small", b"a", b"b", b"c", b"1", b"2", b"3"],
        [b"RPUSH", b"l:big", *[b"e" + v for v in big]],
        [b"HSET", b"h:small", b"f1", b"v1", b"f2", b"2", b"f3", b"1.5"],
        [b"HSET", b"h:big", *[x for v in big for x in (b"f" + v, v)]],
        [b"SADD", b"S:int", b"1", b"2", b"3"],
        [b"SADD", b"S:str", b"a", b"b", b"c"],
        [b"SADD", b"S:big", *[b"m" + v for v in big]],
        [b"ZADD", b"z:small", b"1", b"a", b"2", b"b", b"3", b"c"],
        [b"ZADD", b"z:big", *[x for v in big for x in (v, b"m" + v)]],
        [b"XADD", b"x:s", b"1-1", b"f", b"v"],
        [b"XADD", b"x:s", b"2-1", b"f", b"v"],
        [b"XADD", b"x:s", b"3-1", b"f", b"v", b"g", b"w"],
        [b"XGROUP", b"CREATE", b"x:s", b"g1", b"0"],
        [b"XGROUP", b"CREATE", b"x:s", b"g2", b"$"],
        [b"XREADGROUP", b"GROUP", b"g1", b"c1", b"COUNT", b"2", b"STREAMS", b"x:s", b">"],
        [b"XGROUP", b"CREATECONSUMER", b"x:s", b"g2", b"c2"],
        [b"XADD", b"x:empty", b"MAXLEN", b"0", b"1-1", b"f", b"v"],
        [b"XGROUP", b"CREATE", b"x:empty", b"g1", b"$"],
    ]
    return cmds


# ----------------------------------------------------------------------------------------------
# The argument-tree walker.


class Entry:
    """One fuzzable command or subcommand: its words ("CONFIG", "SET"), docs arguments, flags."""

    def __init__(self, words, args, flags, arity):
        self.words = words            # list[str]
        self.args = args              # list[dict] (COMMAND DOCS "arguments")
        self.flags = set(flags)       # COMMAND INFO flags
        self.arity = arity
        self.redis_arity = 0          # set when redis-server has the command too
        self.name = "|".join(w.lower() for w in words)

    @property
    def blocking(self) -> bool:
        return "blocking" in self.flags


class GenState:
    """Per-batch generation state."""

    def __init__(self, rng, in_tx: bool):
        self.rng = rng
        self.in_tx = in_tx            # inside MULTI or EVAL: blocking forms do not block
        self.big_used = False         # a 1 MB argument was sent in this batch
        self.shared = False           # compared with redis-server: only what 7.0 knows
        self.config_params = CONFIG_SAFE  # narrowed to what both servers know
        self.include_pending = False  # also send PENDING_INPUTS (see there)


def rand_case(rng, word: str) -> str:
    r = rng.random()
    if r < 0.85:
        return word
    if r < 0.93:
        return word.lower()
    return "".join(c.lower() if rng.random() < 0.5 else c for c in word)


def gen_int(st: GenState) -> bytes:
    rng = st.rng
    r = rng.random()
    if r < 0.01:
        return rng.choice(BIG_INTS).encode()
    if r < 0.7:
        return rng.choice(INT_EDGES).encode()
    if r < 0.85:
        return str(rng.randint(-10, 300)).encode()
    return str(rng.choice([1, -1]) * (2 ** rng.randint(0, 64) + rng.randint(-1, 1))).encode()


def gen_double(st: GenState) -> bytes:
    rng = st.rng
    if rng.random() < 0.7:
        return rng.choice(FLOATS).encode()
    return gen_int(st) if rng.random() < 0.5 else repr(rng.uniform(-1e6, 1e6)).encode()


def gen_string(st: GenState) -> bytes:
    rng = st.rng
    r = rng.random()
    if r < 0.002:
        st.big_used = True
        return big_string(rng.choice([b"a", b"\x00", b"1"]))
    if r < 0.6:
        return rng.choice(STRINGS)
    if r < 0.75:
        return gen_int(st)
    if r < 0.85:
        return gen_double(st)
    if r < 0.9:
        return rng.choice(PATTERNS).encode()
    return rng.choice(TYPED_KEYS)  # member / field names that exist


def gen_key(st: GenState) -> bytes:
    rng = st.rng
    r = rng.random()
    if r < 0.85:
        return rng.choice(TYPED_KEYS)
    if r < 0.97:
        return rng.choice(OTHER_KEYS)
    return gen_string(st)


def gen_pattern(st: GenState) -> bytes:
    if st.rng.random() < 0.8:
        return st.rng.choice(PATTERNS).encode()
    return gen_string(st)


def gen_time(st: GenState) -> bytes:
    rng = st.rng
    if rng.random() < 0.6:
        return gen_int(st)
    # Plausible absolute times, seconds and milliseconds, past and future.
    return str(rng.choice([1, 1700000000, 4102444800, 1700000000000, 4102444800000, 253402300800])
               + rng.randint(-2, 2)).encode()


# Safe values for a blocking command's timeout outside MULTI/EVAL: every invalid form (which
# must be refused) plus short positive ones. Zero and large values would block the fuzzer.
# Careful: -0.001 s and -0 round up to 0 ms, which means "forever" in Redis too.
BAD_TIMEOUTS = ["-1", "-0.002", "nan", "abc", "", "1e300", "-9223372036854775808",
                "9223372036854775807", "18446744073709551616", "inf", "-inf", "1.5.5", "-0x10"]


def safe_timeout(st: GenState, millis: bool) -> bytes:
    rng = st.rng
    if rng.random() < 0.5:
        return rng.choice(BAD_TIMEOUTS).encode()
    return rng.choice(["1", "2"] if millis else ["0.001", "0.002"]).encode()


def gen_value(st: GenState, arg: dict) -> bytes:
    t = arg.get("type", "string")
    name = arg.get("name", "")
    rng = st.rng
    if rng.random() < 0.06:  # type confusion: any slot may receive any kind of value
        return rng.choice([gen_int, gen_double, gen_string, gen_key, gen_pattern])(st)
    if t == "key":
        return gen_key(st)
    if t == "integer":
        return gen_int(st)
    if t == "double":
        return gen_double(st)
    if t == "pattern":
        return gen_pattern(st)
    if t == "unix-time":
        return gen_time(st)
    # Strings that are numbers in disguise (counts, offsets, IDs) get numeric values often.
    if any(w in name for w in ("count", "offset", "index", "start", "end", "len", "num", "port", "db")):
        return gen_int(st) if rng.random() < 0.7 else gen_string(st)
    if "id" in name:
        return gen_stream_id(st)
    return gen_string(st)


def gen_stream_id(st: GenState) -> bytes:
    rng = st.rng
    ids = ["0", "0-0", "0-1", "1-1", "2-1", "3-1", "$", ">", "*", "+", "-", "(1-1", "1-*",
           "18446744073709551615-18446744073709551615", "18446744073709551615-*",
           "18446744073709551616-0", "-1-1", "1-18446744073709551616", "1--1", "9223372036854775807"]
    return rng.choice(ids).encode() if rng.random() < 0.8 else gen_string(st)


def walk(st: GenState, args: list[dict], out: list[bytes], entry: Entry) -> None:
    for arg in args:
        walk_one(st, arg, out, entry)


def walk_one(st: GenState, arg: dict, out: list[bytes], entry: Entry) -> None:
    rng = st.rng
    flags = arg.get("flags", [])
    if "optional" in flags and rng.random() < 0.5:
        return
    reps = 1
    if "multiple" in flags:
        reps = rng.choice([1, 1, 1, 2, 2, 3, 5])
    for i in range(reps):
        token = arg.get("token")
        if token and (i == 0 or "multiple_token" in flags):
            out.append(rand_case(rng, token).encode())
        t = arg.get("type")
        if t == "pure-token":
            if not token:
                out.append(rand_case(rng, arg.get("name", "")).encode())
            continue
        if t == "oneof":
            kids = arg.get("arguments", [])
            if kids:
                walk_one(st, dict(rng.choice(kids), flags=[]), out, entry)
            continue
        if t == "block":
            walk(st, arg.get("arguments", []), out, entry)
            continue
        name = arg.get("name", "")
        if entry.blocking and not st.in_tx and (name == "timeout" or
                                                (token or "").upper() == "BLOCK"):
            out.append(safe_timeout(st, millis=(token or "").upper() == "BLOCK"))
            continue
        out.append(gen_value(st, arg))


def mutate(st: GenState, argv: list[bytes]) -> list[bytes]:
    """Arity and order damage, so parsers see truncated and over-long argument lists."""
    rng = st.rng
    r = rng.random()
    if r < 0.04 and len(argv) > 1:
        return argv[:-1]
    if r < 0.08:
        return argv + [gen_string(st)]
    if r < 0.10 and len(argv) > 2:
        rest = argv[1:]
        rng.shuffle(rest)
        return argv[:1] + rest
    if r < 0.12 and len(argv) > 1:
        i = rng.randrange(1, len(argv))
        return argv[:i] + [argv[i]] * rng.randint(2, 4) + argv[i + 1:]
    return argv


def generate(st: GenState, entry: Entry) -> list[bytes] | None:
    """One command for `entry`, or None when the policy forbids what came out."""
    words = [rand_case(st.rng, w).encode() for w in entry.words]
    body: list[bytes] = []
    walk(st, entry.args, body, entry)
    argv = words + body
    # A damaged blocking command could move a 0 into its timeout slot and block for good.
    if not ((entry.blocking or entry.name in TIMED) and not st.in_tx):
        argv = mutate(st, argv)
    return apply_policy(st, entry, argv)


TIMED = {"wait", "waitaof", "client|pause"}


# ----------------------------------------------------------------------------------------------
# Policy: what the fuzzer never sends, and how it tames what it sends.

# Commands that stop the server, take over the connection (replication, monitoring, subscribed
# mode, suppressed replies) or change its protocol; the fuzzer's reply accounting and the
# server's survival both depend on never sending them.
NEVER = {
    "shutdown", "monitor", "quit", "sync", "psync", "replconf", "failover", "subscribe",
    "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe", "client|reply",
    "client|tracking", "script|debug", "module|load", "module|loadex", "multi", "exec",
    "discard", "cluster|reset", "cluster|failover", "cluster|meet", "cluster|replicate",
    "cluster|forget", "cluster|setslot",
    # About a second of work per call in each server (as in Redis); test_hyperloglog runs it.
    "pfselftest",
}

# CONFIG SET parameters that any value leaves harmless (encodings, logging thresholds): the
# rest (dir, port, maxmemory, requirepass, timeout, proto-max-bulk-len, ...) would reconfigure
# the server out from under the run.
CONFIG_SAFE = [
    "hash-max-listpack-entries", "hash-max-listpack-value", "set-max-intset-entries",
    "zset-max-listpack-entries", "zset-max-listpack-value", "list-max-listpack-size",
    "list-compress-depth", "stream-node-max-bytes", "stream-node-max-entries",
    "slowlog-log-slower-than", "slowlog-max-len", "latency-monitor-threshold",
    "notify-keyspace-events", "lfu-log-factor", "lfu-decay-time", "maxmemory-samples",
    "hash-max-ziplist-entries", "zset-max-ziplist-entries", "active-expire-effort",
]

# DEBUG subcommands that neither stop nor stall the server.
DEBUG_SAFE = ["OBJECT", "DIGEST", "DIGEST-VALUE", "LISTPACK", "QUICKLIST", "PROTOCOL",
              "HTSTATS", "HTSTATS-KEY", "STRINGMATCH-LEN", "CHANGE-REPL-ID", "LOG", "JMAP",
              "SET-ACTIVE-EXPIRE", "POPULATE", "HELP"]
DEBUG_PROTOCOL = ["string", "integer", "double", "bignum", "null", "array", "set", "map",
                  "attrib", "push", "verbatim", "true", "false"]


def gen_config_set(st: GenState) -> list[bytes]:
    rng = st.rng
    out = [b"CONFIG", b"SET"]
    for _ in range(rng.choice([1, 1, 2])):
        out.append(rng.choice(st.config_params).encode())
        out.append(gen_int(st) if rng.random() < 0.7 else gen_string(st))
    return out


def gen_debug(st: GenState) -> list[bytes]:
    rng = st.rng
    sub = rng.choice(DEBUG_SAFE)
    out = [b"DEBUG", sub.encode()]
    if sub in ("OBJECT", "LISTPACK", "QUICKLIST", "HTSTATS-KEY"):
        out.append(gen_key(st))
    elif sub == "DIGEST-VALUE":
        out += [gen_key(st) for _ in range(rng.randint(0, 3))]
    elif sub == "PROTOCOL":
        out.append(rng.choice(DEBUG_PROTOCOL).encode() if rng.random() < 0.8 else gen_string(st))
    elif sub == "HTSTATS":
        out.append(gen_int(st))
    elif sub == "STRINGMATCH-LEN":
        out += [gen_pattern(st), gen_string(st)] if rng.random() < 0.5 else []
    elif sub in ("LOG", "SET-ACTIVE-EXPIRE"):
        out.append(gen_string(st) if sub == "LOG" else rng.choice([b"0", b"1", b"x"]))
    elif sub == "POPULATE":
        # Bounded: DEBUG POPULATE with a valid huge count would fill memory on purpose.
        out.append(rng.choice([b"0", b"1", b"10", b"-1", b"abc", b"-9223372036854775808"]))
        if rng.random() < 0.7:
            out.append(gen_string(st)[:16])
            if rng.random() < 0.5:
                out.append(rng.choice([b"0", b"1", b"100", b"-1", b"x"]))
    return mutate(st, out)


def _valid_int(b: bytes) -> int | None:
    try:
        s = b.decode()
        if s != s.strip():
            return None
        return int(s)
    except (UnicodeDecodeError, ValueError):
        return None


# Redis parses some numbers as C strings and so reads "1\0junk" as 1 (stream IDs through
# string2ull, memory sizes in CONFIG SET) where vireo, binary-safe throughout, refuses them.
# Redis would then write where vireo did not, so such arguments stay out of compared batches.
NUL_NUMBER = re.compile(rb"^[-+]?[0-9.]*\x00")

# Options Redis 7.0 lacks (7.2 and the newer stream releases vireo follows).
NEWER_OPTIONS = {
    "zrank": {b"WITHSCORE"},
    "zrevrank": {b"WITHSCORE"},
    "xadd": {b"IDMP", b"IDMPAUTO", b"KEEPREF", b"DELREF", b"ACKED"},
    "xtrim": {b"KEEPREF", b"DELREF", b"ACKED"},
    "xreadgroup": {b"CLAIM", b"MAXCOUNT", b"MAXSIZE"},  # 8.4, 8.10
    "xread": {b"+", b"MAXCOUNT", b"MAXSIZE"},  # 7.4: "+" reads the last entry; 8.10
    "set": {b"IFEQ", b"IFNE", b"IFDEQ", b"IFDNE"},  # 8.4
    "hscan": {b"NOVALUES"},  # 7.4
    "zscan": {b"NOSCORES"},  # Valkey 8.0
    # 8.8: AGGREGATE COUNT (a key spelled "count" is left out too; that costs nothing).
    "zunion": {b"COUNT"},
    "zinter": {b"COUNT"},
    "zunionstore": {b"COUNT"},
    "zinterstore": {b"COUNT"},
}
# BITOP operations added in Redis 8.2.
NEWER_BITOPS = {b"DIFF", b"DIFF1", b"ANDOR", b"ONE"}


def arity_ok(arity: int, argc: int) -> bool:
    """COMMAND's arity: exact when positive, a minimum when negative."""
    return argc == arity if arity >= 0 else argc >= -arity

# Commands taking relative TTLs: a small one would expire the key at a moment that differs
# between the two servers, so in compared batches small positive numbers move 10^9 out.
RELATIVE_TTL = {"expire", "pexpire", "setex", "psetex", "set", "getex", "restore"}


def far_ttls(argv: list[bytes]) -> list[bytes]:
    out = argv[:2]
    for a in argv[2:]:
        v = _valid_int(a)
        out.append(str(v + 10**9).encode() if v is not None and 0 < v < 10**9 else a)
    return out


# Inputs that crash or abort vireo through bugs other branches of the hardening work are fixing
# (issue 14 / issue 20 findings). They are left out unless --include-pending, so a run finds
# what is new; remove an entry once its fix is merged.
PENDING_INPUTS: dict = {}


# The published reproductions of issues 14 and 20 (hostile input that crashed, aborted or hung
# vireo). Mixed into survival-only batches, so a regression of any of them fails the run. Those
# marked True go out only with --include-pending: the three random-draw ones each make vireo
# build a reply up to proto-max-bulk-len (512 MB) before refusing it, seconds of work (tens
# under the sanitizers) that tests/integration/test_hostile_args.py covers once.
ISSUE_REPROS = [
    (False, [[b"SORT_RO", b"l:small", b"BY", b"a", b"LIMIT", b"2", b"9223372036854775807"]]),
    (False, [[b"SORT", b"l:small", b"LIMIT", b"1", b"9223372036854775807", b"ALPHA"]]),
    (True, [[b"ZRANDMEMBER", b"z:small", b"-9223372036854775807"]]),
    (True, [[b"HRANDFIELD", b"h:small", b"-9223372036854775807"]]),
    (True, [[b"SRANDMEMBER", b"S:str", b"-9223372036854775807"]]),
    (False, [[b"XCLAIM", b"x:s", b"g1", b"c1", b"0", b"1-1", b"IDLE", b"-9223372036854775808"]]),
    (False, [[b"INCRBYFLOAT", b"s:float", b"1e308"], [b"INCRBYFLOAT", b"s:float", b"1e308"]]),
    (False, [[b"EVAL", b"return unpack({}, 0, 2147483647)", b"0"]]),
    (False, [[b"EVAL", b"return bit.tohex(65535, -2147483648)", b"0"]]),
    (False, [[b"EVAL", b"return struct.unpack('i0', 'abcd')", b"0"]]),
    (False, [[b"EVAL", b"return loadstring(string.dump(function() return 1 end))()", b"0"]]),
    (False, [[b"EVAL", b"local p = newproxy(true) getmetatable(p).__gc = function() error('x') end "
                      b"p = nil collectgarbage() return 1", b"0"]]),
]


def pubsub_unit(st: GenState) -> list[list[bytes]]:
    """Subscribed mode and back: (P|S)SUBSCRIBE to hostile channel names, a PING and a command
    subscribed mode refuses, then the matching unsubscribe-from-all. The fuzzer counts the
    replies each of these gets (argfuzz.reply_counts)."""
    rng = st.rng
    sub, unsub = rng.choice([(b"SUBSCRIBE", b"UNSUBSCRIBE"), (b"PSUBSCRIBE", b"PUNSUBSCRIBE"),
                             (b"SSUBSCRIBE", b"SUNSUBSCRIBE")])
    # SSUBSCRIBE takes channels of one slot; one channel keeps that true.
    n = 1 if sub == b"SSUBSCRIBE" else rng.randint(1, 3)
    chans = [gen_pattern(st) if sub == b"PSUBSCRIBE" else gen_string(st) for _ in range(n)]
    cmds = [[sub, *chans]]
    if rng.random() < 0.5:
        cmds.append([b"PING"] + ([gen_string(st)] if rng.random() < 0.5 else []))
    if rng.random() < 0.3:
        cmds.append([b"GET", gen_key(st)])  # refused in subscribed mode (RESP2)
    if rng.random() < 0.3:
        cmds.append([unsub, rng.choice(chans)])
    cmds.append([unsub])
    return cmds


def issue_repro(st: GenState) -> list[list[bytes]] | None:
    pending, cmds = st.rng.choice(ISSUE_REPROS)
    return None if pending and not st.include_pending else cmds


def apply_policy(st: GenState, entry: Entry, argv: list[bytes]) -> list[bytes] | None:
    argv = tame(st, entry, argv)
    if argv is None:
        return None
    name = entry.name
    if not st.include_pending and name in PENDING_INPUTS and PENDING_INPUTS[name](argv):
        return None
    if st.shared:
        argv = comparable_form(entry, argv)
    return argv


def comparable_form(entry: Entry, argv: list[bytes]) -> list[bytes] | None:
    """`argv` as a compared batch may send it, or None: nothing that makes Redis 7.0 write where
    vireo does not (or the other way round), so the two keyspaces stay in step."""
    name = entry.name
    if name == "debug" and len(argv) > 1 and argv[1].upper() == b"POPULATE":
        return None  # writes keys, and vireo has no DEBUG POPULATE
    if name == "bitop" and len(argv) > 1 and argv[1].upper() in NEWER_BITOPS:
        return None  # Redis 7.0 refuses the operation and leaves the destination alone
    newer = NEWER_OPTIONS.get(name)
    if newer and any(a.upper() in newer for a in argv[1:]):
        # Redis 7.0 refuses the option and leaves the key alone while vireo writes it. (From
        # argv[1]: XREAD takes options before its keys.)
        return None
    if any(NUL_NUMBER.match(a) for a in argv[1:]):
        return None
    if entry.redis_arity and not arity_ok(entry.redis_arity, len(argv)):
        # Where 7.0's arity differs from vireo's (7.2 added arguments), 7.0 refuses even in
        # MULTI, aborting the transaction vireo runs.
        if arity_ok(entry.arity, len(argv)):
            return None
    if (entry.blocking or name in TIMED or name in ("xread", "xreadgroup")) and any(
            _huge_number(a) for a in argv[1:]):
        # A timeout whose deadline overflows int64: 7.2 (and vireo) refuse it, 7.0 adds it to
        # its clock unchecked and may block for good.
        return None
    if name in RELATIVE_TTL:
        argv = far_ttls(argv)
    return argv


def _huge_number(a: bytes) -> bool:
    try:
        return abs(float(a)) >= 9.2e15
    except ValueError:
        return False


def tame(st: GenState, entry: Entry, argv: list[bytes]) -> list[bytes] | None:
    """Keep what would stop, reconfigure or block the server out of `argv` (None: skip it)."""
    name = entry.name
    rng = st.rng
    if st.in_tx and name == "reset":
        return None  # RESET runs at once even inside MULTI, so the queued timeouts would block
    if name == "debug":
        return gen_debug(st)
    if name in NEVER:
        return None
    up = [a.upper() for a in argv]
    if name == "config|set":
        return gen_config_set(st)
    if name == "hello":
        # RESP3 would change the reply framing under the fuzzer; any other version is fair.
        if len(argv) > 1 and argv[1].strip().lstrip(b"+").lstrip(b"0") == b"3":
            argv[1] = b"2"
        return argv
    if name in ("replicaof", "slaveof"):
        return [argv[0], b"NO", b"ONE"] if rng.random() < 0.5 else argv[:2]  # 1 arg: arity error
    if name in ("acl|setuser", "acl|deluser"):
        # Never lock the fuzzer's own user out.
        return [a if a != b"default" else b"fuzzuser" for a in argv]
    if name == "client|kill":
        # Only other, non-existent clients: SKIPME stays yes, the ID filter names no one.
        out = list(argv)
        for i, a in enumerate(up):
            if a == b"SKIPME" and i + 1 < len(out):
                out[i + 1] = b"yes"
        if len(out) == 3:  # the old "CLIENT KILL addr:port" form
            out[2] = b"10.255.255.1:1"
        return out
    if name == "client|pause":
        # Invalid timeouts must be refused; valid ones stay tiny (UNPAUSE follows each batch).
        if len(argv) > 2 and (_valid_int(argv[2]) or 0) > 0:
            argv[2] = b"1"
        return argv
    if name == "migrate":
        # A closed local port: the connection is refused at once.
        if len(argv) > 3:
            argv[1], argv[2] = b"127.0.0.1", b"1"
        return argv
    if name in ("wait", "waitaof") and not st.in_tx:
        if len(argv) > 2:
            v = _valid_int(argv[-1])
            if v is not None and v >= 0:
                argv[-1] = b"1"
        return argv
    if name in ("srandmember", "zrandmember", "hrandfield"):
        # A huge negative count makes Redis 7.0 stream ~2^63 elements; vireo's bound on that
        # count is another helper's fix. Keep counts the reference survives.
        if len(argv) > 2:
            v = _valid_int(argv[2])
            if v is not None and v < -100000:
                argv[2] = b"-100000"
        return argv
    if name == "lcs" and st.big_used:
        return None  # two 1 MB strings make Redis 7.0 allocate a 4 TB table and abort
    if name in ("xread", "xreadgroup") and not st.in_tx:
        # BLOCK with a valid timeout after "STREAMS k $" would block; handled by safe_timeout.
        return argv
    return argv


# Commands whose reply *class* legitimately differs from run to run (timing, background
# children, memory figures) or between two servers by design: no class comparison.
NO_COMPARE = {
    "bgsave", "bgrewriteaof", "save", "lastsave", "debug", "memory|doctor", "memory|stats",
    "memory|usage", "memory|malloc-stats", "memory|purge", "info", "latency|doctor",
    "latency|graph", "latency|histogram", "latency|latest", "latency|history", "latency|reset",
    "slowlog|get", "client|list", "client|info", "client|kill", "client|unblock",
    "object|freq", "object|idletime", "object|encoding", "command|docs", "command|info",
    "command|getkeys", "command|getkeysandflags", "command|list", "command|count", "command",
    "config|get", "acl|log", "acl|list", "acl|users", "acl|getuser", "acl|cat", "module|list",
    "time",
}


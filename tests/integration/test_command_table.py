"""The command table against Redis's: COMMAND INFO (arity, flags, key range, ACL categories, key
specs), COMMAND GETKEYSANDFLAGS and COMMAND DOCS arguments of every command both servers have,
so the table cannot drift. The reference is Debian's redis-server (7.0); vireo follows 7.2, so
the known 7.0 -> 7.2 differences are listed explicitly below. Skipped when redis-server is
absent."""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest
import redis

from conftest import start_server

# Commands checked against Redis 8.10's own table instead, and Valkey's DELIFEQ.
REDIS8_ROWS = {name for name in json.loads(
    (pathlib.Path(__file__).parent / "redis810_command_rows.json").read_text())
    if not name.startswith("_")} | {"delifeq"}
# Redis 8.12's sorted-set moves, after 8.10's table: checked in test_zset_moves.py.
REDIS8_ROWS |= {"zmove", "bzmove", "zmovemember"}
# Valkey 8.0-9.1's additions: checked against Valkey's table in test_valkey_additions.py.
REDIS8_ROWS |= {"script|show", "commandlog", "commandlog|get", "commandlog|help",
                "commandlog|len", "commandlog|reset"}

REDIS_SERVER = shutil.which("redis-server")
pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


def plain_client(handle):
    client = handle.client(decode_responses=True)
    client.response_callbacks.clear()
    return client


@pytest.fixture(scope="module")
def pair():
    vireo = start_server()
    reference = start_server(["--appendonly", "no"], binary=REDIS_SERVER)
    clients = (plain_client(vireo), plain_client(reference))
    yield clients
    for client in clients:
        client.close()
    for handle in (vireo, reference):
        handle.stop()
        handle.cleanup()


def as_dict(flat):
    return dict(zip(flat[0::2], flat[1::2]))


def key_spec(flat):
    spec = as_dict(flat)
    return {
        "notes": spec.get("notes", ""),
        "flags": sorted(spec["flags"]),
        "begin_search": {k: (as_dict(v) if k == "spec" else v)
                         for k, v in as_dict(spec["begin_search"]).items()},
        "find_keys": {k: (as_dict(v) if k == "spec" else v)
                      for k, v in as_dict(spec["find_keys"]).items()},
    }


def command_infos(client):
    """Every command and subcommand by full name ("config|get")."""
    out = {}

    def add(entry):
        name, arity, flags, first, last, step, cats, _tips, specs, subs = entry
        out[name] = {
            "arity": arity, "flags": sorted(flags), "first": first, "last": last, "step": step,
            "categories": sorted(cats), "key_specs": [key_spec(s) for s in specs],
        }
        for sub in subs:
            add(sub)

    for entry in client.execute_command("COMMAND"):
        add(entry)
    return out


# What Redis 7.2 declares where 7.0 (the reference binary) differs. vireo must show the 7.2 value.
KNOWN_72_CHANGES = {
    # 7.2 lets blocking commands run in scripts (as their non-blocking forms): NOSCRIPT dropped.
    "blmove": {"flags": ["blocking", "denyoom", "write"]},
    "blpop": {"flags": ["blocking", "write"]},
    "brpop": {"flags": ["blocking", "write"]},
    "brpoplpush": {"flags": ["blocking", "denyoom", "write"]},
    "bzpopmax": {"flags": ["blocking", "fast", "write"]},
    "bzpopmin": {"flags": ["blocking", "fast", "write"]},
    # 7.2 allows WAIT in scripts too.
    "wait": {"flags": []},
    # 7.2: COMMAND GETKEYS accepts a command without arguments (its own arity check follows).
    "command|getkeys": {"arity": -3},
    "command|getkeysandflags": {"arity": -3},
    # 7.2 added ZRANK/ZREVRANK ... WITHSCORE.
    "zrank": {"arity": -3},
    "zrevrank": {"arity": -3},
    # 7.2 serves the slot map while loading.
    "cluster|shards": {"flags": ["loading", "stale"]},
    "cluster|slots": {"flags": ["loading", "stale"]},
    # Redis 8.10 marks XREAD/XREADGROUP's key spec incomplete (a key named STREAMS can shift the
    # keyword), as its own table has it (test_command_table_redis8.py).
    **{name: {"key_specs": [{
        "notes": "", "flags": ["RO", "access", "incomplete"],
        "begin_search": {"type": "keyword", "spec": {"keyword": "STREAMS", "startfrom": start}},
        "find_keys": {"type": "range", "spec": {"lastkey": -1, "keystep": 1, "limit": 2}}}]}
       for name, start in (("xread", 1), ("xreadgroup", 4))},
}

# Commands Redis 7.0 lacks: 7.2 (WAITAOF, CLIENT NO-TOUCH, CLIENT SETINFO) and Redis 8.x stream
# additions. Key specs are given by their flags (all of these take one key at argv[1]).
RW_UPDATE = [["RW", "update"]]
RW_DELETE = [["RW", "delete"]]
HASH_W = ["@fast", "@hash", "@write"]
HASH_R = ["@fast", "@hash", "@read"]
EXPECTED_EXTRA = {
    # Redis 7.4 hash field expiration and the 8.0 HGETEX/HSETEX/HGETDEL.
    **{c: (-6, ["denyoom", "fast", "write"], 1, 1, 1, HASH_W, RW_UPDATE)
       for c in ("hexpire", "hpexpire", "hexpireat", "hpexpireat")},
    **{c: (-5, ["fast", "readonly"], 1, 1, 1, HASH_R, [["RO", "access"]])
       for c in ("httl", "hpttl", "hexpiretime", "hpexpiretime")},
    "hpersist": (-5, ["fast", "write"], 1, 1, 1, HASH_W, RW_UPDATE),
    "hgetdel": (-5, ["fast", "write"], 1, 1, 1, HASH_W, [["RW", "access", "delete"]]),
    "hgetex": (-5, ["fast", "write"], 1, 1, 1, HASH_W, [["RW", "access", "update"]]),
    "hsetex": (-6, ["denyoom", "fast", "write"], 1, 1, 1, HASH_W, RW_UPDATE),
    "client|no-touch": (3, ["loading", "noscript", "stale"], 0, 0, 0, ["@connection", "@slow"], []),
    "client|setinfo": (4, ["loading", "noscript", "stale"], 0, 0, 0, ["@connection", "@slow"], []),
    "waitaof": (4, ["noscript"], 0, 0, 0, ["@connection", "@slow"], []),
    "cluster|myshardid": (2, ["stale"], 0, 0, 0, ["@slow"], []),
    "xackdel": (-6, ["fast", "write"], 1, 1, 1, ["@fast", "@stream", "@write"], RW_DELETE),
    "xdelex": (-5, ["fast", "write"], 1, 1, 1, ["@fast", "@stream", "@write"], RW_DELETE),
    "xcfgset": (-2, ["fast", "write"], 1, 1, 1, ["@fast", "@stream", "@write"], RW_UPDATE),
    "xidmprecord": (5, ["denyoom", "fast", "write"], 1, 1, 1, ["@fast", "@stream", "@write"],
                    RW_UPDATE),
    "xnack": (-7, ["fast", "write"], 1, 1, 1, ["@fast", "@stream", "@write"], RW_UPDATE),
}


def test_command_info_matches_redis(pair):
    vireo, reference = map(command_infos, pair)
    mismatches = []
    for name in sorted(set(vireo) & set(reference)):
        expected = dict(reference[name], **KNOWN_72_CHANGES.get(name, {}))
        for field, value in expected.items():
            if vireo[name][field] != value:
                mismatches.append(f"{name} {field}: vireo {vireo[name][field]!r}, redis {value!r}")
    assert not mismatches, "\n".join(mismatches)


def test_commands_redis_70_lacks(pair):
    vireo, reference = map(command_infos, pair)
    # Redis 8's commands are checked against 8.10's table (test_command_table_redis8.py).
    assert set(vireo) - set(reference) - REDIS8_ROWS == set(EXPECTED_EXTRA)
    for name, (arity, flags, first, last, step, cats, spec_flags) in EXPECTED_EXTRA.items():
        info = vireo[name]
        got = (info["arity"], info["flags"], info["first"], info["last"], info["step"],
               info["categories"], [s["flags"] for s in info["key_specs"]])
        assert got == (arity, flags, first, last, step, cats, spec_flags), name
        for spec in info["key_specs"]:
            assert spec["begin_search"] == {"type": "index", "spec": {"index": 1}}
            assert spec["find_keys"] == {"type": "range",
                                         "spec": {"lastkey": 0, "keystep": 1, "limit": 0}}


# One call per shape of key spec (index, keyword, keynum, negative last key, limit, unknown,
# not_key, variable flags), plus malformed ones: COMMAND GETKEYSANDFLAGS must agree.
GETKEYS_CALLS = [
    "GET k", "SET k v", "SET k v GET", "BITFIELD k GET u8 0", "BITFIELD k OVERFLOW SAT GET u8 0",
    "BITFIELD k GET u8 0 SET u8 0 1", "BITFIELD k GET u8", "MSET a 1 b 2", "MGET a b c", "DEL a b", "RENAME a b",
    "COPY a b", "LMOVE a b LEFT RIGHT", "BLPOP a b 0", "BLMPOP 0 2 a b LEFT", "LMPOP 2 a b LEFT",
    "SINTERCARD 2 a b", "SINTERSTORE d a b", "SMOVE a b m", "ZUNIONSTORE d 2 a b",
    "ZUNION 2 a b", "ZINTERCARD 2 a b LIMIT 1", "ZRANGESTORE d s 0 1", "ZMPOP 1 a MIN",
    "BZMPOP 0 2 a b MAX", "XREAD COUNT 2 STREAMS s1 s2 0 0", "XREADGROUP GROUP g c STREAMS s >",
    "XADD s * f v", "XGROUP CREATE s g $", "XINFO STREAM s", "SORT k", "SORT k BY w* STORE d",
    "SORT_RO k", "EVAL s 2 a b x", "EVAL s 0", "EVALSHA s 1 a", "FCALL f 1 a", "FCALL_RO f 0",
    "SPUBLISH ch m", "SSUBSCRIBE a b", "OBJECT ENCODING k", "MEMORY USAGE k", "PFCOUNT a",
    "RESTORE k 0 x", "GETEX k PERSIST", "GETDEL k", "EXISTS a b", "TOUCH a", "LCS a b",
    "HSET h f v", "ZADD z 1 m", "BITCOUNT k", "DUMP k", "EXPIRE k 10", "WATCH a b",
    # Malformed: bad numkeys, too few arguments, keyword missing.
    "ZUNIONSTORE d x a", "EVAL s 5 a", "LMPOP 3 a LEFT", "XREAD STREAMS s", "XREAD COUNT 1",
    "GET", "PING",
]

# 7.2 takes COMMAND GETKEYS with the command alone (arity -3, 7.0 says -4), then checks the
# named command's own arity and keys.
KNOWN_72_GETKEYS = {
    "GET": "error: Invalid number of arguments specified for command",
    "PING": "error: The command has no key arguments",
    # Redis 8.10's incomplete XREAD/XREADGROUP key spec (see KNOWN_72_CHANGES).
    "XREAD COUNT 2 STREAMS s1 s2 0 0": [["s1", ["RO", "access", "incomplete"]],
                                        ["s2", ["RO", "access", "incomplete"]]],
    "XREADGROUP GROUP g c STREAMS s >": [["s", ["RO", "access", "incomplete"]]],
}


def getkeys(client, call):
    try:
        return client.execute_command("COMMAND", "GETKEYSANDFLAGS", *call.split())
    except redis.ResponseError as e:
        return f"error: {e}"


def test_getkeys_matches_redis(pair):
    vireo, reference = pair
    known = set(command_infos(vireo)) & set(command_infos(reference))
    mismatches = []
    for call in GETKEYS_CALLS:
        if call.split()[0].lower() not in known:
            continue
        got = getkeys(vireo, call)
        want = KNOWN_72_GETKEYS.get(call) or getkeys(reference, call)
        if got != want:
            mismatches.append(f"{call}: vireo {got!r}, redis {want!r}")
    assert not mismatches, "\n".join(mismatches)


def argument_tree(args):
    """Names, types, key spec indexes, tokens and flags of COMMAND DOCS arguments, nested ones
    included: what redis-cli's hints and client libraries read."""
    out = []
    for arg in args:
        d = as_dict(arg)
        out.append((d["name"], d["type"], d.get("key_spec_index"), d.get("token"),
                    tuple(sorted(d.get("flags", []))),
                    tuple(argument_tree(d.get("arguments", [])))))
    return out


def command_docs(client):
    """Every command's and subcommand's COMMAND DOCS map by full name, arguments as trees."""
    out = {}

    def add(name, doc):
        d = as_dict(doc)
        d["arguments"] = argument_tree(d.get("arguments", []))
        out[name] = d
        subs = d.pop("subcommands", [])
        for sub, sub_doc in zip(subs[0::2], subs[1::2]):
            add(sub, sub_doc)

    reply = client.execute_command("COMMAND", "DOCS")
    for name, doc in zip(reply[0::2], reply[1::2]):
        add(name, doc)
    return out


# Argument trees that differ from 7.0's, because the command's syntax changed after 7.0; vireo
# declares the 7.2.6 tree (checked against Redis 7.2.6's src/commands/*.json), or a later one
# where it has the later options. Summaries, since and complexity differ freely between
# versions and are not compared.
KNOWN_DOCS_DIFFERENCES = {
    # Changed in 7.2: renamed or retyped arguments and groups, lower-case tokens, blocks added
    # or dropped, key_spec_index on SORT's patterns and the new COMMAND GETKEYS optional
    # arguments, ZRANK WITHSCORE.
    "acl|cat", "bitcount", "bitfield", "bitfield_ro", "bitop", "bitpos", "client|kill",
    "client|list", "client|reply", "client|unblock", "cluster|addslotsrange",
    "cluster|delslotsrange", "cluster|meet", "cluster|reset", "cluster|setslot",
    "command|getkeys", "command|getkeysandflags", "config|get", "config|set", "flushall",
    "flushdb", "function|flush", "geoadd", "geohash", "geopos", "georadius", "georadius_ro",
    "georadiusbymember", "georadiusbymember_ro", "geosearch", "geosearchstore", "hello",
    "hmset", "hset", "lcs", "module|loadex", "mset", "msetnx", "pfmerge", "psubscribe",
    "script|flush", "shutdown", "sort", "sort_ro", "xadd", "xclaim", "xgroup|create",
    "xgroup|createconsumer", "xgroup|delconsumer", "xgroup|destroy", "xgroup|setid",
    "xinfo|consumers", "xinfo|stream", "xreadgroup", "xsetid", "zadd", "zrange",
    "zrangebylex", "zrangebyscore", "zrangestore", "zrank", "zrevrangebylex",
    "zrevrangebyscore", "zrevrank",
    # Later than 7.2 (options vireo has): CLIENT KILL MAXAGE (7.4), BITOP DIFF/DIFF1/ANDOR/ONE
    # (8.2), XADD/XTRIM KEEPREF/DELREF/ACKED and IDMP, XREADGROUP CLAIM (8.x).
    # MIGRATE: 7.2 names the oneofs, the AUTH2 block and the KEYS argument ("keys").
    "migrate",
    "xtrim",
    # SET IFEQ/IFNE/IFDEQ/IFDNE (8.4), HSCAN NOVALUES (7.4), Valkey's ZSCAN NOSCORES.
    "set", "hscan", "zscan",
    # AGGREGATE COUNT (8.8).
    "zunion", "zinter", "zunionstore", "zinterstore",
    # XREAD MAXCOUNT / MAXSIZE (8.10).
    "xread",
}


def test_command_docs_arguments_match_redis(pair):
    vireo, reference = map(command_docs, pair)
    common = set(vireo) & set(reference)
    differing = {name for name in common
                 if vireo[name]["arguments"] != reference[name]["arguments"]}
    # A fixed command must leave the list, so the list only shrinks.
    assert differing - KNOWN_DOCS_DIFFERENCES == set()
    assert (KNOWN_DOCS_DIFFERENCES & common) - differing == set()


# Deprecated in 7.2 (7.0 does not say so yet).
KNOWN_72_DEPRECATIONS = {"psetex", "quit", "setex", "setnx"}


def test_command_docs_notes_match_redis(pair):
    """doc_flags, deprecated_since, replaced_by as 7.0 has them (7.2's extra deprecations
    aside); history as 7.0's, followed by any 7.2 entries."""
    vireo, reference = map(command_docs, pair)
    mismatches = []
    for name in sorted(set(vireo) & set(reference)):
        got, want = vireo[name], reference[name]
        for field in ("doc_flags", "deprecated_since", "replaced_by"):
            if name in KNOWN_72_DEPRECATIONS:
                continue
            if got.get(field) != want.get(field):
                mismatches.append(f"{name} {field}: vireo {got.get(field)!r}, "
                                  f"redis {want.get(field)!r}")
        history, old = got.get("history", []), want.get("history", [])
        newer = history[len(old):]
        if history[:len(old)] != old or any(version < "7.1" for version, _ in newer):
            mismatches.append(f"{name} history: vireo {history!r}, redis {old!r}")
    assert not mismatches, "\n".join(mismatches)
    for name in KNOWN_72_DEPRECATIONS & set(vireo):
        assert vireo[name]["doc_flags"] == ["deprecated"], name
        assert vireo[name]["deprecated_since"] and vireo[name]["replaced_by"], name


ARG_TYPES = {"string", "integer", "double", "key", "pattern", "unix-time", "pure-token", "oneof",
             "block"}
UNBOUNDED = 10**9


def word_range(arg):
    """The fewest and most words an argument takes (tokens included)."""
    name, kind, _ksi, token, flags, subs = arg
    extra = 1 if token is not None and kind != "pure-token" else 0
    if kind == "oneof":
        low = extra + min(word_range(s)[0] for s in subs)
        high = extra + max(word_range(s)[1] for s in subs)
    elif kind == "block":
        low = extra + sum(word_range(s)[0] for s in subs)
        high = extra + sum(word_range(s)[1] for s in subs)
    else:
        low = high = extra + 1
    return (0 if "optional" in flags else low,
            UNBOUNDED if "multiple" in flags else min(high, UNBOUNDED))


# Redis declares DEBUG without arguments.
NO_ARGUMENTS_DECLARED = {"debug"}


def test_command_docs_self_consistent(pair):
    """Every command vireo has, including those 7.0 lacks: a well-formed argument tree whose key
    arguments name existing key specs, and whose length agrees with the arity (exact arity: the
    tree takes exactly that many words; at-least arity: it can take that many)."""
    vireo = command_docs(pair[0])
    infos = command_infos(pair[0])
    problems = []

    def check(name, args, specs):
        for arg in args:
            arg_name, kind, ksi, token, flags, subs = arg
            if not arg_name or kind not in ARG_TYPES:
                problems.append(f"{name}: bad argument {arg!r}")
            if kind == "pure-token" and token is None:
                problems.append(f"{name}: {arg_name} has no token")
            if (kind in ("oneof", "block")) != bool(subs) or (kind == "oneof" and len(subs) < 2):
                problems.append(f"{name}: {arg_name} {kind} with {len(subs)} arguments")
            if not set(flags) <= {"optional", "multiple", "multiple_token"}:
                problems.append(f"{name}: {arg_name} flags {flags}")
            if "multiple_token" in flags and (token is None or "multiple" not in flags):
                problems.append(f"{name}: {arg_name} multiple_token without a repeated token")
            if kind == "key" and specs and ksi is None:
                problems.append(f"{name}: key {arg_name} without key_spec_index")
            if ksi is not None and not 0 <= ksi < specs:
                problems.append(f"{name}: {arg_name} key_spec_index {ksi} of {specs} specs")
            check(name, subs, specs)

    for name, doc in vireo.items():
        info = infos[name]
        check(name, doc["arguments"], len(info["key_specs"]))
        if "|" not in name and any(sub.startswith(name + "|") for sub in vireo):
            continue  # a container: its subcommands carry the arguments
        if name in NO_ARGUMENTS_DECLARED:
            continue
        words = 2 if "|" in name else 1
        low = words + sum(word_range(a)[0] for a in doc["arguments"])
        high = min(UNBOUNDED, words + sum(word_range(a)[1] for a in doc["arguments"]))
        arity = info["arity"]
        fits = (low == high == arity) if arity > 0 else high >= -arity
        if not fits:
            problems.append(f"{name}: arity {arity}, arguments take {low}..{high} words")
    assert not problems, "\n".join(problems)

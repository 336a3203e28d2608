"""COMMAND and its subcommands: the command table as clients and redis-cli see it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
import redis

from conftest import wait_for

REPO = Path(__file__).resolve().parents[2]


def raw_call(r, *args):
    """A reply without redis-py's parsing (it turns COMMAND INFO and DOCS into dicts)."""
    conn = r.connection_pool.get_connection(args[0])
    try:
        conn.send_command(*args)
        return conn.read_response()
    finally:
        r.connection_pool.release(conn)


def as_dict(flat):
    return dict(zip(flat[0::2], flat[1::2]))


def docs_of(r, name):
    return as_dict(as_dict(raw_call(r, "COMMAND", "DOCS", name))[name.encode()])


def arg_tree(args):
    """COMMAND DOCS arguments as plain dicts, nested arguments included."""
    out = []
    for arg in args:
        d = {k.decode(): v for k, v in as_dict(arg).items()}
        d = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in d.items()}
        if "flags" in d:
            d["flags"] = [f.decode() for f in d["flags"]]
        if "arguments" in d:
            d["arguments"] = arg_tree(d["arguments"])
        out.append(d)
    return out


def hint(arg: dict) -> str:
    """redis-cli's rendering of one argument (cliAddArgument)."""
    kind, flags, token = arg["type"], arg.get("flags", []), arg.get("token", "")
    if kind == "oneof":
        body = "|".join(hint(a) for a in arg["arguments"])
    elif kind == "block":
        body = " ".join(hint(a) for a in arg["arguments"])
    elif kind == "pure-token":
        body = ""
    else:
        body = arg["name"]
    head = token + (" " if token and kind != "pure-token" else "")
    text = head + body
    if "multiple" in flags:
        text += " [" + (head if "multiple_token" in flags else "") + body + " ...]"
    return f"[{text}]" if "optional" in flags else text


def hints(r, name):
    return " ".join(hint(a) for a in arg_tree(docs_of(r, name).get(b"arguments", [])))


# ---------------------------------------------------------------------------------------------
# COMMAND DOCS


def test_docs_set_argument_tree(r):
    docs = docs_of(r, "set")
    assert docs[b"summary"] and docs[b"since"] == b"1.0.0" and docs[b"group"] == b"string"
    assert docs[b"complexity"] == b"O(1)"
    assert arg_tree(docs[b"arguments"]) == [
        {"name": "key", "type": "key", "key_spec_index": 0},
        {"name": "value", "type": "string"},
        {"name": "condition", "type": "oneof", "flags": ["optional"], "arguments": [
            {"name": "nx", "type": "pure-token", "token": "NX"},
            {"name": "xx", "type": "pure-token", "token": "XX"},
            {"name": "ifeq-value", "type": "string", "token": "IFEQ"},
            {"name": "ifne-value", "type": "string", "token": "IFNE"},
            {"name": "ifdeq-digest", "type": "string", "token": "IFDEQ"},
            {"name": "ifdne-digest", "type": "string", "token": "IFDNE"},
        ]},
        {"name": "get", "type": "pure-token", "token": "GET", "flags": ["optional"]},
        {"name": "expiration", "type": "oneof", "flags": ["optional"], "arguments": [
            {"name": "seconds", "type": "integer", "token": "EX"},
            {"name": "milliseconds", "type": "integer", "token": "PX"},
            {"name": "unix-time-seconds", "type": "unix-time", "token": "EXAT"},
            {"name": "unix-time-milliseconds", "type": "unix-time", "token": "PXAT"},
            {"name": "keepttl", "type": "pure-token", "token": "KEEPTTL"},
        ]},
    ]


@pytest.mark.parametrize("name, expected", [
    ("set", "key value [NX|XX|IFEQ ifeq-value|IFNE ifne-value|IFDEQ ifdeq-digest|"
            "IFDNE ifdne-digest] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|"
            "PXAT unix-time-milliseconds|KEEPTTL]"),
    ("get", "key"),
    ("del", "key [key ...]"),
    ("mset", "key value [key value ...]"),
    ("hello", "[protover [AUTH username password] [SETNAME clientname]]"),
    ("client|list", "[TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]"),
    ("client|reply", "ON|OFF|SKIP"),
    ("config|set", "parameter value [parameter value ...]"),
    ("command|list", "[FILTERBY MODULE module-name|ACLCAT category|PATTERN pattern]"),
    ("shutdown", "[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]"),
    ("slowlog|get", "[count]"),
    ("info", "[section [section ...]]"),
])
def test_docs_render_as_redis_cli_hints(r, name, expected):
    assert hints(r, name) == expected


def test_docs_arguments_are_well_formed_for_every_command(r):
    docs = as_dict(raw_call(r, "COMMAND", "DOCS"))
    assert len(docs) == r.command_count()

    def check(args):
        for arg in args:
            assert set(arg) <= {"name", "type", "display_text", "key_spec_index", "token", "flags",
                                "arguments"}
            assert arg["name"] and arg["type"] in (
                "key", "string", "integer", "double", "pattern", "unix-time", "pure-token",
                "oneof", "block"), arg
            # (MIGRATE's empty-key token is empty in Redis 7.0 and 7.2's replies alike.)
            if arg["type"] == "pure-token" and arg["name"] != "empty-string":
                assert arg["token"], arg
            if arg["type"] in ("oneof", "block"):
                assert len(arg["arguments"]) >= 1, arg
                check(arg["arguments"])
            assert set(arg.get("flags", [])) <= {"optional", "multiple", "multiple_token"}

    for name, doc in docs.items():
        doc = as_dict(doc)
        for field in (b"summary", b"since", b"group"):
            assert doc.get(field), (name, field)
        check(arg_tree(doc.get(b"arguments", [])))
        for sub, subdoc in as_dict(doc.get(b"subcommands", [])).items():
            assert sub.startswith(name + b"|")
            subdoc = as_dict(subdoc)
            assert subdoc[b"summary"] and subdoc[b"group"]
            check(arg_tree(subdoc.get(b"arguments", [])))


def test_docs_container_lists_subcommands(r):
    docs = docs_of(r, "config")
    assert docs[b"summary"] == b"A container for server configuration commands."
    subs = as_dict(docs[b"subcommands"])
    assert set(subs) == {b"config|get", b"config|set", b"config|resetstat", b"config|rewrite",
                         b"config|help"}
    assert as_dict(subs[b"config|get"])[b"since"] == b"2.0.0"


def test_docs_lookup_rules(r):
    assert raw_call(r, "COMMAND", "DOCS", "nosuchcommand") == []
    both = as_dict(raw_call(r, "COMMAND", "DOCS", "get", "nosuch", "SET"))
    assert set(both) == {b"get", b"set"}
    sub = as_dict(raw_call(r, "COMMAND", "DOCS", "client|kill"))
    assert list(sub) == [b"client|kill"]
    assert raw_call(r, "COMMAND", "DOCS", "get|foo") == []


def test_docs_resp3_shape(server):
    conn = server.raw()
    conn.execute("HELLO", "3")
    reply = conn.execute("COMMAND", "DOCS", "get")
    assert reply == (b"%1\r\n$3\r\nget\r\n%5\r\n$7\r\nsummary\r\n$34\r\n"
                     b"Returns the string value of a key.\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n"
                     b"$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n"
                     b"$9\r\narguments\r\n*1\r\n%3\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n"
                     b"$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n")
    # Argument flags are a set of status strings.
    assert b"$5\r\nflags\r\n~1\r\n+optional\r\n" in conn.execute("COMMAND", "DOCS", "ping")


# ---------------------------------------------------------------------------------------------
# COMMAND, COMMAND INFO, COUNT, LIST


def test_info_get_shape(raw):
    assert raw.execute("COMMAND", "INFO", "get") == (
        b"*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n"
        b"*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n"
        b"*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n"
        b"$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n"
        b"*2\r\n$5\r\nindex\r\n:1\r\n"
        b"$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n"
        b"*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n")


def test_info_resp3_uses_sets(raw):
    raw.execute("HELLO", "3")
    reply = raw.execute("COMMAND", "INFO", "ping")
    assert reply == (b"*1\r\n*10\r\n$4\r\nping\r\n:-1\r\n~1\r\n+fast\r\n:0\r\n:0\r\n:0\r\n"
                     b"~2\r\n+@fast\r\n+@connection\r\n~0\r\n~0\r\n~0\r\n")
    assert raw.execute("COMMAND", "INFO", "nosuch") == b"*1\r\n_\r\n"


def test_info_multiple_and_unknown(r):
    infos = raw_call(r, "COMMAND", "INFO", "get", "nosuch", "config|get")
    assert infos[0][0] == b"get"
    assert infos[1] is None
    assert infos[2][:6] == [b"config|get", -3, [b"admin", b"noscript", b"loading", b"stale"],
                            0, 0, 0]
    assert infos[2][6] == [b"@admin", b"@slow", b"@dangerous"]


def test_info_flags_and_keys(r):
    by_name = {i[0]: i for i in raw_call(r, "COMMAND", "INFO", "set", "mset", "shutdown",
                                         "client")}
    assert by_name[b"set"][1:7] == [-3, [b"write", b"denyoom"], 1, 1, 1,
                                    [b"@write", b"@string", b"@slow"]]
    assert by_name[b"mset"][3:6] == [1, -1, 2]
    assert by_name[b"shutdown"][2] == [b"admin", b"noscript", b"loading", b"stale", b"no_multi",
                                       b"allow_busy"]
    subs = {s[0] for s in by_name[b"client"][9]}
    assert {b"client|list", b"client|kill", b"client|setinfo", b"client|no-touch"} <= subs


def test_command_lists_every_command(r):
    everything = raw_call(r, "COMMAND")
    assert len(everything) == r.command_count()
    names = {c[0] for c in everything}
    assert {b"get", b"set", b"command", b"client", b"info"} <= names
    assert all(len(c) == 10 for c in everything)
    assert raw_call(r, "COMMAND", "INFO") == everything


def test_count(raw):
    assert re.fullmatch(rb":\d+\r\n", raw.execute("COMMAND", "COUNT"))
    assert raw.execute("COMMAND", "COUNT", "x") == (
        b"-ERR wrong number of arguments for 'command|count' command\r\n")


def test_list(r):
    names = raw_call(r, "COMMAND", "LIST")
    assert b"get" in names and b"config|get" in names and b"client|no-touch" in names
    assert len(names) == len(set(names))
    assert len([n for n in names if b"|" not in n]) == r.command_count()


def test_list_filters(r):
    assert sorted(raw_call(r, "COMMAND", "LIST", "FILTERBY", "PATTERN", "conf*")) == [
        b"config", b"config|get", b"config|help", b"config|resetstat", b"config|rewrite",
        b"config|set"]
    assert raw_call(r, "COMMAND", "LIST", "filterby", "pattern", "CLIENT|NO-*") == [
        b"client|no-evict", b"client|no-touch"]
    strings = raw_call(r, "COMMAND", "LIST", "FILTERBY", "ACLCAT", "string")
    assert b"get" in strings and b"set" in strings and b"ping" not in strings
    assert b"ping" in raw_call(r, "COMMAND", "LIST", "FILTERBY", "ACLCAT", "CONNECTION")
    assert raw_call(r, "COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuchcat") == []
    assert raw_call(r, "COMMAND", "LIST", "FILTERBY", "MODULE", "anything") == []


@pytest.mark.parametrize("args", [
    ("FILTERBY",), ("FILTERBY", "PATTERN"), ("FILTERBY", "NAME", "x"), ("foo",),
    ("FILTERBY", "PATTERN", "a", "extra"),
])
def test_list_syntax_errors(raw, args):
    assert raw.execute("COMMAND", "LIST", *args) == b"-ERR syntax error\r\n"


def test_unknown_subcommand(raw):
    assert raw.execute("COMMAND", "foo") == b"-ERR unknown subcommand 'foo'. Try COMMAND HELP.\r\n"


def test_help(r):
    lines = raw_call(r, "COMMAND", "HELP")
    assert lines[0] == b"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"GETKEYSANDFLAGS <full-command>" in lines
    assert lines[-2:] == [b"HELP", b"    Prints this help."]


# ---------------------------------------------------------------------------------------------
# GETKEYS, GETKEYSANDFLAGS


def test_getkeys(r):
    assert raw_call(r, "COMMAND", "GETKEYS", "SET", "a", "b") == [b"a"]
    assert raw_call(r, "COMMAND", "GETKEYS", "mset", "a", "1", "b", "2") == [b"a", b"b"]
    assert raw_call(r, "COMMAND", "GETKEYS", "del", "x", "y", "z") == [b"x", b"y", b"z"]
    assert raw_call(r, "COMMAND", "GETKEYSANDFLAGS", "get", "k") == [[b"k", [b"RO", b"access"]]]
    keys = raw_call(r, "COMMAND", "GETKEYSANDFLAGS", "del", "a", "b")
    assert [k for k, _ in keys] == [b"a", b"b"]


@pytest.mark.parametrize("args, error", [
    (("nosuch", "a"), "Invalid command specified"),
    (("ping", "x"), "The command has no key arguments"),
    (("config", "get", "x"), "The command has no key arguments"),
    (("get", "a", "b"), "Invalid number of arguments specified for command"),
    (("set", "a"), "Invalid number of arguments specified for command"),
])
def test_getkeys_errors(r, args, error):
    for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
        with pytest.raises(redis.ResponseError) as e:
            raw_call(r, "COMMAND", sub, *args)
        assert str(e.value) == error


def test_getkeys_arity(raw):
    assert raw.execute("COMMAND", "GETKEYS") == (
        b"-ERR wrong number of arguments for 'command|getkeys' command\r\n")


# ---------------------------------------------------------------------------------------------
# The table against Redis 7.2's list, and redis-cli's interactive hints


# Commands of later Redis versions that an issue asks for (issue 7: Redis 8.2-8.8 streams).
# Newer than 7.2: the 8.x stream commands and hash field expiration (7.4 / 8.0).
REDIS_8_COMMANDS = {"xackdel", "xdelex", "xcfgset", "xnack", "xidmprecord", "hexpire",
                    "hpexpire", "hexpireat", "hpexpireat", "httl", "hpttl", "hexpiretime",
                    "hpexpiretime", "hpersist", "hgetex", "hsetex", "hgetdel",
                    # Redis 8.4 - 8.12 and Valkey 9.0's DELIFEQ
                    "digest", "delex", "msetex", "increx", "delifeq", "sunioncard", "sdiffcard",
                    "bitrangeintarray"}
# Redis 8.10 - 8.12's list and sorted-set moves.
REDIS_8_COMMANDS |= {"lmovem", "blmovem", "zmove", "bzmove", "zmovemember"}
# Valkey 8.0-9.1's non-cluster additions (docs/valkey-additions.md).
REDIS_8_COMMANDS |= {"script|show", "commandlog", "commandlog|get", "commandlog|help",
                     "commandlog|len", "commandlog|reset"}


def test_every_command_is_a_redis_command(r):
    redis_names = set((REPO / "docs" / "redis-7.2-commands.txt").read_text().split())
    ours = {n.decode() for n in raw_call(r, "COMMAND", "LIST")}
    assert ours - redis_names - REDIS_8_COMMANDS == set()


@pytest.mark.skipif(shutil.which("tmux") is None or shutil.which("redis-cli") is None,
                    reason="needs tmux and redis-cli")
def test_redis_cli_shows_argument_hints(server):
    session = f"vireo-hints-{uuid.uuid4().hex[:8]}"
    env = dict(os.environ, REDISCLI_HISTFILE="/dev/null", REDISCLI_RCFILE="/dev/null")
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "220", "-y", "10",
                    f"redis-cli -p {server.port}"], check=True, env=env)
    try:
        def screen():
            return subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                                  capture_output=True, text=True).stdout

        wait_for(lambda: f":{server.port}>" in screen())
        subprocess.run(["tmux", "send-keys", "-t", session, "SET foo "], check=True)
        wait_for(lambda: "SET foo value [NX|XX|IFEQ ifeq-value|IFNE ifne-value" in screen(),
                 message="no SET hint")
        subprocess.run(["tmux", "send-keys", "-t", session, "C-u", "CLIENT LIST "], check=True)
        wait_for(lambda: "CLIENT LIST [TYPE NORMAL|MASTER|REPLICA|PUBSUB]" in screen(),
                 message="no CLIENT LIST hint")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def arg_names(args, prefix=""):
    """Dotted argument names, nested ones after their group ("range.start-slot")."""
    out = []
    for arg in args:
        out.append(prefix + arg["name"])
        out += arg_names(arg.get("arguments", []), prefix + arg["name"] + ".")
    return out


# Argument names as a Redis 7.2.6 server declares them where 7.0 named them otherwise (or vireo
# had them in upper case): redis-cli and client generators read these.
@pytest.mark.parametrize("name,expected", [
    ("client|tracking", ["status", "status.on", "status.off", "client-id", "prefix", "bcast",
                         "optin", "optout", "noloop"]),
    ("cluster|addslotsrange", ["range", "range.start-slot", "range.end-slot"]),
    ("cluster|delslotsrange", ["range", "range.start-slot", "range.end-slot"]),
    ("cluster|meet", ["ip", "port", "cluster-bus-port"]),
    ("cluster|reset", ["reset-type", "reset-type.hard", "reset-type.soft"]),
    ("cluster|setslot", ["slot", "subcommand", "subcommand.importing", "subcommand.migrating",
                         "subcommand.node", "subcommand.stable"]),
    ("latency|histogram", ["command"]),
    ("xack", ["key", "group", "id"]),
    ("xdel", ["key", "id"]),
    # MAXCOUNT and MAXSIZE: Redis 8.10.
    ("xread", ["count", "maxcount", "maxsize", "milliseconds", "streams", "streams.key",
               "streams.id"]),
])
def test_docs_argument_names_as_redis_72(r, name, expected):
    assert arg_names(arg_tree(docs_of(r, name)[b"arguments"])) == expected


def test_docs_migrate_keys_and_setslot_node_ids_as_redis_72(r):
    migrate = arg_tree(docs_of(r, "migrate")[b"arguments"])
    assert migrate[2]["arguments"][1] == {"name": "empty-string", "type": "pure-token",
                                          "token": ""}
    assert migrate[-1]["name"] == "keys" and migrate[-1]["display_text"] == "key"
    setslot = arg_tree(docs_of(r, "cluster|setslot")[b"arguments"])[1]["arguments"]
    assert [a.get("display_text") for a in setslot] == ["node-id"] * 3 + [None]
    assert "id" in arg_names(arg_tree(docs_of(r, "xclaim")[b"arguments"]))

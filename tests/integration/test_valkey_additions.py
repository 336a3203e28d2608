"""Valkey 8.0-9.1 additions vireo serves where Redis has no form of its own (issue 32, item 3):
replies, errors, ACL and COMMAND INFO rows as Valkey's src/commands/*.json declare them.
See docs/valkey-additions.md."""

from __future__ import annotations

import hashlib

from conftest import call_error, err


def sha1(body: str) -> str:
    return hashlib.sha1(body.encode()).hexdigest()


def info_row(plain, *name):
    entry = plain.execute_command("COMMAND", "INFO", "|".join(name))[0]
    assert entry is not None, f"{name} is not a command"
    _name, arity, flags, first, last, step, cats, _tips, specs, _subs = entry
    return {"arity": arity, "flags": sorted(flags), "keys": [first, last, step],
            "acl_categories": sorted(cats), "key_specs": specs}


# ---- SCRIPT SHOW (Valkey 8.0) -------------------------------------------------------------

def test_script_show_returns_the_cached_body(r, raw):
    body = "return 'hello'"
    sha = r.script_load(body)
    assert r.execute_command("SCRIPT", "SHOW", sha) == body.encode()
    # The digest is looked up without regard to case, as EVALSHA does.
    assert r.execute_command("SCRIPT", "SHOW", sha.upper()) == body.encode()
    # A script EVAL cached is shown too.
    r.eval("return 1", 0)
    assert r.execute_command("SCRIPT", "SHOW", sha1("return 1")) == b"return 1"
    raw.execute("HELLO", "3")
    assert raw.execute("SCRIPT", "SHOW", sha) == f"${len(body)}\r\n{body}\r\n".encode()


def test_script_show_errors(r, raw):
    missing = sha1("return 'never loaded'")
    assert err(raw, "SCRIPT", "SHOW", missing) == "NOSCRIPT No matching script."
    assert err(raw, "SCRIPT", "SHOW", "b534286061d4b06c06015ae8") == "NOSCRIPT No matching script."
    assert err(raw, "SCRIPT", "SHOW", "A" * 40) == "NOSCRIPT No matching script."
    sha = r.script_load("return 2")
    r.script_flush()
    assert err(raw, "SCRIPT", "SHOW", sha) == "NOSCRIPT No matching script."
    assert err(raw, "SCRIPT", "SHOW") == "ERR wrong number of arguments for 'script|show' command"
    assert err(raw, "SCRIPT", "SHOW", sha, "x") == \
        "ERR wrong number of arguments for 'script|show' command"


def test_script_show_in_help(r):
    help_lines = [line.decode() for line in r.execute_command("SCRIPT", "HELP")]
    assert "SHOW <sha1>" in help_lines


def test_script_show_acl(r):
    r.execute_command("ACL", "SETUSER", "noscript", "on", "nopass", "+@all", "-@scripting")
    r.execute_command("ACL", "SETUSER", "reader", "on", "nopass", "-@all", "+@read")
    sha = r.script_load("return 3")
    r.execute_command("AUTH", "noscript", "x")
    assert "no permissions to run the 'script|show'" in call_error(r, "SCRIPT", "SHOW", sha)
    r.execute_command("AUTH", "reader", "x")
    assert r.execute_command("SCRIPT", "SHOW", sha) == b"return 3"
    r.execute_command("AUTH", "default", "x")
    r.execute_command("ACL", "DELUSER", "noscript", "reader")


def test_script_show_command_info(plain):
    # valkey-io/valkey src/commands/script-show.json.
    assert info_row(plain, "script", "show") == {
        "arity": 3, "flags": ["noscript", "stale"], "keys": [0, 0, 0],
        "acl_categories": ["@keyspace", "@read", "@scripting", "@slow"], "key_specs": []}
    docs = plain.execute_command("COMMAND", "DOCS", "script|show")
    d = dict(zip(docs[1][0::2], docs[1][1::2]))
    assert d["since"] == "8.0.0" and d["group"] == "scripting"


# ---- COMMANDLOG (Valkey 8.1) --------------------------------------------------------------

def log_of(r, kind, count=-1):
    return r.execute_command("COMMANDLOG", "GET", count, kind)


def test_commandlog_large_request(r):
    r.config_set("commandlog-request-larger-than", 100)
    try:
        r.execute_command("COMMANDLOG", "RESET", "large-request")
        r.set("small", "x")
        r.set("k", "v" * 200)
        entries = log_of(r, "large-request")
        assert len(entries) == 1
        entry_id, ts, size, argv, peer, name = entries[0]
        # *3 $3 SET $1 k $200 <200 bytes>: the request's RESP size.
        assert size == 4 + 9 + 7 + 6 + 200 + 2
        assert argv == [b"SET", b"k", b"v" * 128 + b"... (72 more bytes)"]
        assert ts > 0 and b":" in peer and name == b""
        assert r.execute_command("COMMANDLOG", "LEN", "large-request") == 1
    finally:
        r.config_set("commandlog-request-larger-than", 1024 * 1024)


def test_commandlog_large_reply(r):
    r.set("k", "v" * 200)
    r.config_set("commandlog-reply-larger-than", 100)
    try:
        r.execute_command("COMMANDLOG", "RESET", "large-reply")
        r.client_setname("big-reader")
        r.get("k")
        r.get("nokey")
        entries = log_of(r, "large-reply", 10)
        assert [(e[2], e[3], e[5]) for e in entries] == [(208, [b"GET", b"k"], b"big-reader")]  # $200 CRLF, value, CRLF
        # Each log is reset alone.
        r.execute_command("COMMANDLOG", "RESET", "large-reply")
        assert r.execute_command("COMMANDLOG", "LEN", "large-reply") == 0
    finally:
        r.config_set("commandlog-reply-larger-than", 1024 * 1024)


def test_commandlog_disabled_and_max_len(r):
    r.config_set("commandlog-request-larger-than", 0)
    r.config_set("commandlog-large-request-max-len", 2)
    try:
        for i in range(5):
            r.set(f"k{i}", i)
        entries = log_of(r, "large-request")
        assert len(entries) == 2 and entries[0][0] > entries[1][0]
        r.config_set("commandlog-request-larger-than", -1)
        r.execute_command("COMMANDLOG", "RESET", "large-request")
        r.set("k", "v" * 5000)
        assert r.execute_command("COMMANDLOG", "LEN", "large-request") == 0
    finally:
        r.config_set("commandlog-request-larger-than", 1024 * 1024)
        r.config_set("commandlog-large-request-max-len", 128)
    assert r.config_get("commandlog-*") == {
        "commandlog-request-larger-than": "1048576", "commandlog-large-request-max-len": "128",
        "commandlog-reply-larger-than": "1048576", "commandlog-large-reply-max-len": "128",
        # Valkey's aliases of slowlog-log-slower-than and slowlog-max-len.
        "commandlog-execution-slower-than": "10000", "commandlog-slow-execution-max-len": "128"}


def test_commandlog_slow_is_the_slowlog(r):
    # Valkey's names of the slow log's options are aliases of Redis's.
    r.config_set("commandlog-execution-slower-than", 0)
    try:
        assert r.config_get("slowlog-log-slower-than") == {"slowlog-log-slower-than": "0"}
        r.slowlog_reset()
        r.set("a", "1")
        newest = log_of(r, "slow", 1)[0]
        assert newest[3] == [b"SET", b"a", b"1"]
        r.execute_command("COMMANDLOG", "RESET", "slow")
        assert r.slowlog_len() <= 1  # only the RESET itself may be logged
    finally:
        r.config_set("slowlog-log-slower-than", 10000)


def test_commandlog_errors(raw):
    assert err(raw, "COMMANDLOG", "GET", 1, "fast") == \
        "ERR type should be one of the following: slow, large-request, large-reply"
    assert err(raw, "COMMANDLOG", "LEN", "x") == \
        "ERR type should be one of the following: slow, large-request, large-reply"
    assert err(raw, "COMMANDLOG", "RESET", "x") == \
        "ERR type should be one of the following: slow, large-request, large-reply"
    # The count is checked before the type.
    assert err(raw, "COMMANDLOG", "GET", -2, "x") == \
        "ERR count should be greater than or equal to -1"
    assert err(raw, "COMMANDLOG", "GET", "abc", "slow") == \
        "ERR count should be greater than or equal to -1"
    assert err(raw, "COMMANDLOG", "GET", 1) == \
        "ERR wrong number of arguments for 'commandlog|get' command"
    assert err(raw, "COMMANDLOG", "LEN") == \
        "ERR wrong number of arguments for 'commandlog|len' command"
    assert err(raw, "COMMANDLOG", "FOO").startswith("ERR unknown subcommand 'FOO'")
    raw.execute("HELLO", "3")
    assert raw.execute("COMMANDLOG", "LEN", "LARGE-REPLY").startswith(b":")
    assert raw.execute("COMMANDLOG", "GET", "0", "slow") == b"*0\r\n"


def test_commandlog_help_and_acl(r):
    help_lines = [line.decode() for line in r.execute_command("COMMANDLOG", "HELP")]
    assert help_lines[0].startswith("COMMANDLOG <subcommand>")
    assert "GET <count> <type>" in help_lines and "RESET <type>" in help_lines
    r.execute_command("ACL", "SETUSER", "noadmin", "on", "nopass", "+@all", "-@admin")
    r.execute_command("AUTH", "noadmin", "x")
    assert "no permissions" in call_error(r, "COMMANDLOG", "LEN", "slow")
    assert r.execute_command("COMMANDLOG", "HELP")
    r.execute_command("AUTH", "default", "x")
    r.execute_command("ACL", "DELUSER", "noadmin")


def test_commandlog_command_info(plain):
    # valkey-io/valkey src/commands/commandlog*.json, as of 8.1 - 9.1 (9.2 made the arities
    # negative for its RECENCY | MAGNITUDE option).
    admin = ["@admin", "@dangerous", "@slow"]
    rows = {("get",): 4, ("len",): 3, ("reset",): 3}
    for (sub,), arity in rows.items():
        assert info_row(plain, "commandlog", sub) == {
            "arity": arity, "flags": ["admin", "loading", "stale"], "keys": [0, 0, 0],
            "acl_categories": admin, "key_specs": []}, sub
    assert info_row(plain, "commandlog", "help") == {
        "arity": 2, "flags": ["loading", "stale"], "keys": [0, 0, 0],
        "acl_categories": ["@slow"], "key_specs": []}
    assert info_row(plain, "commandlog")["arity"] == -2
    docs = plain.execute_command("COMMAND", "DOCS", "commandlog")
    d = dict(zip(docs[1][0::2], docs[1][1::2]))
    assert d["since"] == "8.1.0" and d["group"] == "server"

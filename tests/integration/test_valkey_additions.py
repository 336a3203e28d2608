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

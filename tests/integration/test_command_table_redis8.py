"""COMMAND INFO of the commands vireo took from Redis 8 against Redis 8.10's own table:
redis810_command_rows.json holds those rows of a real 8.10.0's COMMAND output (from
github:redis/docs data/commands_core.json): arity, flags, ACL categories, key specs. A command
Redis 7.2 already had (SET, HSCAN...) is compared too: 8.x changed its key specs or options."""

from __future__ import annotations

import json
import pathlib

import pytest

ROWS = {k: v for k, v in json.loads(
    (pathlib.Path(__file__).parent / "redis810_command_rows.json").read_text()).items()
    if not k.startswith("_")}


def as_dict(flat):
    return dict(zip(flat[0::2], flat[1::2]))


def info_row(plain, name):
    entry = plain.execute_command("COMMAND", "INFO", name)[0]
    assert entry is not None, f"{name} is not a command"
    _name, arity, flags, _first, _last, _step, cats, _tips, specs, _subs = entry
    key_specs = []
    for flat in specs:
        spec = as_dict(flat)
        key_specs.append({
            "flags": sorted(spec["flags"]),
            "begin_search": {k: (as_dict(v) if k == "spec" else v)
                             for k, v in as_dict(spec["begin_search"]).items()},
            "find_keys": {k: (as_dict(v) if k == "spec" else v)
                          for k, v in as_dict(spec["find_keys"]).items()},
        })
    return {"arity": arity, "flags": sorted(flags), "acl_categories": sorted(cats),
            "key_specs": key_specs}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_command_info_matches_redis_810(plain, name):
    expected = {k: v for k, v in ROWS[name].items() if k not in ("since", "arguments")}
    assert info_row(plain, name) == expected


def doc_args(flat):
    """COMMAND DOCS arguments as name, type, token, flags and nested arguments."""
    out = []
    for arg in flat:
        d = as_dict(arg)
        x = {"name": d["name"], "type": d["type"]}
        if "token" in d:
            x["token"] = d["token"]
        if d.get("flags"):
            x["flags"] = d["flags"]
        if "arguments" in d:
            x["arguments"] = doc_args(d["arguments"])
        out.append(x)
    return out


# ZSCAN's NOSCORES is Valkey's, so its tree is 8.10's plus that flag (not in the rows).
@pytest.mark.parametrize("name", sorted(n for n, row in ROWS.items() if "arguments" in row))
def test_command_docs_arguments_match_redis_810(plain, name):
    docs = as_dict(plain.execute_command("COMMAND", "DOCS", name)[1])
    assert doc_args(docs["arguments"]) == ROWS[name]["arguments"]


@pytest.mark.parametrize("name", sorted(n for n, row in ROWS.items() if row["since"] >= "7.4"))
def test_since_matches(plain, name):
    docs = plain.execute_command("COMMAND", "DOCS", name)
    assert as_dict(docs[1])["since"] == ROWS[name]["since"]


def test_valkey_delifeq(plain):
    # Valkey 9.0's table (valkey.io/commands/delifeq): not in Redis, so not in the rows above.
    assert info_row(plain, "delifeq") == {
        "arity": 3, "flags": ["fast", "write"], "acl_categories": ["@fast", "@string", "@write"],
        "key_specs": [{"flags": ["RW", "delete"],
                       "begin_search": {"type": "index", "spec": {"index": 1}},
                       "find_keys": {"type": "range",
                                     "spec": {"lastkey": 0, "keystep": 1, "limit": 0}}}]}

"""SUNIONCARD and SDIFFCARD (Redis 8.10): cardinalities of a union / difference without building
it, with LIMIT (and SUNIONCARD's APPROX, a HyperLogLog estimate), SINTERCARD's errors."""

from conftest import call_error, err


def test_sunioncard(r):
    r.sadd("key1", "a", "b", "c")
    r.sadd("key2", "c", "d", "e")
    r.sadd("ints", 1, 2, 3, "a")
    assert r.execute_command("SUNIONCARD", 2, "key1", "key2") == 5
    assert r.execute_command("SUNIONCARD", 2, "key1", "key2", "LIMIT", 3) == 3
    assert r.execute_command("SUNIONCARD", 2, "key1", "key2", "LIMIT", 0) == 5
    assert r.execute_command("SUNIONCARD", 2, "key1", "key2", "LIMIT", 100) == 5
    assert r.execute_command("SUNIONCARD", 3, "key1", "missing", "ints") == 6
    assert r.execute_command("SUNIONCARD", 2, "key1", "key1") == 3
    assert r.execute_command("SUNIONCARD", 1, "missing") == 0
    assert r.execute_command("SUNIONCARD", 2, "key1", "key2", "APPROX") == 5
    assert r.execute_command("SUNIONCARD", 2, "key1", "key2", "APPROX", "LIMIT", 2) == 2


def test_sunioncard_approx_is_close_on_large_sets(r):
    r.sadd("a", *range(0, 6000))
    r.sadd("b", *[f"m{i}" for i in range(3000)], *range(3000, 9000))
    exact = r.execute_command("SUNIONCARD", 2, "a", "b")
    assert exact == 12000 == len(r.sunion("a", "b"))
    approx = r.execute_command("SUNIONCARD", 2, "a", "b", "APPROX")
    assert abs(approx - exact) / exact < 0.05


def test_sdiffcard(r):
    r.sadd("key1", "a", "b", "c", "d")
    r.sadd("key2", "c")
    r.sadd("key3", "a", "x")
    assert r.execute_command("SDIFFCARD", 3, "key1", "key2", "key3") == 2
    assert r.execute_command("SDIFFCARD", 2, "key1", "missing") == 4
    assert r.execute_command("SDIFFCARD", 2, "key1", "key2", "LIMIT", 1) == 1
    assert r.execute_command("SDIFFCARD", 2, "key1", "key1") == 0
    assert r.execute_command("SDIFFCARD", 1, "missing") == 0
    assert r.execute_command("SDIFFCARD", 2, "missing", "key1") == 0
    assert r.scard("key1") == 4  # nothing stored or changed


def test_errors(raw):
    for cmd in ("SUNIONCARD", "SDIFFCARD"):
        assert err(raw, cmd, 1) == f"ERR wrong number of arguments for '{cmd.lower()}' command"
        assert err(raw, cmd, 0, "a") == "ERR numkeys should be greater than 0"
        assert err(raw, cmd, -1, "a") == "ERR numkeys should be greater than 0"
        assert err(raw, cmd, "x", "a") == "ERR numkeys should be greater than 0"
        assert err(raw, cmd, 3, "a", "b") == "ERR Number of keys can't be greater than number of args"
        assert err(raw, cmd, 1, "a", "LIMIT", -1) == "ERR LIMIT can't be negative"
        assert err(raw, cmd, 1, "a", "LIMIT", "x") == "ERR LIMIT can't be negative"
        assert err(raw, cmd, 1, "a", "LIMIT") == "ERR syntax error"
        assert err(raw, cmd, 1, "a", "FOO") == "ERR syntax error"
    assert err(raw, "SDIFFCARD", 1, "a", "APPROX") == "ERR syntax error"


def test_wrong_type(r):
    r.set("s", "x")
    r.sadd("set", "a")
    assert call_error(r, "SUNIONCARD", 2, "set", "s").startswith("WRONGTYPE")
    assert call_error(r, "SDIFFCARD", 2, "set", "s").startswith("WRONGTYPE")
    assert call_error(r, "SDIFFCARD", 2, "s", "set").startswith("WRONGTYPE")


def test_getkeys_and_read_only_in_scripts(r, plain):
    assert plain.execute_command("COMMAND", "GETKEYS", "SUNIONCARD", 2, "a", "b", "LIMIT", 1) == \
        ["a", "b"]
    assert plain.execute_command("COMMAND", "GETKEYS", "SDIFFCARD", 1, "a") == ["a"]
    r.sadd("a", 1, 2)
    r.sadd("b", 2, 3)
    assert r.eval_ro("return redis.call('SUNIONCARD', 2, KEYS[1], KEYS[2])", 2, "a", "b") == 3
    pipe = r.pipeline(transaction=True)
    pipe.execute_command("SDIFFCARD", 2, "a", "b")
    pipe.execute_command("SUNIONCARD", 2, "a", "b")
    assert pipe.execute() == [1, 3]

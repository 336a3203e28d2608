"""Scripting details from Redis 7.2's unit/scripting and unit/functions."""

import pytest
import redis

LIB = "#!lua name=mylib\nredis.register_function('MyFunc', function() return 'hello' end)"


def test_function_names_are_case_insensitive(r):
    r.function_load(LIB, replace=True)
    for name in ("MyFunc", "myfunc", "MYFUNC"):
        assert r.fcall(name, 0) == b"hello"
    # Library names are not: another library may not take the same function under another case.
    with pytest.raises(redis.ResponseError, match="already exists"):
        r.function_load("#!lua name=other\n"
                        "redis.register_function('myfunc', function() return 1 end)")
    # Deleting the library removes the function under every spelling.
    r.function_delete("mylib")
    with pytest.raises(redis.ResponseError, match="Function not found"):
        r.fcall("myfunc", 0)


def test_xread_block_error_names_the_command_as_called(r):
    r.xadd("s", {"a": 1})
    with pytest.raises(redis.ResponseError) as e:
        r.eval("return redis.pcall('xread','BLOCK',0,'STREAMS','s','$')", 1, "s")
    assert str(e.value).startswith("xread command is not allowed with BLOCK option from scripts")


def test_wait_from_a_script_does_not_block(r):
    assert r.eval("return redis.pcall('wait','1','0')", 0) == 0


def test_role_is_not_allowed_from_scripts(r):
    with pytest.raises(redis.ResponseError, match="not allowed from script"):
        r.eval("return redis.call('role')", 0)


def test_function_subcommand_syntax_errors(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("FUNCTION", "FLUSH", "SYNC", "extra")
    assert str(e.value) == ("unknown subcommand or wrong number of arguments for 'FLUSH'. "
                            "Try FUNCTION HELP.")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("FUNCTION", "restore", "a", "b", "c")
    assert str(e.value) == ("unknown subcommand or wrong number of arguments for 'restore'. "
                            "Try FUNCTION HELP.")
    with pytest.raises(redis.ResponseError, match="only supports SYNC|ASYNC"):
        r.execute_command("FUNCTION", "FLUSH", "bad")


def test_function_restore_clash_wording(r):
    r.function_flush()
    r.function_load(LIB, replace=True)
    dump = r.function_dump()
    with pytest.raises(redis.ResponseError) as e:
        r.function_restore(dump)
    assert str(e.value) == "Library mylib already exists"
    with pytest.raises(redis.ResponseError) as e:
        r.function_load(LIB)
    assert str(e.value) == "Library 'mylib' already exists"


def test_shebang_name_rules(r):
    with pytest.raises(redis.ResponseError) as e:
        r.function_load("#!lua name=foo name=bar\n"
                        "redis.register_function('foo', function() return 1 end)", replace=True)
    assert str(e.value) == "Invalid metadata value, name argument was given multiple times"
    assert r.function_load('#!lua name="quoted"\n'
                           "redis.register_function('qf', function() return 1 end)",
                           replace=True) == b"quoted"

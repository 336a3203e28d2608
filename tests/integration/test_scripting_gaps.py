"""Scripting details from Redis 7.2's unit/scripting and unit/functions."""

import socket

import pytest
import redis

from conftest import wait_for

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


def _error_stats(r):
    """errorstats, total_error_replies and (calls, rejected, failed) per command."""
    # (redis-py versions differ in parsing "count=1".)
    stats = {name: v if isinstance(v, str) else f"count={v['count']}"
             for name, v in r.info("errorstats").items()}
    stats["total"] = r.info("stats")["total_error_replies"]
    for name, v in r.info("commandstats").items():
        if name.startswith(("cmdstat_config", "cmdstat_info")):
            continue
        stats[name[len("cmdstat_"):]] = (v["calls"], v["rejected_calls"], v["failed_calls"])
    return stats


def _run_counting(r, *command):
    r.config_resetstat()
    try:
        reply = r.execute_command(*command)
    except redis.ResponseError as e:
        reply = "E:" + str(e).split(" ")[0]
    return reply, _error_stats(r)


def test_script_command_errors_count_once(r):
    # Expected numbers read off Redis 7.2.6 for the same sequences (unit/scripting "Consistent
    # eval error reporting"): a command's error counts where it happened, in errorstats and its
    # failed_calls, also when the script catches it; returning it doesn't count it again but
    # is the script's failure.
    r.set("Sicily", 1)
    caught = "local t = redis.pcall('lpush', KEYS[1], 1); return 7"
    assert _run_counting(r, "eval", caught, 1, "Sicily") == (7, {
        "errorstat_WRONGTYPE": "count=1", "total": 1,
        "lpush": (1, 0, 1), "eval": (1, 0, 0)})
    returned = "return redis.pcall('lpush', KEYS[1], 1)"
    assert _run_counting(r, "eval", returned, 1, "Sicily") == ("E:WRONGTYPE", {
        "errorstat_WRONGTYPE": "count=1", "total": 1,
        "lpush": (1, 0, 1), "eval": (1, 0, 1)})
    raised = "return redis.call('lpush', KEYS[1], 1)"
    sha = r.script_load(raised)
    assert _run_counting(r, "evalsha", sha, 1, "Sicily") == ("E:WRONGTYPE", {
        "errorstat_WRONGTYPE": "count=1", "total": 1,
        "lpush": (1, 0, 1), "evalsha": (1, 0, 1)})
    # A new error table built from the caught one is the script's own error: counted again.
    rebuilt = "local t = redis.pcall('lpush', KEYS[1], 1); return {err = t.err}"
    assert _run_counting(r, "eval", rebuilt, 1, "Sicily") == ("E:WRONGTYPE", {
        "errorstat_WRONGTYPE": "count=2", "total": 2,
        "lpush": (1, 0, 1), "eval": (1, 0, 1)})
    # Redis marks the caught table, and a script walking it sees the mark.
    fields = "local t = redis.pcall('lpush', KEYS[1], 1); return t['ignore_error_stats_update']"
    assert r.eval(fields, 1, "Sicily") == 1


def test_script_refused_commands_count_as_rejected(r):
    r.config_set("maxmemory", 1)
    try:
        caught = "local t = redis.pcall('set', KEYS[1], 'y'); return t['err']"
        assert _run_counting(r, "eval", caught, 1, "x") == (
            b"OOM command not allowed when used memory > 'maxmemory'.", {
                "errorstat_OOM": "count=1", "total": 1,
                "set": (0, 1, 0), "eval": (1, 0, 0)})
        raised = "return redis.call('set', KEYS[1], 'y')"
        assert _run_counting(r, "eval", raised, 1, "x") == ("E:OOM", {
            "errorstat_OOM": "count=1", "total": 1, "set": (0, 1, 0), "eval": (1, 0, 1)})
    finally:
        r.config_set("maxmemory", 0)
    read_only = "local t = redis.pcall('set', KEYS[1], 'y'); return 1"
    assert _run_counting(r, "eval_ro", read_only, 1, "x") == (1, {
        "errorstat_ERR": "count=1", "total": 1, "set": (0, 1, 0), "eval_ro": (1, 0, 0)})
    # An unknown command counts its error too (no command to reject), a wrong arity as a
    # rejected call; a bad argument type is only the script's own error.
    assert _run_counting(r, "eval", "redis.pcall('nosuch'); return 1", 0) == (1, {
        "errorstat_ERR": "count=1", "total": 1, "eval": (1, 0, 0)})
    assert _run_counting(r, "eval", "redis.pcall('get'); return 1", 0) == (1, {
        "errorstat_ERR": "count=1", "total": 1, "get": (0, 1, 0), "eval": (1, 0, 0)})
    assert _run_counting(r, "eval", "redis.pcall({}); return 1", 0) == (1, {
        "total": 0, "eval": (1, 0, 0)})


def test_function_command_errors_count_once(r):
    r.set("Sicily", 1)
    r.function_load("#!lua name=errs\n"
                    "redis.register_function('raised', function(k)\n"
                    "  return redis.call('lpush', k[1], 1) end)\n"
                    "redis.register_function('caught', function(k)\n"
                    "  redis.pcall('lpush', k[1], 1); return 7 end)\n", replace=True)
    assert _run_counting(r, "fcall", "raised", 1, "Sicily") == ("E:WRONGTYPE", {
        "errorstat_WRONGTYPE": "count=1", "total": 1,
        "lpush": (1, 0, 1), "fcall": (1, 0, 1)})
    assert _run_counting(r, "fcall", "caught", 1, "Sicily") == (7, {
        "errorstat_WRONGTYPE": "count=1", "total": 1,
        "lpush": (1, 0, 1), "fcall": (1, 0, 0)})


def _busy(client):
    """Whether the server answers BUSY (a script runs past busy-reply-threshold)."""
    try:
        client.ping()
        return False
    except redis.exceptions.ResponseError as e:
        return str(e).startswith("BUSY")


def _replicate(replica, master):
    replica.client().replicaof(master.host, master.port)
    info = master.client()
    wait_for(lambda: info.info("replication").get("slave0", {}).get("state") == "online")


def test_min_replicas_checks_only_a_scripts_first_write(server_factory):
    # Once a script has written, the replicas dropping can't fail it half-way (Redis's
    # SCRIPT_WRITE_DIRTY): its later writes go through.
    master = server_factory(["--repl-diskless-sync-delay", "0"])
    replica = server_factory()
    _replicate(replica, master)
    m = master.client()
    m.config_set("min-replicas-to-write", 1)
    m.config_set("busy-reply-threshold", 10)
    script = """
        redis.call('set', KEYS[1], 'script value')
        while true do
            local info = redis.call('info', 'replication')
            if string.match(info, 'connected_slaves:0') then
                redis.call('set', KEYS[1], 'after')
                break
            end
        end
        return 1"""
    runner = master.raw()
    runner.send_command("EVAL", script, "1", "x")
    probe = master.client()
    wait_for(lambda: _busy(probe))
    replica.client().replicaof("no", "one")
    assert runner.read_reply() == b":1\r\n"
    assert m.get("x") == b"after"
    # A script's first write still needs the replicas.
    with pytest.raises(redis.exceptions.ResponseError, match="NOREPLICAS"):
        m.eval("return redis.call('set', 'y', 1)", 0)


def test_exec_of_a_declared_writing_script_on_a_replica_aborts(server_factory):
    # A script whose shebang doesn't say no-writes makes its transaction a write: on a
    # read-only replica EXEC is refused whole, as in Redis.
    master = server_factory(["--repl-diskless-sync-delay", "0"])
    node = server_factory()
    c = node.raw()
    assert c.execute("MULTI") == b"+OK\r\n"
    assert c.execute("EVAL", "#!lua\nreturn 1", "0") == b"+QUEUED\r\n"
    ro = node.raw()
    assert ro.execute("MULTI") == b"+OK\r\n"
    assert ro.execute("EVAL", "#!lua flags=no-writes\nreturn 2", "0") == b"+QUEUED\r\n"
    _replicate(node, master)
    assert c.execute("EXEC").startswith(
        b"-EXECABORT Transaction discarded because of: READONLY You can't write")
    assert ro.execute("EXEC") == b"*1\r\n:2\r\n"


def test_keys_a_busy_script_made_ready_wait_for_its_end(server_factory):
    # Commands other clients may run while a script is busy (HELLO) must not serve the
    # waiters of a key the script pushed to: the waiter gets what the script leaves at its end.
    node = server_factory()
    r = node.client()
    waiter = node.raw()
    waiter.send_command("BLPOP", "x", "0")
    wait_for(lambda: r.info("clients")["blocked_clients"] == 1)
    r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
    r.config_set("busy-reply-threshold", 10)
    runner = node.raw()
    runner.send_command("EVAL", """
        redis.call('lpush', KEYS[1], 'y')
        while true do
            if string.find(redis.call('client', 'list'), 'abortscript') then break end
        end
        redis.call('lpush', KEYS[1], 'z')
        return 1""", "1", "x")
    probe = node.client()
    wait_for(lambda: _busy(probe))
    assert node.raw().execute("HELLO", "2", "SETNAME", "abortscript").startswith(b"*")
    assert waiter.read_reply() == b"*2\r\n$1\r\nx\r\n$1\r\nz\r\n"
    assert runner.read_reply() == b":1\r\n"
    r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0")


def test_shutdown_during_a_busy_script_refuses_reconnects(server_factory):
    # SHUTDOWN NOSAVE from a busy script's loop turn: once its connection closes, the server
    # takes no new connection (its listeners close first), as Redis's exit does.
    node = server_factory(["--busy-reply-threshold", "10"])
    runner = node.raw()
    runner.send_command("EVAL", "while true do end", "0")
    probe = node.client()
    wait_for(lambda: _busy(probe))
    node.expect_exit = True
    caller = node.raw()
    caller.send_command("SHUTDOWN", "NOSAVE")
    with pytest.raises(ConnectionError):
        caller.read_reply()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((node.host, node.port), timeout=5)
    node.proc.wait(10)


def test_scripts_on_a_stale_replica_need_allow_stale(server_factory):
    # replica-serve-stale-data no with the link down: a script runs only when it declares
    # allow-stale (one without a shebang declares nothing), and then reads no stale data.
    node = server_factory()
    r = node.client()
    r.config_set("replica-serve-stale-data", "no")
    sha = r.script_load("return 3")
    r.replicaof("127.0.0.1", "1")
    masterdown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
    for script in ("return 1", "#!lua flags=no-writes\nreturn 1"):
        with pytest.raises(redis.exceptions.ResponseError, match=masterdown):
            r.eval(script, 0)
    with pytest.raises(redis.exceptions.ResponseError, match=masterdown):
        r.evalsha(sha, 0)
    with pytest.raises(redis.exceptions.NoScriptError):
        r.evalsha("1" * 40, 0)
    assert r.eval("#!lua flags=allow-stale,no-writes\nreturn 2", 0) == 2
    assert r.eval("#!lua flags=allow-stale,no-writes\nreturn redis.call('echo', 'hi')", 0) == b"hi"
    with pytest.raises(redis.exceptions.ResponseError,
                       match="Can not execute the command on a stale replica script: "):
        r.eval("#!lua flags=allow-stale,no-writes\nreturn redis.call('get', 'x')", 1, "x")
    r.replicaof("no", "one")


def test_script_writes_after_select_replicate_to_their_database(server_factory):
    # The stream gets the script's SELECTs with its effects (and a SELECT back to the caller's
    # database after them), so the replica applies each write where the script made it.
    master = server_factory(["--repl-diskless-sync-delay", "0"])
    replica = server_factory()
    _replicate(replica, master)
    m = master.client()
    script = """
        redis.call('set', 'foo1', 'bar1')
        redis.call('select', '10')
        redis.call('incr', 'x')
        redis.call('select', '11')
        redis.call('incr', 'z')"""
    m.eval(script, 3, "foo1", "x", "z")
    m.eval(script, 3, "foo1", "x", "z")
    m.set("after", "1")  # the caller's database again
    offset = m.info("replication")["master_repl_offset"]
    r = replica.client()
    wait_for(lambda: r.info("replication")["slave_repl_offset"] == offset)
    assert r.get("foo1") == b"bar1" and r.get("after") == b"1"
    r10 = replica.client(db=10)
    r11 = replica.client(db=11)
    assert r10.get("x") == b"2" and r11.get("z") == b"2"
    assert r.dbsize() == 2

"""MONITOR's order: a command shows once it has run, so EXEC follows what it ran, and scripts
show before the commands they run, also when the script or function does not exist."""

import re

MONITOR_LINE = re.compile(rb'^\+\d+\.\d{6} \[\d+ [^\]]+\] (.*)\r\n$')


def watch(server):
    monitor = server.raw()
    assert monitor.execute("MONITOR") == b"+OK\r\n"
    return monitor


def next_command(monitor) -> bytes:
    line = monitor.read_reply()
    m = MONITOR_LINE.match(line)
    assert m, line
    return m.group(1)


def test_multi_exec_order(server):
    monitor = watch(server)
    c = server.raw()
    c.execute("MULTI")
    c.execute("SET", "foo", "bar")
    c.execute("INCR", "n")
    c.execute("EXEC")
    assert [next_command(monitor) for _ in range(4)] == [
        b'"MULTI"', b'"SET" "foo" "bar"', b'"INCR" "n"', b'"EXEC"']


def test_aborted_transaction_shows_multi_and_exec(server):
    monitor = watch(server)
    c = server.raw()
    c.execute("MULTI")
    assert c.execute("SYNTAX", "error").startswith(b"-ERR unknown command")
    assert c.execute("EXEC").startswith(b"-EXECABORT")
    assert [next_command(monitor) for _ in range(2)] == [b'"MULTI"', b'"EXEC"']


def test_unknown_script_and_function_are_shown(server):
    monitor = watch(server)
    c = server.raw()
    assert c.execute("EVALSHA", "a" * 40, "0").startswith(b"-NOSCRIPT")
    assert c.execute("FCALL", "nosuchfunction", "0") == b"-ERR Function not found\r\n"
    c.execute("ECHO", "end")
    assert next_command(monitor) == b'"EVALSHA" "' + b"a" * 40 + b'" "0"'
    assert next_command(monitor) == b'"FCALL" "nosuchfunction" "0"'
    assert next_command(monitor) == b'"ECHO" "end"'


def test_script_before_its_commands(server):
    monitor = watch(server)
    c = server.raw()
    c.execute("EVAL", "return redis.call('set', KEYS[1], 'v')", "1", "k")
    assert next_command(monitor).startswith(b'"EVAL"')
    line = next_command(monitor)
    assert line == b'"set" "k" "v"', line

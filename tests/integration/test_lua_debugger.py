"""The Lua debugger: SCRIPT DEBUG YES|SYNC|NO and the session protocol redis-cli --ldb speaks.

After SCRIPT DEBUG YES|SYNC, the client's next EVAL stops at its first line and the server
answers debugger commands (step, print, list, eval, redis, ...) with arrays of status lines,
written straight to the socket; "<endsession>" and the script's reply end the session and the
connection. YES runs the session in a forked child (the server goes on serving, the script's
writes are discarded); SYNC runs it in the server (which waits) and keeps the writes.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
import redis

from conftest import wait_for

SCRIPT = "local a = 1\nredis.call('set', KEYS[1], ARGV[1])\nreturn a\n"


def status_lines(reply: bytes) -> list[str]:
    """The status lines of a debugger array ("*N\\r\\n+line\\r\\n...")."""
    lines = reply.split(b"\r\n")
    assert lines[0].startswith(b"*"), reply
    n = int(lines[0][1:])
    out = [line[1:].decode() for line in lines[1: 1 + n]]
    assert all(line.startswith(b"+") for line in lines[1: 1 + n]), reply
    return out


def ldb(raw, *args) -> list[str]:
    return status_lines(raw.execute(*args))


def start_session(raw, mode: str, script: str = SCRIPT, *keys_and_args) -> list[str]:
    assert raw.execute("SCRIPT", "DEBUG", mode) == b"+OK\r\n"
    raw.send_command("EVAL", script, *keys_and_args)
    return status_lines(raw.read_reply())


def end_of_stream(raw) -> bool:
    raw.sock.settimeout(5)
    try:
        return raw.sock.recv(1) == b""
    except ConnectionError:
        return True


def test_script_debug_errors(server, raw):
    assert raw.execute("SCRIPT", "DEBUG", "MAYBE") == b"-ERR Use SCRIPT DEBUG YES/SYNC/NO\r\n"
    assert raw.execute("SCRIPT", "DEBUG", "NO") == b"+OK\r\n"
    # Replies still queued (a pipeline, a transaction's) would come after the session's lines.
    raw.send(raw.encode("PING") + raw.encode("SCRIPT", "DEBUG", "YES"))
    assert raw.read_reply() == b"+PONG\r\n"
    assert raw.read_reply() == b"-ERR SCRIPT DEBUG must be called outside a pipeline\r\n"
    assert raw.execute("MULTI") == b"+OK\r\n"
    assert raw.execute("SCRIPT", "DEBUG", "YES") == b"+QUEUED\r\n"
    assert raw.execute("EXEC") == (
        b"*1\r\n-ERR SCRIPT DEBUG must be called outside a pipeline\r\n")
    # Not from a script either (the command is no-script).
    assert raw.execute("EVAL", "return redis.call('script', 'debug', 'yes')", "0").startswith(
        b"-ERR This Redis command is not allowed from script")
    assert raw.execute("SCRIPT", "DEBUG", "YES") == b"+OK\r\n"
    assert raw.execute("EVALSHA", "a" * 40, "0") == (
        b"-ERR Please use EVAL instead of EVALSHA for debugging\r\n")
    assert raw.execute("SCRIPT", "DEBUG", "NO") == b"+OK\r\n"
    assert raw.execute("EVAL", "return 7", "0") == b":7\r\n"


def test_sync_session_protocol_and_writes_kept(server, raw, r):
    assert start_session(raw, "SYNC", SCRIPT, "1", "k", "v") == [
        "* Stopped at 1, stop reason = step over", "-> 1   local a = 1"]
    assert ldb(raw, "step") == [
        "* Stopped at 2, stop reason = step over",
        "-> 2   redis.call('set', KEYS[1], ARGV[1])"]
    assert ldb(raw, "print") == ["<value> a = 1"]
    assert ldb(raw, "print", "KEYS") == ['<value> {"k"}']
    assert ldb(raw, "print", "nope") == ["No such variable."]
    assert ldb(raw, "list", "2", "1") == [
        "   1   local a = 1", "-> 2   redis.call('set', KEYS[1], ARGV[1])", "   3   return a"]
    # In a frame of its own: the script's locals are not visible there.
    assert ldb(raw, "eval", "1", "+", "41") == ["<retval> 42"]
    assert ldb(raw, "eval", "a") == [
        "<error> ldb_eval:1: Script attempted to access nonexistent global variable 'a'"]
    assert ldb(raw, "eval", "(") == ["<error> ldb_eval:1: unexpected symbol near '<eof>'"]
    assert ldb(raw, "break", "3") == [
        "-> 2   redis.call('set', KEYS[1], ARGV[1])", "  #3   return a"]
    assert ldb(raw, "break") == ["1 breakpoints set:", "  #3   return a"]
    assert ldb(raw, "break", "9") == ["Wrong line number."]
    assert ldb(raw, "redis", "ping") == ["<redis> ping", '<reply> "+PONG"']
    assert ldb(raw, "redis", "nosuch") == [
        "<redis> nosuch", "<error> Unknown Redis command called from script"]
    assert ldb(raw, "maxlen", "10") == ["<value> replies are truncated at 60 bytes."]
    assert ldb(raw, "maxlen", "0") == ["<value> replies are unlimited."]
    assert ldb(raw, "trace") == ["In top level:", "-> 2   redis.call('set', KEYS[1], ARGV[1])"]
    assert ldb(raw, "frobnicate") == [
        "<error> Unknown Redis Lua debugger command or wrong number of arguments."]
    assert ldb(raw, "help")[0] == "Redis Lua debugger help:"
    # Continue runs to the breakpoint; stepping logged the command and its reply.
    assert ldb(raw, "step") == [
        "<redis> set k v", '<reply> "+OK"',
        "* Stopped at 3, stop reason = break point", "->#3   return a"]
    assert ldb(raw, "continue") == ["<endsession>"]
    assert raw.read_reply() == b":1\r\n"
    assert end_of_stream(raw)
    assert r.get("k") == b"v"  # sync mode keeps the script's writes


def test_async_session_serves_others_and_discards_writes(server, raw, r):
    r.set("k", "old")
    assert start_session(raw, "YES", SCRIPT, "1", "k", "new")[0] == (
        "* Stopped at 1, stop reason = step over")
    # The session waits for the debugger: everyone else is served meanwhile.
    other = server.client()
    assert other.ping() is True
    assert ldb(raw, "next")[0] == "* Stopped at 2, stop reason = step over"
    assert ldb(raw, "step")[:2] == ["<redis> set k new", '<reply> "+OK"']
    assert ldb(raw, "redis", "get", "k") == ["<redis> get k", '<reply> "new"']
    assert other.get("k") == b"old"
    assert ldb(raw, "c") == ["<endsession>"]
    assert raw.read_reply() == b":1\r\n"
    assert end_of_stream(raw)
    assert other.get("k") == b"old"  # the child's writes died with it
    other.close()


def test_debug_and_breakpoint_calls(server, raw):
    script = "redis.debug('hi', 1, {1, 'x'}, {a = true})\nredis.breakpoint()\nlocal b = 2\nreturn b"
    start_session(raw, "SYNC", script, "0")
    assert ldb(raw, "continue") == [
        '<debug> line 1: "hi", 1, {1; "x"}, {["a"]=true}',
        "* Stopped at 3, stop reason = redis.breakpoint() called",
        "-> 3   local b = 2"]
    assert ldb(raw, "c") == ["<endsession>"]
    assert raw.read_reply() == b":2\r\n"
    # Outside a session both do nothing.
    r2 = server.client()
    assert r2.eval("redis.debug('x'); return redis.breakpoint()", 0) is None
    r2.close()


def test_abort_and_protocol_errors(server, raw):
    start_session(raw, "SYNC", "return 1", "0")
    assert ldb(raw, "abort") == ["<endsession>"]
    reply = raw.read_reply()
    assert reply.startswith(b"-ERR script aborted for user request script: "), reply
    assert reply.endswith(b", on @user_script:1.\r\n"), reply
    assert end_of_stream(raw)


def test_arguments_of_nul_bytes_are_unknown_commands(server, raw):
    start_session(raw, "SYNC", "return 'hello'", "0")
    for arg in (b"hello\0world", b"hello\0", b"\0hello"):
        assert ldb(raw, arg) == [
            "<error> Unknown Redis Lua debugger command or wrong number of arguments."]
    raw.send(b"*101\r\n$5\r\nredis\r\n" + b"$4\r\ntest\r\n" * 100)
    lines = status_lines(raw.read_reply())
    assert lines == ["<redis>" + " test" * 10 + " ... (89 more)",
                     "<error> Unknown Redis command called from script"]
    assert ldb(raw, "c") == ["<endsession>"]
    assert raw.read_reply() == b'$5\r\nhello\r\n'


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli is not installed")
@pytest.mark.parametrize("sync", [False, True])
def test_redis_cli_ldb(server, r, tmp_path, sync):
    r.set("k", "old")
    script = tmp_path / "s.lua"
    script.write_text("local a = 1\nredis.call('set', KEYS[1], ARGV[1])\nredis.debug('hi', a)\n"
                      "return a\n")
    cmd = ["redis-cli", "-p", str(server.port), "--ldb", "--eval", str(script), "k", ",", "new"]
    if sync:
        cmd.insert(3, "--ldb-sync-mode")
    out = subprocess.run(cmd, input="step\nprint\ncontinue\n", capture_output=True, text=True,
                         timeout=20).stdout
    for text in ("* Stopped at 1, stop reason = step over", "-> 1   local a = 1",
                 "* Stopped at 2, stop reason = step over", "<value> a = 1",
                 '<debug> line 3: "hi", 1', "(integer) 1"):
        assert text in out, out
    if sync:
        assert "(Lua debugging session ended)" in out, out
        assert r.get("k") == b"new"
    else:
        assert "(Lua debugging session ended -- dataset changes rolled back)" in out, out
        assert r.get("k") == b"old"

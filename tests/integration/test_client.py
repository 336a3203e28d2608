"""CLIENT subcommands and MONITOR: replies, CLIENT LIST's line format, killing connections."""

from __future__ import annotations

import re
import socket

import pytest
import redis

from conftest import RawConnection, wait_for

# Redis 7.2's CLIENT LIST / CLIENT INFO fields, in order.
CLIENT_FIELDS = [
    "id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub", "ssub",
    "multi", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem",
    "tot-mem", "events", "cmd", "user", "redir", "resp", "lib-name", "lib-ver",
]


def parse_line(line: str) -> dict:
    return dict(field.split("=", 1) for field in line.split(" "))


def client_line(raw) -> dict:
    """CLIENT INFO over a raw connection, parsed."""
    reply = raw.execute("CLIENT", "INFO")
    assert reply.startswith(b"$") and reply.endswith(b"\n\r\n")
    return parse_line(reply.split(b"\r\n", 1)[1][:-3].decode())


def list_by_id(r) -> dict:
    return {int(c["id"]): c for c in r.client_list()}


def assert_closed(conn, timeout=5.0):
    """The server closed `conn`: reading gives EOF (or a reset)."""
    conn.settimeout(timeout)
    try:
        data = conn.sock.recv(1024)
    except ConnectionResetError:
        return
    assert data == b"", data


# ---------------------------------------------------------------------------------------------
# ID, SETNAME, GETNAME, INFO, LIST


def test_client_id_is_unique_and_matches_list(server, r):
    other = server.client()
    a, b = r.client_id(), other.client_id()
    assert isinstance(a, int) and a > 0 and a != b
    assert {a, b} <= set(list_by_id(r))


def test_setname_getname(r):
    assert r.client_getname() is None
    assert r.client_setname("worker-1") is True
    assert r.client_getname() == "worker-1"
    assert r.client_info()["name"] == "worker-1"
    # The empty name clears it.
    assert r.client_setname("") is True
    assert r.client_getname() is None


@pytest.mark.parametrize("name", ["a b", "a\nb", "tab\there", "caf\xe9", "\x7f"])
def test_setname_rejects_special_characters(r, name):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CLIENT", "SETNAME", name)
    assert str(e.value) == "Client names cannot contain spaces, newlines or special characters."


def test_client_info_fields_in_order(raw, server):
    raw.execute("CLIENT", "SETNAME", "inspector")
    reply = raw.execute("CLIENT", "INFO")
    line = reply.split(b"\r\n", 1)[1][:-3].decode()
    assert [f.split("=", 1)[0] for f in line.split(" ")] == CLIENT_FIELDS
    info = parse_line(line)
    assert info["name"] == "inspector"
    assert info["laddr"] == f"127.0.0.1:{server.port}"
    assert re.fullmatch(r"127\.0\.0\.1:\d+", info["addr"])
    assert info["flags"] == "N"
    assert info["db"] == "0"
    assert info["multi"] == "-1"
    assert info["cmd"] == "client|info"
    assert info["user"] == "default"
    assert info["redir"] == "-1"
    assert info["resp"] == "2"
    assert info["lib-name"] == "" and info["lib-ver"] == ""
    for numeric in ("id", "fd", "age", "idle", "qbuf", "qbuf-free", "argv-mem", "multi-mem",
                    "rbs", "rbp", "obl", "oll", "omem", "tot-mem"):
        assert int(info[numeric]) >= 0, numeric


def test_client_info_resp3_is_verbatim(raw):
    raw.execute("HELLO", "3")
    reply = raw.execute("CLIENT", "INFO")
    assert reply.startswith(b"=")
    header, body = reply.split(b"\r\n", 1)
    assert int(header[1:]) == len(body) - 2
    assert body.startswith(b"txt:id=") and body.endswith(b"\n\r\n")
    assert b" resp=3 " in body


def test_client_list_resp3_is_verbatim(raw):
    raw.execute("HELLO", "3")
    reply = raw.execute("CLIENT", "LIST")
    assert reply.startswith(b"=") and b"txt:id=" in reply


def test_client_list_every_line_has_all_fields(server, r):
    others = [server.client() for _ in range(3)]
    for o in others:
        o.ping()
    clients = r.client_list()
    assert len(clients) >= 4
    for c in clients:
        assert list(c) == CLIENT_FIELDS
    mine = [c for c in clients if int(c["id"]) == r.client_id()]
    assert mine[0]["cmd"] == "client|list"


def test_client_list_shows_db_and_last_command(server, r):
    other = server.raw()
    other.execute("SELECT", "3")
    other.execute("SET", "k", "v")
    other_id = int(other.execute("CLIENT", "ID")[1:-2])
    other.execute("GET", "k")
    entry = list_by_id(r)[other_id]
    assert entry["db"] == "3"
    assert entry["cmd"] == "get"


def test_client_list_by_id(server, r):
    other = server.client()
    my_id, other_id = r.client_id(), other.client_id()
    listed = r.execute_command("CLIENT", "LIST", "ID", other_id, my_id)
    ids = [int(parse_line(line)["id"]) for line in listed.decode().splitlines()]
    assert ids == [other_id, my_id]
    # Ids that match nobody are skipped, not errors.
    assert r.execute_command("CLIENT", "LIST", "ID", 999999) == b""
    assert r.execute_command("CLIENT", "LIST", "ID", 0) == b""


def test_client_list_by_type(server, r):
    normal = {int(c["id"]) for c in r.client_list(_type="normal")}
    assert r.client_id() in normal
    assert r.client_list(_type="pubsub") == []
    assert r.client_list(_type="master") == []
    assert r.client_list(_type="replica") == []
    assert r.execute_command("CLIENT", "LIST", "TYPE", "SLAVE") == b""


@pytest.mark.parametrize("args, error", [
    (("TYPE", "foo"), "Unknown client type 'foo'"),
    (("ID", "abc"), "Invalid client ID"),
    (("ID", "1", "x"), "Invalid client ID"),
    (("ID",), "syntax error"),
    (("TYPE",), "syntax error"),
    (("TYPE", "normal", "extra"), "syntax error"),
    (("foo", "bar"), "syntax error"),
])
def test_client_list_errors(r, args, error):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CLIENT", "LIST", *args)
    assert str(e.value) == error


def test_client_flags(server, r):
    watcher = server.raw()
    watcher_id = int(watcher.execute("CLIENT", "ID")[1:-2])
    assert list_by_id(r)[watcher_id]["flags"] == "N"
    watcher.execute("MULTI")
    watcher.execute("PING")
    entry = list_by_id(r)[watcher_id]
    assert entry["flags"] == "x"
    assert entry["multi"] == "1"
    assert int(entry["multi-mem"]) > 0
    watcher.execute("DISCARD")
    watcher.execute("WATCH", "wk")
    r.set("wk", "changed")  # the watched key is now dirty
    assert list_by_id(r)[watcher_id]["flags"] == "d"
    watcher.execute("MULTI")
    assert list_by_id(r)[watcher_id]["flags"] == "xd"
    watcher.execute("DISCARD")
    assert watcher.execute("CLIENT", "NO-EVICT", "on") == b"+OK\r\n"
    assert watcher.execute("CLIENT", "NO-TOUCH", "ON") == b"+OK\r\n"
    assert list_by_id(r)[watcher_id]["flags"] == "eT"
    assert watcher.execute("CLIENT", "NO-EVICT", "OFF") == b"+OK\r\n"
    assert watcher.execute("CLIENT", "NO-TOUCH", "off") == b"+OK\r\n"
    assert list_by_id(r)[watcher_id]["flags"] == "N"
    watcher.execute("MONITOR")
    assert list_by_id(r)[watcher_id]["flags"] == "O"


@pytest.mark.parametrize("sub", ["NO-EVICT", "NO-TOUCH"])
def test_no_evict_no_touch_syntax(r, sub):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CLIENT", sub, "maybe")
    assert str(e.value) == "syntax error"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CLIENT", sub)
    assert str(e.value) == f"wrong number of arguments for 'client|{sub.lower()}' command"


# ---------------------------------------------------------------------------------------------
# SETINFO


def test_setinfo(raw):
    assert raw.execute("CLIENT", "SETINFO", "LIB-NAME", "redis-py") == b"+OK\r\n"
    assert raw.execute("CLIENT", "SETINFO", "lib-ver", "4.3.4") == b"+OK\r\n"
    info = client_line(raw)
    assert info["lib-name"] == "redis-py" and info["lib-ver"] == "4.3.4"
    assert raw.execute("CLIENT", "SETINFO", "lib-name", "") == b"+OK\r\n"
    assert client_line(raw)["lib-name"] == ""


def test_setinfo_errors(raw):
    assert raw.execute("CLIENT", "SETINFO", "lib-name", "a b") == (
        b"-ERR lib-name cannot contain spaces, newlines or special characters.\r\n")
    assert raw.execute("CLIENT", "SETINFO", "LIB-VER", "1\n2") == (
        b"-ERR LIB-VER cannot contain spaces, newlines or special characters.\r\n")
    assert raw.execute("CLIENT", "SETINFO", "foo", "x") == b"-ERR Unrecognized option 'foo'\r\n"
    assert raw.execute("CLIENT", "SETINFO", "lib-name") == (
        b"-ERR wrong number of arguments for 'client|setinfo' command\r\n")


# ---------------------------------------------------------------------------------------------
# KILL


def test_kill_old_form_closes_the_other_connection(server, r):
    victim = server.raw()
    addr = client_line(victim)["addr"]
    assert r.client_kill(addr) is True
    assert_closed(victim)
    wait_for(lambda: addr not in [c["addr"] for c in r.client_list()])


def test_kill_old_form_unknown_address(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CLIENT", "KILL", "1.2.3.4:5")
    assert str(e.value) == "No such client"


def test_kill_by_id(server, r):
    victim = server.raw()
    victim_id = int(client_line(victim)["id"])
    assert r.execute_command("CLIENT", "KILL", "ID", victim_id) == 1
    assert_closed(victim)
    assert r.execute_command("CLIENT", "KILL", "ID", victim_id) == 0


def test_kill_by_addr_and_laddr(server, r):
    victim = server.raw()
    info = client_line(victim)
    assert r.execute_command("CLIENT", "KILL", "ADDR", info["addr"]) == 1
    assert_closed(victim)
    # LADDR matches every connection to the server's address; SKIPME (default yes) spares us.
    a, b = server.raw(), server.raw()
    a.execute("PING")
    b.execute("PING")
    killed = r.execute_command("CLIENT", "KILL", "LADDR", f"127.0.0.1:{server.port}")
    assert killed >= 2
    assert_closed(a)
    assert_closed(b)
    assert r.ping() is True


def test_kill_by_type_and_user(server, r):
    victim = server.raw()
    victim.execute("PING")
    assert r.execute_command("CLIENT", "KILL", "TYPE", "normal", "USER", "default") >= 1
    assert_closed(victim)
    assert r.ping() is True
    assert r.execute_command("CLIENT", "KILL", "TYPE", "pubsub") == 0
    assert r.execute_command("CLIENT", "KILL", "TYPE", "master") == 0


def test_kill_by_acl_user(server, r):
    # An ACL user's connections are killed by name; an unknown name is an error.
    r.execute_command("ACL", "SETUSER", "user_to_kill", "on", "nopass", "+@all", "~*")
    assert r.execute_command("CLIENT", "KILL", "USER", "user_to_kill") == 0
    victim = server.raw()
    victim.execute("AUTH", "user_to_kill", "any")
    assert r.execute_command("CLIENT", "KILL", "USER", "user_to_kill") == 1
    assert_closed(victim)
    with pytest.raises(redis.ResponseError, match="No such user 'nobody'"):
        r.execute_command("CLIENT", "KILL", "USER", "nobody")


def test_kill_maxage(server, r):
    victim = server.raw()
    victim.execute("PING")
    # Nobody is a day old; everyone is at least 0 seconds old.
    assert r.execute_command("CLIENT", "KILL", "MAXAGE", 86400) == 0
    assert r.execute_command("CLIENT", "KILL", "ID", client_line(victim)["id"], "MAXAGE", 0) == 1
    assert_closed(victim)


def test_kill_self_replies_then_closes(raw):
    my_id = client_line(raw)["id"]
    assert raw.execute("CLIENT", "KILL", "ID", my_id) == b":0\r\n"  # SKIPME yes by default
    # One write, so the server reads both before closing: a PING still unread in its socket
    # at close() would turn the FIN into a reset that can discard the reply on our side.
    raw.send(RawConnection.encode("CLIENT", "KILL", "ID", my_id, "SKIPME", "no") +
             RawConnection.encode("PING"))  # pipelined after the kill: never answered
    assert raw.read_until_closed() == b":1\r\n"


def test_kill_self_old_form(raw):
    addr = client_line(raw)["addr"]
    raw.send_command("CLIENT", "KILL", addr)
    assert raw.read_until_closed() == b"+OK\r\n"


@pytest.mark.parametrize("args, error", [
    (("ID", "abc"), "client-id should be greater than 0"),
    (("ID", "0"), "client-id should be greater than 0"),
    (("ID", "-5"), "client-id should be greater than 0"),
    (("ID", "1", "TYPE"), "syntax error"),
    (("TYPE", "foo"), "Unknown client type 'foo'"),
    (("USER", "nobody"), "No such user 'nobody'"),
    (("SKIPME", "maybe"), "syntax error"),
    (("foo", "bar"), "syntax error"),
    (("MAXAGE", "old"), "maxage is not an integer or out of range"),
])
def test_kill_filter_errors(r, args, error):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CLIENT", "KILL", *args)
    assert str(e.value) == error


def test_kill_arity(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CLIENT", "KILL")
    assert str(e.value) == "wrong number of arguments for 'client|kill' command"


# ---------------------------------------------------------------------------------------------
# REPLY


def test_reply_off_and_on(raw):
    raw.send_command("CLIENT", "REPLY", "OFF")
    raw.send_command("SET", "k", "1")
    raw.send_command("INCR", "k")
    raw.send_command("GET", "nosuchcommand-args", "x")  # an error is suppressed too
    raw.send_command("NOSUCHCOMMAND")
    assert raw.execute("CLIENT", "REPLY", "ON") == b"+OK\r\n"
    assert raw.execute("GET", "k") == b"$1\r\n2\r\n"


def test_reply_skip_covers_one_command(raw):
    raw.send_command("CLIENT", "REPLY", "SKIP")
    raw.send_command("SET", "k", "skipped")
    assert raw.execute("ECHO", "shown") == b"$5\r\nshown\r\n"
    assert raw.execute("GET", "k") == b"$7\r\nskipped\r\n"


def test_reply_skip_while_off_stays_off(raw):
    raw.send_command("CLIENT", "REPLY", "OFF")
    raw.send_command("CLIENT", "REPLY", "SKIP")
    raw.send_command("ECHO", "a")
    raw.send_command("ECHO", "b")
    assert raw.execute("CLIENT", "REPLY", "ON") == b"+OK\r\n"
    assert raw.execute("ECHO", "c") == b"$1\r\nc\r\n"


def test_reply_errors(raw):
    assert raw.execute("CLIENT", "REPLY", "maybe") == b"-ERR syntax error\r\n"
    assert raw.execute("CLIENT", "REPLY") == (
        b"-ERR wrong number of arguments for 'client|reply' command\r\n")


def test_reply_on_is_acknowledged_when_already_on(raw):
    assert raw.execute("CLIENT", "REPLY", "ON") == b"+OK\r\n"


# ---------------------------------------------------------------------------------------------
# Misc subcommands, HELP and errors


def test_getredir_and_trackinginfo(r):
    assert r.client_getredir() == -1
    info = r.execute_command("CLIENT", "TRACKINGINFO")
    assert info == [b"flags", [b"off"], b"redirect", -1, b"prefixes", []]


def test_client_help(raw):
    reply = raw.execute("CLIENT", "HELP")
    lines = reply.decode().split("\r\n")
    assert lines[1] == "+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    for expected in ("+ID", "+SETNAME <name>", "+REPLY (ON|OFF|SKIP)", "+NO-TOUCH (ON|OFF)",
                     "+SETINFO <option> <value>", "+HELP", "+    Prints this help."):
        assert expected in lines


def test_unknown_subcommand_and_arity(raw):
    assert raw.execute("CLIENT", "foo") == b"-ERR unknown subcommand 'foo'. Try CLIENT HELP.\r\n"
    assert raw.execute("CLIENT") == b"-ERR wrong number of arguments for 'client' command\r\n"
    assert raw.execute("CLIENT", "ID", "1") == (
        b"-ERR wrong number of arguments for 'client|id' command\r\n")
    assert raw.execute("CLIENT", "GETNAME", "x") == (
        b"-ERR wrong number of arguments for 'client|getname' command\r\n")


# ---------------------------------------------------------------------------------------------
# MONITOR

MONITOR_LINE = re.compile(rb'^\+(\d+)\.(\d{6}) \[(\d+) 127\.0\.0\.1:(\d+)\] (.*)\r\n$')


def read_monitor_line(conn) -> bytes:
    return conn.read_reply()


def test_monitor_streams_other_clients_commands(server):
    monitor = server.raw()
    assert monitor.execute("MONITOR") == b"+OK\r\n"
    other = server.raw()
    other_addr = client_line(other)["addr"]
    other.execute("SELECT", "2")
    other.execute("SET", "foo", 'bar "quoted"\n')
    lines = [read_monitor_line(monitor) for _ in range(3)]
    parsed = [MONITOR_LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert parsed[0].group(5) == b'"CLIENT" "INFO"'
    assert parsed[1].group(5) == b'"SELECT" "2"'
    assert parsed[2].group(5) == b'"SET" "foo" "bar \\"quoted\\"\\n"'
    assert parsed[2].group(3) == b"2"
    assert int(parsed[2].group(4)) == int(other_addr.rsplit(":", 1)[1])


def test_monitor_hides_admin_commands(server):
    monitor = server.raw()
    monitor.execute("MONITOR")
    other = server.raw()
    other.execute("CONFIG", "GET", "maxmemory")  # admin: never shown
    other.execute("ECHO", "visible")
    line = read_monitor_line(monitor)
    assert line.endswith(b'"ECHO" "visible"\r\n'), line


def test_monitor_inside_multi_is_refused(raw):
    raw.execute("MULTI")
    assert raw.execute("MONITOR") == b"+QUEUED\r\n"
    assert raw.execute("EXEC") == (
        b"*1\r\n-ERR MONITOR isn't allowed for DENY BLOCKING client\r\n")


def test_monitor_twice_is_silent(server):
    monitor = server.raw()
    assert monitor.execute("MONITOR") == b"+OK\r\n"
    monitor.send_command("MONITOR")
    other = server.raw()
    other.execute("ECHO", "after")
    assert read_monitor_line(monitor).endswith(b'"ECHO" "after"\r\n')


def test_monitor_arity(raw):
    assert raw.execute("MONITOR", "x") == b"-ERR wrong number of arguments for 'monitor' command\r\n"


def test_reset_leaves_monitor_mode(server, r):
    monitor = server.raw()
    monitor.execute("MONITOR")
    monitor.send_command("RESET")
    assert monitor.read_reply() == b"+RESET\r\n"
    monitor_id = int(monitor.execute("CLIENT", "ID")[1:-2])
    assert list_by_id(r)[monitor_id]["flags"] == "N"


def test_random_draws_reply_stops_at_the_output_limit(server_factory):
    # HRANDFIELD with a huge negative count: the reply grows as long as the client asks, and
    # is cut off (the client closed) by client-output-buffer-limit, as in Redis, instead of
    # being built up to proto-max-bulk-len and replaced by an error.
    srv = server_factory()
    r = srv.client()
    r.config_set("client-output-buffer-limit", "normal 1000000 0 0")
    r.hset("myhash", "a", "b")
    with pytest.raises(redis.ConnectionError):
        r.execute_command("HRANDFIELD", "myhash", -999999999)
    other = srv.client()
    assert int(other.info("stats")["client_output_buffer_limit_disconnections"]) == 1
    assert other.ping()


def test_soft_output_limit_closes_a_silent_client_without_more_traffic(server_factory):
    # A subscriber that stopped reading stays over the soft limit after the last message: the
    # cron closes it once the soft limit's seconds have passed, as Redis's does, with nothing
    # more written to it.
    srv = server_factory()
    r = srv.client()
    r.config_set("client-output-buffer-limit", "pubsub 0 100000 1")
    sub = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sub.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sub.connect(("127.0.0.1", srv.port))
    sub.sendall(b"CLIENT SETNAME silent\r\nSUBSCRIBE foo\r\n")
    wait_for(lambda: r.pubsub_numsub("foo")[0][1] == 1)

    def omem():
        for c in r.client_list():
            if c["name"] == "silent":
                return int(c["omem"])
        return None

    while (omem() or 0) <= 100000:
        r.publish("foo", "x" * 1000)
    wait_for(lambda: omem() is None, timeout=5)
    assert int(r.info("stats")["client_output_buffer_limit_disconnections"]) == 1
    sub.close()

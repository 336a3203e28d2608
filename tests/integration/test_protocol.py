"""Wire-level behaviour: RESP2/RESP3 bytes, inline commands, pipelining and bad input."""
import socket
import threading

import pytest
import redis

from conftest import RawConnection, wait_for


def test_ping_bytes(raw):
    assert raw.execute("PING") == b"+PONG\r\n"
    assert raw.execute("PING", "hi") == b"$2\r\nhi\r\n"


def test_inline_commands(raw):
    raw.send(b"PING\r\n")
    assert raw.read_reply() == b"+PONG\r\n"
    raw.send(b"set k \"a b\\n\"\nget k\r\n")
    assert raw.read_reply() == b"+OK\r\n"
    assert raw.read_reply() == b"$4\r\na b\n\r\n"
    # Empty lines are skipped, not answered.
    raw.send(b"\r\n\r\nECHO   'x y'  \r\n")
    assert raw.read_reply() == b"$3\r\nx y\r\n"


def test_hello_resp3_shapes(raw):
    reply = raw.execute("HELLO", "3")
    assert reply.startswith(b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n")
    assert raw.execute("GET", "nokey") == b"_\r\n"
    assert raw.execute("HELLO", "2").startswith(b"*14\r\n")
    assert raw.execute("GET", "nokey") == b"$-1\r\n"


def test_hello_errors(raw):
    assert raw.execute("HELLO", "4") == b"-NOPROTO unsupported protocol version\r\n"
    assert raw.execute("HELLO", "x") == (
        b"-ERR Protocol version is not an integer or out of range\r\n")
    assert raw.execute("HELLO", "3", "FOO") == b"-ERR Syntax error in HELLO option 'FOO'\r\n"
    assert raw.execute("HELLO", "3", "SETNAME", "a b") == (
        b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n")


def test_hello_setname(r, raw):
    raw.execute("HELLO", "2", "SETNAME", "worker-1")
    assert raw.execute("CLIENT", "GETNAME") == b"$8\r\nworker-1\r\n"


def test_pipeline_10k(server):
    c = server.client()
    pipe = c.pipeline(transaction=False)
    for i in range(10000):
        pipe.set(f"k{i}", i)
    for i in range(10000):
        pipe.incr(f"k{i}")
    results = pipe.execute()
    assert results[:10000] == [True] * 10000
    assert results[10000:] == list(range(1, 10001))


def test_pipeline_split_at_every_byte(server):
    raw = server.raw()
    stream = RawConnection.encode("SET", "a", "1") + b"PING\r\n" + RawConnection.encode("GET", "a")
    for b in stream:
        raw.send(bytes([b]))
    assert raw.read_reply() == b"+OK\r\n"
    assert raw.read_reply() == b"+PONG\r\n"
    assert raw.read_reply() == b"$1\r\n1\r\n"


def test_unknown_command_and_arity(raw):
    assert raw.execute("FOO", "a", "b") == (
        b"-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n")
    assert raw.execute("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    # The connection keeps working after errors.
    assert raw.execute("PING") == b"+PONG\r\n"


@pytest.mark.parametrize("payload,error", [
    (b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*1\r\n$-3\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*1\r\n$999999999999\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*2\r\n$3\r\nGET\r\n:1\r\n", b"-ERR Protocol error: expected '$', got ':'\r\n"),
    (b"SET k \"unbalanced\r\n", b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    (b"*9999999999\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
])
def test_protocol_errors_close_connection(server, payload, error):
    raw = server.raw()
    raw.send(payload)
    assert raw.read_until_closed() == error
    # Others are unaffected.
    assert server.client().ping()


def test_garbage_bytes(server):
    raw = server.raw()
    raw.send(b"*1\r\n\x00\xff\xfe garbage")
    data = raw.read_until_closed()
    assert data.startswith(b"-ERR Protocol error: expected '$'")
    assert server.client().ping()


def test_too_big_inline(server):
    raw = server.raw()
    raw.send(b"a" * (70 * 1024))
    assert raw.read_until_closed() == b"-ERR Protocol error: too big inline request\r\n"


def test_proto_max_bulk_len(server_factory):
    srv = server_factory(["--proto-max-bulk-len", "1mb"])
    raw = srv.raw()
    raw.send(b"*2\r\n$4\r\nECHO\r\n$" + str(2 * 1024 * 1024).encode() + b"\r\n")
    assert raw.read_until_closed() == b"-ERR Protocol error: invalid bulk length\r\n"


def test_large_argument(server):
    c = server.client()
    value = b"v" * (20 * 1024 * 1024)
    c.set("big", value)
    assert c.strlen("big") == len(value)
    assert c.get("big") == value


def test_partial_request_does_not_block_others(server):
    slow = server.raw()
    slow.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\nhal")
    c = server.client()
    assert c.ping()
    slow.send(b"f-done!\r\n")
    assert slow.read_reply() == b"+OK\r\n"
    assert c.get("k") == b"half-done!"


def test_quit_closes(server):
    raw = server.raw()
    raw.send(RawConnection.encode("QUIT"))
    assert raw.read_until_closed() == b"+OK\r\n"


def test_many_connections(server):
    conns = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(500)]
    try:
        for s in conns:
            s.sendall(b"PING\r\n")
        for s in conns:
            assert s.recv(16) == b"+PONG\r\n"
    finally:
        for s in conns:
            s.close()


def test_maxclients(server_factory):
    srv = server_factory(["--maxclients", "2"])
    # The start-up probe's connection may not be reaped yet: poll until two fit.
    conns = []

    def two_connected():
        while len(conns) < 2:
            c = srv.raw()
            try:
                if c.execute("PING") != b"+PONG\r\n":
                    return False
            except OSError:
                return False
            conns.append(c)
        return True

    wait_for(two_connected)
    c = srv.raw()
    assert c.read_until_closed() == b"-ERR max number of clients reached\r\n"


def test_select_and_errors(raw):
    assert raw.execute("SELECT", "16") == b"-ERR DB index is out of range\r\n"
    assert raw.execute("SELECT", "x") == b"-ERR value is not an integer or out of range\r\n"
    assert raw.execute("SELECT", "3") == b"+OK\r\n"


def test_unix_socket(server_factory, tmp_path):
    path = str(tmp_path / "vireo.sock")
    srv = server_factory(["--unixsocket", path, "--unixsocketperm", "700"])
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(b"PING\r\n")
    assert s.recv(16) == b"+PONG\r\n"
    s.close()


def test_auth(server_factory):
    srv = server_factory(["--requirepass", "s3cret"])
    raw = srv.raw()
    assert raw.execute("GET", "k") == b"-NOAUTH Authentication required.\r\n"
    assert raw.execute("AUTH", "wrong") == (
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
    assert raw.execute("AUTH", "default", "wrong") == (
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
    assert raw.execute("HELLO", "3").startswith(b"-NOAUTH HELLO must be called")
    assert raw.execute("AUTH", "s3cret") == b"+OK\r\n"
    assert raw.execute("GET", "k") == b"$-1\r\n"
    # HELLO AUTH authenticates and switches protocol at once.
    other = srv.raw()
    assert other.execute("HELLO", "3", "AUTH", "default", "s3cret").startswith(b"%7")
    assert other.execute("GET", "k") == b"_\r\n"
    # RESET deauthenticates.
    assert raw.execute("RESET") == b"+RESET\r\n"
    assert raw.execute("GET", "k") == b"-NOAUTH Authentication required.\r\n"


def test_auth_without_password(raw):
    assert raw.execute("AUTH", "x") == (
        b"-ERR AUTH <password> called without any password configured for the default user. "
        b"Are you sure your configuration is correct?\r\n")


def test_unauthenticated_big_multibulk_rejected(server_factory):
    srv = server_factory(["--requirepass", "pw"])
    raw = srv.raw()
    raw.send(b"*100\r\n")
    assert raw.read_until_closed() == b"-ERR Protocol error: unauthenticated multibulk length\r\n"
    raw = srv.raw()
    raw.send(b"*2\r\n$4\r\nAUTH\r\n$16385\r\n")
    assert raw.read_until_closed() == b"-ERR Protocol error: unauthenticated bulk length\r\n"
    # After AUTH the usual limits apply.
    raw = srv.raw()
    assert raw.execute("AUTH", "pw") == b"+OK\r\n"
    assert raw.execute("ECHO", "x" * 20000) == b"$20000\r\n" + b"x" * 20000 + b"\r\n"


def test_protected_mode_denies_non_loopback(server_factory):
    # 127.0.0.2 is not the loopback address Redis treats as local, so it gets DENIED.
    srv = server_factory(["--bind", "127.0.0.1", "127.0.0.2", "--protected-mode", "yes"])
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.2", srv.port))
    s.settimeout(5)
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    assert data.startswith(b"-DENIED Redis is running in protected mode")
    # Loopback clients are served.
    assert srv.client().ping()
    # Without protected mode the same client is served.
    srv2 = server_factory(["--bind", "127.0.0.1", "127.0.0.2", "--protected-mode", "no"])
    s2 = socket.socket()
    s2.bind(("127.0.0.2", 0))
    s2.connect(("127.0.0.2", srv2.port))
    s2.sendall(b"PING\r\n")
    assert s2.recv(16) == b"+PONG\r\n"


def test_concurrent_clients_threads(server):
    errors = []

    def worker(n):
        try:
            c = server.client()
            for i in range(300):
                c.incr("counter")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert int(server.client().get("counter")) == 2400


def test_thousands_of_connections(server):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 3000
    if soft < want + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, want + 100), hard))
    conns = []
    try:
        for _ in range(want):
            conns.append(socket.create_connection(("127.0.0.1", server.port)))
        for s in conns:
            s.sendall(b"PING\r\n")
        for s in conns:
            assert s.recv(16) == b"+PONG\r\n"
        info = server.client().info("clients")
        assert info["connected_clients"] >= want
    finally:
        for s in conns:
            s.close()

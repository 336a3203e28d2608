"""Server-level safety: request and reply sizes, unauthenticated clients, descriptor
exhaustion, secrets in MONITOR/SLOWLOG, Redis 7's safe defaults, keyspace hash seeds.

Each test reproduces a way a client could stop the server or take its memory (issues 14 and
20) and checks the server refuses it the way Redis 7.2 does and stays up.
"""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import time

import pytest
import redis

from conftest import HOST, RawConnection, free_port, server_binary, start_server, wait_for

SANITIZED = bool(os.environ.get("VIREO_SANITIZED"))


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def used_memory(r: redis.Redis) -> int:
    return r.info("memory")["used_memory"]


def send_until_closed(sock: socket.socket, chunk: bytes, limit_bytes: int) -> bool:
    """Sends `chunk` repeatedly without reading; True once the server closed the connection."""
    sock.settimeout(10)
    sent = 0
    try:
        while sent < limit_bytes:
            sock.sendall(chunk)
            sent += len(chunk)
    except (BrokenPipeError, ConnectionResetError):
        return True
    return False


def slow_reader(port: int, name: str) -> socket.socket:
    """A named connection with a tiny receive buffer, so replies pile up in the server."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((HOST, port))
    s.sendall(RawConnection.encode("CLIENT", "SETNAME", name))
    return s


def gone(r: redis.Redis, name: str):
    return lambda: all(c.get("name") != name for c in r.client_list())


# ------------------------------------------------------------------------------------------
# Requests: proto-max-bulk-len, client-query-buffer-limit, MULTI queues


def test_huge_announced_bulk_is_not_preallocated(server):
    r = server.client()
    assert r.config_set("proto-max-bulk-len", "100gb")
    base = rss_bytes(server.proc.pid)
    raw = server.raw()
    # A 100 GB argument announced; 2 MB of it sent. The buffer may only grow with what came.
    raw.send(b"*2\r\n$4\r\nECHO\r\n$107374182400\r\n" + b"x" * (2 * 1024 * 1024))
    wait_for(lambda: any(c.get("cmd") == "NULL" and int(c["qbuf"]) >= 2 * 1024 * 1024
                         for c in r.client_list()))
    assert r.ping()
    assert rss_bytes(server.proc.pid) - base < 64 * 1024 * 1024
    raw.close()
    r.config_set("proto-max-bulk-len", "512mb")


def test_huge_announced_bulk_hits_query_buffer_limit(server):
    r = server.client()
    r.config_set("proto-max-bulk-len", "100gb")
    r.config_set("client-query-buffer-limit", "1mb")
    try:
        before = r.info("stats")["client_query_buffer_limit_disconnections"]
        s = socket.create_connection((HOST, server.port))
        s.sendall(b"*2\r\n$4\r\nECHO\r\n$107374182400\r\n")
        assert send_until_closed(s, b"x" * 65536, 64 * 1024 * 1024)
        s.close()
        assert r.info("stats")["client_query_buffer_limit_disconnections"] == before + 1
        assert r.ping()
    finally:
        r.config_set("client-query-buffer-limit", "1gb")
        r.config_set("proto-max-bulk-len", "512mb")


def test_multi_queue_counts_toward_query_buffer_limit(server):
    r = server.client()
    r.config_set("client-query-buffer-limit", "1mb")
    try:
        before = r.info("stats")["client_query_buffer_limit_disconnections"]
        raw = server.raw()
        assert raw.execute("MULTI") == b"+OK\r\n"
        value = "v" * (300 * 1024)
        closed = False
        for i in range(10):
            try:
                reply = raw.execute("SET", f"k{i}", value)
            except (ConnectionError, OSError):
                closed = True
                break
            if reply == b"":
                closed = True
                break
            assert reply == b"+QUEUED\r\n"
        assert closed, "a 3 MB transaction outgrew a 1 MB client-query-buffer-limit"
        assert r.info("stats")["client_query_buffer_limit_disconnections"] == before + 1
        assert r.dbsize() == 0
    finally:
        r.config_set("client-query-buffer-limit", "1gb")


# ------------------------------------------------------------------------------------------
# Unauthenticated clients


def test_unauthenticated_client_output_is_capped(server_factory):
    srv = server_factory(["--requirepass", "pw"])
    r = srv.client(password="pw")
    base = used_memory(r)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((HOST, srv.port))
    # Every PING costs 6 bytes and earns a 34-byte NOAUTH error nobody reads.
    assert send_until_closed(s, b"PING\r\n" * 10000, 200 * 1024 * 1024)
    s.close()
    assert r.info("stats")["client_output_buffer_limit_disconnections"] >= 1
    wait_for(lambda: r.info("clients")["connected_clients"] == 1)
    assert used_memory(r) - base < 16 * 1024 * 1024


# ------------------------------------------------------------------------------------------
# client-output-buffer-limit for the normal class (pub/sub is in test_pubsub.py)


def test_normal_class_hard_limit_disconnects_and_frees(server):
    r = server.client()
    r.set("big", "b" * (256 * 1024))
    base = used_memory(r)
    r.config_set("client-output-buffer-limit", "normal 4mb 0 0")
    try:
        s = slow_reader(server.port, "slowreader")
        assert send_until_closed(s, RawConnection.encode("GET", "big") * 64, 64 * 1024 * 1024)
        s.close()
        wait_for(gone(r, "slowreader"))
        assert r.info("stats")["client_output_buffer_limit_disconnections"] >= 1
        assert used_memory(r) - base < 8 * 1024 * 1024
    finally:
        r.config_set("client-output-buffer-limit", "normal 0 0 0")


def test_normal_class_soft_limit_needs_its_seconds(server):
    r = server.client()
    r.set("big", "b" * (64 * 1024))
    r.config_set("client-output-buffer-limit", "normal 0 1mb 1")
    try:
        s = slow_reader(server.port, "softreader")
        wait_for(lambda: not gone(r, "softreader")())
        s.setblocking(False)
        start = time.monotonic()

        def dropped():
            try:
                s.send(RawConnection.encode("GET", "big") * 4)
            except BlockingIOError:
                pass
            except OSError:
                return True
            return gone(r, "softreader")()

        wait_for(dropped, timeout=15, interval=0.05)
        # Past the soft limit within the first second, yet closed only after it.
        assert time.monotonic() - start >= 1.0
        s.close()
    finally:
        r.config_set("client-output-buffer-limit", "normal 0 0 0")


def test_output_buffer_limit_config_syntax(server):
    r = server.client()
    default = r.config_get("client-output-buffer-limit")["client-output-buffer-limit"]
    try:
        r.config_set("client-output-buffer-limit", "normal 1mb 512kb 10 replica 2mb 1mb 30")
        assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == (
            "normal 1048576 524288 10 slave 2097152 1048576 30 pubsub 33554432 8388608 60")
        with pytest.raises(redis.ResponseError, match="Invalid client class"):
            r.config_set("client-output-buffer-limit", "master 1mb 1mb 1")
        with pytest.raises(redis.ResponseError, match="Error in hard, soft or soft_seconds"):
            r.config_set("client-output-buffer-limit", "normal 1mbs 1mb 1")
    finally:
        r.config_set("client-output-buffer-limit", default)


# ------------------------------------------------------------------------------------------
# Descriptors: maxclients fitted to RLIMIT_NOFILE, EMFILE in accept


def start_with_nofile(limit: int, extra=()):
    def lower():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    port = free_port()
    workdir = os.path.abspath(os.environ.get("TMPDIR", "/tmp"))
    log_path = os.path.join(workdir, f"vireo-nofile-{port}.log")
    log = open(log_path, "wb")
    proc = subprocess.Popen([server_binary(), "--port", str(port), "--bind", HOST, "--save", "",
                             *extra], cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, preexec_fn=lower)
    return proc, port, log_path


def stop(proc):
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_maxclients_fitted_to_descriptor_limit():
    proc, port, log_path = start_with_nofile(64)
    try:
        r = redis.Redis(port=port)
        wait_for(lambda: r.ping(), 10)
        assert r.config_get("maxclients") == {"maxclients": "32"}
        log = open(log_path).read()
        assert "maxclients has been reduced to 32 to compensate for low ulimit" in log
        with pytest.raises(redis.ResponseError) as e:
            r.config_set("maxclients", 1000000000)
        assert str(e.value) == (
            "CONFIG SET failed (possibly related to argument 'maxclients') - The operating "
            "system is not able to handle the specified number of clients, try with 32")
        assert r.config_get("maxclients") == {"maxclients": "32"}
        assert r.config_set("maxclients", 20)
        # Past maxclients, clients are told why and the server keeps serving.
        extra = [RawConnection(HOST, port) for _ in range(25)]
        refused = 0
        for c in extra:
            try:
                if c.read_until_closed(2) == b"-ERR max number of clients reached\r\n":
                    refused += 1
            except OSError:
                pass
        assert refused >= 5
        assert r.ping()
        for c in extra:
            c.close()
    finally:
        stop(proc)
        os.unlink(log_path)


@pytest.mark.skipif(SANITIZED, reason="UBSan's vptr check probes memory through pipe(), so with "
                    "no descriptor left the sanitizer runtime itself reports a false 'invalid vptr'")
def test_descriptor_exhaustion_does_not_spin():
    proc, port, log_path = start_with_nofile(1024)
    try:
        r = redis.Redis(port=port)
        wait_for(lambda: r.ping(), 10)
        # Lower the running server's limit to just above what it holds: accept() now fails
        # with EMFILE while maxclients still allows more clients.
        in_use = len(os.listdir(f"/proc/{proc.pid}/fd"))
        resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (in_use + 2, 1024))
        conns = []
        for _ in range(30):
            s = socket.socket()
            s.settimeout(5)
            s.connect((HOST, port))
            conns.append(s)
        # Every pending connection is answered (served, or refused with the spare descriptor)
        # rather than left to wake the listener forever.
        answered = 0
        for s in conns:
            try:
                s.sendall(b"PING\r\n")
                data = s.recv(100)
                if data in (b"+PONG\r\n", b"-ERR max number of clients reached\r\n", b""):
                    answered += 1
            except OSError:
                answered += 1
        assert answered == len(conns)
        assert r.ping()
        cpu_before = _cpu_seconds(proc.pid)
        time.sleep(0.5)  # a spinning listener would burn this half second
        assert _cpu_seconds(proc.pid) - cpu_before < 0.4
        accept_lines = [l for l in open(log_path) if "Accepting client connection" in l]
        assert len(accept_lines) < 10, accept_lines[:3]
        for s in conns:
            s.close()
        resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (1024, 1024))
        assert r.ping()
    finally:
        stop(proc)
        os.unlink(log_path)


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------------------------------
# Secrets never shown by MONITOR or SLOWLOG


def test_monitor_and_slowlog_redact_passwords(server_factory):
    srv = server_factory(["--requirepass", "s3cret"])
    admin = srv.client(password="s3cret")
    mon = srv.raw()
    assert mon.execute("AUTH", "s3cret") == b"+OK\r\n"
    assert mon.execute("MONITOR") == b"+OK\r\n"
    admin.config_set("slowlog-log-slower-than", 0)
    admin.slowlog_reset()
    c = srv.raw()
    c.execute("AUTH", "s3cret")
    c.execute("AUTH", "default", "s3cret")
    c.execute("HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "n1")
    c.execute("PING")
    lines = []
    while not any(b'"PING"' in l for l in lines):
        lines.append(mon.read_reply())
    text = b"".join(lines)
    assert b"s3cret" not in text
    assert b'"AUTH" "(redacted)"\r\n' in text
    assert b'"AUTH" "(redacted)" "(redacted)"\r\n' in text
    assert b'"HELLO" "2" "AUTH" "(redacted)" "(redacted)" "SETNAME" "n1"\r\n' in text
    slowlog = c.execute("SLOWLOG", "GET", "128")
    assert b"s3cret" not in slowlog
    assert b"*2\r\n$4\r\nAUTH\r\n$10\r\n(redacted)\r\n" in slowlog
    assert b"*3\r\n$4\r\nAUTH\r\n$10\r\n(redacted)\r\n$10\r\n(redacted)\r\n" in slowlog
    assert (b"*7\r\n$5\r\nHELLO\r\n$1\r\n2\r\n$4\r\nAUTH\r\n$10\r\n(redacted)\r\n"
            b"$10\r\n(redacted)\r\n$7\r\nSETNAME\r\n$2\r\nn1\r\n") in slowlog
    admin.config_set("slowlog-log-slower-than", 10000)


# ------------------------------------------------------------------------------------------
# Safe defaults: DEBUG, MODULE, protected configs


DEBUG_REFUSED = (
    b"-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
    b"you can run it from a local connection, otherwise you need to set this option in the "
    b"configuration file, and then restart the server.\r\n")


def test_debug_refused_by_default(server_factory):
    srv = server_factory(["--enable-debug-command", "no"])
    raw = srv.raw()
    assert raw.execute("DEBUG", "SLEEP", "0") == DEBUG_REFUSED
    # Arity is checked first, as in Redis.
    assert raw.execute("DEBUG") == b"-ERR wrong number of arguments for 'debug' command\r\n"
    r = srv.client()
    assert r.config_get("enable-*") == {"enable-debug-command": "no",
                                         "enable-module-command": "no",
                                         "enable-protected-configs": "no"}
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        r.config_set("enable-debug-command", "yes")


def test_debug_local_allows_loopback(server_factory):
    srv = server_factory(["--enable-debug-command", "local"])
    assert srv.raw().execute("DEBUG", "SLEEP", "0") == b"+OK\r\n"


def test_protected_configs(server_factory, tmp_path):
    srv = server_factory(["--enable-protected-configs", "no"])
    r = srv.client()
    with pytest.raises(redis.ResponseError) as e:
        r.config_set("dir", str(tmp_path))
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'dir') - can't set "
                            "protected config")
    srv2 = server_factory(["--enable-protected-configs", "local"])
    r2 = srv2.client()
    assert r2.config_set("dbfilename", "other.rdb")
    assert r2.config_get("dbfilename") == {"dbfilename": "other.rdb"}


# ------------------------------------------------------------------------------------------
# HashDoS: the keyspace is keyed with a random seed


def test_keyspace_order_differs_between_servers(server_factory):
    orders = []
    for _ in range(2):
        r = server_factory().client()
        r.mset({f"key:{i}": 1 for i in range(200)})
        orders.append(r.keys("*"))
    assert sorted(orders[0]) == sorted(orders[1])
    # With a fixed seed both servers lay the keys out identically.
    assert orders[0] != orders[1]

"""Pytest fixtures for vireo integration tests.

Run with Debian's interpreter, which is the one that has python3-redis and
python3-pytest installed:

    /usr/bin/python3 -m pytest tests/integration -q

The server binary is taken from $VIREO_SERVER, falling back to
build/vireo-server in this repository.  Anything that accepts redis-server
style arguments works, so `VIREO_SERVER=$(command -v redis-server)` runs the
suite against real Redis, which is how tests are checked for correctness
before vireo implements the feature.

Helpers meant for tests (import them with `from conftest import ...`; pytest
puts this directory on sys.path):
    start_server(extra_args=(), config_text=None) -> ServerHandle
    wait_for(predicate, timeout=5, ...)
    wait_blocked(r, n, timeout=5)
    RawConnection (what ServerHandle.raw() returns)
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import redis

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BINARY = REPO_ROOT / "build" / "vireo-server"

HOST = "127.0.0.1"
START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0


def server_binary() -> str:
    return os.environ.get("VIREO_SERVER") or str(DEFAULT_BINARY)


def free_port() -> int:
    # The kernel hands out an unused ephemeral port; there is a small window
    # before the server binds it, which start_server covers by retrying.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


# Cluster nodes also listen on port + 10000 (the bus): their ports come from a range where
# both are valid and outside the kernel's ephemeral range (32768-60999 here), so an outgoing
# connection can't take a bus port between the check and the bind. Ports handed out once are
# not handed out again in this process.
CLUSTER_PORT_RANGE = (12000, 21999)
_reserved_cluster_ports: set[int] = set()


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((HOST, port))
            return True
        except OSError:
            return False


def _worker_slice(lo: int, hi: int) -> tuple[int, int]:
    """The part of [lo, hi] this pytest-xdist worker picks from: workers are separate processes,
    so their reservations can't see each other, but their slices don't overlap."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or count <= 1:
        return lo, hi
    index = int(worker[2:])
    width = (hi - lo + 1) // count
    return lo + index * width, lo + (index + 1) * width - 1


def free_cluster_port(lo: int = CLUSTER_PORT_RANGE[0], hi: int = CLUSTER_PORT_RANGE[1]) -> int:
    """A client port P in [lo, hi] such that P and P + 10000 both bind free on 127.0.0.1."""
    import random
    lo, hi = _worker_slice(lo, hi)
    for _ in range(2000):
        port = random.randint(lo, hi)
        if port not in _reserved_cluster_ports and _bindable(port) and _bindable(port + 10000):
            _reserved_cluster_ports.add(port)
            return port
    raise RuntimeError(f"no free cluster port pair in {lo}-{hi}")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "load: pushes the server hard or bounds its latency. CTest runs these on their own "
        "(-m load, RUN_SERIAL) and the rest in parallel pytest-xdist workers, so no other test "
        "competing for the cores skews them.")


def wait_for(predicate, timeout: float = 5.0, interval: float = 0.005, message: str | None = None):
    """Poll `predicate` until it returns something truthy and return that value.

    Tests use this instead of sleeping a fixed time, so they are as fast as the
    server allows and still tolerate a slow CI machine.
    """
    deadline = time.monotonic() + timeout
    last_exc = None
    while True:
        try:
            value = predicate()
            if value:
                return value
            last_exc = None
        except Exception as exc:  # the condition may be unreachable for a while (e.g. reconnecting)
            last_exc = exc
        if time.monotonic() >= deadline:
            detail = f" (last error: {last_exc!r})" if last_exc else ""
            raise AssertionError((message or f"condition not met within {timeout}s") + detail)
        time.sleep(interval)


def wait_blocked(r: redis.Redis, n: int, timeout: float = 5.0) -> None:
    """Wait until the server reports exactly `n` blocked clients.

    Blocking-command tests must not race: the blocking call is issued from a
    thread, and the test may only push data once the server has registered
    the client as blocked.
    """
    def check():
        return int(r.info("clients").get("blocked_clients", -1)) == n

    wait_for(check, timeout, message=f"blocked_clients never became {n}")


# --------------------------------------------------------------------------
# Raw RESP connection


class RawConnection:
    """A plain socket for tests that care about the exact bytes on the wire.

    read_reply() returns one complete reply exactly as received, so tests can
    assert e.g. `raw.read_reply() == b"+PONG\\r\\n"`.  It understands all
    RESP2 and RESP3 types (including attributes, pushes and streamed
    aggregates/strings) so that it never splits or merges replies.
    """

    def __init__(self, host: str, port: int, timeout: float = 5.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    # -- writing
    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    @staticmethod
    def encode(*args) -> bytes:
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            elif isinstance(a, (int, float)):
                a = str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def send_command(self, *args) -> None:
        self.send(self.encode(*args))

    def execute(self, *args) -> bytes:
        """Send one command as a multibulk request and return the raw reply."""
        self.send_command(*args)
        return self.read_reply()

    # -- reading
    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection mid-reply")
        # Drop consumed bytes now and then so the buffer does not grow forever.
        if self.pos > 65536:
            del self.buf[: self.pos]
            self.pos = 0
        self.buf += chunk

    def _line(self) -> bytes:
        while True:
            idx = self.buf.find(b"\r\n", self.pos)
            if idx >= 0:
                line = bytes(self.buf[self.pos: idx + 2])
                self.pos = idx + 2
                return line
            self._fill()

    def _exact(self, n: int) -> bytes:
        while len(self.buf) - self.pos < n:
            self._fill()
        data = bytes(self.buf[self.pos: self.pos + n])
        self.pos += n
        return data

    def _read_value(self, out: list) -> None:
        line = self._line()
        out.append(line)
        kind = line[:1]
        body = line[1:-2]
        if kind in (b"+", b"-", b":", b"_", b",", b"#", b"("):
            return
        if kind in (b"$", b"=", b"!"):
            if body == b"?":
                # RESP3 streamed string: ";<len>\r\n<data>\r\n" chunks, ";0" ends it.
                while True:
                    chunk_hdr = self._line()
                    out.append(chunk_hdr)
                    n = int(chunk_hdr[1:-2])
                    if n == 0:
                        return
                    out.append(self._exact(n + 2))
            n = int(body)
            if n >= 0:
                out.append(self._exact(n + 2))
            return
        if kind in (b"*", b"~", b">", b"%", b"|"):
            per_item = 2 if kind in (b"%", b"|") else 1
            if body == b"?":
                # Streamed aggregate: items until the "." terminator.
                while True:
                    if self._peek_is_end():
                        out.append(self._line())
                        return
                    for _ in range(per_item):
                        self._read_value(out)
            n = int(body)
            for _ in range(max(n, 0) * per_item):
                self._read_value(out)
            if kind == b"|":
                # An attribute decorates the reply that follows it; return both
                # together so one read_reply() call is still one reply.
                self._read_value(out)
            return
        raise ValueError(f"unknown RESP type byte in line {line!r}")

    def _peek_is_end(self) -> bool:
        while len(self.buf) - self.pos < 1:
            self._fill()
        return self.buf[self.pos: self.pos + 1] == b"."

    def read_reply(self) -> bytes:
        """Read exactly one reply and return its bytes verbatim."""
        out: list[bytes] = []
        self._read_value(out)
        return b"".join(out)

    def read_until_closed(self, timeout: float = 5.0) -> bytes:
        """Return everything still buffered plus all bytes until the server closes."""
        self.sock.settimeout(timeout)
        data = bytes(self.buf[self.pos:])
        self.buf.clear()
        self.pos = 0
        chunks = [data]
        while True:
            chunk = self.sock.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)

    def settimeout(self, timeout: float | None) -> None:
        self.sock.settimeout(timeout)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --------------------------------------------------------------------------
# Server process management


class ServerHandle:
    def __init__(self, proc: subprocess.Popen, port: int, workdir: Path, log_path: Path, argv: list[str]):
        self.proc = proc
        self.port = port
        self.host = HOST
        self.workdir = workdir
        self.log_path = log_path
        self.argv = argv
        self._clients: list = []
        self.returncode: int | None = None
        # Tests that make the server exit on purpose (SHUTDOWN, fatal config)
        # set this so teardown does not report the exit as a crash.
        self.expect_exit = False

    def client(self, **kw) -> redis.Redis:
        kw.setdefault("decode_responses", False)
        # A finite timeout turns a hung server into a test failure instead of
        # a CI run that sits until its global limit.
        kw.setdefault("socket_timeout", 15)
        c = redis.Redis(host=self.host, port=self.port, **kw)
        self._clients.append(c)
        return c

    def raw(self, timeout: float = 5.0) -> RawConnection:
        c = RawConnection(self.host, self.port, timeout)
        self._clients.append(c)
        return c

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_text(self, tail: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    def stop(self) -> int:
        """SIGTERM the server, wait for it, and return its exit status."""
        for c in self._clients:
            try:
                c.close()
            except Exception:
                pass
        self._clients.clear()
        if self.proc.poll() is None:
            # SIGTERM again each second: as Redis, a server refuses a shutdown it can't do
            # safely yet (an initial AOF rewrite running, say) and waits for the next signal.
            deadline = time.monotonic() + STOP_TIMEOUT
            while self.proc.poll() is None and time.monotonic() < deadline:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(min(1.0, max(0.0, deadline - time.monotonic())))
                except subprocess.TimeoutExpired:
                    pass
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self.returncode = self.proc.returncode
        return self.returncode

    def cleanup(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __repr__(self):
        return f"<ServerHandle {self.argv[0]} port={self.port} pid={self.proc.pid}>"


def _ping_ok(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5) as s:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            # A server with requirepass answers NOAUTH: it is up all the same.
            return s.recv(64).startswith((b"+PONG", b"-NOAUTH"))
    except OSError:
        return False


def start_server(extra_args=(), config_text: str | None = None, binary: str | None = None) -> ServerHandle:
    """Start a server on a free port and return once it answers PING.

    Only --port and --bind are passed (plus extra_args): vireo is not expected
    to understand persistence options such as --save.  The process runs in its
    own temporary directory so anything it writes there (e.g. a dump file from
    a stand-in redis-server) does not land in the work tree.
    """
    binary = binary or server_binary()
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)) and shutil.which(binary) is None:
        raise RuntimeError(f"server binary not found: {binary} (build it or set VIREO_SERVER)")

    last_error = ""
    for _attempt in range(3):  # retry covers losing the free-port race to another process
        workdir = Path(tempfile.mkdtemp(prefix="vireo-it-"))
        argv = [binary]
        if config_text is not None:
            conf = workdir / "server.conf"
            conf.write_text(config_text)
            argv.append(str(conf))
        cluster_mode = "--cluster-enabled" in map(str, extra_args) or (
            config_text is not None and "cluster-enabled yes" in config_text)
        port = free_cluster_port() if cluster_mode else free_port()
        argv += ["--port", str(port), "--bind", HOST]
        # No background saves unless a test asks: a BGSAVE fork in the middle of a timing-bounded
        # load test would measure the fork, not the code under test.
        asks_save = any(str(a) == "--save" for a in extra_args) or (
            config_text is not None and any(l.strip().startswith("save") for l in config_text.splitlines()))
        if not asks_save:
            argv += ["--save", ""]
        # The suite drives DEBUG (RELOAD, SLEEP, SET-ACTIVE-EXPIRE...), which is off by default
        # as in Redis 7; a test may still pass its own --enable-debug-command after this.
        argv += ["--enable-debug-command", "yes"]
        argv += [*map(str, extra_args)]
        log_path = workdir / "server.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(argv, cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
        handle = ServerHandle(proc, port, workdir, log_path, argv)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            if _ping_ok(port):
                return handle
            time.sleep(0.02)
        exited = proc.poll() is not None
        handle.stop()
        last_error = (f"server {argv} exited with status {proc.returncode} during startup" if exited
                      else f"server {argv} did not answer PING within {START_TIMEOUT}s")
        last_error += "\n--- server log ---\n" + handle.log_text()
        handle.cleanup()
    raise RuntimeError(last_error)


def _finish(handle: ServerHandle) -> str | None:
    """Stop a server at teardown and fail loudly if it crashed or exited badly.

    A crash in the middle of a test module would otherwise only show up as
    confusing connection errors in later tests; a non-zero exit after SIGTERM
    also catches sanitizer reports in ASAN builds.
    """
    # A server the test already stopped with .stop() is judged by that exit status.
    crashed_before = handle.returncode is None and not handle.alive()
    code = handle.stop()
    log = handle.log_text()
    handle.cleanup()
    if handle.expect_exit:
        return None
    if crashed_before or code not in (0, -signal.SIGTERM):
        what = "died during the tests" if crashed_before else "exited badly on SIGTERM"
        return f"{handle!r} {what} (exit status {code})\n--- server log ---\n{log}"
    return None


# --------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def server():
    """One server per test module, so modules cannot leak state into each other."""
    handle = start_server()
    yield handle
    error = _finish(handle)
    if error:
        pytest.fail(error, pytrace=False)


@pytest.fixture
def r(server):
    """A client on the module's server with an empty keyspace."""
    client = server.client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def raw(server):
    """A raw connection to the module's server, with an empty keyspace."""
    server.client().flushall()
    conn = server.raw()
    yield conn
    conn.close()


@pytest.fixture
def server_factory():
    """Start extra servers with custom arguments; all are stopped at teardown.

    Usage: srv = server_factory(["--maxclients", "5"], config_text="...")
    """
    started: list[ServerHandle] = []

    def factory(extra_args=(), config_text: str | None = None) -> ServerHandle:
        handle = start_server(extra_args, config_text)
        started.append(handle)
        return handle

    yield factory
    # Stop every server before reporting, so one bad exit cannot leak the rest.
    errors = [e for e in (_finish(h) for h in started) if e]
    if errors:
        pytest.fail("\n\n".join(errors), pytrace=False)


@pytest.fixture
def plain(server, r):
    """A client without redis-py's reply conversions, on an empty keyspace: replies are compared
    as the server sent them (bytes decoded to str)."""
    client = server.client(decode_responses=True)
    client.response_callbacks.clear()
    yield client
    client.close()


# Shared by the command-family tests.

def call(client, *args):
    """One command through a redis-py client, its reply as the client decoded it."""
    return client.execute_command(*args)


def call_error(client, *args):
    """The error text a command gets through a redis-py client (it must fail)."""
    with pytest.raises(redis.ResponseError) as e:
        client.execute_command(*args)
    return str(e.value)


def err(raw, *args):
    """The exact error text (without '-' and CRLF) a command replies with."""
    reply = raw.execute(*args)
    assert reply.startswith(b"-"), f"{args!r} replied {reply!r}, not an error"
    return reply[1:-2].decode()


def arr(*items):
    """The RESP2 bytes of an array of bulk strings; nested lists become nested arrays."""
    out = [b"*%d\r\n" % len(items)]
    for item in items:
        if isinstance(item, list):
            out.append(arr(*item))
            continue
        if isinstance(item, str):
            item = item.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(item), item))
    return b"".join(out)


def arity(cmd):
    return f"ERR wrong number of arguments for '{cmd}' command"


@pytest.fixture(scope="module")
def is_70(server):
    c = server.client()
    version = c.info("server")["redis_version"]
    c.close()
    return str(version).startswith("7.0")


@pytest.fixture
def only_72(is_70):
    if is_70:
        pytest.skip("Redis 7.2 behaviour; the reference server is 7.0")


def restart_in_place(handle, banner: bytes = b"", context: str = "") -> None:
    """Starts a stopped server again with its own argv, directory and port (it keeps its data),
    `banner` written to its log first. Only a lost race for the port (an outgoing connection
    took it) is worth a retry; `context` goes into the failure messages."""
    for _attempt in range(20):
        with open(handle.log_path, "ab") as log:
            log.write(banner)
            log.flush()
            handle.proc = subprocess.Popen(handle.argv, cwd=handle.workdir, stdout=log,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        handle.returncode = None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and handle.alive() and not _ping_ok(handle.port):
            time.sleep(0.02)
        if handle.alive() and _ping_ok(handle.port):
            return
        assert "in use" in handle.log_text(2000).lower(), (
            f"restart of {handle!r} failed {context}\n{handle.log_text()}")
        if handle.alive():
            handle.proc.kill()
            handle.proc.wait()
        time.sleep(0.1)
    raise AssertionError(f"port {handle.port} stayed busy {context}")

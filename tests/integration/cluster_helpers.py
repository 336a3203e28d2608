"""Multi-process cluster tests: start real cluster nodes on loopback, build a cluster with
`redis-cli --cluster`, and wait (by polling, never by sleeping a fixed time) for it to settle.

The node binary is vireo (conftest's server_binary()) unless $VIREO_CLUSTER_NODE_BINARY names
another one, e.g. `VIREO_CLUSTER_NODE_BINARY=redis-server`, which is how these tests are checked
against real Redis. A test may also give any node its own binary (mixed clusters).

Ports: every node gets a client port P in 24000-29999 whose bus port P + 10000 is free too
(never the kernel's ephemeral range, where P + 10000 could pass 65535).

Import with `from cluster_helpers import ...` (pytest puts this directory on sys.path); the
`cluster` fixture hands out a Cluster whose nodes are always stopped and removed at teardown,
and fails the test if a node died that the test did not kill on purpose.
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

from conftest import HOST, free_cluster_port, server_binary, wait_for

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
SLOTS = 16384
PORT_LO, PORT_HI = 24000, 29999
BUS_OFFSET = 10000
START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None or shutil.which("redis-cli") is None,
                                 reason="redis-server / redis-cli are not installed")


def node_binary() -> str:
    """The binary cluster nodes run: $VIREO_CLUSTER_NODE_BINARY (a path or a name on PATH) or vireo."""
    name = os.environ.get("VIREO_CLUSTER_NODE_BINARY")
    if not name:
        return server_binary()
    return shutil.which(name) or name


def node_dir_root() -> str | None:
    """Where node directories go: $VIREO_CLUSTER_TMPDIR, else /dev/shm when writable, else the
    default temp dir. Redis 7.2 saves nodes.conf with a new file, fsync, rename and a directory
    fsync on every slot change: on ext4 that makes its reshards about 5 times slower than on
    tmpfs, a cost these tests do not set out to measure."""
    root = os.environ.get("VIREO_CLUSTER_TMPDIR")
    if root:
        return root
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    return None


# --------------------------------------------------------------------------
# Key slots (CRC16/XMODEM of the key or its {hash tag}), to place keys in chosen slots.


def _crc16_table():
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_CRC16 = _crc16_table()


def key_slot(key: str | bytes) -> int:
    if isinstance(key, str):
        key = key.encode()
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1:end]
    crc = 0
    for b in key:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC16[((crc >> 8) ^ b) & 0xFF]
    return crc % SLOTS


def keys_in_slots(slots, count: int, prefix: str = "k") -> list[str]:
    """`count` distinct keys whose slots are all in `slots` (a set or range)."""
    wanted = set(slots)
    out, i = [], 0
    while len(out) < count:
        key = f"{prefix}:{i}"
        if key_slot(key) in wanted:
            out.append(key)
        i += 1
    return out


def tag_for_slot(slot: int) -> str:
    """A hash tag whose keys all land in `slot`."""
    i = 0
    while key_slot(f"t{i}") != slot:
        i += 1
    return f"t{i}"


# --------------------------------------------------------------------------
# Ports


def pick_cluster_port() -> int:
    """A client port P in 24000-29999 such that P and P + 10000 both bind free on 127.0.0.1."""
    return free_cluster_port(PORT_LO, PORT_HI)


# --------------------------------------------------------------------------
# Nodes


class ClusterNode:
    """One cluster-enabled server process in its own directory (its own nodes.conf)."""

    def __init__(self, binary: str, node_timeout: int, extra_args=()):
        self.binary = binary
        self.node_timeout = node_timeout
        self.extra_args = [str(a) for a in extra_args]
        self.workdir = Path(tempfile.mkdtemp(prefix="vireo-cl-", dir=node_dir_root()))
        self.log_path = self.workdir / "server.log"
        self.port = 0
        self.proc: subprocess.Popen | None = None
        # Set when the test kills or stops the node on purpose: teardown does not call that a crash.
        self.expect_exit = False
        self._clients: list = []

    @property
    def addr(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def is_redis(self) -> bool:
        return Path(self.binary).name.startswith("redis-server")

    def argv(self) -> list[str]:
        return [self.binary, "--port", str(self.port), "--bind", HOST,
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(self.node_timeout),
                "--save", "", "--appendonly", "no", *self.extra_args]

    def start(self) -> "ClusterNode":
        """Start on a fresh port pair (first start) or on the same port (restart), then wait for PING."""
        last = ""
        for _attempt in range(3):
            fresh = self.port == 0
            if fresh:
                self.port = pick_cluster_port()
            with open(self.log_path, "ab") as log:
                self.proc = subprocess.Popen(self.argv(), cwd=self.workdir, stdout=log,
                                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            self.expect_exit = False
            deadline = time.monotonic() + START_TIMEOUT
            while time.monotonic() < deadline and self.proc.poll() is None:
                if self.ping():
                    return self
                time.sleep(0.02)
            last = f"{self.argv()} did not come up (status {self.proc.poll()})\n{self.log_text()}"
            self._terminate(signal.SIGKILL)
            if not fresh:
                break  # a restart must keep its port; do not hop
            self.port = 0  # lost the port race: try another pair
        raise RuntimeError(last)

    def ping(self) -> bool:
        try:
            with socket.create_connection((HOST, self.port), timeout=0.5) as s:
                s.sendall(b"*1\r\n$4\r\nPING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def client(self, **kw) -> redis.Redis:
        """A plain (non-cluster) client to this node; replies decoded, no reply parsing."""
        kw.setdefault("decode_responses", True)
        kw.setdefault("socket_timeout", 15)
        c = redis.Redis(host=HOST, port=self.port, **kw)
        c.response_callbacks.clear()
        self._clients.append(c)
        return c

    def call(self, *args):
        c = redis.Redis(host=HOST, port=self.port, decode_responses=True, socket_timeout=10)
        c.response_callbacks.clear()
        try:
            return c.execute_command(*args)
        finally:
            c.close()

    def _close_clients(self):
        for c in self._clients:
            try:
                c.close()
            except Exception:
                pass
        self._clients.clear()

    def _terminate(self, sig) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def stop(self) -> int | None:
        """SIGTERM (a clean shutdown) and wait."""
        self.expect_exit = True
        self._close_clients()
        return self._terminate(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL: the node vanishes without a word to anyone."""
        self.expect_exit = True
        self._close_clients()
        self._terminate(signal.SIGKILL)

    def restart(self) -> "ClusterNode":
        if self.alive():
            self.stop()
        return self.start()

    def myid(self) -> str:
        return self.call("CLUSTER", "MYID")

    def sync_replicas(self, replicas: int = 1, timeout: float = 10) -> None:
        """Wait until `replicas` replicas acknowledged everything this master wrote so far.

        WAIT counts acknowledgements of the calling connection's own last write, and a fresh
        connection has none (WAIT would return at once), so a marker key in one of this master's
        slots is written first on the same connection: the stream is ordered, so its ack covers
        every earlier write."""
        marker = keys_in_slots(parse_nodes_self(self)["slots"], 1, prefix="sync")[0]
        c = redis.Redis(host=HOST, port=self.port, socket_timeout=timeout + 5)
        try:
            c.set(marker, "1")
            acked = int(c.execute_command("WAIT", replicas, int(timeout * 1000)))
        finally:
            c.close()
        assert acked >= replicas, f"{self!r}: {acked} of {replicas} replicas acknowledged"

    def log_text(self, tail: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    def finish(self) -> str | None:
        """Stop at teardown; return a complaint if the node died or exited badly on its own."""
        died = self.proc is not None and self.proc.poll() is not None and not self.expect_exit
        expected = self.expect_exit
        code = self.stop()
        complaint = None
        if died or (not expected and code not in (0, -signal.SIGTERM, None)):
            complaint = (f"node {self.binary} :{self.port} {'died during the test' if died else 'exited badly'}"
                         f" (status {code})\n--- log ---\n{self.log_text()}")
        shutil.rmtree(self.workdir, ignore_errors=True)
        return complaint

    def __repr__(self):
        return f"<ClusterNode {Path(self.binary).name} :{self.port}>"


# --------------------------------------------------------------------------
# CLUSTER NODES / INFO parsing


def parse_nodes(text: str) -> list[dict]:
    """CLUSTER NODES as dicts: id, addr (ip:port), flags (set), master, slots (set of ints), open."""
    out = []
    for line in text.strip().splitlines():
        f = line.split()
        slots, opened = set(), []
        for s in f[8:]:
            if s.startswith("["):
                opened.append(s)
            elif "-" in s:
                lo, hi = s.split("-")
                slots.update(range(int(lo), int(hi) + 1))
            else:
                slots.add(int(s))
        out.append({"id": f[0], "addr": f[1].split("@")[0], "flags": set(f[2].split(",")),
                    "master": f[3], "epoch": int(f[6]), "link": f[7], "slots": slots, "open": opened})
    return out


def info_dict(text: str) -> dict:
    return dict(line.split(":", 1) for line in text.replace("\r", "").splitlines() if ":" in line)


def cluster_info(node: ClusterNode) -> dict:
    return info_dict(node.call("CLUSTER", "INFO"))


def slot_map(node: ClusterNode) -> dict[int, str]:
    """slot -> owner id, as `node` sees it."""
    owners = {}
    for n in parse_nodes(node.call("CLUSTER", "NODES")):
        for s in n["slots"]:
            owners[s] = n["id"]
    return owners


# --------------------------------------------------------------------------
# The cluster


def redis_cli(*args, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([REDIS_CLI, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"redis-cli {' '.join(map(str, args))} exited {proc.returncode}\n"
                             f"--- stdout ---\n{proc.stdout[-6000:]}\n--- stderr ---\n{proc.stderr[-3000:]}")
    return proc


class Cluster:
    def __init__(self, node_timeout: int = 2000):
        self.node_timeout = node_timeout
        self.nodes: list[ClusterNode] = []
        self._cluster_clients: list = []

    # -- processes
    def start_node(self, binary: str | None = None, extra_args=()) -> ClusterNode:
        node = ClusterNode(binary or node_binary(), self.node_timeout, extra_args)
        self.nodes.append(node)
        return node.start()

    def start_nodes(self, n: int, binary: str | None = None, extra_args=()) -> list[ClusterNode]:
        return [self.start_node(binary, extra_args) for _ in range(n)]

    def live(self) -> list[ClusterNode]:
        return [n for n in self.nodes if n.alive()]

    def by_id(self, node_id: str) -> ClusterNode:
        for n in self.nodes:
            if n.alive() and n.myid() == node_id:
                return n
        raise KeyError(node_id)

    # -- redis-cli --cluster
    def create(self, nodes: list[ClusterNode] | None = None, replicas: int = 1,
               timeout: float = 60) -> None:
        nodes = nodes or self.nodes
        redis_cli("--cluster", "create", *[n.addr for n in nodes], "--cluster-replicas", replicas,
                  "--cluster-yes", timeout=timeout)
        self.wait_ok(nodes)
        self.wait_agree(nodes)
        self.wait_replication(nodes)
        if replicas:
            self.prime_replication(nodes)

    def prime_replication(self, nodes=None, timeout: float = 30) -> None:
        """Write a key on every master and WAIT for its replicas, so each replica has a non-zero
        offset: Redis lists a replica in CLUSTER SLOTS (and calls it online in SHARDS) only then."""
        nodes = nodes or self.live()
        for m in nodes:
            me = parse_nodes_self(m)
            if me["master"] != "-" or not me["slots"]:
                continue
            n_replicas = len([e for e in parse_nodes(m.call("CLUSTER", "NODES")) if e["master"] == me["id"]])
            m.sync_replicas(n_replicas, timeout)

    def check(self, node: ClusterNode | None = None) -> str:
        node = node or self.live()[0]
        proc = redis_cli("--cluster", "check", node.addr)
        assert "[OK] All 16384 slots covered" in proc.stdout, proc.stdout
        return proc.stdout

    def cluster_client(self, **kw):
        """A redis-py RedisCluster over the live nodes; closed at teardown."""
        from redis.cluster import ClusterNode as PyNode, RedisCluster
        kw.setdefault("decode_responses", True)
        kw.setdefault("socket_timeout", 15)
        rc = RedisCluster(startup_nodes=[PyNode(HOST, n.port) for n in self.live()], **kw)
        self._cluster_clients.append(rc)
        return rc

    # -- roles
    def masters(self) -> list[ClusterNode]:
        return [n for n in self.live() if n.call("ROLE")[0] == "master"
                and parse_nodes_self(n)["slots"]]

    def replicas_of(self, master: ClusterNode) -> list[ClusterNode]:
        mid = master.myid()
        return [n for n in self.live() if parse_nodes_self(n)["master"] == mid]

    # -- waiting (all by polling)
    def wait_ok(self, nodes=None, timeout: float = 30) -> None:
        nodes = nodes or self.live()
        for n in nodes:
            wait_for(lambda: cluster_info(n).get("cluster_state") == "ok", timeout=timeout,
                     interval=0.05, message=f"{n!r}: cluster_state never became ok")

    def agreement(self, nodes=None):
        """The cluster as every node sees it, if they all agree; else None.

        Agreement: each node lists every other node (by id and address), none is in
        handshake / pfail / fail / noaddr, roles and masters match, the slot map matches and
        no slot is half-open. Epochs and link states are per-observer, so they are left out.
        """
        nodes = nodes or self.live()
        views = []
        for n in nodes:
            entries = parse_nodes(n.call("CLUSTER", "NODES"))
            view = []
            for e in entries:
                flags = e["flags"] - {"myself"}
                if flags & {"handshake", "fail?", "fail", "noaddr"} or e["open"]:
                    return None
                role = "master" if "master" in flags else "slave"
                view.append((e["id"], e["addr"], role, e["master"], frozenset(e["slots"])))
            views.append(sorted(view))
        if any(v != views[0] for v in views) or len(views[0]) != len(nodes):
            return None
        return views[0]

    def wait_agree(self, nodes=None, timeout: float = 30):
        return wait_for(lambda: self.agreement(nodes), timeout=timeout, interval=0.05,
                        message="CLUSTER NODES never agreed on every node")

    def wait_replication(self, nodes=None, timeout: float = 30) -> None:
        """Every replica has its link to its master up (INFO replication)."""
        nodes = nodes or self.live()
        for n in nodes:
            if parse_nodes_self(n)["master"] != "-":
                wait_for(lambda: info_dict(n.call("INFO", "replication")).get("master_link_status") == "up",
                         timeout=timeout, interval=0.05, message=f"{n!r}: replication link never came up")

    def wait_role(self, node: ClusterNode, role: str, timeout: float = 30) -> None:
        wait_for(lambda: node.call("ROLE")[0] == role, timeout=timeout, interval=0.05,
                 message=f"{node!r} never became {role}")

    def wait_full_coverage(self, nodes=None, timeout: float = 30) -> None:
        """Every node maps all 16384 slots to live masters in CLUSTER SLOTS."""
        live_ports = {n.port for n in self.live()}

        def covered(n):
            total = 0
            for entry in n.call("CLUSTER", "SLOTS"):
                if int(entry[2][1]) not in live_ports:
                    return False
                total += int(entry[1]) - int(entry[0]) + 1
            return total == SLOTS

        for n in nodes or self.live():
            wait_for(lambda: covered(n), timeout=timeout, interval=0.05,
                     message=f"{n!r}: CLUSTER SLOTS never covered every slot with live nodes")

    # -- teardown
    def close(self) -> list[str]:
        for rc in self._cluster_clients:
            try:
                rc.close()
            except Exception:
                pass
        return [c for c in (n.finish() for n in self.nodes) if c]


def parse_nodes_self(node: ClusterNode) -> dict:
    return next(e for e in parse_nodes(node.call("CLUSTER", "NODES")) if "myself" in e["flags"])


def _cluster_fixture():
    c = Cluster()
    try:
        yield c
    finally:
        complaints = c.close()
    if complaints:
        pytest.fail("\n\n".join(complaints), pytrace=False)


@pytest.fixture
def cluster():
    """A Cluster to start nodes in (node-timeout 2000 ms unless the test sets cluster.node_timeout
    before starting nodes); every node is stopped and its directory removed at teardown."""
    yield from _cluster_fixture()


@pytest.fixture(scope="module")
def module_cluster():
    """The same, shared by the tests of one module."""
    yield from _cluster_fixture()


@pytest.fixture(scope="module")
def six_nodes(module_cluster):
    """3 masters + 3 replicas made by `redis-cli --cluster create`, settled; shared by a module."""
    module_cluster.start_nodes(6)
    module_cluster.create(replicas=1)
    return module_cluster


def set_all(rc, keys, value=None, batch: int = 1000) -> None:
    """SET each key (to itself, or to `value`) through a RedisCluster pipeline."""
    for i in range(0, len(keys), batch):
        pipe = rc.pipeline()
        for k in keys[i:i + batch]:
            pipe.set(k, k if value is None else value)
        assert all(pipe.execute())


def get_all(rc, keys, batch: int = 1000) -> list:
    out = []
    for i in range(0, len(keys), batch):
        pipe = rc.pipeline()
        for k in keys[i:i + batch]:
            pipe.get(k)
        out += pipe.execute()
    return out


def migrate_slot(src: ClusterNode, dst: ClusterNode, slot: int, everyone, batch: int = 100) -> int:
    """Move one slot the way redis-cli does: IMPORTING, MIGRATING, MIGRATE ... KEYS in batches,
    then SETSLOT NODE on the target, the source and every other master. Returns keys moved."""
    dst_id, src_id = dst.myid(), src.myid()
    dst.call("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
    src.call("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
    moved = 0
    while True:
        keys = src.call("CLUSTER", "GETKEYSINSLOT", slot, batch)
        if not keys:
            break
        src.call("MIGRATE", HOST, dst.port, "", 0, 5000, "KEYS", *keys)
        moved += len(keys)
    for n in [dst, src] + [n for n in everyone if n not in (src, dst)]:
        n.call("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
    return moved


def sum_dbsize(nodes) -> int:
    return sum(int(n.call("DBSIZE")) for n in nodes)


def describe_failure(cluster: Cluster) -> str:
    """CLUSTER NODES of every live node, for assertion messages."""
    parts = []
    for n in cluster.live():
        try:
            parts.append(f"{n!r}:\n{n.call('CLUSTER', 'NODES')}")
        except Exception as exc:  # a node that stopped answering is part of the story
            parts.append(f"{n!r}: {exc!r}")
    return "\n".join(parts)


"""tls-cluster yes (issue 17): the cluster bus and MIGRATE over TLS.

Nodes listen on a TLS port only (port 0); with tls-cluster yes their bus port is tls-port + 10000
and speaks TLS both ways (each side verifies the other against the test CA; tls-auth-clients is
yes, so outgoing links present a certificate too), MIGRATE connects with TLS, and replicas sync
over TLS (tls-replication yes). Covered: a 3-master vireo cluster made with CLUSTER MEET on the
TLS ports and ADDSLOTSRANGE, a replica, `redis-cli --tls -c` across nodes, a slot moved with
MIGRATE ... KEYS, and a Debian redis-server 7.0 node (built with TLS) joining the vireo cluster
and taking a slot. Certificates come from test_tls.py's `certs` fixture (the openssl CLI).
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess

import pytest
import redis

from cluster_helpers import (REDIS_CLI, REDIS_SERVER, Cluster, ClusterNode, info_dict, key_slot,
                             keys_in_slots, migrate_slot, node_binary, parse_nodes, slot_map)
from conftest import HOST, free_cluster_port, wait_for
from test_tls import certs  # noqa: F401  (module fixture: the CA and signed certificates)


def _redis_cli_has_tls() -> bool:
    try:
        proc = subprocess.run([REDIS_CLI, "--help"], capture_output=True, text=True)
        out = proc.stdout + proc.stderr
    except OSError:
        return False
    return "--tls" in out


pytestmark = pytest.mark.skipif(
    shutil.which("openssl") is None or not _redis_cli_has_tls(),
    reason="needs the openssl CLI and a redis-cli built with TLS")

# This module's ports: TLS client ports 26000-26999, bus ports 10000 above.
PORT_LO, PORT_HI = 26000, 26999
def pick_port() -> int:
    return free_cluster_port(PORT_LO, PORT_HI)


class TlsNode(ClusterNode):
    """A cluster node with only a TLS port (self.port), tls-cluster and tls-replication yes.
    It presents `cert` (signed by `cert_ca`) and verifies peers against the test CA."""

    def __init__(self, binary, node_timeout, certs, extra_args=(), cert="server",  # noqa: F811
                 cert_ca="ca"):
        super().__init__(binary, node_timeout, extra_args)
        self.certs = certs
        self.cert = cert
        self.cert_ca = cert_ca

    def argv(self) -> list[str]:
        c = self.certs
        return [self.binary, "--port", "0", "--tls-port", str(self.port), "--bind", HOST,
                "--tls-cert-file", str(c / f"{self.cert}.crt"),
                "--tls-key-file", str(c / f"{self.cert}.key"),
                "--tls-ca-cert-file", str(c / "ca.crt"), "--tls-cluster", "yes",
                "--tls-replication", "yes", "--cluster-enabled", "yes",
                "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(self.node_timeout),
                "--save", "", "--appendonly", "no", *self.extra_args]

    def start(self) -> "TlsNode":
        if self.port == 0:
            self.port = pick_port()  # the base class then starts on it without hopping
        return super().start()

    def _ssl_kw(self) -> dict:
        c = self.certs
        return dict(ssl=True, ssl_ca_certs=str(c / f"{self.cert_ca}.crt"),
                    ssl_certfile=str(c / "client.crt"),
                    ssl_keyfile=str(c / "client.key"))

    def ping(self) -> bool:
        ctx = ssl.create_default_context(cafile=str(self.certs / f"{self.cert_ca}.crt"))
        ctx.load_cert_chain(self.certs / "client.crt", self.certs / "client.key")
        try:
            with socket.create_connection((HOST, self.port), timeout=0.5) as raw:
                with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                    s.sendall(b"*1\r\n$4\r\nPING\r\n")
                    return s.recv(64).startswith(b"+PONG")
        except (OSError, ssl.SSLError):
            return False

    def client(self, **kw) -> redis.Redis:
        kw.setdefault("decode_responses", True)
        kw.setdefault("socket_timeout", 15)
        c = redis.Redis(host=HOST, port=self.port, **self._ssl_kw(), **kw)
        c.response_callbacks.clear()
        self._clients.append(c)
        return c

    def call(self, *args):
        c = redis.Redis(host=HOST, port=self.port, decode_responses=True, socket_timeout=10,
                        **self._ssl_kw())
        c.response_callbacks.clear()
        try:
            return c.execute_command(*args)
        finally:
            c.close()


class TlsCluster(Cluster):
    def __init__(self, certs):  # noqa: F811
        super().__init__(node_timeout=2000)
        self.certs = certs

    def start_node(self, binary=None, extra_args=()) -> TlsNode:
        node = TlsNode(binary or node_binary(), self.node_timeout, self.certs, extra_args)
        self.nodes.append(node)
        return node.start()

    def cli(self, *args, timeout: float = 60) -> subprocess.CompletedProcess:
        """redis-cli over TLS with the test client certificate."""
        c = self.certs
        argv = [REDIS_CLI, "--tls", "--cacert", str(c / "ca.crt"), "--cert", str(c / "client.crt"),
                "--key", str(c / "client.key"), *map(str, args)]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, \
            f"{argv} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc


@pytest.fixture(scope="module")
def tls_cluster(certs):  # noqa: F811
    """3 vireo masters (CLUSTER MEET on the TLS ports, ADDSLOTSRANGE) and a replica of the
    first, all TLS-only; shared by the module's tests."""
    c = TlsCluster(certs)
    try:
        masters = c.start_nodes(3)
        replica = c.start_node()
        for n in masters[1:] + [replica]:
            assert masters[0].call("CLUSTER", "MEET", HOST, n.port) == "OK"
        ranges = [(0, 5460), (5461, 10922), (10923, 16383)]
        for n, (lo, hi) in zip(masters, ranges):
            assert n.call("CLUSTER", "ADDSLOTSRANGE", lo, hi) == "OK"
        # The replica learns of the master (by gossip) before it can follow it.
        master_id = masters[0].myid()
        wait_for(lambda: master_id in replica.call("CLUSTER", "NODES"),
                 timeout=30, interval=0.05, message="the replica never learnt of its master")
        assert replica.call("CLUSTER", "REPLICATE", master_id) == "OK"
        c.wait_ok()
        c.wait_agree()
        c.wait_replication()
        c.masters_list = masters
        c.replica = replica
        yield c
    finally:
        complaints = c.close()
    if complaints:
        pytest.fail("\n\n".join(complaints), pytrace=False)


def test_tls_cluster_forms_and_announces_tls_ports(tls_cluster):
    c = tls_cluster
    nodes = c.masters_list + [c.replica]
    for n in nodes:
        info = info_dict(n.call("CLUSTER", "INFO"))
        assert info["cluster_state"] == "ok" and info["cluster_known_nodes"] == "4", info
        # Every link carries traffic: PINGs and PONGs both ways.
        assert int(info["cluster_stats_messages_pong_received"]) > 0
    ports = {n.port for n in nodes}
    for line in c.masters_list[1].call("CLUSTER", "NODES").splitlines():
        addr = line.split()[1]
        port = int(addr.split("@")[0].rsplit(":", 1)[1])
        bus = int(addr.split("@")[1].split(",")[0])
        # The TLS port is the one announced; the bus is 10000 above it.
        assert port in ports and bus == port + 10000, line
    # CLUSTER SLOTS/SHARDS name the TLS port as the endpoint's port.
    for entry in c.masters_list[2].call("CLUSTER", "SLOTS"):
        assert int(entry[2][1]) in ports
    # Nothing listens in plain text: the bus port refuses a plain PING as garbage, not a crash.
    with socket.create_connection((HOST, c.masters_list[0].port + 10000), timeout=2) as s:
        s.sendall(b"RCmb" + b"\0" * 2000)
        s.settimeout(5)
        try:
            while s.recv(4096):
                pass
        except OSError:
            pass
    assert all(n.alive() for n in nodes)


def test_bus_refuses_a_node_whose_certificate_does_not_verify(tls_cluster):
    """A node with a certificate from another CA MEETs the cluster: its bus connections fail the
    TLS handshake (tls-auth-clients yes), so nobody learns of it and its handshake entry for the
    vireo node expires."""
    c = tls_cluster
    rogue = TlsNode(node_binary(), c.node_timeout, c.certs, cert="rogue", cert_ca="rogue-ca")
    c.nodes.append(rogue)
    rogue.start()
    target = c.masters_list[0]
    assert rogue.call("CLUSTER", "MEET", HOST, target.port) == "OK"
    wait_for(lambda: len(parse_nodes(rogue.call("CLUSTER", "NODES"))) == 1, timeout=30,
             interval=0.05, message="the rogue node's handshake never expired")
    rogue_id = rogue.myid()
    for n in c.masters_list + [c.replica]:
        assert rogue_id not in n.call("CLUSTER", "NODES")
        assert info_dict(n.call("CLUSTER", "INFO"))["cluster_known_nodes"] == "4"
    rogue.stop()


def test_stalled_bus_handshake_is_closed(tls_cluster):
    """A peer that connects to the TLS bus and never says a word is dropped (after 10 s)."""
    target = tls_cluster.masters_list[1]
    if target.is_redis:
        pytest.skip("Redis 7 has no handshake timeout on the cluster bus (a vireo addition)")
    with socket.create_connection((HOST, target.port + 10000), timeout=5) as s:
        s.settimeout(30)
        try:
            assert s.recv(16) == b""
        except ConnectionResetError:
            pass
    assert info_dict(target.call("CLUSTER", "INFO"))["cluster_state"] == "ok"


def test_replica_syncs_over_tls(tls_cluster):
    c = tls_cluster
    master, replica = c.masters_list[0], c.replica
    keys = keys_in_slots(range(0, 5461), 200, prefix="rep")
    mc = master.client()
    for k in keys:
        mc.set(k, k)
    assert int(mc.execute_command("WAIT", 1, 10000)) == 1
    role = replica.call("ROLE")
    assert role[0] == "slave" and int(role[2]) == master.port and role[3] == "connected"
    assert int(replica.call("DBSIZE")) == int(master.call("DBSIZE"))
    rc = replica.client()
    rc.execute_command("READONLY")
    assert rc.execute_command("GET", keys[-1]) == keys[-1]


def test_redis_cli_tls_cluster_mode_reads_and_writes_across_nodes(tls_cluster):
    c = tls_cluster
    entry = c.masters_list[0]
    keys = [f"cli-{i}" for i in range(30)]
    owners = {slot_map(entry)[key_slot(k)] for k in keys}
    assert len(owners) == 3  # the keys span every master: -c must follow MOVED each time
    for k in keys:
        assert c.cli("-h", HOST, "-p", entry.port, "-c", "SET", k, f"v-{k}").stdout.strip() == "OK"
    for k in keys:
        out = c.cli("-h", HOST, "-p", c.masters_list[2].port, "-c", "GET", k).stdout
        assert out.strip() == f"v-{k}"
    out = c.cli("--cluster", "check", f"{HOST}:{entry.port}").stdout
    assert "[OK] All 16384 slots covered" in out, out


def test_migrate_slot_between_tls_nodes(tls_cluster):
    c = tls_cluster
    src, dst = c.masters_list[1], c.masters_list[2]
    slot = 5461
    keys = keys_in_slots([slot], 150, prefix="mig")
    sc = src.client()
    for k in keys:
        sc.set(k, k)
    assert migrate_slot(src, dst, slot, c.masters_list, batch=40) == len(keys)
    assert int(dst.call("CLUSTER", "COUNTKEYSINSLOT", slot)) == len(keys)
    assert int(src.call("CLUSTER", "COUNTKEYSINSLOT", slot)) == 0
    c.wait_agree()
    assert c.cli("-h", HOST, "-p", src.port, "-c", "GET", keys[7]).stdout.strip() == keys[7]
    # A single-key MIGRATE to a node that doesn't serve the slot: the target's -MOVED to its
    # RESTORE-ASKING comes back over TLS as MIGRATE's error, and the key stays.
    dc = dst.client()
    with pytest.raises(redis.ResponseError, match="Target instance replied with error: MOVED"):
        dc.execute_command("MIGRATE", HOST, src.port, keys[1], 0, 5000, "COPY")
    assert dc.execute_command("EXISTS", keys[1]) == 1


def test_redis_7_0_tls_node_joins_vireo_tls_cluster(tls_cluster):
    c = tls_cluster
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    guest = c.start_node(binary=REDIS_SERVER)
    host_node = c.masters_list[0]
    # The guest introduces itself over TLS; the vireo node answers and gossips it on.
    assert guest.call("CLUSTER", "MEET", HOST, host_node.port) == "OK"
    everyone = c.masters_list + [c.replica, guest]
    c.wait_agree(everyone, timeout=30)
    c.wait_ok(everyone)
    # A slot with its keys moves to the Redis node (vireo's MIGRATE to Redis over TLS), then
    # one back (Redis's MIGRATE to vireo over TLS).
    slot = 100
    keys = keys_in_slots([slot], 60, prefix="guest")
    hc = host_node.client()
    for k in keys:
        hc.set(k, k)
    masters = c.masters_list + [guest]
    # Slot 101 stays with the guest: a master that loses its last slot becomes a replica
    # (cluster-allow-replica-migration), and SETSLOT must only go to masters.
    assert migrate_slot(host_node, guest, 101, masters) == 0
    assert migrate_slot(host_node, guest, slot, masters) == len(keys)
    c.wait_agree(everyone, timeout=30)
    gid = guest.myid()
    for n in everyone:
        assert slot_map(n)[slot] == gid, n
    assert c.cli("-h", HOST, "-p", host_node.port, "-c", "GET", keys[3]).stdout.strip() == keys[3]
    assert migrate_slot(guest, host_node, slot, masters) == len(keys)
    c.wait_agree(everyone, timeout=30)
    assert int(host_node.call("CLUSTER", "COUNTKEYSINSLOT", slot)) == len(keys)
    assert c.cli("-h", HOST, "-p", guest.port, "-c", "GET", keys[5]).stdout.strip() == keys[5]
    # The Redis node's view matches: every vireo node connected on the TLS bus.
    view = parse_nodes(guest.call("CLUSTER", "NODES"))
    assert all(e["link"] == "connected" for e in view if "myself" not in e["flags"]), view

"""The cluster bus port under bad input: garbage, bad signatures and lengths, truncated and
random messages, pings from strangers and lies about names and addresses. The node logs and
drops what it can't use and keeps serving; nothing a peer sends can crash it or get into
nodes.conf. Also: shard channel subscribers are told when their slot leaves the node."""

from __future__ import annotations

import random
import socket
import struct
import time

import pytest

from conftest import start_server, wait_for

HEADER = 2256
NAME_LEN = 40


def header(msg_type: int, sender: str, *, total: int | None = None, count: int = 0,
           epoch: int = 0, config_epoch: int = 0, slots: bytes = b"", master: str = "",
           ip: str = "", port: int = 7000, cport: int = 17000, flags: int = 1,
           version: int = 1) -> bytearray:
    buf = bytearray(HEADER)
    buf[0:4] = b"RCmb"
    struct.pack_into(">IHHHH", buf, 4, total or HEADER, version, port, msg_type, count)
    struct.pack_into(">QQQ", buf, 16, epoch, config_epoch, 0)
    buf[40:40 + NAME_LEN] = sender.encode().ljust(NAME_LEN, b"\0")[:NAME_LEN]
    buf[80:80 + len(slots)] = slots
    buf[2128:2128 + NAME_LEN] = master.encode().ljust(NAME_LEN, b"\0")[:NAME_LEN]
    buf[2168:2168 + 45] = ip.encode().ljust(45, b"\0")[:45]
    struct.pack_into(">HHH", buf, 2248, cport, flags, 0)
    return buf


def gossip(name: str, ip: str, port: int, cport: int, flags: int) -> bytes:
    g = bytearray(104)
    g[0:40] = name.encode().ljust(40, b"\0")[:40]
    g[48:48 + 45] = ip.encode().ljust(45, b"\0")[:45]
    struct.pack_into(">HHHH", g, 94, port, cport, flags, 0)
    return bytes(g)


def ping(msg_type: int, sender: str, entries: list[bytes] = (), **kw) -> bytes:
    body = b"".join(entries)
    buf = header(msg_type, sender, total=HEADER + len(body), count=len(entries), **kw)
    return bytes(buf) + body


def bus_connect(node) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", node.port + 10000), timeout=5)
    return s


def read_message(sock: socket.socket) -> bytes:
    data = b""
    while len(data) < 8:
        chunk = sock.recv(8 - len(data))
        if not chunk:
            return data
        data += chunk
    total = struct.unpack(">I", data[4:8])[0]
    while len(data) < total:
        chunk = sock.recv(total - len(data))
        if not chunk:
            break
        data += chunk
    return data


def closed_by_peer(sock: socket.socket) -> bool:
    sock.settimeout(5)
    try:
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                return True
    except (ConnectionResetError, socket.timeout):
        return False


def cluster_info(client) -> dict:
    text = client.execute_command("CLUSTER", "INFO")
    if isinstance(text, bytes):
        text = text.decode()
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


def random_name(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(40))


@pytest.fixture
def node():
    handle = start_server(["--cluster-enabled", "yes", "--cluster-node-timeout", "1000"])
    yield handle
    handle.stop()
    handle.cleanup()


def test_bad_signature_and_length_close_the_link(node):
    client = node.client(decode_responses=True)
    for payload in (b"GET / HTTP/1.1\r\n\r\n" + b"x" * 4000,
                    b"RCmb" + struct.pack(">I", 100) + b"\0" * 200,
                    b"RCmb" + struct.pack(">I", 7) + b"\0" * 8):
        s = bus_connect(node)
        s.sendall(payload)
        assert closed_by_peer(s)
        s.close()
    assert client.ping()
    assert cluster_info(client)["cluster_known_nodes"] == "1"


def test_truncated_and_unknown_messages_are_ignored(node):
    client = node.client(decode_responses=True)
    s = bus_connect(node)
    # An unknown type with a valid frame is skipped; the link keeps working.
    s.sendall(bytes(header(42, "a" * 40)))
    # A PING whose gossip count overstates the body is invalid and skipped.
    s.sendall(bytes(header(0, "b" * 40, count=5)))
    # A wrong version is skipped too.
    s.sendall(bytes(header(0, "c" * 40, version=9)))
    # A ping from a stranger is still answered with a PONG, and the stranger is not added.
    s.sendall(ping(0, "d" * 40))
    reply = read_message(s)
    assert reply[:4] == b"RCmb" and struct.unpack(">H", reply[12:14])[0] == 1
    assert cluster_info(client)["cluster_known_nodes"] == "1"
    # Half a message, then the peer goes away.
    s.sendall(ping(0, "e" * 40)[:1000])
    s.close()
    assert client.ping()


def test_random_messages_do_not_hurt(node):
    client = node.client(decode_responses=True)
    rng = random.Random(1717)
    for _ in range(60):
        s = bus_connect(node)
        for _ in range(10):
            msg_type = rng.randrange(0, 13)
            body = bytes(rng.randrange(256) for _ in range(rng.choice([0, 8, 104, 300, 2000])))
            buf = header(msg_type, random_name(rng), total=HEADER + len(body),
                         count=rng.randrange(0, 4), epoch=rng.randrange(0, 1 << 63),
                         config_epoch=rng.randrange(0, 1 << 63),
                         slots=bytes(rng.randrange(256) for _ in range(rng.randrange(0, 2048))),
                         master=rng.choice(["", random_name(rng), "x" * 40]),
                         ip=rng.choice(["", "127.0.0.1", "not an ip", "::1"]),
                         flags=rng.randrange(0, 1 << 16))
            # Random mflags, state and extension count too.
            buf[2252] = rng.randrange(256)
            buf[2253] = rng.randrange(256)
            struct.pack_into(">H", buf, 2214, rng.randrange(0, 4))
            try:
                s.sendall(bytes(buf) + body)
            except OSError:
                break
        s.close()
    assert client.ping()
    info = cluster_info(client)
    assert info["cluster_state"] in ("ok", "fail")
    # Nothing a stranger said made it into the node table or nodes.conf.
    nodes = client.execute_command("CLUSTER", "NODES")
    for line in nodes.strip().split("\n"):
        fields = line.split(" ")
        assert len(fields[0]) == 40
        assert " " not in fields[1]


def test_meet_with_lies_in_gossip(node):
    """A MEET adds the sender in handshake (and trusts its gossip); entries with bad names or
    addresses are dropped. The handshake expires when nobody answers at the claimed address."""
    client = node.client(decode_responses=True)
    s = bus_connect(node)
    fake = "f" * 40
    entries = [
        gossip("1" * 40, "127.0.0.1", 1, 2, 1),          # a plausible node, added
        gossip("bad name with spaces" + " " * 20, "127.0.0.1", 3, 4, 1),
        gossip("2" * 40, "999.1.1.1", 5, 6, 1),           # not an IP
    ]
    s.sendall(ping(2, fake, entries, ip="127.0.0.1", port=1, cport=2))
    reply = read_message(s)
    assert struct.unpack(">H", reply[12:14])[0] == 1  # PONG
    nodes = client.execute_command("CLUSTER", "NODES")
    assert "2" * 40 not in nodes
    assert "bad name" not in nodes
    # The handshake node for the MEET sender and the gossiped node can't be reached: the
    # handshake goes after node-timeout (at least a second); the gossiped one stays known.
    wait_for(lambda: "handshake" not in client.execute_command("CLUSTER", "NODES"), timeout=10)
    s.close()
    assert client.ping()


def test_shard_channel_subscribers_are_told_when_the_slot_goes(node):
    client = node.client(decode_responses=True)
    client.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    wait_for(lambda: cluster_info(client)["cluster_state"] == "ok", timeout=10)
    raw = node.raw()
    raw.send_command("SSUBSCRIBE", "news")
    assert raw.read_reply() == b"*3\r\n$10\r\nssubscribe\r\n$4\r\nnews\r\n:1\r\n"
    slot = client.execute_command("CLUSTER", "KEYSLOT", "news")
    assert client.execute_command("CLUSTER", "DELSLOTS", slot) == "OK"
    assert raw.read_reply() == b"*3\r\n$12\r\nsunsubscribe\r\n$4\r\nnews\r\n:0\r\n"
    assert client.execute_command("PUBSUB", "SHARDCHANNELS") == []

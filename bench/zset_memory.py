#!/usr/bin/python3
"""Memory of one large sorted set in vireo versus redis-server.

Starts both servers, fills one key with N members ("member:<i>", score i or random) with
pipelined ZADDs, and prints used_memory growth per server and the ratio.

    bench/zset_memory.py --vireo build/vireo-server --members 1000000
"""

import argparse
import random
import socket
import subprocess
import sys
import tempfile
import time

HOST = "127.0.0.1"


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection((HOST, port))
        self.buf = b""

    def send(self, *cmds):
        out = []
        for argv in cmds:
            out.append(b"*%d\r\n" % len(argv))
            for a in argv:
                a = a if isinstance(a, bytes) else str(a).encode()
                out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))

    def read_line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.sock.recv(1 << 20)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read_bulk(self):
        line = self.read_line()
        n = int(line[1:])
        while len(self.buf) < n + 2:
            self.buf += self.sock.recv(1 << 20)
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data


def used_memory(conn):
    conn.send(["INFO", "memory"])
    text = conn.read_bulk().decode()
    for line in text.splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise RuntimeError("no used_memory")


def measure(argv, members, random_scores):
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.Popen(argv + ["--port", str(port), "--save", "", "--appendonly", "no",
                                        "--dir", d], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            for _ in range(200):
                try:
                    conn = Conn(port)
                    break
                except OSError:
                    time.sleep(0.05)
            before = used_memory(conn)
            rng = random.Random(1)
            batch = 1000
            for start in range(0, members, batch):
                argv_z = ["ZADD", "z"]
                for i in range(start, min(members, start + batch)):
                    argv_z += [rng.random() * 1e6 if random_scores else i, f"member:{i}"]
                conn.send(argv_z)
                conn.read_line()
            after = used_memory(conn)
            return after - before
        finally:
            proc.terminate()
            proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vireo", default="build/vireo-server")
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--members", type=int, default=1000000)
    ap.add_argument("--random-scores", action="store_true")
    args = ap.parse_args()
    v = measure([args.vireo], args.members, args.random_scores)
    r = measure([args.redis], args.members, args.random_scores)
    print(f"members={args.members} vireo={v} B ({v / args.members:.1f} B/member) "
          f"redis={r} B ({r / args.members:.1f} B/member) ratio={v / r:.3f}")


if __name__ == "__main__":
    sys.exit(main())

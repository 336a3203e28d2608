#!/usr/bin/python3
"""BGSAVE time, memory during BGSAVE, dump size and load time: vireo against redis-server.

Usage: bench/persistence_compare.py --vireo build/vireo-server [--keys 1000000] [--value-size 16]
       [--runs 3]

Both servers start with --save "" in their own temporary directories and receive the same
dataset through `redis-cli --pipe` (SET key:<i> <value>). Then, per run:
  * BGSAVE time: from the BGSAVE reply until INFO says the child is done (polled every 5 ms);
  * peak RSS: the parent's RSS and the child's RSS and private (copy-on-write) memory, sampled
    from /proc while the child runs;
  * load time: the server restarted on the dump, from exec until PING answers PONG (Redis
    answers -LOADING meanwhile; vireo loads before it listens).
The ratio column is redis / vireo for times (> 1 means vireo is faster) and for memory.
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

import redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kb(pid, field="VmRSS"):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def private_kb(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            total = 0
            for line in f:
                if line.startswith(("Private_Dirty:", "Private_Clean:")):
                    total += int(line.split()[1])
            return total
    except OSError:
        return 0


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


class Server:
    def __init__(self, binary, workdir):
        self.binary = binary
        self.workdir = workdir
        self.proc = None

    def start(self):
        self.port = free_port()
        self.log = open(os.path.join(self.workdir, "server.log"), "ab")
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.workdir],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.workdir)
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.binary} exited during start-up")
            time.sleep(0.002)
        self.client = redis.Redis(port=self.port, socket_timeout=120)
        return time.monotonic() - t0

    def stop(self):
        self.client.close()
        self.proc.terminate()
        self.proc.wait(60)
        self.log.close()


def fill(server, keys, value_size):
    proto = os.path.join(server.workdir, "fill.resp")
    value = b"v" * value_size
    with open(proto, "wb") as f:
        for i in range(keys):
            k = b"key:%d" % i
            f.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(value), value))
    with open(proto, "rb") as f:
        subprocess.run(["redis-cli", "-p", str(server.port), "--pipe"], stdin=f, check=True,
                       stdout=subprocess.DEVNULL)
    os.unlink(proto)
    assert server.client.dbsize() == keys


def bgsave(server):
    c = server.client
    parent = server.proc.pid
    peak = {"parent_rss": rss_kb(parent), "child_rss": 0, "child_private": 0}
    t0 = time.monotonic()
    c.bgsave()
    while True:
        for child in children(parent):
            peak["child_rss"] = max(peak["child_rss"], rss_kb(child))
            peak["child_private"] = max(peak["child_private"], private_kb(child))
        peak["parent_rss"] = max(peak["parent_rss"], rss_kb(parent))
        if c.info("persistence")["rdb_bgsave_in_progress"] == 0:
            break
        time.sleep(0.005)
    elapsed = time.monotonic() - t0
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    return elapsed, peak


def measure(binary, keys, value_size, runs):
    workdir = tempfile.mkdtemp(prefix="persist-bench-")
    try:
        s = Server(binary, workdir)
        s.start()
        fill(s, keys, value_size)
        saves, peaks = [], []
        for _ in range(runs):
            t, p = bgsave(s)
            saves.append(t)
            peaks.append(p)
        s.stop()
        size = os.path.getsize(os.path.join(workdir, "dump.rdb"))
        loads = []
        for _ in range(runs):
            s = Server(binary, workdir)
            loads.append(s.start())
            assert s.client.dbsize() == keys
            s.stop()
        peak = {k: max(p[k] for p in peaks) for k in peaks[0]}
        return {"bgsave_s": statistics.median(saves), "load_s": statistics.median(loads),
                "dump_bytes": size, **peak}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vireo", required=True)
    ap.add_argument("--redis", default=shutil.which("redis-server"))
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--value-size", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    a.vireo = os.path.abspath(a.vireo)
    res = {"redis": measure(a.redis, a.keys, a.value_size, a.runs),
           "vireo": measure(a.vireo, a.keys, a.value_size, a.runs)}
    print(f"{a.keys} keys, {a.value_size}-byte values, median of {a.runs} runs")
    print(f"{'metric':<22}{'redis':>14}{'vireo':>14}{'redis/vireo':>14}")
    for k, unit in (("bgsave_s", "s"), ("load_s", "s"), ("dump_bytes", "B"),
                    ("parent_rss", "kB"), ("child_rss", "kB"), ("child_private", "kB")):
        rv, vv = res["redis"][k], res["vireo"][k]
        ratio = f"{rv / vv:.2f}" if vv else "-"
        fmt = "{:>14.3f}" if unit == "s" else "{:>14d}"
        print(f"{k + ' (' + unit + ')':<22}" + fmt.format(rv) + fmt.format(vv) + f"{ratio:>14}")


if __name__ == "__main__":
    main()

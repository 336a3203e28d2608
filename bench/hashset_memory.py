#!/usr/bin/python3
"""Memory of one large hash and one large set: vireo against redis-server.

Starts each server on a free loopback port, fills one key (HSET big f<i> v<i>, or
SADD big m<i>) with N members through pipelined batches, and prints INFO used_memory and
used_memory_rss minus the empty server's figures, per server and per member.

    bench/hashset_memory.py --vireo build/vireo-server --members 1000000
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import redis

HOST = "127.0.0.1"


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def start(binary, port, workdir):
    if os.sep in binary:
        binary = os.path.abspath(binary)  # the server runs in its own temporary directory
    args = [binary, "--port", str(port), "--bind", HOST]
    if os.path.basename(binary).startswith("redis"):
        args += ["--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(args, cwd=workdir, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    c = redis.Redis(host=HOST, port=port)
    for _ in range(200):
        try:
            c.ping()
            return proc, c
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError(f"{binary} did not start")


def memory(c):
    info = c.info("memory")
    return info["used_memory"], info["used_memory_rss"]


def fill(c, kind, n):
    batch = 1000
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        if kind == "hash":
            args = []
            for i in range(start, stop):
                args += [f"f{i}", f"v{i}"]
            c.execute_command("HSET", "big", *args)
        else:
            c.execute_command("SADD", "big", *[f"m{i}" for i in range(start, stop)])


def measure(binary, kind, n):
    workdir = tempfile.mkdtemp()
    port = free_port()
    proc, c = start(binary, port, workdir)
    try:
        base_used, base_rss = memory(c)
        fill(c, kind, n)
        used, rss = memory(c)
        encoding = c.object("encoding", "big").decode()
        return used - base_used, rss - base_rss, encoding
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vireo", default="build/vireo-server")
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--members", type=int, default=1000000)
    args = ap.parse_args()
    print(f"| type | server | encoding | used_memory | RSS | used/member | RSS/member |")
    print(f"|---|---|---|---|---|---|---|")
    for kind in ("hash", "set"):
        for name, binary in (("vireo", args.vireo), ("redis", args.redis)):
            used, rss, encoding = measure(binary, kind, args.members)
            print(f"| {kind} | {name} | {encoding} | {used / 2**20:.1f} MB | {rss / 2**20:.1f} MB "
                  f"| {used / args.members:.1f} B | {rss / args.members:.1f} B |", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Scripting benchmarks, vireo against redis-server: EVALSHA of a trivial script, the Lua work
pool's publish (1 and 100 tasks per call) and get+ack (prefetch 1 and 5, 1 and 8 workers).

    bench/scripting_bench.py --vireo build/vireo-server --tool build/workpool_load

Both servers run on free loopback ports; each row runs on both (alternating which goes first),
--rounds times, and the medians are printed as a Markdown table with the throughput ratio and
the CPU-efficiency ratio (tasks per server CPU second), which is steadier on a shared machine.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration" / "workpool"))
from workpool import SCRIPTS, script_source  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(argv, port):
    workdir = tempfile.mkdtemp(prefix="scripting-bench-")
    proc = subprocess.Popen(argv, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port)
    for _ in range(200):
        try:
            client.ping()
            return proc, client
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError(f"{argv[0]} did not start")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_scripts(client):
    return {name: client.script_load(script_source(name)) for name in SCRIPTS}


def prefill(client, shas, n):
    args = []
    pipe = client.pipeline(transaction=False)
    for i in range(n):
        part = "" if i % 3 == 0 else f"p{i % 64}"
        args += [f"t{i}", f"payload-{i}", part, 1 if i % 5 == 0 else 0, 0]
        if len(args) == 500:
            pipe.evalsha(shas["publish"], 1, "wp", *args)
            args = []
    if args:
        pipe.evalsha(shas["publish"], 1, "wp", *args)
    pipe.execute()


def run_row(tool, port, pid, client, row, seconds, tasks):
    client.flushall()
    client.script_flush()
    shas = load_scripts(client)
    trivial = client.script_load("return 1")
    cmd = [tool, "--port", str(port), "--clients", str(row["clients"]), "--seconds", str(seconds)]
    if row["mode"] == "evalsha":
        cmd += ["--mode", "evalsha", "--sha", trivial]
    elif row["mode"] == "publish":
        cmd += ["--mode", "publish", "--batch", str(row["batch"]), "--publish-sha", shas["publish"]]
    else:
        prefill(client, shas, tasks)
        cmd += ["--mode", "getack", "--prefetch", str(row["prefetch"]), "--get-sha", shas["get"],
                "--ack-sha", shas["ack"], "--seconds", "120"]
    cpu0 = cpu_seconds(pid)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    cpu = cpu_seconds(pid) - cpu0
    result = json.loads(out.strip().splitlines()[-1])
    if "error" in result:
        raise RuntimeError(result["error"])
    if row["mode"] == "getack":
        stats = client.evalsha(shas["stats"], 1, "wp")
        assert stats[4] == tasks, stats
    result["tasks_per_cpu_sec"] = result["tasks"] / cpu if cpu > 0 else 0
    return result


ROWS = [
    {"name": "EVALSHA trivial (8 clients)", "mode": "evalsha", "clients": 8},
    {"name": "EVALSHA trivial (1 client)", "mode": "evalsha", "clients": 1},
    {"name": "publish 1 task/call (8 clients)", "mode": "publish", "batch": 1, "clients": 8},
    {"name": "publish 100 tasks/call (8 clients)", "mode": "publish", "batch": 100, "clients": 8},
    {"name": "get+ack prefetch 1, 1 worker", "mode": "getack", "prefetch": 1, "clients": 1},
    {"name": "get+ack prefetch 5, 1 worker", "mode": "getack", "prefetch": 5, "clients": 1},
    {"name": "get+ack prefetch 1, 8 workers", "mode": "getack", "prefetch": 1, "clients": 8},
    {"name": "get+ack prefetch 5, 8 workers", "mode": "getack", "prefetch": 5, "clients": 8},
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vireo", default=str(REPO / "build" / "vireo-server"))
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--tool", default=str(REPO / "build" / "workpool_load"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--tasks", type=int, default=30000)
    ap.add_argument("--rows", default="", help="comma-separated row indexes (default all)")
    args = ap.parse_args()

    vport, rport = free_port(), free_port()
    vproc, vclient = start([args.vireo, "--port", str(vport), "--bind", "127.0.0.1"], vport)
    rproc, rclient = start([args.redis, "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                            "--appendonly", "no"], rport)
    servers = {"vireo": (vport, vproc.pid, vclient), "redis": (rport, rproc.pid, rclient)}
    rows = ROWS if not args.rows else [ROWS[int(i)] for i in args.rows.split(",")]
    print("| row | vireo tasks/s | redis tasks/s | ratio | CPU-efficiency ratio |")
    print("|---|---:|---:|---:|---:|")
    try:
        for row in rows:
            samples = {"vireo": [], "redis": []}
            for rnd in range(args.rounds):
                order = ["vireo", "redis"] if rnd % 2 == 0 else ["redis", "vireo"]
                for name in order:
                    port, pid, client = servers[name]
                    samples[name].append(run_row(args.tool, port, pid, client, row, args.seconds,
                                                 args.tasks))
            v = statistics.median(s["tasks_per_sec"] for s in samples["vireo"])
            r = statistics.median(s["tasks_per_sec"] for s in samples["redis"])
            ve = statistics.median(s["tasks_per_cpu_sec"] for s in samples["vireo"])
            re_ = statistics.median(s["tasks_per_cpu_sec"] for s in samples["redis"])
            print(f"| {row['name']} | {v:,.0f} | {r:,.0f} | {v / r:.2f} | {ve / re_:.2f} |",
                  flush=True)
    finally:
        for proc in (vproc, rproc):
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()

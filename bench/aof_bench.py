#!/usr/bin/python3
"""SET throughput with the AOF on: vireo against redis-server with the same settings.

Both servers run with --appendonly yes --appendfsync <mode> --save '' in their own temporary
directory (on the same filesystem), and redis-benchmark sends SETs of random keys to each,
alternating which server goes first every round. Prints medians as a Markdown table.

    bench/aof_bench.py --vireo build/vireo-server
    bench/aof_bench.py --modes always --pipelines 1 --clients 50 --requests 20000

appendfsync always pays an fdatasync per event-loop turn on both servers, so its numbers
follow the disk; everysec and no follow the CPU. The machine's other load skews single runs:
compare medians, and the CPU column (server CPU seconds per 100k requests).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOST = "127.0.0.1"
REPO_ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def ping_ok(port) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5) as s:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class Server:
    def __init__(self, name, binary, args, base_dir):
        self.name = name
        self.workdir = tempfile.mkdtemp(prefix=f"aof-bench-{name}-", dir=base_dir)
        self.port = free_port()
        self.argv = [binary, "--port", str(self.port), "--bind", HOST, "--dir", self.workdir,
                     *args]
        self.log = open(os.path.join(self.workdir, "server.log"), "wb")
        self.proc = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not ping_ok(self.port):
            if self.proc.poll() is not None:
                sys.exit(f"{name} exited: {' '.join(self.argv)}")
            time.sleep(0.02)

    def cpu_seconds(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def run_benchmark(server, requests, clients, pipeline, keyspace, datasize) -> tuple[float, float]:
    cpu0 = server.cpu_seconds()
    out = subprocess.run(
        ["redis-benchmark", "-h", HOST, "-p", str(server.port), "-t", "set", "-n", str(requests),
         "-c", str(clients), "-P", str(pipeline), "-r", str(keyspace), "-d", str(datasize), "-q",
         "--csv"],
        capture_output=True, text=True, timeout=600).stdout
    cpu = server.cpu_seconds() - cpu0
    for line in out.splitlines():
        parts = [p.strip('"') for p in line.split(",")]
        if parts and parts[0] == "SET":
            return float(parts[1]), cpu * 100000 / requests
    raise RuntimeError(f"no SET result in {out!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vireo", default=os.environ.get("VIREO_SERVER",
                                                      str(REPO_ROOT / "build" / "vireo-server")))
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--modes", default="everysec,always")
    ap.add_argument("--pipelines", default="1,16")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--requests", type=int, default=100000,
                    help="per run (always mode uses a tenth of it, its fsyncs are slow)")
    ap.add_argument("--keyspace", type=int, default=100000)
    ap.add_argument("--datasize", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default=None, help="where the servers' data directories go")
    args = ap.parse_args()

    rows = []
    for mode in args.modes.split(","):
        for pipeline in [int(p) for p in args.pipelines.split(",")]:
            requests = args.requests // 10 if mode == "always" else args.requests
            samples = {"vireo": [], "redis": []}
            cpu = {"vireo": [], "redis": []}
            for rnd in range(args.rounds):
                order = [("vireo", args.vireo), ("redis", args.redis)]
                if rnd % 2:
                    order.reverse()
                for name, binary in order:
                    s = Server(name, binary, ["--appendonly", "yes", "--appendfsync", mode,
                                              "--save", ""], args.dir)
                    try:
                        rps, cpu100k = run_benchmark(s, requests, args.clients, pipeline,
                                                     args.keyspace, args.datasize)
                    finally:
                        s.stop()
                    samples[name].append(rps)
                    cpu[name].append(cpu100k)
                    print(f"{mode} P={pipeline} round {rnd + 1} {name}: {rps:.0f} rps",
                          file=sys.stderr, flush=True)
            v = statistics.median(samples["vireo"])
            r = statistics.median(samples["redis"])
            rows.append((mode, pipeline, v, r, v / r, statistics.median(cpu["vireo"]),
                         statistics.median(cpu["redis"])))
    print(f"\nSET, {args.clients} clients, keyspace {args.keyspace}, {args.rounds} rounds "
          "(medians)\n")
    print("| appendfsync | pipeline | vireo rps | redis rps | ratio | vireo CPU s/100k | "
          "redis CPU s/100k |")
    print("|---|---|---|---|---|---|---|")
    for mode, p, v, r, ratio, vc, rc in rows:
        print(f"| {mode} | {p} | {v:.0f} | {r:.0f} | {ratio:.2f} | {vc:.2f} | {rc:.2f} |")


if __name__ == "__main__":
    main()

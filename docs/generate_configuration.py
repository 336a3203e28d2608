#!/usr/bin/env python3
"""Writes docs/configuration.md: every option vireo's CONFIG knows (CONFIG GET * plus the
hidden ones), its default and mutability, and whether vireo honours it.

    /usr/bin/python3 docs/generate_configuration.py --vireo build/vireo-server

Options are "honoured" unless NO_EFFECT below says why vireo accepts them (with Redis's
validation, so a Redis 7.2 redis.conf loads) without acting on them; PARTIAL says where vireo
honours an option with a difference.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import tempfile
import time

import redis

HIDDEN = ["rdb-key-save-delay", "key-load-delay", "loading-process-events-interval-bytes",
          "use-exit-on-panic", "aof-disable-auto-gc", "watchdog-period", "req-res-logfile",
          "client-default-resp"]

NO_EFFECT = {
    "activerehashing": "vireo's tables always rehash incrementally (a step on each access and "
                       "a bounded step per cron tick); there is no separate pass to switch off",
    "shutdown-timeout": "shutdown never waits for lagging replicas (SHUTDOWN behaves as with NOW)",
    "set-proc-title": "vireo does not rewrite its process title",
    "proc-title-template": "validated as Redis does (unknown variables, blank result); the title "
                           "is not rewritten",
    "locale-collate": "validated (`Invalid locale name`); SORT ALPHA compares bytes (C locale)",
    "ignore-warnings": "vireo prints none of the start-up warnings Redis lets you silence",
    "crash-log-enabled": "vireo installs no crash-report handler; a crash dumps core as the "
                         "system is set up to",
    "crash-memcheck-enabled": "no crash report, so no memory test after a crash",
    "watchdog-period": "no SIGALRM watchdog",
    "socket-mark-id": "listening sockets are not marked (SO_MARK)",
    "server_cpulist": "no CPU pinning",
    "bio_cpulist": "no CPU pinning",
    "aof_rewrite_cpulist": "no CPU pinning",
    "bgsave_cpulist": "no CPU pinning",
    "io-threads": "vireo serves all clients from one thread",
    "io-threads-do-reads": "vireo serves all clients from one thread",
    "jemalloc-bg-thread": "vireo uses glibc malloc",
    "activedefrag": "`yes` is refused with the error of a Redis built without its patched "
                    "jemalloc: vireo has no defragmenter",
    "active-defrag-ignore-bytes": "no defragmenter",
    "active-defrag-threshold-lower": "no defragmenter",
    "active-defrag-threshold-upper": "no defragmenter",
    "active-defrag-cycle-min": "no defragmenter",
    "active-defrag-cycle-max": "no defragmenter",
    "active-defrag-max-scan-fields": "no defragmenter",
    "replica-ignore-disk-write-errors": "a vireo replica has no stop-on-write-error path to "
                                        "switch off",
    "propagation-error-behavior": "a vireo replica logs errors in the replicated stream and "
                                  "carries on (`ignore`)",
    "req-res-logfile": "Redis writes it only in its test builds",
    "rdb-del-sync-files": "sync RDB files are not deleted afterwards",
    "rdb-save-incremental-fsync": "RDB files are synced once, when complete",
    "aof-rewrite-incremental-fsync": "the rewritten AOF is synced once, when complete",
    "tls-cluster": "see the cluster documentation",
}

PARTIAL = {
    "always-show-logo": "a two-line start-up banner (version, mode, port, PID), not Redis's "
                        "ASCII art",
    "bind-source-addr": "the source address of a replica's link to its master",
    "aof-disable-auto-gc": "history files stay on disk until it is turned off again, but are "
                           "not listed in the manifest meanwhile",
    "supervised": "systemd (NOTIFY_SOCKET readiness) and upstart (SIGSTOP) as in Redis; INFO "
                  "shows process_supervised:no",
    "oom-score-adj": "written to /proc/self/oom_score_adj for the master, replica and "
                     "background-child roles as in Redis",
    "dynamic-hz": "the cron doubles its rate while there are more than 200 clients per tick, "
                  "up to 500 Hz",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vireo", required=True)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "configuration.md"))
    args = ap.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen([os.path.abspath(args.vireo), "--port", str(port)], cwd=tmp,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            r = redis.Redis(port=port, decode_responses=True)
            for _ in range(200):
                try:
                    r.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.02)
            values = r.config_get("*")
            # The defaults, not this run's port and directory.
            values["port"] = "6379"
            values["dir"] = "."
            for name in HIDDEN:
                values.update(r.config_get(name))
            immutable = set()
            for name, value in values.items():
                if name in ("bind", "port", "dir", "dbfilename"):
                    continue
                try:
                    r.config_set(name, value)
                except redis.ResponseError as e:
                    if "immutable" in str(e):
                        immutable.add(name)
        finally:
            proc.terminate()
            proc.wait()

    aliases = {"slaveof", "slave-lazy-flush", "slave-serve-stale-data", "slave-read-only",
               "slave-ignore-maxmemory", "slave-priority", "slave-announce-ip",
               "slave-announce-port", "min-slaves-to-write", "min-slaves-max-lag",
               "repl-ping-slave-period", "list-max-ziplist-size", "hash-max-ziplist-entries",
               "hash-max-ziplist-value", "zset-max-ziplist-entries", "zset-max-ziplist-value",
               "lua-time-limit", "cluster-slave-validity-factor", "cluster-slave-no-failover"}
    lines = [
        "# Configuration",
        "",
        "vireo reads redis.conf syntax (a file, `include`, `rename-command`, command-line `--name value`) and",
        "implements CONFIG GET / SET / REWRITE over one option table (src/core/config.cc,",
        "config_process.cc). Every option of Redis 7.2 is there with Redis's default, value",
        "check and error text, mutability, aliases (`slave-*`, `*-ziplist-*`), protection",
        "(`dir` and `dbfilename` need `enable-protected-configs`) and hidden status (test knobs",
        "that only an exact CONFIG GET name shows), so a Redis 7.2 configuration file loads",
        "unchanged. The `cluster-*` options are described with the cluster support.",
        "",
        "Status: **honoured** means vireo acts on the value; **accepted, no effect** means the",
        "value is checked and stored (CONFIG GET shows it, CONFIG REWRITE keeps it) but vireo has",
        "nothing it applies to, for the reason given.",
        "",
        "Generated by `docs/generate_configuration.py`; aliases are listed after the table.",
        "",
        "| option | default | CONFIG SET | status |",
        "|---|---|---|---|",
    ]
    for name in sorted(values):
        if name in aliases or name.startswith("cluster-"):
            continue
        default = values[name].replace("|", "\\|")
        default = f"`{default}`" if default != "" else '`""`'
        mut = "no (start-up only)" if name in immutable else "yes"
        if name in ("dir", "dbfilename"):
            mut = "protected"
        if name in NO_EFFECT:
            status = "accepted, no effect: " + NO_EFFECT[name]
        elif name in PARTIAL:
            status = "honoured: " + PARTIAL[name]
        else:
            status = "honoured"
        if name in HIDDEN:
            status += " (hidden)"
        lines.append(f"| `{name}` | {default} | {mut} | {status} |")
    lines += ["", "Aliases: " + ", ".join(f"`{a}`" for a in sorted(aliases - {
        "cluster-slave-validity-factor", "cluster-slave-no-failover"})) + ".", "",
              "Options newer than Redis 7.2: `stream-idmp-duration`, `stream-idmp-maxsize` "
              "(Redis 8.6 stream idempotency).", ""]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()

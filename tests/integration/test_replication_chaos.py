"""Replication chaos (issue 16): one vireo master, two vireo replicas, a writer using every
command family on the master, and a seeded loop of faults against the links and the replicas.

The faults: CLIENT KILL TYPE replica on the master, CLIENT KILL TYPE master on a replica,
SIGKILL + restart of a replica (same port, directory and configuration, so it keeps its data),
SIGSTOP / SIGCONT of a replica, REPLICAOF NO ONE then back, and a tiny repl-backlog-size that
forces full resyncs. One replica has appendonly yes, the other an RDB `save` rule, so restarts
go through both kinds of persistence (the RDB one continues partially from its saved offset).

At the end the writer stops, WAIT confirms both replicas, each equals the master key by key,
partial resyncs happened, and every server exits cleanly on SIGTERM.

The seed is printed (pytest -s, or shown with a failure); VIREO_CHAOS_SEED=<n> replays a run's
fault schedule (thread timing still varies). VIREO_CHAOS_SECONDS sets the length of the fault
loop (default 40, so the whole test stays near a minute).
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time

import pytest
import redis

from conftest import HOST, _finish, restart_in_place, start_server, wait_for
from repl_helpers import assert_same_data, link_up, wait_in_sync

SEED = int(os.environ.get("VIREO_CHAOS_SEED") or random.SystemRandom().randrange(1 << 32))
SECONDS = float(os.environ.get("VIREO_CHAOS_SECONDS", "40"))
SYNC_TIMEOUT = 30.0
NORMAL_BACKLOG = 1 << 20
KEYS = 16  # keys per family: small, so commands keep hitting the same keys
SHORT_TTL_PREFIX = "tmp:"

# Crash reports of a server; a clean run logs none of them.
CRASH_MARKS = ("crashed by signal", "Guru Meditation", "ERROR: AddressSanitizer", "terminate called")


# ---- servers --------------------------------------------------------------------------------


def restart(handle) -> None:
    """Start a killed server again with its own argv, directory and port (it keeps its data)."""
    restart_in_place(handle, b"\n--- restarted by the chaos test ---\n", f"(seed {SEED})")


def client(handle, **kw) -> redis.Redis:
    """A fresh client: the old ones of a restarted server are gone."""
    kw.setdefault("socket_timeout", 15)
    return redis.Redis(host=HOST, port=handle.port, **kw)


def crash_lines(handle) -> list[str]:
    text = handle.log_text(1 << 24)
    return [line for line in text.splitlines() if any(m in line for m in CRASH_MARKS)]


# ---- the writer -----------------------------------------------------------------------------


class Writer:
    """Writes to the master from two threads until stopped: a mixer of every command family,
    and a worker that blocks on lists (BLMOVE / BLPOP) the mixer feeds. Any error fails the
    test: the master is never faulted, so nothing it is sent may fail."""

    def __init__(self, master, seed: int):
        self.master = master
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.ops = 0
        self.threads = [threading.Thread(target=self._guard, args=(self.mix,), daemon=True),
                        threading.Thread(target=self._guard, args=(self.work,), daemon=True)]
        r = client(master)
        for n in range(4):
            r.xgroup_create(f"stream:{n}", "g", id="$", mkstream=True)
        r.close()

    def start(self):
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(30)
        assert not any(t.is_alive() for t in self.threads), "writer thread hung"
        assert not self.errors, (f"writer failed (seed {SEED}): {self.errors[:3]}")

    def _guard(self, body):
        try:
            body()
        except Exception as exc:  # reported by finish(), with the seed
            self.errors.append(repr(exc))

    def work(self):
        r = client(self.master)
        while not self.stop.is_set():
            # A blocking move the mixer serves by pushing, then a blocking pop of the result.
            if r.blmove("queue:in", "queue:work", 0.05, "LEFT", "RIGHT") is not None:
                r.blpop(["queue:work"], 0.05)

    def mix(self):
        r = client(self.master)
        db2 = client(self.master, db=2)
        rng = self.rng
        ops = [self.strings, self.lists, self.hashes, self.sets, self.zsets, self.streams,
               self.scripts, self.transactions, self.expires]
        while not self.stop.is_set():
            rng.choice(ops)(r, rng, rng.randrange(KEYS))
            if rng.random() < 0.1:
                self.other_db(db2, rng, rng.randrange(KEYS))
            self.ops += 1

    @staticmethod
    def strings(r, rng, n):
        pick = rng.randrange(6)
        if pick == 0:
            r.incr(f"counter:{n}")
        elif pick == 1:
            r.append(f"str:{n}", "ab" * rng.randrange(1, 20))
        elif pick == 2:
            r.set(f"str:{n}", rng.randbytes(rng.randrange(1, 300)), ex=3600)
        elif pick == 3:
            r.set(f"{SHORT_TTL_PREFIX}{n}", "gone soon", px=rng.randrange(20, 400))
        elif pick == 4:
            r.incrbyfloat(f"float:{n}", 0.5)
        else:
            r.setrange(f"str:{n}", rng.randrange(50), "xyz")

    @staticmethod
    def lists(r, rng, n):
        pick = rng.randrange(6)
        if pick == 0:
            r.rpush(f"list:{n}", *[rng.randrange(1000) for _ in range(rng.randrange(1, 6))])
        elif pick == 1:
            r.lpop(f"list:{n}", rng.randrange(1, 3))
        elif pick == 2:
            r.lmove(f"list:{n}", f"list:{(n + 1) % KEYS}", "RIGHT", "LEFT")
        elif pick == 3:
            r.blpop([f"list:{n}", f"list:{(n + 3) % KEYS}"], 0.01)
        elif pick == 4:
            r.rpush("queue:in", f"job-{n}")  # the worker's BLMOVE takes it
        else:
            r.ltrim(f"list:{n}", 0, 20)

    @staticmethod
    def hashes(r, rng, n):
        pick = rng.randrange(4)
        if pick == 0:
            r.hset(f"hash:{n}", mapping={f"f{rng.randrange(30)}": rng.randrange(10**6)})
        elif pick == 1:
            r.hincrby(f"hash:{n}", "count", 1)
        elif pick == 2:
            r.hdel(f"hash:{n}", f"f{rng.randrange(30)}")
        else:
            r.hsetnx(f"hash:{n}", f"once{rng.randrange(5)}", "v")

    @staticmethod
    def sets(r, rng, n):
        pick = rng.randrange(4)
        if pick == 0:
            r.sadd(f"set:{n}", *[f"m{rng.randrange(100)}" for _ in range(rng.randrange(1, 8))])
        elif pick == 1:
            r.spop(f"set:{n}", rng.randrange(1, 3))  # the master picks: replicas get SREMs
        elif pick == 2:
            r.srem(f"set:{n}", f"m{rng.randrange(100)}")
        else:
            r.smove(f"set:{n}", f"set:{(n + 1) % KEYS}", f"m{rng.randrange(100)}")

    @staticmethod
    def zsets(r, rng, n):
        pick = rng.randrange(4)
        if pick == 0:
            r.zadd(f"zset:{n}", {f"m{rng.randrange(50)}": rng.random() * 100})
        elif pick == 1:
            r.zincrby(f"zset:{n}", 1.5, f"m{rng.randrange(50)}")
        elif pick == 2:
            r.zpopmin(f"zset:{n}")
        else:
            r.zrem(f"zset:{n}", f"m{rng.randrange(50)}")

    @staticmethod
    def streams(r, rng, n):
        key = f"stream:{n % 4}"
        pick = rng.randrange(5)
        if pick == 0:
            r.xadd(key, {"n": n, "v": rng.randrange(1000)}, maxlen=300, approximate=False)
        elif pick == 1:
            r.xreadgroup("g", f"c{n % 3}", {key: ">"}, count=rng.randrange(1, 5))
        elif pick == 2:
            pending = r.xpending_range(key, "g", "-", "+", 3)
            if pending:
                r.xack(key, "g", *[p["message_id"] for p in pending])
        elif pick == 3:
            pending = r.xpending_range(key, "g", "-", "+", 2)
            if pending:
                r.xclaim(key, "g", f"c{(n + 1) % 3}", 0, [p["message_id"] for p in pending])
        else:
            r.xautoclaim(key, "g", "c9", 0, "0-0", count=2)

    @staticmethod
    def scripts(r, rng, n):
        if rng.random() < 0.5:
            r.eval("redis.call('incr', KEYS[1]); redis.call('rpush', KEYS[2], ARGV[1]);"
                   "redis.call('hset', KEYS[3], 'lua', ARGV[1]); return 1",
                   3, f"counter:{n}", f"list:{n}", f"hash:{n}", rng.randrange(1000))
        else:
            # Non-deterministic inside (TIME, SPOP): effects replication sends what it did.
            r.eval("local t = redis.call('time'); redis.call('set', KEYS[1], t[1] .. '.' .. t[2]);"
                   "redis.call('spop', KEYS[2]); return 1", 2, f"str:{n}", f"set:{n}")

    @staticmethod
    def transactions(r, rng, n):
        with r.pipeline(transaction=True) as p:
            p.incr(f"counter:{n}").lpush(f"list:{n}", "tx").zincrby(f"zset:{n}", 1, "tx")
            p.spop(f"set:{(n + 2) % KEYS}").hincrby(f"hash:{n}", "tx", 1)
            p.execute()

    @staticmethod
    def expires(r, rng, n):
        kind = rng.choice(["list", "hash", "set", "zset", "str"])
        pick = rng.randrange(3)
        if pick == 0:
            r.expire(f"{kind}:{n}", 3600 + rng.randrange(100))
        elif pick == 1:
            r.persist(f"{kind}:{n}")
        else:
            r.pexpire(f"{SHORT_TTL_PREFIX}{n}", rng.randrange(10, 200))

    @staticmethod
    def other_db(db2, rng, n):
        pick = rng.randrange(3)
        if pick == 0:
            db2.incr(f"db2:counter:{n}")
        elif pick == 1:
            db2.rpush(f"db2:list:{n}", n)
        else:
            db2.swapdb(2, 3)  # every database takes part


# ---- the faults -----------------------------------------------------------------------------


class Chaos:
    def __init__(self, master, replicas, seed: int):
        self.master = master
        self.replicas = replicas
        self.rng = random.Random(seed)
        self.log: list[str] = []
        self.started = time.monotonic()

    def note(self, what: str):
        self.log.append(f"{time.monotonic() - self.started:6.2f}s {what}")

    def check_alive(self):
        for h in [self.master, *self.replicas]:
            assert h.alive(), (f"{h!r} died (seed {SEED}, faults {self.log[-8:]})\n"
                               f"{h.log_text(6000)}")

    def wait_links(self):
        for h in self.replicas:
            c = client(h)
            try:
                wait_for(lambda: link_up(c), timeout=SYNC_TIMEOUT)
            except AssertionError:
                raise AssertionError(
                    f"{h!r} link never came up (seed {SEED}, faults {self.log[-8:]})\n"
                    f"--- replica log ---\n{h.log_text(5000)}\n"
                    f"--- master log ---\n{self.master.log_text(5000)}") from None
            finally:
                c.close()

    def kill_replica_links(self):
        c = client(self.master)
        killed = c.execute_command("CLIENT", "KILL", "TYPE", "replica")
        c.close()
        self.note(f"CLIENT KILL TYPE replica on the master: {killed}")

    def kill_master_link(self, h):
        c = client(h)
        killed = c.execute_command("CLIENT", "KILL", "TYPE", "master")
        c.close()
        self.note(f"CLIENT KILL TYPE master on {h.port}: {killed}")

    def sigkill_restart(self, h):
        h.proc.kill()
        h.proc.wait()
        self.note(f"SIGKILL {h.port}")
        restart(h)
        self.note(f"restarted {h.port}")

    def pause(self, h):
        seconds = self.rng.uniform(0.05, 1.0)
        h.proc.send_signal(signal.SIGSTOP)
        try:
            time.sleep(seconds)  # the fault itself: the replica is frozen this long
        finally:
            h.proc.send_signal(signal.SIGCONT)
        self.note(f"SIGSTOP {h.port} for {seconds:.2f}s")

    def promote_and_back(self, h):
        c = client(h)
        c.execute_command("REPLICAOF", "NO", "ONE")
        time.sleep(self.rng.uniform(0, 0.3))  # the fault: a while as a master of its own
        c.execute_command("REPLICAOF", HOST, self.master.port)
        c.close()
        self.note(f"REPLICAOF NO ONE and back on {h.port}")

    def tiny_backlog(self):
        c = client(self.master)
        c.config_set("repl-backlog-size", 16384)
        self.kill_replica_links()
        self.wait_links()  # they come back with writes flowing: usually a full sync
        c.config_set("repl-backlog-size", NORMAL_BACKLOG)
        c.close()
        self.note("tiny backlog, links killed, backlog restored")

    def step(self):
        self.check_alive()
        rng = self.rng
        h = rng.choice(self.replicas)
        action = rng.choices(
            ["kill_replica_links", "kill_master_link", "sigkill_restart", "pause",
             "promote_and_back", "tiny_backlog"],
            weights=[3, 3, 2, 2, 1, 1])[0]
        if action == "kill_replica_links":
            self.kill_replica_links()
        elif action == "kill_master_link":
            self.kill_master_link(h)
        elif action == "sigkill_restart":
            self.sigkill_restart(h)
        elif action == "pause":
            self.pause(h)
        elif action == "promote_and_back":
            self.promote_and_back(h)
        else:
            self.tiny_backlog()
        # Faults pile up on each other about half the time; otherwise the links recover first.
        if rng.random() < 0.5:
            self.wait_links()
        time.sleep(rng.uniform(0.05, 0.6))  # lets the writer run between faults


# ---- the test -------------------------------------------------------------------------------


@pytest.fixture
def cluster():
    master = start_server(["--repl-diskless-sync-delay", "0"])
    replicaof = ["--replicaof", HOST, str(master.port)]
    aof = start_server(["--appendonly", "yes", "--appendfsync", "everysec", *replicaof])
    rdb = start_server(["--save", "1 1", *replicaof])
    handles = [master, aof, rdb]
    yield master, [aof, rdb]
    errors = [e for e in (_finish(h) for h in handles) if e]
    if errors:
        pytest.fail(f"seed {SEED}\n" + "\n\n".join(errors), pytrace=False)


def test_replicas_equal_the_master_after_chaos(cluster):
    print(f"\nchaos seed {SEED} (VIREO_CHAOS_SEED={SEED} replays it), {SECONDS:.0f}s of faults")
    master, replicas = cluster
    m = client(master)
    chaos = Chaos(master, replicas, SEED)
    chaos.wait_links()

    writer = Writer(master, SEED + 1)
    writer.start()
    deadline = time.monotonic() + SECONDS
    try:
        while time.monotonic() < deadline:
            chaos.step()
            assert not writer.errors, f"writer failed (seed {SEED}): {writer.errors[:3]}"
    finally:
        writer.stop.set()  # also when a fault step failed: no writes into the teardown
    writer.finish()
    chaos.check_alive()
    print(f"{writer.ops} writes, {len(chaos.log)} faults:\n  " + "\n  ".join(chaos.log))

    # Keys with short TTLs: the master's expiry deletes them (touching them makes it happen
    # now), so the comparison does not race a DEL still on its way.
    for n in range(KEYS):
        m.exists(f"{SHORT_TTL_PREFIX}{n}")
    wait_for(lambda: not list(m.scan_iter(f"{SHORT_TTL_PREFIX}*")), timeout=10)

    chaos.wait_links()
    assert m.wait(2, 20_000) == 2, f"seed {SEED}"
    for h in replicas:
        r = client(h)
        wait_in_sync(m, r, timeout=SYNC_TIMEOUT)
        assert_same_data(m, r)
        r.close()

    stats = m.info("stats")
    print(f"sync_full={stats['sync_full']} sync_partial_ok={stats['sync_partial_ok']} "
          f"sync_partial_err={stats['sync_partial_err']}")
    for h in replicas:
        text = h.log_text(1 << 24)
        print(f"replica {h.port}: {text.count('Successful partial resynchronization')} partial, "
              f"{text.count('Full resync from master')} full, "
              f"{text.count('as the cached master')} restarts from its RDB's offset")
    assert stats["sync_partial_ok"] > 0, f"no partial resync in the whole run (seed {SEED})"
    m.close()

    for h in [master, *replicas]:
        assert not crash_lines(h), f"{h!r} (seed {SEED}): {crash_lines(h)}"
        code = h.stop()
        assert code == 0, f"{h!r} exited with {code} on SIGTERM (seed {SEED})\n{h.log_text()}"

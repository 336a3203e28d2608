"""Redis Sentinel (Debian's redis-server 7.0 in sentinel mode) monitors a vireo master with two
vireo replicas, fails over when the master dies, and turns the restarted old master into a
replica of the promoted one (issue 16, Sentinel).

Every server runs from its own writable config file, because Sentinel reconfigures them with
REPLICAOF + CONFIG REWRITE. Sentinel's periods are shortened with SENTINEL DEBUG so the test
takes seconds, not minutes; state changes are awaited by polling, never by sleeping.

VIREO_SERVER=$(command -v redis-server) runs the same scenario against real Redis.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
import redis
from redis.sentinel import Sentinel

from conftest import HOST, REPO_ROOT, ServerHandle, free_port, server_binary, wait_for
from repl_helpers import REDIS_SERVER, assert_same_data, wait_in_sync

SENTINEL_BINARY = shutil.which("redis-sentinel") or REDIS_SERVER
pytestmark = pytest.mark.skipif(not os.path.exists(SENTINEL_BINARY),
                                reason="redis-sentinel / redis-server is not installed")

GROUP = "mymaster"
PASSWORD = "sentinel-test-pw"
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 5000
# Sentinel needs ~1 s to see the master down, 1-2 s to agree on ODOWN and elect a leader, and
# its INFO polling to notice the promotion; turning a restarted old master into a replica waits
# 4 publish periods after it came back.
FAILOVER_DEADLINE = 40
RECONFIG_DEADLINE = 40


class Process:
    """One server or sentinel process with a fixed port, directory and config file, so it can be
    killed and restarted exactly as it was (Sentinel remembers instances by address)."""

    def __init__(self, name: str, binary: str, workdir: Path, config_text: str, port: int,
                 extra_args=(), password: str | None = None):
        self.name = name
        self.password = password
        self.binary = binary
        self.workdir = workdir
        self.port = port
        self.conf = workdir / f"{name}.conf"
        self.conf.write_text(config_text)
        self.log_path = workdir / f"{name}.log"
        self.extra_args = list(extra_args)
        self.handle: ServerHandle | None = None
        self._clients: dict = {}
        self.killed = False  # SIGKILLed on purpose: not a crash

    def start(self) -> None:
        argv = [self.binary, str(self.conf), *self.extra_args]
        with open(self.log_path, "ab") as log:
            proc = subprocess.Popen(argv, cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
        self.handle = ServerHandle(proc, self.port, self.workdir, self.log_path, argv)
        self._clients = {}
        self.killed = False

        def up():
            if not self.handle.alive():
                raise AssertionError(f"{self.name} exited with {proc.returncode}:\n"
                                     + self.log_tail())
            try:
                return self.client(socket_timeout=0.5).ping()
            except redis.RedisError:
                return False

        wait_for(up, timeout=10, interval=0.02, message=f"{self.name} did not start")

    def client(self, **kw) -> redis.Redis:
        """One client per option set and process run: polling loops reuse their connection."""
        kw.setdefault("socket_timeout", 5)
        kw.setdefault("password", self.password)
        key = tuple(sorted(kw.items()))
        if key not in self._clients:
            self._clients[key] = self.handle.client(**kw)
        return self._clients[key]

    def kill(self) -> None:
        self.killed = True
        self.handle.proc.kill()
        self.handle.stop()

    def stop(self) -> str | None:
        """SIGTERM; returns a complaint if the process had crashed or exits badly."""
        if self.handle is None:
            return None
        crashed = not self.killed and not self.handle.alive()
        code = self.handle.stop()
        if crashed or (not self.killed and code not in (0, -signal.SIGTERM)):
            return f"{self.name} died or exited badly (status {code})\n{self.log_tail()}"
        return None

    def log_tail(self, n: int = 3000) -> str:
        try:
            return f"--- {self.name} log ---\n" + self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""


def server_config(port: int, workdir: Path, master_port: int | None = None,
                  priority: int = 100, password: str | None = None) -> str:
    lines = [
        f"port {port}",
        f"bind {HOST}",
        f'dir "{workdir}"',
        'save ""',
        "appendonly no",
        "repl-diskless-sync-delay 0",
    ]
    if password is not None:
        # Sentinel AUTHs on its links; replicas (and the old master once it is demoted) need
        # masterauth for the handshake.
        lines += [f"requirepass {password}", f"masterauth {password}"]
    if master_port is not None:
        lines += [f"replicaof {HOST} {master_port}", f"replica-priority {priority}"]
    return "\n".join(lines) + "\n"


def sentinel_config(port: int, workdir: Path, master_port: int, quorum: int = 2,
                    password: str | None = None) -> str:
    lines = [
        f"port {port}",
        f"bind {HOST}",
        f'dir "{workdir}"',
        "daemonize no",
        "sentinel resolve-hostnames no",
        f"sentinel monitor {GROUP} {HOST} {master_port} {quorum}",
        f"sentinel down-after-milliseconds {GROUP} {DOWN_AFTER_MS}",
        f"sentinel failover-timeout {GROUP} {FAILOVER_TIMEOUT_MS}",
        f"sentinel parallel-syncs {GROUP} 2",
    ]
    if password is not None:
        lines.append(f"sentinel auth-pass {GROUP} {password}")
    return "\n".join(lines) + "\n"


class Processes:
    """Every process a test starts, each in its own directory under one temporary root; all are
    stopped at teardown, whatever happened."""

    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="vireo-sentinel-"))
        self.all: list[Process] = []

    def start(self, name, binary, config_for, extra=(), password=None) -> Process:
        for attempt in range(3):  # another process may take the free port before we bind it
            workdir = self.root / f"{name}.{attempt}"
            workdir.mkdir()
            port = free_port()
            p = Process(name, binary, workdir, config_for(port, workdir), port, extra, password)
            self.all.append(p)
            try:
                p.start()
                return p
            except AssertionError:
                if attempt == 2 or p.handle.alive():
                    raise
                self.all.remove(p)

    def sentinel(self, name, config_for) -> Process:
        extra = [] if SENTINEL_BINARY.endswith("redis-sentinel") else ["--sentinel"]
        return self.start(name, SENTINEL_BINARY, config_for, extra)

    def close(self) -> list[str]:
        errors = [e for e in (p.stop() for p in reversed(self.all)) if e]
        shutil.rmtree(self.root, ignore_errors=True)
        return errors


@pytest.fixture
def procs():
    ps = Processes()
    try:
        yield ps
    finally:
        errors = ps.close()
    if errors:
        pytest.fail("\n\n".join(errors), pytrace=False)


@pytest.fixture
def group(procs):
    """A master, two replicas (all started from config files; replica1 with priority 0, so
    Sentinel must promote replica2) and three sentinels. The servers require a password."""
    master = procs.start("master", server_binary(),
                         lambda port, d: server_config(port, d, password=PASSWORD),
                         password=PASSWORD)
    replicas = [
        procs.start(f"replica{i}", server_binary(),
                    lambda port, d, p=priority: server_config(port, d, master.port, p, PASSWORD),
                    password=PASSWORD)
        for i, priority in ((1, 0), (2, 100))
    ]
    sentinels = [procs.sentinel(f"sentinel{i}",
                                lambda port, d: sentinel_config(port, d, master.port,
                                                                password=PASSWORD))
                 for i in (1, 2, 3)]
    return master, replicas, sentinels


def logs(procs) -> str:
    return "\n".join(p.log_tail(2000) for p in procs)


def as_dict(reply) -> dict:
    """SENTINEL MASTER / REPLICAS entries are flat [name, value, ...] lists."""
    if isinstance(reply, dict):
        return reply
    return {reply[i]: reply[i + 1] for i in range(0, len(reply), 2)}


def sentinel_cmd(s: Process, *args):
    return s.client(decode_responses=True).execute_command("SENTINEL", *args)


def replica_ports(s: Process) -> set[int]:
    return {int(as_dict(r)["port"]) for r in sentinel_cmd(s, "REPLICAS", GROUP)}


def known_sentinels(s: Process) -> int:
    return len(sentinel_cmd(s, "SENTINELS", GROUP))


def master_addr(s: Process) -> tuple[str, int]:
    host, port = sentinel_cmd(s, "GET-MASTER-ADDR-BY-NAME", GROUP)
    return host, int(port)


def role(p: Process) -> list:
    return p.client(decode_responses=True).execute_command("ROLE")


def follows(p: Process, master_port: int) -> bool:
    r = role(p)
    return r[0] == "slave" and int(r[2]) == master_port and r[3] == "connected"


def write_until_ok(client: redis.Redis, key: str, value: str, timeout: float = 20) -> None:
    """A Sentinel-aware client retries while it finds the new master."""

    def attempt():
        try:
            return client.set(key, value)
        except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError):
            return False

    wait_for(attempt, timeout=timeout, interval=0.1, message=f"writing {key} never succeeded")


def test_sentinel_failover_of_a_vireo_group(group):
    master, (replica1, replica2), sentinels = group
    replicas = [replica1, replica2]
    everyone = [master, *replicas, *sentinels]
    mc = master.client()
    for r in replicas:
        wait_in_sync(mc, r.client())

    # Faster periods than Sentinel's defaults (INFO every 10 s, hello every 2 s).
    for s in sentinels:
        sentinel_cmd(s, "DEBUG", "info-period", 500, "publish-period", 500, "ping-period", 500)

    # Sentinels learn the replicas from INFO replication and each other from the hello
    # messages they publish on __sentinel__:hello through the monitored servers.
    want = {r.port for r in replicas}
    for s in sentinels:
        wait_for(lambda: replica_ports(s) == want, timeout=20,
                 message=f"{s.name} never found both replicas\n{logs(everyone)}")
        wait_for(lambda: known_sentinels(s) == 2, timeout=20,
                 message=f"{s.name} never found the other sentinels\n{logs(everyone)}")
        m = as_dict(sentinel_cmd(s, "MASTER", GROUP))
        assert (int(m["port"]), m["flags"], m["role-reported"]) == (master.port, "master", "master")
        assert (int(m["num-slaves"]), int(m["num-other-sentinels"])) == (2, 2)
        assert master_addr(s) == (HOST, master.port)
        # What Sentinel parsed from each replica's INFO replication.
        wait_for(lambda: all(as_dict(r)["master-link-status"] == "ok"
                             for r in sentinel_cmd(s, "REPLICAS", GROUP)), timeout=10)
        for entry in map(as_dict, sentinel_cmd(s, "REPLICAS", GROUP)):
            assert entry["flags"] == "slave" and entry["role-reported"] == "slave"
            assert (entry["master-host"], int(entry["master-port"])) == (HOST, master.port)
            assert int(entry["slave-priority"]) == (0 if int(entry["port"]) == replica1.port
                                                    else 100)
            assert entry["replica-announced"] == "1"

    # A Sentinel-aware client writes; every write WAIT confirmed on a replica must survive.
    sentinel = Sentinel([(HOST, s.port) for s in sentinels], socket_timeout=2)
    client = sentinel.master_for(GROUP, socket_timeout=2, password=PASSWORD,
                                 decode_responses=True)
    confirmed = {}
    for i in range(200):
        client.set(f"key:{i}", f"value-{i}")
        if i % 20 == 19:
            assert client.wait(1, 5000) >= 1
            confirmed = {f"key:{j}": f"value-{j}" for j in range(i + 1)}
    assert len(confirmed) == 200

    old_master_port = master.port
    master.kill()

    # replica1 has priority 0: Sentinel never promotes it.
    def failover_done():
        for s in sentinels:
            m = as_dict(sentinel_cmd(s, "MASTER", GROUP))
            if int(m["port"]) != replica2.port or m["flags"] != "master":
                return False
        return True

    wait_for(failover_done, timeout=FAILOVER_DEADLINE, interval=0.1,
             message=f"no failover to replica2\n{logs(everyone)}")
    new_master, other = replica2, replica1
    for s in sentinels:
        assert master_addr(s) == (HOST, new_master.port)

    assert role(new_master)[0] == "master"
    # CONFIG REWRITE after REPLICAOF NO ONE dropped the replicaof line from its file.
    assert "replicaof" not in new_master.conf.read_text().lower()
    wait_for(lambda: follows(other, new_master.port), timeout=RECONFIG_DEADLINE, interval=0.1,
             message=f"the other replica never followed the new master\n{logs(everyone)}")
    assert other.client(decode_responses=True).info("replication")["master_port"] == new_master.port
    assert f"replicaof {HOST} {new_master.port}" in other.conf.read_text()

    nm = new_master.client(decode_responses=True)
    for key, value in confirmed.items():
        assert nm.get(key) == value, key

    # The same client object keeps working against the new master.
    write_until_ok(client, "after:failover", "1")
    assert nm.get("after:failover") == "1"
    for i in range(20):
        client.set(f"post:{i}", i)
    assert client.wait(1, 5000) == 1

    # The old master comes back as it was (same port, same file, empty: no persistence);
    # Sentinel turns it into a replica of the new master (REPLICAOF + CONFIG REWRITE).
    master.start()
    wait_for(lambda: follows(master, new_master.port), timeout=RECONFIG_DEADLINE, interval=0.1,
             message=f"the old master never became a replica\n{logs(everyone)}")
    assert f"replicaof {HOST} {new_master.port}" in master.conf.read_text()
    nmb = new_master.client()
    for r in (master, other):
        wait_in_sync(nmb, r.client())
        assert_same_data(nmb, r.client())

    # Sentinel lists the old master among the new master's replicas, with its link up.
    def old_master_listed():
        entries = {int(as_dict(e)["port"]): as_dict(e) for e in
                   sentinel_cmd(sentinels[0], "REPLICAS", GROUP)}
        return (entries.keys() == {old_master_port, other.port}
                and entries[old_master_port]["flags"] == "slave"
                and entries[old_master_port]["master-link-status"] == "ok")

    wait_for(old_master_listed, timeout=10,
             message=f"sentinel's replica list is wrong\n{logs(sentinels)}")


def sample_conf(name: str, **replace) -> str:
    """conf/<name> with some lines replaced: {'port': 'port 1234', ...} matches by prefix."""
    text = (REPO_ROOT / "conf" / name).read_text()
    for prefix, line in replace.items():
        text, n = re.subn(rf"^{re.escape(prefix)}\b.*$", line, text, count=1, flags=re.M)
        assert n == 1, f"conf/{name} has no '{prefix}' line"
    return text


def test_sample_configs_run_a_group(procs):
    """conf/replica.conf starts a working replica and conf/sentinel.conf a Sentinel that finds
    it (both with only their ports, master address and directories changed)."""
    master = procs.start("master", server_binary(), server_config)

    def replica_config(port, workdir):
        return sample_conf("replica.conf", port=f"port {port}", dir=f'dir "{workdir}"',
                           replicaof=f"replicaof {HOST} {master.port}")

    replica = procs.start("replica", server_binary(), replica_config)
    mc, rc = master.client(), replica.client()
    mc.set("k", "v")
    wait_in_sync(mc, rc)
    assert rc.get("k") == b"v"
    with pytest.raises(redis.ReadOnlyError):
        rc.set("k", "w")
    assert rc.config_get("appendonly")["appendonly"] == "yes"

    def sentinel_config_sample(port, workdir):
        return sample_conf("sentinel.conf", port=f"port {port}", dir=f'dir "{workdir}"',
                           **{"sentinel monitor": f"sentinel monitor vireo-main {HOST} "
                                                  f"{master.port} 2"})

    s = procs.sentinel("sentinel", sentinel_config_sample)
    m = as_dict(s.client(decode_responses=True).execute_command("SENTINEL", "MASTER",
                                                                "vireo-main"))
    assert int(m["port"]) == master.port
    wait_for(lambda: {int(as_dict(e)["port"]) for e in s.client(decode_responses=True)
                      .execute_command("SENTINEL", "REPLICAS", "vireo-main")} == {replica.port},
             timeout=10, message=f"sentinel never found the replica\n{logs(procs.all)}")


def test_sentinel_kills_a_busy_script(procs):
    """A master stuck in a Lua script answers -BUSY; once Sentinel sees it down it sends SCRIPT
    KILL (a master without replicas cannot be failed over, so that is all it can do)."""
    master = procs.start("master", server_binary(), lambda port, d: server_config(port, d)
                         + "busy-reply-threshold 100\n")

    s = procs.sentinel("sentinel", lambda port, d: sentinel_config(port, d, master.port, 1))
    wait_for(lambda: as_dict(sentinel_cmd(s, "MASTER", GROUP))["role-reported"] == "master",
             timeout=10)

    outcome = {}

    def run_script():
        try:
            master.client(socket_timeout=30).eval("while true do end", 0)
        except redis.ResponseError as e:
            outcome["error"] = str(e)

    t = threading.Thread(target=run_script)
    t.start()
    t.join(20)
    assert not t.is_alive(), f"the script was never killed\n{logs(procs.all)}"
    assert "killed by user with SCRIPT KILL" in outcome.get("error", ""), outcome
    assert master.client().ping()
    wait_for(lambda: as_dict(sentinel_cmd(s, "MASTER", GROUP))["flags"] == "master", timeout=10,
             message=f"the master stayed down for Sentinel\n{logs(procs.all)}")

"""Forked children (BGSAVE, BGREWRITEAOF) share one per-server manager: one child at a time,
the other request waits (scheduled) or is refused with Redis's texts, and each child's exit is
handled by its own owner. A child is held in place with SIGSTOP (found through /proc), so the
tests never depend on how long a save takes.
"""
import contextlib
import os
import signal
from pathlib import Path

import pytest

from conftest import wait_for

DATA_KEYS = 64  # megabytes
# How long a child may take to write them: seconds in a Release build, far longer under ASan on
# a loaded CI machine (two children in a row there took 12 s).
CHILD_TIMEOUT = 90


def child_pid(srv) -> int:
    """The server's one forked child (the persistence children are the only ones)."""
    path = Path(f"/proc/{srv.proc.pid}/task/{srv.proc.pid}/children")
    if not path.exists():
        pytest.skip("no /proc/<pid>/task/<tid>/children on this kernel")
    pids = []

    def found():
        pids[:] = [int(p) for p in path.read_text().split()]
        return len(pids) == 1
    wait_for(found, 5, message="no child process")
    return pids[0]


def stop_child(srv) -> int:
    """SIGSTOPs the running child and checks it was caught before it finished."""
    pid = child_pid(srv)
    os.kill(pid, signal.SIGSTOP)

    def state():
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    wait_for(lambda: state() in ("T", "Z"), 5)
    assert state() == "T", "the child finished before it could be stopped (dataset too small?)"
    return pid


@contextlib.contextmanager
def child_stopped(srv):
    """Holds the running child stopped for the duration of the block."""
    pid = stop_child(srv)
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGCONT)


def fill(r):
    """Enough incompressible data that a child takes a while to write it."""
    p = r.pipeline(transaction=False)
    for i in range(DATA_KEYS):
        p.set(f"big:{i}", os.urandom(1 << 20))
    p.execute()


def data_dir(r) -> Path:
    return Path(r.config_get("dir")["dir"])


def persistence(r) -> dict:
    return r.info("persistence")


def error_text(r, *args) -> str:
    with pytest.raises(Exception) as e:
        r.execute_command(*args)
    return str(e.value)


@pytest.fixture
def srv(server_factory):
    return server_factory(["--appendonly", "no"])


def client(srv):
    """A client that shows the status replies of the persistence commands as they are."""
    r = srv.client(decode_responses=True)
    for name in ("BGSAVE", "BGREWRITEAOF", "SAVE"):
        r.response_callbacks.pop(name, None)
    return r


def test_bgsave_waits_for_a_rewrite(srv):
    r = client(srv)
    fill(r)
    forks = r.info("stats")["total_forks"]
    assert r.execute_command("BGREWRITEAOF") == "Background append only file rewriting started"
    with child_stopped(srv):
        assert error_text(r, "BGSAVE") == (
            "Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE "
            "in order to schedule a BGSAVE whenever possible.")
        assert error_text(r, "BGREWRITEAOF") == (
            "Background append only file rewriting already in progress")
        assert r.execute_command("BGSAVE", "SCHEDULE") == "Background saving scheduled"
        i = persistence(r)
        assert i["aof_rewrite_in_progress"] == 1
        assert i["rdb_bgsave_in_progress"] == 0
        saves = i["rdb_saves"]
    # The rewrite ends, then the scheduled BGSAVE forks and ends.
    wait_for(lambda: persistence(r)["rdb_saves"] == saves + 1
             and persistence(r)["rdb_bgsave_in_progress"] == 0, CHILD_TIMEOUT)
    i = persistence(r)
    assert i["aof_rewrite_in_progress"] == 0
    assert i["aof_last_bgrewrite_status"] == "ok"
    assert i["rdb_last_bgsave_status"] == "ok"
    stats = r.info("stats")
    assert stats["total_forks"] == forks + 2
    assert stats["latest_fork_usec"] > 0
    assert (data_dir(r) / r.config_get("dbfilename")["dbfilename"]).exists()


def test_rewrite_waits_for_a_bgsave(srv):
    r = client(srv)
    fill(r)
    assert r.execute_command("BGSAVE") == "Background saving started"
    with child_stopped(srv):
        assert error_text(r, "BGSAVE") == "Background save already in progress"
        assert error_text(r, "SAVE") == "Background save already in progress"
        assert r.execute_command("BGREWRITEAOF") == (
            "Background append only file rewriting scheduled")
        i = persistence(r)
        assert i["rdb_bgsave_in_progress"] == 1
        assert i["rdb_current_bgsave_time_sec"] >= 0
        assert i["aof_rewrite_in_progress"] == 0
        assert i["aof_rewrite_scheduled"] == 1
        rewrites = i["aof_rewrites"]
    wait_for(lambda: persistence(r)["aof_rewrites"] == rewrites + 1
             and persistence(r)["aof_rewrite_in_progress"] == 0, CHILD_TIMEOUT)
    i = persistence(r)
    assert i["rdb_bgsave_in_progress"] == 0
    assert i["rdb_current_bgsave_time_sec"] == -1
    assert i["rdb_last_bgsave_status"] == "ok"
    assert i["aof_last_bgrewrite_status"] == "ok"
    assert i["aof_rewrite_scheduled"] == 0


@pytest.mark.parametrize("sig,status", [(signal.SIGUSR1, "ok"), (signal.SIGKILL, "err")])
def test_bgsave_child_killed(srv, sig, status):
    # SIGUSR1 is how a save is cancelled on purpose; any other signal is a failed save.
    r = client(srv)
    fill(r)
    saves = persistence(r)["rdb_saves"]
    assert r.execute_command("BGSAVE") == "Background saving started"
    pid = stop_child(srv)
    os.kill(pid, sig)
    os.kill(pid, signal.SIGCONT)
    wait_for(lambda: persistence(r)["rdb_bgsave_in_progress"] == 0, CHILD_TIMEOUT)
    i = persistence(r)
    assert i["rdb_last_bgsave_status"] == status
    assert i["rdb_saves"] == saves + 1  # attempts, as in Redis
    assert not list(data_dir(r).glob("temp-*.rdb"))
    # The next BGSAVE can fork again.
    assert r.execute_command("BGSAVE") == "Background saving started"
    wait_for(lambda: persistence(r)["rdb_bgsave_in_progress"] == 0, CHILD_TIMEOUT)
    i = persistence(r)
    assert i["rdb_last_bgsave_status"] == "ok"
    assert i["rdb_saves"] == saves + 2


def test_aof_rewrite_child_killed(srv):
    r = client(srv)
    fill(r)
    assert r.execute_command("BGREWRITEAOF") == "Background append only file rewriting started"
    pid = stop_child(srv)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: persistence(r)["aof_rewrite_in_progress"] == 0, CHILD_TIMEOUT)
    i = persistence(r)
    assert i["aof_last_bgrewrite_status"] == "err"
    assert not list(data_dir(r).glob("temp-rewriteaof-bg-*.aof"))

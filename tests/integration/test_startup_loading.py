"""Loading at start-up, as Redis does it: the server listens before its RDB or AOF is loaded,
clients that connect meanwhile get -LOADING (INFO shows loading:1 and the loading_* fields),
and the data is there once loading:0. key-load-delay slows the load so it can be watched."""

import os
import re
import signal
import subprocess

import pytest
from conftest import HOST, RawConnection, free_port, server_binary, wait_for

LOADING = b"-LOADING Redis is loading the dataset in memory\r\n"
SLOW_LOAD = ["--key-load-delay", "100", "--loading-process-events-interval-bytes", "1024"]


class LoadingServer:
    """A vireo started on a data directory without waiting for PONG (it won't answer PONG
    until it has loaded)."""

    def __init__(self, datadir, extra, connect=True):
        self.port = free_port()
        self.log_path = datadir / f"server-{self.port}.log"
        argv = [server_binary(), "--port", str(self.port), "--bind", HOST, "--dir", str(datadir),
                "--save", "", "--enable-debug-command", "yes", *extra]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        if connect:
            self.conn = wait_for(self._connect, timeout=10, message="the server never listened")

    def _connect(self):
        assert self.proc.poll() is None, self.log()
        try:
            return RawConnection(HOST, self.port, timeout=5)
        except OSError:
            return None

    def log(self):
        return self.log_path.read_text(errors="replace")

    def info_persistence(self):
        text = self.conn.execute("INFO", "persistence").decode()
        return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)

    def stop(self):
        self.conn.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(10)


def fill_and_stop(server_factory, datadir, *extra, setup):
    s = server_factory(["--dir", str(datadir), *extra])
    r = s.client()
    setup(r)
    r.shutdown(nosave=True)
    s.expect_exit = True
    s.proc.wait(10)


def populate_and_save(r):
    r.execute_command("DEBUG", "POPULATE", 20000)
    r.save()


def restart_loading_with_save_points(server_factory, tmp_path):
    """A dump of 20000 keys and a server loading it slowly, whose save points would save it on
    SHUTDOWN or SIGTERM. Returns the server, after a -LOADING reply, and the dump's bytes."""
    fill_and_stop(server_factory, tmp_path, setup=populate_and_save)
    dump = (tmp_path / "dump.rdb").read_bytes()
    s = LoadingServer(tmp_path, [*SLOW_LOAD, "--save", "3600 1"])
    assert s.conn.execute("PING") == LOADING
    return s, dump


def watch_load(s, keys):
    """Sees -LOADING (with INFO's loading fields), then the loaded data."""
    assert s.conn.execute("PING") == LOADING
    assert s.conn.execute("GET", "key:1") == LOADING
    fields = s.info_persistence()
    assert fields["loading"] == "1"
    assert int(fields["loading_total_bytes"]) > 0
    assert 0 <= int(fields["loading_loaded_bytes"]) <= int(fields["loading_total_bytes"])
    assert "loading_eta_seconds" in fields
    wait_for(lambda: s.info_persistence()["loading"] == "0", timeout=60,
             message="the load never finished")
    assert "loading_total_bytes" not in s.info_persistence()
    assert s.conn.execute("PING") == b"+PONG\r\n"
    assert s.conn.execute("DBSIZE") == f":{keys}\r\n".encode()
    assert s.conn.execute("GET", "key:1") == b"$7\r\nvalue:1\r\n"


def test_rdb_load_serves_loading_replies(server_factory, tmp_path):
    fill_and_stop(server_factory, tmp_path, setup=populate_and_save)
    s = LoadingServer(tmp_path, SLOW_LOAD)
    try:
        watch_load(s, 20000)
        log = s.log()
        # Redis's lines, in its order: the RDB's AUX fields, the totals, then "Ready".
        lines = ["Server initialized", "Loading RDB produced by version", "RDB age ",
                 "RDB memory usage when created", "Done loading RDB, keys loaded: 20000, keys expired: 0.",
                 "DB loaded from disk: ", "Ready to accept connections tcp"]
        positions = [log.find(line) for line in lines]
        assert -1 not in positions and positions == sorted(positions), log
    finally:
        assert s.stop() == 0


def test_multi_part_aof_load_serves_loading_replies(server_factory, tmp_path):
    def setup(r):
        # The base: an RDB preamble; the incremental file: commands.
        r.execute_command("DEBUG", "POPULATE", 5000)
        r.bgrewriteaof()
        wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0
                 and r.info("persistence")["aof_rewrite_scheduled"] == 0, timeout=30)
        pipe = r.pipeline(transaction=False)
        for i in range(5000, 10000):
            pipe.set(f"key:{i}", f"value:{i}")
        pipe.execute()

    fill_and_stop(server_factory, tmp_path, "--appendonly", "yes", setup=setup)
    names = os.listdir(tmp_path / "appendonlydir")
    assert any(n.endswith(".base.rdb") for n in names) and any(n.endswith(".incr.aof") for n in names)
    s = LoadingServer(tmp_path, ["--appendonly", "yes", *SLOW_LOAD])
    try:
        watch_load(s, 10000)
        log = s.log()
        assert "RDB is base AOF" in log
        assert re.search(r"DB loaded from append only file: [0-9.]+ seconds", log)
        assert log.find("DB loaded from append only file") < log.find("Ready to accept connections")
        # What loaded from the AOF goes on being logged to it.
        assert s.conn.execute("SET", "after", "1") == b"+OK\r\n"
    finally:
        assert s.stop() == 0


def test_shutdown_while_loading_leaves_the_dump_alone(server_factory, tmp_path):
    # A SHUTDOWN never saves a half-loaded dataset (Redis makes it NOSAVE while loading).
    s, dump = restart_loading_with_save_points(server_factory, tmp_path)
    s.conn.send_command("SHUTDOWN")
    assert s.proc.wait(10) == 0
    assert (tmp_path / "dump.rdb").read_bytes() == dump
    assert "Ready to accept connections" not in s.log()


def test_sigterm_while_loading_exits_without_saving(server_factory, tmp_path):
    s, dump = restart_loading_with_save_points(server_factory, tmp_path)
    assert s.stop() == 0
    assert (tmp_path / "dump.rdb").read_bytes() == dump
    # Redis's words for a shutdown signal during loading.
    assert "Received shutdown signal during loading, scheduling shutdown." in s.log()


def test_wrong_checksum_stops_the_start_in_redis_words(server_factory, tmp_path):
    fill_and_stop(server_factory, tmp_path, setup=lambda r: (r.set("k", "v"), r.save()))
    data = bytearray((tmp_path / "dump.rdb").read_bytes())
    data[-8:] = b"foobar00"  # what Redis's integration/rdb test writes over the checksum
    (tmp_path / "dump.rdb").write_bytes(bytes(data))
    s = LoadingServer(tmp_path, [], connect=False)
    assert s.proc.wait(10) == 1
    log = s.log()
    assert re.search(r"Wrong RDB checksum expected: \([0-9a-f]+\) but got \(30307261626f6f66\)\. "
                     r"Aborting now\.", log), log
    assert "-> RDB CRC error" in log
    assert log.rstrip().endswith("Terminating server after rdb file reading failure.")


def test_slow_script_in_debug_loadaof_leaves_clients_with_loading(server_factory, tmp_path):
    # Redis's integration/aof "EVAL timeout with slow verbatim Lua script from AOF": a script
    # in the AOF runs past lua-time-limit while DEBUG LOADAOF replays it; the clients it lets
    # through get -LOADING (the load), not -BUSY.
    s = server_factory(["--dir", str(tmp_path), "--appendonly", "yes", "--aof-use-rdb-preamble", "no",
                        "--lua-time-limit", "1"])
    incr = next(p for p in (tmp_path / "appendonlydir").iterdir() if p.name.endswith(".incr.aof"))
    slow = "redis.call('set',KEYS[1],'y'); for i=1,3000000 do redis.call('ping') end return 'ok'"
    with open(incr, "ab") as f:
        f.write(RawConnection.encode("SELECT", "9") + RawConnection.encode("EVAL", slow, "1", "x"))
    loader, other = s.raw(timeout=60), s.raw()
    loader.send_command("DEBUG", "LOADAOF")  # from db 0: the script runs in the AOF's db 9
    seen = wait_for(lambda: (lambda reply: reply if reply.startswith(b"-") else None)(other.execute("PING")),
                    timeout=30, message="the reload never served other clients")
    assert seen == LOADING
    assert loader.read_reply() == b"+OK\r\n"
    assert other.execute("SELECT", "9") == b"+OK\r\n"
    assert other.execute("GET", "x") == b"$1\r\ny\r\n"
    assert "Slow script detected" in s.log_text(100000)


@pytest.mark.parametrize("tail, reason", [
    (b"!!!garbage\r\n", "Bad file format reading the append only file"),
    (RawConnection.encode("bla", "x"), "Unknown command 'bla' reading the append only file"),
], ids=["bad-format", "unknown-command"])
def test_failed_aof_load_ends_the_log_with_its_reason(server_factory, tmp_path, tail, reason):
    # Redis exits right after logging why (its integration/aof tests read the last line).
    fill_and_stop(server_factory, tmp_path, "--appendonly", "yes", setup=lambda r: r.set("k", "v"))
    incr = next(p for p in (tmp_path / "appendonlydir").iterdir() if p.name.endswith(".incr.aof"))
    with open(incr, "ab") as f:
        f.write(tail)
    s = LoadingServer(tmp_path, ["--appendonly", "yes", "--aof-load-truncated", "yes"], connect=False)
    assert s.proc.wait(10) == 1
    assert reason in s.log().rstrip().splitlines()[-1], s.log()

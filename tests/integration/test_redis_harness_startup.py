"""What Redis's own test harness (tests/support/server.tcl) needs to start vireo itself:
every directive of Redis 7.2's tests/assets/default.conf, and Redis's start-up log lines
(" PID: <pid>" before "Server initialized", then "Ready to accept"). Also the shutdown flags
default.conf sets."""
import os
import re
import signal

import pytest
import redis

from conftest import call, start_server, wait_for

# Redis 7.2.6 tests/assets/default.conf, less port/bind/dir (the fixture sets those) and with
# logfile on stdout as there.
DEFAULT_CONF = """
always-show-logo yes
notify-keyspace-events KEA
daemonize no
pidfile {pidfile}
timeout 0
loglevel verbose
logfile ''
databases 16
latency-monitor-threshold 1
repl-diskless-sync-delay 0
save ''
rdbcompression yes
dbfilename dump.rdb
slave-serve-stale-data yes
appendonly no
appendfsync everysec
no-appendfsync-on-rewrite no
activerehashing yes
enable-protected-configs yes
enable-debug-command yes
enable-module-command yes
propagation-error-behavior panic
shutdown-on-sigterm force
"""


def test_default_conf_and_startup_lines(tmp_path):
    h = start_server(config_text=DEFAULT_CONF.format(pidfile=tmp_path / "vireo.pid"))
    try:
        pid = h.proc.pid
        log = h.log_text(100000)
        # The harness's own regexps.
        assert re.search(rf" PID: {pid}.*Server initialized", log, re.S), log
        assert "Ready to accept" in log
        c = h.client(decode_responses=True)
        assert c.config_get("always-show-logo")["always-show-logo"] == "yes"
        assert c.config_get("propagation-error-behavior")["propagation-error-behavior"] == "panic"
        assert c.config_get("shutdown-on-sigterm")["shutdown-on-sigterm"] == "force"
        assert c.config_get("activerehashing")["activerehashing"] == "yes"
    finally:
        h.stop()
        h.cleanup()


def test_port_in_use_is_logged_in_redis_words():
    h = start_server()
    try:
        with pytest.raises(RuntimeError, match=r"Failed listening on port \d+ \(tcp\), aborting"):
            start_server(["--port", h.port])
    finally:
        h.stop()
        h.cleanup()


def test_shutdown_on_signal_flags(server):
    c = server.client(decode_responses=True)
    try:
        assert call(c, "CONFIG", "SET", "shutdown-on-sigterm", "nosave now") == "OK"
        assert c.config_get("shutdown-on-sigterm")["shutdown-on-sigterm"] == "nosave now"
        assert call(c, "CONFIG", "SET", "shutdown-on-sigint", "NOW save") == "OK"
        assert c.config_get("shutdown-on-sigint")["shutdown-on-sigint"] == "save now"
        with pytest.raises(redis.ResponseError, match="shutdown-on-sigterm"):
            c.config_set("shutdown-on-sigterm", "save nosave")
        with pytest.raises(redis.ResponseError, match="shutdown-on-sigterm"):
            c.config_set("shutdown-on-sigterm", "later")
        assert c.config_get("shutdown-on-sigterm")["shutdown-on-sigterm"] == "nosave now"
    finally:
        c.config_set("shutdown-on-sigterm", "default")
        c.config_set("shutdown-on-sigint", "default")


def test_sigterm_with_save_flag_saves_without_save_points():
    h = start_server(["--shutdown-on-sigterm", "save"])
    try:
        h.client().set("k", "v")
        dump = h.workdir / "dump.rdb"
        assert not dump.exists()
        os.kill(h.proc.pid, signal.SIGTERM)
        h.proc.wait(timeout=30)
        assert dump.exists()
    finally:
        h.stop()
        h.cleanup()

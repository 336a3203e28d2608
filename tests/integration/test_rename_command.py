"""rename-command (config file and command line): a command answers to a new name or to none,
CONFIG REWRITE keeps the lines, and a bad line stops the start with Redis's fatal error."""
from __future__ import annotations

import subprocess

import pytest
import redis
from conftest import server_binary


def test_renamed_and_removed_commands(server_factory):
    h = server_factory(config_text='rename-command flushdb badger\nrename-command lastsave ""\n')
    r = h.client(decode_responses=True)
    r.set("k", "v")
    with pytest.raises(redis.ResponseError, match="(?i)unknown command 'flushdb'"):
        r.execute_command("FLUSHDB")
    with pytest.raises(redis.ResponseError, match="(?i)unknown command 'lastsave'"):
        r.execute_command("LASTSAVE")
    assert r.execute_command("BADGER") == "OK"
    assert r.dbsize() == 0
    # COMMAND INFO under the new name still describes the command by its own name.
    info = r.execute_command("COMMAND", "INFO", "badger")
    assert list(info) == ["flushdb"]


def test_config_rewrite_keeps_rename_lines(server_factory):
    h = server_factory(config_text="rename-command flushdb badger\n")
    r = h.client(decode_responses=True)
    r.config_set("maxmemory-policy", "allkeys-lru")
    assert r.config_rewrite()
    text = (h.workdir / "server.conf").read_text()
    assert "rename-command flushdb badger" in text
    assert "maxmemory-policy allkeys-lru" in text


def test_renaming_on_the_command_line():
    proc = subprocess.run([server_binary(), "--rename-command", "nosuchcommand", "x", "--port", "0"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert "No such command in rename-command" in proc.stderr


@pytest.mark.parametrize("line,error", [
    ("rename-command nosuchcommand x", "No such command in rename-command"),
    ("rename-command get set", "Target command name already exists"),
])
def test_bad_rename_stops_the_start(tmp_path, line, error):
    conf = tmp_path / "bad.conf"
    conf.write_text(f"port 0\n{line}\n")
    proc = subprocess.run([server_binary(), str(conf)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert "*** FATAL CONFIG FILE ERROR" in proc.stderr
    assert f">>> '{line}'" in proc.stderr
    assert error in proc.stderr

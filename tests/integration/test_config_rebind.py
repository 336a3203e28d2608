"""CONFIG SET port / bind rebuild the TCP listeners at run time; a failure keeps the old ones
and undoes the whole CONFIG SET (Server::RebindTcp)."""

import socket
import subprocess

import pytest
import redis
from conftest import HOST, free_port, server_binary, wait_for


def can_connect(port, host=HOST):
    try:
        with socket.create_connection((host, port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64) == b"+PONG\r\n"
    except OSError:
        return False


def test_set_port_moves_the_listener(server_factory):
    srv = server_factory()
    r = srv.client()
    new_port = free_port()
    assert r.config_set("port", new_port)
    assert r.config_get("port") == {"port": str(new_port)}
    # Connected clients stay; new ones go to the new port only.
    assert r.ping()
    assert can_connect(new_port)
    assert not can_connect(srv.port)
    r2 = redis.Redis(host=HOST, port=new_port)
    assert r2.config_set("port", srv.port)
    assert can_connect(srv.port) and not can_connect(new_port)


def test_port_in_use_keeps_old_listener(server_factory):
    srv = server_factory()
    r = srv.client()
    with socket.socket() as busy:
        busy.bind((HOST, 0))
        busy.listen(1)
        taken = busy.getsockname()[1]
        with pytest.raises(redis.ResponseError) as e:
            r.config_set("port", taken)
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'port') - Unable to "
                            "listen on this port. Check server logs.")
    assert r.config_get("port") == {"port": str(srv.port)}
    assert can_connect(srv.port)


def test_bad_bind_undoes_everything(server_factory):
    srv = server_factory()
    r = srv.client()
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CONFIG", "SET", "maxmemory-samples", "7", "bind", "203.0.113.7")
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'bind') - Failed to "
                            "bind to specified addresses.")
    assert r.config_get("bind") == {"bind": HOST}
    assert r.config_get("maxmemory-samples") == {"maxmemory-samples": "5"}
    assert can_connect(srv.port)


def test_set_bind(server_factory):
    srv = server_factory()
    r = srv.client()
    assert r.config_set("bind", "127.0.0.1 -::1")
    assert r.config_get("bind") == {"bind": "127.0.0.1 -::1"}
    assert can_connect(srv.port)
    # Port 0: no TCP listener; existing connections carry on.
    assert r.config_set("port", 0)
    assert not can_connect(srv.port)
    assert r.ping()
    assert r.config_set("port", srv.port)
    assert can_connect(srv.port)


def test_empty_bind_serves_only_the_unix_socket(tmp_path):
    # `bind ""` (Redis 7.2's unit/networking restarts a server so): no TCP listener, yet the
    # server starts and serves its Unix socket; CONFIG SET bind brings TCP back.
    port = free_port()
    sock = tmp_path / "vireo.sock"
    proc = subprocess.Popen([server_binary(), "--port", str(port), "--bind", "",
                             "--unixsocket", str(sock), "--dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        r = redis.Redis(unix_socket_path=str(sock))

        def up():
            assert proc.poll() is None, proc.stderr.read().decode()
            try:
                return r.ping()
            except redis.ConnectionError:
                return False
        wait_for(up, message="the server did not serve its Unix socket")
        assert r.config_get("bind") == {"bind": ""}
        assert not can_connect(port)
        assert r.config_set("bind", "127.0.0.1")
        assert can_connect(port)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("cluster", [False, True])
def test_ipv4_port_taken_refuses_to_start_with_the_default_bind(tmp_path, cluster):
    # "* -::*": "*" is IPv4's any address (IPv6 is the optional "::*"). With the IPv4 port (or
    # the cluster bus port) taken the start fails as Redis's does, with its words; it used to
    # go on listening on IPv6 alone, where nobody on 127.0.0.1 could reach it.
    port = free_port()
    while port + 10000 > 65535:  # the bus port must exist too
        port = free_port()
    with socket.socket() as busy:
        busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        busy.bind(("0.0.0.0", port + 10000 if cluster else port))
        busy.listen(1)
        extra = ["--cluster-enabled", "yes"] if cluster else []
        proc = subprocess.run([server_binary(), "--port", str(port), "--bind", "* -::*",
                               "--dir", str(tmp_path), *extra],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 1, out
    assert "Could not create server TCP listening socket *:" in out
    assert "bind: Address already in use" in out

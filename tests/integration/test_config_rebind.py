"""CONFIG SET port / bind rebuild the TCP listeners at run time; a failure keeps the old ones
and undoes the whole CONFIG SET (Server::RebindTcp)."""

import socket

import pytest
import redis
from conftest import HOST, free_port


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

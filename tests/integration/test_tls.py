"""TLS (issue 18): tls-port beside the plain port, client certificates per tls-auth-clients,
bad input on the TLS port, CONFIG SET reloading certificates, tls-protocols, replication over
TLS (vireo to vireo, and with Debian's redis-server, which is built with TLS).

Certificates are made at test time with the openssl CLI: a CA, server and client certificates
signed by it, a second server certificate (for the reload), and a client certificate from a CA
the server doesn't trust."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
from pathlib import Path

import pytest
import redis

from conftest import HOST, call, free_port, start_server, wait_for
from repl_helpers import REDIS_SERVER, procs, start_redis, wait_in_sync  # noqa: F401

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI")


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _signed(cwd, name, cn, ca="ca", extra=()):
    _openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
             f"{name}.csr", "-subj", f"/CN={cn}", cwd=cwd)
    ext = Path(cwd) / f"{name}.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
             "-CAcreateserial", "-days", "2", "-out", f"{name}.crt", "-extfile", str(ext), *extra,
             cwd=cwd)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    for ca in ("ca", "rogue-ca"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-keyout",
                 f"{ca}.key", "-out", f"{ca}.crt", "-subj", f"/CN=vireo test {ca}", cwd=d)
    _signed(d, "server", "vireo-server-one")
    _signed(d, "server2", "vireo-server-two")
    _signed(d, "client", "vireo-client")
    _signed(d, "rogue", "rogue-client", ca="rogue-ca")
    # DH parameters (a named group: instant, unlike generating new ones).
    _openssl("genpkey", "-genparam", "-algorithm", "DH", "-pkeyopt", "group:ffdhe2048", "-out",
             "dh.pem", cwd=d)
    # The CA in a hashed directory (tls-ca-cert-dir).
    (d / "cadir").mkdir()
    shutil.copy(d / "ca.crt", d / "cadir" / "ca.pem")
    _openssl("rehash", "cadir", cwd=d)
    # The server key again, under a pass phrase (tls-key-file-pass).
    _openssl("pkey", "-in", "server.key", "-aes256", "-passout", "pass:s3cret", "-out",
             "server-enc.key", cwd=d)
    return d


def tls_args(certs, tls_port, *extra):
    return ["--tls-port", tls_port, "--tls-cert-file", certs / "server.crt", "--tls-key-file",
            certs / "server.key", "--tls-ca-cert-file", certs / "ca.crt", *extra]


@pytest.fixture
def tls_server(certs, procs):  # noqa: F811
    """A vireo with a plain port and a TLS port (tls-auth-clients at its default, yes)."""
    tls_port = free_port()
    h = start_server(tls_args(certs, tls_port))
    procs.append(h)
    h.tls_port = tls_port
    return h


def tls_client(h, certs, cert="client", **kw):
    kw.setdefault("socket_timeout", 10)
    if cert is not None:
        kw.update(ssl_certfile=str(certs / f"{cert}.crt"), ssl_keyfile=str(certs / f"{cert}.key"))
    c = redis.Redis(host=HOST, port=h.tls_port, ssl=True, ssl_ca_certs=str(certs / "ca.crt"), **kw)
    h._clients.append(c)
    return c


def peer_cn(h, certs):
    """The CN of the certificate the TLS port presents to a new connection."""
    ctx = ssl.create_default_context(cafile=str(certs / "ca.crt"))
    ctx.load_cert_chain(certs / "client.crt", certs / "client.key")
    with socket.create_connection((HOST, h.tls_port), timeout=5) as s:
        with ctx.wrap_socket(s, server_hostname="localhost") as t:
            subject = dict(x[0] for x in t.getpeercert()["subject"])
            return subject["commonName"]


def refused(client) -> bool:
    try:
        client.ping()
    except (redis.ConnectionError, redis.TimeoutError, ssl.SSLError, OSError):
        return True
    return False


def test_tls_and_plain_ports_side_by_side(tls_server, certs):
    t = tls_client(tls_server, certs)
    assert t.ping()
    t.set("k", "over tls")
    plain = tls_server.client()
    assert plain.get("k") == b"over tls"
    plain.set("p", "plain")
    assert t.get("p") == b"plain"
    # Both clients are listed; the config shows the defaults Redis 7 shows.
    assert len(plain.client_list()) == 2
    cfg = plain.config_get("tls-*")
    assert cfg["tls-port"] == str(tls_server.tls_port)
    assert cfg["tls-auth-clients"] == "yes"
    assert cfg["tls-session-caching"] == "yes"
    assert cfg["tls-session-cache-size"] == "20480"
    assert cfg["tls-session-cache-timeout"] == "300"
    assert cfg["tls-replication"] == "no" and cfg["tls-cluster"] == "no"
    assert cfg["tls-protocols"] == "" and cfg["tls-client-cert-file"] == ""


def test_pipelines_and_big_values_over_tls(tls_server, certs):
    t = tls_client(tls_server, certs)
    # Many commands in few TLS records and records larger than a read: nothing may stall in
    # OpenSSL's buffer unseen by epoll.
    pipe = t.pipeline(transaction=False)
    for i in range(20000):
        pipe.set(f"key:{i}", i)
    for i in range(20000):
        pipe.get(f"key:{i}")
    replies = pipe.execute()
    assert replies[20000:] == [str(i).encode() for i in range(20000)]
    big = b"v" * (3 << 20)
    t.set("big", big)
    assert t.get("big") == big
    assert t.strlen("big") == len(big)


def test_auth_clients_yes_refuses_a_client_without_certificate(tls_server, certs):
    good = tls_client(tls_server, certs)
    assert refused(tls_client(tls_server, certs, cert=None))
    assert refused(tls_client(tls_server, certs, cert="rogue"))
    assert good.ping()
    wait_for(lambda: "Error accepting a client connection" in tls_server.log_text(100000))


def test_auth_clients_optional_and_no(tls_server, certs):
    plain = tls_server.client()
    plain.config_set("tls-auth-clients", "optional")
    assert tls_client(tls_server, certs, cert=None).ping()
    assert tls_client(tls_server, certs).ping()
    # Optional still verifies a certificate that is presented.
    assert refused(tls_client(tls_server, certs, cert="rogue"))
    plain.config_set("tls-auth-clients", "no")
    assert tls_client(tls_server, certs, cert=None).ping()
    assert tls_client(tls_server, certs, cert="rogue").ping()
    plain.config_set("tls-auth-clients", "yes")
    assert refused(tls_client(tls_server, certs, cert=None))


def redis_cli_tls(h, certs, *args, **kw):
    return subprocess.run(
        ["redis-cli", "--tls", "--cacert", certs / "ca.crt", "--cert", certs / "client.crt",
         "--key", certs / "client.key", "-h", HOST, "-p", str(h.tls_port), *args],
        capture_output=True, timeout=20, **kw)


def test_redis_cli_tls(tls_server, certs):
    out = redis_cli_tls(tls_server, certs, "ECHO", "hi", text=True)
    assert out.stdout.strip() == "hi", out.stderr


@pytest.mark.parametrize("sync", [False, True])
def test_redis_cli_ldb_over_tls(tls_server, certs, tmp_path, sync):
    """The async session's child continues the TLS session the server hands over: the server
    closes its side without a close_notify, which would end the child's session."""
    plain = redis.Redis(host=HOST, port=tls_server.port)
    plain.set("k", "old")
    script = tmp_path / "s.lua"
    script.write_text("local a = 1\nredis.call('set', KEYS[1], ARGV[1])\nreturn a\n")
    mode = ["--ldb-sync-mode"] if sync else ["--ldb"]
    proc = redis_cli_tls(tls_server, certs, *mode, "--eval", script, "k", ",", "new",
                         input="step\nstep\ncontinue\n", text=True)
    out = proc.stdout
    for text in ("* Stopped at 2, stop reason = step over", "<redis> set k new", "(integer) 1"):
        assert text in out, out
    assert ("(Lua debugging session ended)" if sync else "rolled back") in out, out
    # The session's end is an orderly TLS close (redis-cli used to die of SIGPIPE at exit).
    assert proc.returncode == 0, proc.stderr
    assert plain.get("k") == (b"new" if sync else b"old")
    assert plain.ping()


def test_plaintext_on_the_tls_port_is_closed_others_served(tls_server, certs):
    t = tls_client(tls_server, certs)
    assert t.ping()
    with socket.create_connection((HOST, tls_server.tls_port), timeout=5) as s:
        s.sendall(b"*1\r\n$4\r\nPING\r\n")
        try:
            data = s.recv(4096)
        except ConnectionResetError:
            data = b""
        # No RESP reply: at most a TLS alert, then the close.
        assert b"PONG" not in data
        while data:
            try:
                data = s.recv(4096)
            except ConnectionResetError:
                break
        assert t.ping()
    wait_for(lambda: "Error accepting a client connection" in tls_server.log_text(100000))


def test_slow_handshake_does_not_block_others(tls_server, certs):
    plain = tls_server.client()
    silent = [socket.create_connection((HOST, tls_server.tls_port), timeout=5) for _ in range(5)]
    try:
        # A client that connects and never says hello, and one that stops halfway through.
        half = socket.create_connection((HOST, tls_server.tls_port), timeout=5)
        half.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
        silent.append(half)
        wait_for(lambda: len(plain.client_list()) >= 7)
        t = tls_client(tls_server, certs)
        for i in range(100):
            t.set(f"s{i}", i)
        assert t.get("s99") == b"99"
        assert plain.ping()
    finally:
        for s in silent:
            s.close()
    wait_for(lambda: len(plain.client_list()) == 2)


def test_config_set_reloads_certificates(tls_server, certs):
    plain = tls_server.client()
    old = tls_client(tls_server, certs)
    assert old.ping()
    assert peer_cn(tls_server, certs) == "vireo-server-one"
    # The certificate and its key must match: setting one alone is refused and undone.
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        plain.config_set("tls-key-file", str(certs / "server2.key"))
    assert plain.config_get("tls-key-file")["tls-key-file"] == str(certs / "server.key")
    assert peer_cn(tls_server, certs) == "vireo-server-one"
    plain.execute_command("CONFIG", "SET", "tls-cert-file", str(certs / "server2.crt"),
                          "tls-key-file", str(certs / "server2.key"))
    assert peer_cn(tls_server, certs) == "vireo-server-two"
    # Connections made before keep working.
    assert old.ping()
    with pytest.raises(redis.ResponseError, match="tls-cert-file.*Unable to update"):
        plain.config_set("tls-cert-file", "/nonexistent.crt")
    assert peer_cn(tls_server, certs) == "vireo-server-two"


def test_config_set_cert_mismatch_leaves_old_one(tls_server, certs):
    plain = tls_server.client()
    with pytest.raises(redis.ResponseError):
        plain.config_set("tls-cert-file", str(certs / "server2.crt"))
    assert peer_cn(tls_server, certs) == "vireo-server-one"


def _handshake(h, certs, version):
    ctx = ssl.create_default_context(cafile=str(certs / "ca.crt"))
    ctx.load_cert_chain(certs / "client.crt", certs / "client.key")
    ctx.minimum_version = version
    ctx.maximum_version = version
    try:
        with socket.create_connection((HOST, h.tls_port), timeout=5) as s:
            with ctx.wrap_socket(s, server_hostname="localhost") as t:
                t.sendall(b"*1\r\n$4\r\nPING\r\n")
                return t.recv(64) == b"+PONG\r\n"
    except (ssl.SSLError, OSError):
        return False


def test_tls_protocols(tls_server, certs):
    plain = tls_server.client()
    assert _handshake(tls_server, certs, ssl.TLSVersion.TLSv1_2)
    assert _handshake(tls_server, certs, ssl.TLSVersion.TLSv1_3)
    plain.config_set("tls-protocols", "TLSv1.3")
    assert not _handshake(tls_server, certs, ssl.TLSVersion.TLSv1_2)
    assert _handshake(tls_server, certs, ssl.TLSVersion.TLSv1_3)
    plain.config_set("tls-protocols", "TLSv1.2")
    assert _handshake(tls_server, certs, ssl.TLSVersion.TLSv1_2)
    assert not _handshake(tls_server, certs, ssl.TLSVersion.TLSv1_3)
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        plain.config_set("tls-protocols", "TLSv9")
    assert plain.config_get("tls-protocols")["tls-protocols"] == "TLSv1.2"


def test_ciphers_and_key_pass_phrase(certs, procs):  # noqa: F811
    tls_port = free_port()
    h = start_server(["--tls-port", tls_port, "--tls-cert-file", certs / "server.crt",
                      "--tls-key-file", certs / "server-enc.key", "--tls-key-file-pass", "s3cret",
                      "--tls-ca-cert-file", certs / "ca.crt", "--tls-auth-clients", "no",
                      "--tls-dh-params-file", certs / "dh.pem",
                      "--tls-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256",
                      "--tls-prefer-server-ciphers", "yes", "--tls-session-caching", "no"])
    procs.append(h)
    h.tls_port = tls_port
    ctx = ssl.create_default_context(cafile=str(certs / "ca.crt"))
    with socket.create_connection((HOST, tls_port), timeout=5) as s:
        with ctx.wrap_socket(s, server_hostname="localhost") as t:
            assert t.cipher()[0] == "TLS_CHACHA20_POLY1305_SHA256"
    assert tls_client(h, certs, cert=None).ping()


def test_ca_cert_dir(certs, procs):  # noqa: F811
    tls_port = free_port()
    h = start_server(["--tls-port", tls_port, "--tls-cert-file", certs / "server.crt",
                      "--tls-key-file", certs / "server.key", "--tls-ca-cert-dir",
                      certs / "cadir"])
    procs.append(h)
    h.tls_port = tls_port
    assert tls_client(h, certs).ping()
    assert refused(tls_client(h, certs, cert="rogue"))


def test_bad_certificate_refuses_to_start(certs):
    tls_port = free_port()
    with pytest.raises(RuntimeError, match="Failed to configure TLS|Failed to load"):
        start_server(["--tls-port", tls_port, "--tls-cert-file", certs / "missing.crt",
                      "--tls-key-file", certs / "server.key", "--tls-ca-cert-file",
                      certs / "ca.crt"])


# ---- Replication over TLS ----------------------------------------------------------------


def _replica_tls_args(certs):
    return ["--tls-replication", "yes", "--tls-cert-file", certs / "client.crt", "--tls-key-file",
            certs / "client.key", "--tls-ca-cert-file", certs / "ca.crt"]


def _fill(r, n=2000):
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        pipe.set(f"key:{i}", f"value-{i}" * 20)
    pipe.rpush("list", *range(500))
    pipe.execute()
    r.set("big", "b" * 300_000)


def _replicate_and_check(m, r, tls_port):
    """`r` follows `m` over TLS: the full sync, then the stream after it."""
    r.replicaof(HOST, tls_port)
    wait_in_sync(m, r, timeout=30)
    assert r.dbsize() == m.dbsize()
    assert r.get("big") == m.get("big")
    m.set("after", "sync")
    m.incr("counter")
    wait_in_sync(m, r)
    assert r.get("after") == b"sync" and r.get("counter") == b"1"


@pytest.mark.parametrize("diskless,load", [("yes", "disabled"), ("no", "disabled"),
                                           ("no", "swapdb")])
def test_replication_over_tls_between_vireos(certs, procs, diskless, load):  # noqa: F811
    tls_port = free_port()
    master = start_server(tls_args(certs, tls_port, "--repl-diskless-sync", diskless,
                                   "--repl-diskless-sync-delay", "0"))
    procs.append(master)
    m = master.client()
    _fill(m)
    # swapdb: the snapshot is parsed straight from the TLS session.
    replica = start_server(["--repl-diskless-load", load, *_replica_tls_args(certs)])
    procs.append(replica)
    _replicate_and_check(m, replica.client(), tls_port)
    assert m.wait(1, 5000) == 1
    # The replica's link is a TLS client of the master's TLS port.
    assert any(c.get("flags") == "S" and c["laddr"].endswith(f":{tls_port}")
               for c in m.client_list())


def test_tls_replica_announces_its_tls_port(certs, procs):  # noqa: F811
    tls_port = free_port()
    master = start_server(tls_args(certs, tls_port))
    procs.append(master)
    m = master.client()
    replica_tls_port = free_port()
    replica = start_server(["--tls-port", replica_tls_port, *_replica_tls_args(certs)])
    procs.append(replica)
    _replicate_and_check(m, replica.client(), tls_port)
    assert m.info("replication")["slave0"]["port"] == replica_tls_port


def test_vireo_replica_of_redis_over_tls(certs, procs):  # noqa: F811
    tls_port = free_port()
    redis_master = start_redis([*map(str, tls_args(certs, tls_port)), "--save", ""])
    try:
        m = redis_master.client()
        _fill(m)
        replica = start_server(_replica_tls_args(certs))
        procs.append(replica)
        _replicate_and_check(m, replica.client(), tls_port)
    finally:
        redis_master.stop()
        redis_master.cleanup()


def test_replica_link_presents_the_client_certificate(certs, procs):  # noqa: F811
    # The replica's own server certificate is one the master doesn't trust: the link must use
    # tls-client-cert-file.
    tls_port = free_port()
    master = start_server(tls_args(certs, tls_port))
    procs.append(master)
    m = master.client()
    _fill(m, 10)
    replica = start_server(["--tls-replication", "yes", "--tls-cert-file", certs / "rogue.crt",
                            "--tls-key-file", certs / "rogue.key", "--tls-client-cert-file",
                            certs / "client.crt", "--tls-client-key-file", certs / "client.key",
                            "--tls-ca-cert-file", certs / "ca.crt"])
    procs.append(replica)
    _replicate_and_check(m, replica.client(), tls_port)


def test_replica_refuses_a_master_its_ca_does_not_sign(certs, procs):  # noqa: F811
    tls_port = free_port()
    master = start_server(tls_args(certs, tls_port, "--tls-auth-clients", "no"))
    procs.append(master)
    replica = start_server(["--tls-replication", "yes", "--tls-cert-file", certs / "client.crt",
                            "--tls-key-file", certs / "client.key", "--tls-ca-cert-file",
                            certs / "rogue-ca.crt"])
    procs.append(replica)
    r = replica.client()
    r.replicaof(HOST, tls_port)
    wait_for(lambda: "TLS handshake" in replica.log_text(100000))
    assert r.info("replication")["master_link_status"] == "down"
    assert r.ping()


def test_redis_replica_of_vireo_over_tls(certs, procs):  # noqa: F811
    tls_port = free_port()
    master = start_server(tls_args(certs, tls_port))
    procs.append(master)
    m = master.client()
    _fill(m)
    redis_replica = start_redis([*map(str, _replica_tls_args(certs)), "--save", ""])
    try:
        _replicate_and_check(m, redis_replica.client(), tls_port)
    finally:
        redis_replica.stop()
        redis_replica.cleanup()


def _tls_read_all(port, certs, source="127.0.0.1", host=HOST):
    """Handshakes (no client certificate needed by the caller's server) and reads until the
    server closes: what the server said through the TLS session."""
    ctx = ssl.create_default_context(cafile=str(certs / "ca.crt"))
    ctx.check_hostname = False
    ctx.load_cert_chain(certs / "client.crt", certs / "client.key")
    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(5)
    s.connect((host, port))
    with ctx.wrap_socket(s, server_hostname="localhost") as t:
        data = b""
        while True:
            try:
                chunk = t.recv(4096)
            except (ssl.SSLError, ConnectionResetError):
                break
            if not chunk:
                break
            data += chunk
    return data


def test_config_set_tls_port_opens_moves_and_closes_the_listener(tls_server, certs):
    plain = tls_server.client(decode_responses=True)
    old_port = tls_server.tls_port
    new_port = free_port()
    assert plain.config_set("tls-port", new_port)
    assert plain.config_get("tls-port")["tls-port"] == str(new_port)
    tls_server.tls_port = new_port
    assert tls_client(tls_server, certs).ping()
    with pytest.raises(OSError):
        socket.create_connection((HOST, old_port), timeout=2).close()
    # The plain port is untouched.
    assert tls_server.client().ping()
    # tls-port 0 closes it.
    assert plain.config_set("tls-port", 0)
    with pytest.raises(OSError):
        socket.create_connection((HOST, new_port), timeout=2).close()
    # A port in use: Redis's error, the old value and listener stay.
    assert plain.config_set("tls-port", new_port)
    busy = socket.socket()
    busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    busy.bind((HOST, 0))
    busy.listen(1)
    try:
        with pytest.raises(redis.ResponseError) as e:
            plain.config_set("tls-port", busy.getsockname()[1])
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'tls-port') - "
                                "Unable to listen on this port. Check server logs.")
    finally:
        busy.close()
    assert plain.config_get("tls-port")["tls-port"] == str(new_port)
    assert tls_client(tls_server, certs).ping()
    # CONFIG SET bind moves the TLS listener too.
    assert plain.config_set("bind", f"{HOST} -::1")
    assert tls_client(tls_server, certs).ping()
    # The listeners' epoll registrations survived all that: the plain port still accepts.
    assert tls_server.client().ping()


def test_config_set_tls_port_switches_tls_on_at_run_time(certs, procs):  # noqa: F811
    # Certificates configured, no TLS port: CONFIG SET tls-port builds the contexts first.
    h = start_server(["--tls-cert-file", certs / "server.crt", "--tls-key-file",
                      certs / "server.key", "--tls-ca-cert-file", certs / "ca.crt"])
    procs.append(h)
    plain = h.client(decode_responses=True)
    h.tls_port = free_port()
    assert plain.config_set("tls-port", h.tls_port)
    assert tls_client(h, certs).ping()
    # Without certificates the contexts can't be built: Redis's error, nothing listens.
    bare = start_server()
    procs.append(bare)
    c = bare.client(decode_responses=True)
    port = free_port()
    with pytest.raises(redis.ResponseError, match=r"'tls-port'\) - Unable to update TLS "
                                                  r"configuration"):
        c.config_set("tls-port", port)
    assert c.config_get("tls-port")["tls-port"] == "0"
    with pytest.raises(OSError):
        socket.create_connection((HOST, port), timeout=2).close()


def test_every_runtime_tls_option_can_be_set(tls_server, certs):
    plain = tls_server.client(decode_responses=True)
    settings = [
        ("tls-auth-clients", "optional"), ("tls-prefer-server-ciphers", "yes"),
        ("tls-session-caching", "no"), ("tls-session-cache-size", "100"),
        ("tls-session-cache-timeout", "60"), ("tls-replication", "yes"),
        ("tls-replication", "no"), ("tls-cluster", "no"), ("tls-protocols", "TLSv1.2 TLSv1.3"),
        ("tls-ciphers", "HIGH:!aNULL"), ("tls-ciphersuites", "TLS_AES_256_GCM_SHA384"),
        ("tls-dh-params-file", str(certs / "dh.pem")),
        ("tls-ca-cert-dir", str(certs / "cadir")),
        # A certificate and its key change together (one alone doesn't match the other).
        ("tls-client-cert-file", str(certs / "client.crt"), "tls-client-key-file",
         str(certs / "client.key")),
        ("tls-client-key-file-pass", "unused"),
        ("tls-key-file-pass", "s3cret"), ("tls-key-file", str(certs / "server-enc.key")),
        ("tls-cert-file", str(certs / "server.crt")), ("tls-ca-cert-file", str(certs / "ca.crt")),
    ]
    for pairs in settings:
        assert call(plain, "CONFIG", "SET", *pairs) == "OK", pairs
        for name, value in zip(pairs[::2], pairs[1::2]):
            assert plain.config_get(name)[name] == value
    # Whatever the sequence, the port still handshakes with the final settings.
    assert tls_client(tls_server, certs).ping()
    assert tls_client(tls_server, certs, cert=None).ping()  # optional
    # Redis marks only these immutable; every other tls-* option is CONFIG SET-able.
    cfg = plain.config_get("tls-*")
    assert "tls-port" in cfg


def test_maxclients_refusal_is_sent_through_tls(tls_server, certs):
    plain = tls_server.client()
    assert plain.ping()
    plain.config_set("maxclients", 1)
    try:
        data = _tls_read_all(tls_server.tls_port, certs)
        assert data == b"-ERR max number of clients reached\r\n"
        assert plain.ping()
        assert int(plain.info("stats")["rejected_connections"]) >= 1
    finally:
        plain.config_set("maxclients", 10000)


def test_protected_mode_refusal_is_sent_through_tls(certs, procs):  # noqa: F811
    tls_port = free_port()
    h = start_server(tls_args(certs, tls_port, "--bind", "127.0.0.1", "127.0.0.2",
                              "--protected-mode", "yes"))
    procs.append(h)
    data = _tls_read_all(tls_port, certs, source="127.0.0.2", host="127.0.0.2")
    assert data.startswith(b"-DENIED Redis is running in protected mode")
    assert data.endswith(b"from the outside.\r\n")
    # Loopback over TLS is served.
    h.tls_port = tls_port
    assert tls_client(h, certs).ping()


def test_openssl_memory_counts_in_tot_mem(tls_server, certs):
    plain = tls_server.client()
    t = tls_client(tls_server, certs, client_name="tlsclient")
    t.ping()
    plain.client_setname("plainclient")
    by_name = {c["name"]: int(c["tot-mem"]) for c in plain.client_list()}
    # The estimate of OpenSSL's state (two ~17 KB record buffers and more) is in tot-mem.
    assert by_name["tlsclient"] >= by_name["plainclient"] + 40000


def test_a_handshake_that_never_finishes_is_logged_and_closed(tls_server, certs):
    plain = tls_server.client()
    stalled = socket.create_connection((HOST, tls_server.tls_port), timeout=30)
    try:
        stalled.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")  # half a ClientHello
        wait_for(lambda: len(plain.client_list()) == 2)
        # vireo's 10 s handshake limit (Redis has none): then the connection goes, with a line.
        assert stalled.recv(4096) == b""
        assert "TLS handshake timed out" in tls_server.log_text(100000)
        assert len(plain.client_list()) == 1
    finally:
        stalled.close()


# ---- Diskless snapshots over TLS (relayed through the server) -------------------------------


def _diskless_master(certs, procs, keys, *extra):  # noqa: F811
    tls_port = free_port()
    master = start_server(tls_args(certs, tls_port, "--repl-diskless-sync", "yes", *extra))
    procs.append(master)
    m = master.client()
    _fill(m, keys)
    return master, m, tls_port


@pytest.mark.parametrize("load", ["disabled", "swapdb", "on-empty-db"])
def test_diskless_sync_to_tls_and_plain_replicas_from_one_child(certs, procs, load):  # noqa: F811
    """One child's image, relayed by the server to a TLS and a plain replica; both get all of
    it (Redis sends TLS replicas diskless images too)."""
    master, m, tls_port = _diskless_master(certs, procs, 20000,  # several pipe chunks
                                           "--repl-diskless-sync-delay", "30",
                                           "--repl-diskless-sync-max-replicas", "2")
    tls_replica = start_server(["--repl-diskless-load", load, *_replica_tls_args(certs)])
    plain_replica = start_server(["--repl-diskless-load", load])
    procs += [tls_replica, plain_replica]
    t, p = tls_replica.client(), plain_replica.client()
    t.replicaof(HOST, tls_port)
    p.replicaof(HOST, master.port)
    for r in (t, p):
        wait_in_sync(m, r, timeout=30)
        assert r.dbsize() == m.dbsize() and r.get("big") == m.get("big")
    wait_for(lambda: master.log_text(100000).count("Streamed RDB transfer with replica") == 2)
    log = master.log_text(100000)
    assert log.count("Starting BGSAVE for SYNC with target: replicas sockets") == 1, log
    m.set("after", "sync")
    for r in (t, p):
        wait_in_sync(m, r)
        assert r.get("after") == b"sync"


def test_diskless_sync_to_a_tls_replica_that_drops(certs, procs):  # noqa: F811
    """A TLS replica gone mid-transfer: the child is killed (it has no one left), the server
    goes on serving, and the next replica gets a fresh image through a new relay."""
    master, m, tls_port = _diskless_master(certs, procs, 200, "--repl-diskless-sync-delay", "0",
                                           "--rdb-key-save-delay", "200")
    replica = start_server(_replica_tls_args(certs))
    procs.append(replica)
    r = replica.client()
    r.replicaof(HOST, tls_port)
    wait_for(lambda: m.info("persistence")["rdb_bgsave_in_progress"] == 1)
    r.replicaof("no", "one")
    wait_for(lambda: "last replica dropped, killing fork child" in master.log_text(100000))
    wait_for(lambda: m.info("persistence")["rdb_bgsave_in_progress"] == 0)
    assert m.ping()
    m.config_set("rdb-key-save-delay", "0")
    r.replicaof(HOST, tls_port)
    wait_in_sync(m, r, timeout=30)
    assert r.dbsize() == m.dbsize()


@pytest.mark.parametrize("tls", [True, False])
def test_relayed_replica_stuck_for_repl_timeout_is_dropped(certs, procs, tls):  # noqa: F811
    """A replica (TLS or plain: every diskless image is relayed) that stops reading
    mid-transfer is dropped after repl-timeout (read at each cron, so lowering it during the
    transfer counts), the others go on."""
    master, m, tls_port = _diskless_master(certs, procs, 0, "--repl-diskless-sync-delay", "0",
                                           "--rdbcompression", "no")
    m.execute_command("DEBUG", "POPULATE", 20000, "k", 2000)  # ~40 MB: more than the buffers
    replica = start_server(["--repl-diskless-load", "swapdb",
                            *(_replica_tls_args(certs) if tls else [])])
    procs.append(replica)
    r = replica.client()
    r.replicaof(HOST, tls_port if tls else master.port)
    wait_for(lambda: "Loading DB in memory" in replica.log_text(100000))
    os.kill(replica.proc.pid, signal.SIGSTOP)
    try:
        m.config_set("repl-timeout", "2")
        wait_for(lambda: "Disconnecting timedout replica (full sync)" in master.log_text(100000),
                 timeout=30)
        wait_for(lambda: m.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=30)
        assert m.ping()
    finally:
        os.kill(replica.proc.pid, signal.SIGCONT)


def test_filtered_snapshot_over_tls(tls_server, certs, tmp_path, procs):  # noqa: F811
    """redis-cli --functions-rdb over TLS: REPLCONF rdb-filter-only functions, the image
    relayed from the child through the server (it used to be refused over TLS)."""
    plain = redis.Redis(host=HOST, port=tls_server.port)
    plain.set("k", "v")
    plain.function_load("#!lua name=tlslib\nredis.register_function('f', function() return 1 end)")
    out = redis_cli_tls(tls_server, certs, "--functions-rdb", tmp_path / "f.rdb", text=True)
    assert "Transfer finished with success" in out.stderr + out.stdout, out.stderr
    # The snapshot holds the library and no keys.
    loaded = start_server(["--dir", tmp_path, "--dbfilename", "f.rdb"])
    procs.append(loaded)
    c = loaded.client()
    assert c.dbsize() == 0
    libs = c.function_list()
    assert len(libs) == 1 and b"tlslib" in libs[0], libs
    # And the whole dataset, as redis-cli --rdb asks for it.
    out = redis_cli_tls(tls_server, certs, "--rdb", tmp_path / "all.rdb", text=True)
    assert "Transfer finished with success" in out.stderr + out.stdout, out.stderr


def test_redis_cli_replica_over_tls_diskless(tls_server, certs):
    plain = redis.Redis(host=HOST, port=tls_server.port)
    plain.config_set("repl-diskless-sync", "yes")
    plain.config_set("repl-diskless-sync-delay", "0")
    proc = subprocess.Popen(
        ["redis-cli", "--tls", "--cacert", certs / "ca.crt", "--cert", certs / "client.crt",
         "--key", certs / "client.key", "-h", HOST, "-p", str(tls_server.tls_port), "--replica"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Online once the relayed image went through (redis-cli buffers what it prints).
        wait_for(lambda: plain.info("replication")["connected_slaves"] == 1 and
                 plain.info("replication")["slave0"]["state"] == "online")
        assert "Streamed RDB transfer with replica" in tls_server.log_text(100000)
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()

"""Smallest possible end-to-end checks: the server starts, answers, and speaks RESP."""


def test_ping(r):
    assert r.ping() is True


def test_set_get(r):
    assert r.set(b"greeting", b"hello") is True
    assert r.get(b"greeting") == b"hello"
    assert r.get(b"missing") is None


def test_ping_raw_bytes(raw):
    # The exact wire form matters: clients other than redis-py parse it strictly.
    assert raw.execute("PING") == b"+PONG\r\n"

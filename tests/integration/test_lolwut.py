"""LOLWUT (src/commands/lolwut.cc)."""

import pytest
import redis


def version(r):
    return r.info("server")["redis_version"]


def test_default_prints_the_version(r):
    assert r.execute_command("LOLWUT") == f"Redis ver. {version(r)}\n".encode()


def test_version_5_draws_schotter(r):
    out = r.execute_command("LOLWUT", "VERSION", 5).decode()
    art, last = out.rsplit("\n", 2)[0], out.rsplit("\n", 2)[1]
    assert last == f"Georg Nees - schotter, plotter on paper, 1968. Redis ver. {version(r)}"
    rows = art.split("\n")
    # 66 columns of Braille cells (U+2800..U+28FF) by default, some of them inked.
    assert all(len(row) == 66 for row in rows)
    assert all(0x2800 <= ord(ch) <= 0x28FF for row in rows for ch in row)
    assert any(ch != "\u2800" for row in rows for ch in row)
    # Same arguments, same picture; the arguments shape it.
    assert r.execute_command("LOLWUT", "VERSION", 5) == out.encode()
    small = r.execute_command("LOLWUT", "VERSION", 5, 10, 2, 2).decode()
    assert all(len(row) == 10 for row in small.split("\n")[:-2])
    # Clamped, as in Redis.
    tiny = r.execute_command("LOLWUT", "VERSION", 5, 0, 0, 0).decode()
    assert tiny.endswith(f"Redis ver. {version(r)}\n")


def test_version_6_and_others(r):
    out = r.execute_command("LOLWUT", "VERSION", 6, 40, 10).decode()
    lines = out.split("\n")
    assert lines[-1] == "" and lines[-2].endswith(f"Redis ver. {version(r)}")
    assert all(len(line) == 40 for line in lines[:10])
    assert r.execute_command("LOLWUT", "VERSION", 7) == f"Redis ver. {version(r)}\n".encode()


def test_errors(r):
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        r.execute_command("LOLWUT", "VERSION", "x")
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        r.execute_command("LOLWUT", "VERSION", 5, "wide")


def test_resp3_verbatim(server):
    raw = server.raw()
    raw.execute("HELLO", "3")
    reply = raw.execute("LOLWUT", "VERSION", 7)
    assert reply.startswith(b"=") and b"\r\ntxt:Redis ver. " in reply

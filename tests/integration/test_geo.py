"""GEO commands: GEOADD, GEODIST, GEOHASH, GEOPOS, GEORADIUS(_RO), GEORADIUSBYMEMBER(_RO),
GEOSEARCH and GEOSEARCHSTORE.

Expected replies (raw bytes where the float formatting matters) were recorded from redis-server
7.0.15, whose geo code is the same as 7.2's. The last tests start Debian's redis-server (skipped
when absent) and compare replies byte for byte on thousands of random inputs.
"""

from __future__ import annotations

import random
import shutil

import pytest

from conftest import RawConnection, _finish, call, call_error, start_server, wait_for

PALERMO = ("13.361389", "38.115556", "Palermo")
CATANIA = ("15.087269", "37.502669", "Catania")


def add_sicily(raw, key="Sicily"):
    return raw.execute("GEOADD", key, *PALERMO, *CATANIA)


# ---------------------------------------------------------------------------------------------
# GEOADD


def test_geoadd_basic_and_scores(raw):
    assert add_sicily(raw) == b":2\r\n"
    assert raw.execute("ZSCORE", "Sicily", "Palermo") == b"$16\r\n3479099956230698\r\n"
    assert raw.execute("ZSCORE", "Sicily", "Catania") == b"$16\r\n3479447370796909\r\n"
    assert raw.execute("TYPE", "Sicily") == b"+zset\r\n"
    assert raw.execute("GEOADD", "Sicily", *PALERMO) == b":0\r\n"


def test_geoadd_nx_xx_ch(raw):
    add_sicily(raw)
    moved = ("13.5", "38.0", "Palermo")
    assert raw.execute("GEOADD", "Sicily", "NX", *moved) == b":0\r\n"
    assert raw.execute("GEOADD", "Sicily", "XX", *moved, "1", "1", "New") == b":0\r\n"
    assert raw.execute("ZCARD", "Sicily") == b":2\r\n"
    assert raw.execute("GEOADD", "Sicily", "CH", "XX", *PALERMO) == b":1\r\n"
    assert raw.execute("GEOADD", "Sicily", "ch", *PALERMO, "2", "2", "Other") == b":1\r\n"
    assert raw.execute("GEOADD", "Sicily", "CH", "NX", "3", "3", "Third", *CATANIA) == b":1\r\n"
    assert raw.execute("GEOADD", "missing", "XX", *PALERMO) == b":0\r\n"
    assert raw.execute("EXISTS", "missing") == b":0\r\n"


def test_geoadd_errors(raw):
    syntax = b"-ERR syntax error\r\n"
    assert raw.execute("GEOADD", "k", "NX", "XX", *PALERMO) == syntax
    assert raw.execute("GEOADD", "k", "1", "2", "m", "3") == syntax
    assert raw.execute("GEOADD", "k", "CH", "CH", "CH") == syntax
    assert raw.execute("GEOADD", "k", "GT", *PALERMO) == syntax
    assert raw.execute("GEOADD", "k", "x", "1", "m") == b"-ERR value is not a valid float\r\n"
    assert raw.execute("GEOADD", "k", "1", "nan", "m") == b"-ERR value is not a valid float\r\n"
    assert (raw.execute("GEOADD", "k", "200", "10", "m")
            == b"-ERR invalid longitude,latitude pair 200.000000,10.000000\r\n")
    assert (raw.execute("GEOADD", "k", "1", "2", "a", "-10", "-85.1", "b")
            == b"-ERR invalid longitude,latitude pair -10.000000,-85.100000\r\n")
    assert (raw.execute("GEOADD", "k", "inf", "0", "m")
            == b"-ERR invalid longitude,latitude pair inf,0.000000\r\n")
    assert raw.execute("EXISTS", "k") == b":0\r\n"
    assert raw.execute("GEOADD", "k", "1", "2") == (
        b"-ERR wrong number of arguments for 'geoadd' command\r\n")
    raw.execute("SET", "str", "x")
    assert raw.execute("GEOADD", "str", *PALERMO).startswith(b"-WRONGTYPE")


def test_geoadd_limits_are_inclusive(raw):
    assert raw.execute("GEOADD", "k", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw") == b":2\r\n"
    assert raw.execute("GEOPOS", "k", "ne", "sw") == (
        b"*2\r\n*2\r\n$3\r\n180\r\n$19\r\n85.0511287799999991\r\n"
        b"*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-85.05112751263942528\r\n")


# ---------------------------------------------------------------------------------------------
# GEOPOS, GEOHASH, GEODIST


def test_geopos_resp2_and_resp3(server, raw):
    add_sicily(raw)
    expected = (b"*3\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n"
                b"*2\r\n$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n*-1\r\n")
    assert raw.execute("GEOPOS", "Sicily", "Palermo", "Catania", "nope") == expected
    assert raw.execute("GEOPOS", "missing", "a") == b"*1\r\n*-1\r\n"
    assert raw.execute("GEOPOS", "missing") == b"*0\r\n"
    with server.raw() as r3:
        r3.execute("HELLO", "3")
        assert r3.execute("GEOPOS", "Sicily", "Palermo", "x") == (
            b"*2\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n_\r\n")


def test_geopos_zero_and_negative(raw):
    raw.execute("GEOADD", "k", "0", "0", "o", "-0.0000001", "-0.0000001", "n")
    assert raw.execute("GEOPOS", "k", "o", "n") == (
        b"*2\r\n*2\r\n$19\r\n0.00000268220901489\r\n$19\r\n0.00000126736058093\r\n"
        b"*2\r\n$20\r\n-0.00000268220901489\r\n$20\r\n-0.00000126736058093\r\n")


def test_geohash(server, raw):
    add_sicily(raw)
    assert raw.execute("GEOHASH", "Sicily", "Palermo", "Catania", "x") == (
        b"*3\r\n$11\r\nsqc8b49rny0\r\n$11\r\nsqdtr74hyu0\r\n$-1\r\n")
    assert raw.execute("GEOHASH", "missing", "a", "b") == b"*2\r\n$-1\r\n$-1\r\n"
    assert raw.execute("GEOHASH", "Sicily") == b"*0\r\n"
    with server.raw() as r3:
        r3.execute("HELLO", "3")
        assert r3.execute("GEOHASH", "Sicily", "x") == b"*1\r\n_\r\n"


def test_geodist(raw):
    add_sicily(raw)
    assert raw.execute("GEODIST", "Sicily", "Palermo", "Catania") == b"$11\r\n166274.1516\r\n"
    assert raw.execute("GEODIST", "Sicily", "Palermo", "Catania", "km") == b"$8\r\n166.2742\r\n"
    assert raw.execute("GEODIST", "Sicily", "Palermo", "Catania", "MI") == b"$8\r\n103.3182\r\n"
    assert raw.execute("GEODIST", "Sicily", "Palermo", "Catania", "ft") == b"$11\r\n545518.8700\r\n"
    assert raw.execute("GEODIST", "Sicily", "Palermo", "Palermo") == b"$6\r\n0.0000\r\n"
    assert raw.execute("GEODIST", "Sicily", "Palermo", "x") == b"$-1\r\n"
    assert raw.execute("GEODIST", "missing", "a", "b") == b"$-1\r\n"
    assert raw.execute("GEODIST", "Sicily", "a", "b", "yd") == (
        b"-ERR unsupported unit provided. please use M, KM, FT, MI\r\n")
    assert raw.execute("GEODIST", "missing", "a", "b", "yd") == (
        b"-ERR unsupported unit provided. please use M, KM, FT, MI\r\n")
    assert raw.execute("GEODIST", "Sicily", "a", "b", "km", "x") == b"-ERR syntax error\r\n"


def test_reads_count_keyspace_hits(raw):
    add_sicily(raw)
    raw.execute("CONFIG", "RESETSTAT")
    raw.execute("GEOPOS", "Sicily", "Palermo")
    raw.execute("GEODIST", "Sicily", "Palermo", "Catania")
    raw.execute("GEOSEARCH", "nokey", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "m")
    raw.execute("GEOHASH", "nokey", "x")
    raw.execute("GEOADD", "Sicily", *PALERMO)  # a write: not counted
    stats = raw.execute("INFO", "stats")
    assert b"keyspace_hits:2\r\n" in stats and b"keyspace_misses:2\r\n" in stats


def test_wrongtype(raw):
    raw.execute("SET", "s", "x")
    for cmd in (("GEOPOS", "s", "a"), ("GEOHASH", "s", "a"), ("GEODIST", "s", "a", "b"),
                ("GEORADIUS", "s", "0", "0", "1", "km"), ("GEORADIUSBYMEMBER", "s", "a", "1", "km"),
                ("GEOSEARCH", "s", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
                ("GEOSEARCHSTORE", "d", "s", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km")):
        assert raw.execute(*cmd).startswith(b"-WRONGTYPE"), cmd


# ---------------------------------------------------------------------------------------------
# Searches


def test_georadius_shapes(raw):
    add_sicily(raw)
    assert raw.execute("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "ASC") == (
        b"*2\r\n*2\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n*2\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n")
    assert raw.execute("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHCOORD", "WITHHASH",
                       "DESC", "COUNT", "1") == (
        b"*1\r\n*3\r\n$7\r\nPalermo\r\n:3479099956230698\r\n"
        b"*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n")
    assert raw.execute("GEORADIUS", "Sicily", "15", "37", "100", "km") == b"*1\r\n$7\r\nCatania\r\n"
    assert raw.execute("GEORADIUS", "Sicily", "15", "37", "1", "m") == b"*0\r\n"
    assert raw.execute("GEORADIUS", "missing", "15", "37", "1", "m") == b"*0\r\n"
    assert raw.execute("GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "ASC") == (
        b"*2\r\n$7\r\nCatania\r\n$7\r\nPalermo\r\n")


def test_georadiusbymember(raw):
    add_sicily(raw)
    raw.execute("GEOADD", "Sicily", "13.583333", "37.316667", "Agrigento")
    assert raw.execute("GEORADIUSBYMEMBER", "Sicily", "Agrigento", "100", "km", "WITHDIST") == (
        b"*2\r\n*2\r\n$9\r\nAgrigento\r\n$6\r\n0.0000\r\n*2\r\n$7\r\nPalermo\r\n$7\r\n90.9778\r\n")
    assert raw.execute("GEORADIUSBYMEMBER_RO", "Sicily", "Agrigento", "100", "km") == (
        b"*2\r\n$9\r\nAgrigento\r\n$7\r\nPalermo\r\n")
    assert raw.execute("GEORADIUSBYMEMBER", "Sicily", "nope", "100", "km") == (
        b"-ERR could not decode requested zset member\r\n")
    # Without the key neither the member nor the radius is looked at.
    assert raw.execute("GEORADIUSBYMEMBER", "missing", "m", "x", "yd") == b"*0\r\n"
    assert raw.execute("GEORADIUSBYMEMBER", "missing", "m", "x", "yd", "STORE", "d") == b":0\r\n"


def test_geosearch_options(raw):
    add_sicily(raw)
    raw.execute("GEOADD", "Sicily", "12.758489", "38.788135", "edge1", "17.241510", "38.788135", "edge2")
    assert raw.execute("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km",
                       "ASC") == b"*2\r\n$7\r\nCatania\r\n$7\r\nPalermo\r\n"
    assert raw.execute("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km",
                       "ASC", "WITHCOORD", "WITHDIST", "WITHHASH") == (
        b"*4\r\n*4\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n:3479447370796909\r\n"
        b"*2\r\n$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n"
        b"*4\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n:3479099956230698\r\n"
        b"*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n"
        b"*4\r\n$5\r\nedge2\r\n$8\r\n279.7403\r\n:3481342659049484\r\n"
        b"*2\r\n$20\r\n17.24151045083999634\r\n$20\r\n38.78813451624225195\r\n"
        b"*4\r\n$5\r\nedge1\r\n$8\r\n279.7405\r\n:3479273021651468\r\n"
        b"*2\r\n$19\r\n12.7584877610206604\r\n$20\r\n38.78813451624225195\r\n")
    assert raw.execute("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km",
                       "DESC", "COUNT", "2") == b"*2\r\n$7\r\nCatania\r\n$5\r\nedge1\r\n"
    got = raw.execute("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km",
                      "COUNT", "1", "ANY")
    assert got.startswith(b"*1\r\n")
    assert raw.execute("GEOSEARCH", "Sicily", "FROMMEMBER", "x", "BYRADIUS", "1", "m") == (
        b"-ERR could not decode requested zset member\r\n")
    assert raw.execute("GEOSEARCH", "missing", "FROMMEMBER", "x", "BYRADIUS", "1", "m") == b"*0\r\n"


def test_search_errors(raw):
    add_sicily(raw)
    e = lambda *a: raw.execute(*a).decode().rstrip("\r\n")  # noqa: E731
    assert e("GEORADIUS", "Sicily", "15", "37", "x", "km") == "-ERR need numeric radius"
    assert e("GEORADIUS", "Sicily", "15", "37", "-1", "km") == "-ERR radius cannot be negative"
    assert e("GEORADIUS", "Sicily", "15", "37", "1", "yd") == (
        "-ERR unsupported unit provided. please use M, KM, FT, MI")
    assert e("GEORADIUS", "Sicily", "195", "37", "1", "km") == (
        "-ERR invalid longitude,latitude pair 195.000000,37.000000")
    assert e("GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT", "0") == "-ERR COUNT must be > 0"
    assert e("GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT", "x") == (
        "-ERR value is not an integer or out of range")
    assert e("GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT") == "-ERR syntax error"
    assert e("GEORADIUS", "Sicily", "15", "37", "1", "km", "ANY") == (
        "-ERR the ANY argument requires COUNT argument")
    assert e("GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE", "d", "WITHDIST") == (
        "-ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD "
        "options")
    assert e("GEORADIUS_RO", "Sicily", "15", "37", "1", "km", "STORE", "d") == "-ERR syntax error"
    assert e("GEORADIUS", "Sicily", "15", "37", "1", "km", "FROMLONLAT", "1", "1") == (
        "-ERR syntax error")
    assert e("geosearch", "Sicily", "BYRADIUS", "1", "km", "ASC", "WITHDIST") == (
        "-ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for geosearch")
    assert e("GeoSearch", "Sicily", "FROMLONLAT", "1", "1", "ASC", "WITHDIST") == (
        "-ERR exactly one of BYRADIUS and BYBOX can be specified for GeoSearch")
    assert e("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "FROMMEMBER", "Palermo", "BYRADIUS",
             "1", "km") == "-ERR syntax error"
    assert e("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "BYBOX", "1",
             "1", "km") == "-ERR syntax error"
    assert e("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYBOX", "x", "1", "km") == (
        "-ERR need numeric width")
    assert e("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYBOX", "1", "x", "km") == (
        "-ERR need numeric height")
    assert e("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYBOX", "1", "-1", "km") == (
        "-ERR height or width cannot be negative")
    assert e("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "STORE",
             "d") == "-ERR syntax error"
    assert e("GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "STOREDIST") == (
        "-ERR syntax error")
    assert e("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km",
             "WITHCOORD") == (
        "-ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
    assert e("GEOSEARCH", "Sicily", "FROMLONLAT", "1") == (
        "-ERR wrong number of arguments for 'geosearch' command")


def test_store_variants(raw):
    add_sicily(raw)
    assert raw.execute("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "d") == b":2\r\n"
    assert raw.execute("ZRANGE", "d", "0", "-1", "WITHSCORES") == (
        b"*4\r\n$7\r\nPalermo\r\n$16\r\n3479099956230698\r\n$7\r\nCatania\r\n$16\r\n3479447370796909\r\n")
    assert raw.execute("GEORADIUS", "Sicily", "15", "37", "200", "km", "STOREDIST", "d") == b":2\r\n"
    # (Redis 7.0 prints the first score with %.17g, "56.441257870158204"; 7.2 as here.)
    assert raw.execute("ZRANGE", "d", "0", "-1", "WITHSCORES") == (
        b"*4\r\n$7\r\nCatania\r\n$16\r\n56.4412578701582\r\n$7\r\nPalermo\r\n$18\r\n190.44242984775784\r\n")
    assert raw.execute("GEORADIUSBYMEMBER", "Sicily", "Palermo", "10", "km", "STORE", "d") == b":1\r\n"
    assert raw.execute("ZRANGE", "d", "0", "-1") == b"*1\r\n$7\r\nPalermo\r\n"
    assert raw.execute("GEOSEARCHSTORE", "d2", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS",
                       "200", "km", "COUNT", "1", "STOREDIST") == b":1\r\n"
    assert raw.execute("ZRANGE", "d2", "0", "-1", "WITHSCORES") == (
        b"*2\r\n$7\r\nCatania\r\n$16\r\n56.4412578701582\r\n")
    # No results (or no source) delete the destination.
    assert raw.execute("GEOSEARCHSTORE", "d2", "Sicily", "FROMLONLAT", "0", "0", "BYRADIUS", "1",
                       "m") == b":0\r\n"
    assert raw.execute("EXISTS", "d2") == b":0\r\n"
    assert raw.execute("GEOSEARCHSTORE", "d", "missing", "FROMLONLAT", "0", "0", "BYRADIUS", "1",
                       "m") == b":0\r\n"
    assert raw.execute("EXISTS", "d") == b":0\r\n"
    # Storing into the source replaces it.
    assert raw.execute("GEOSEARCHSTORE", "Sicily", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS",
                       "100", "km") == b":1\r\n"
    assert raw.execute("ZRANGE", "Sicily", "0", "-1") == b"*1\r\n$7\r\nCatania\r\n"


def test_command_info(plain):
    def info(name):
        return call(plain, "COMMAND", "INFO", name)[0]

    geoadd = info("geoadd")
    assert geoadd[1:6] == [-5, ["write", "denyoom"], 1, 1, 1]
    assert geoadd[6] == ["@write", "@geo", "@slow"]
    assert info("georadius")[1:6] == [-6, ["write", "denyoom", "movablekeys"], 1, 1, 1]
    assert info("georadius_ro")[1:6] == [-6, ["readonly"], 1, 1, 1]
    assert info("geosearch")[1:6] == [-7, ["readonly"], 1, 1, 1]
    assert info("geosearchstore")[1:6] == [-8, ["write", "denyoom"], 1, 2, 1]
    assert info("geodist")[6] == ["@read", "@geo", "@slow"]
    assert call(plain, "COMMAND", "GETKEYS", "GEORADIUS", "k", "0", "0", "1", "m", "STORE", "d") == [
        "k", "d"]
    assert call(plain, "COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "k", "m", "1", "m", "STOREDIST",
                "d") == ["k", "d"]
    assert call(plain, "COMMAND", "GETKEYS", "GEOSEARCHSTORE", "d", "s", "FROMLONLAT", "0", "0",
                "BYRADIUS", "1", "m") == ["d", "s"]
    assert "wrong number of arguments" in call_error(plain, "GEOADD", "k")


def test_notifications_and_propagation(server, raw):
    raw.execute("CONFIG", "SET", "notify-keyspace-events", "KEA")
    with server.raw() as sub:
        sub.execute("PSUBSCRIBE", "__keyevent@0__:*")
        add_sicily(raw)
        assert b"zadd" in sub.read_reply()
        raw.execute("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km")
        assert b"geosearchstore" in sub.read_reply()
        raw.execute("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "d")
        assert b"georadiusstore" in sub.read_reply()
        raw.execute("GEORADIUS", "Sicily", "0", "0", "1", "km", "STORE", "d")
        assert b"del" in sub.read_reply()
    raw.execute("CONFIG", "SET", "notify-keyspace-events", "")


def test_geoadd_is_logged_as_zadd(server_factory):
    """GEOADD reaches the AOF (and replicas) as the ZADD Redis rewrites it into; no-op GEOADDs
    and reads are not logged; the store variants are logged as sent."""
    srv = server_factory(["--appendonly", "yes"])
    with srv.raw() as conn:
        assert conn.execute("GEOADD", "Sicily", "CH", *PALERMO, *CATANIA) == b":2\r\n"
        assert conn.execute("GEOADD", "Sicily", *PALERMO) == b":0\r\n"
        conn.execute("GEORADIUS", "Sicily", "15", "37", "200", "km")
        assert conn.execute("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS",
                            "100", "km") == b":1\r\n"

    def aof():
        files = list(srv.workdir.rglob("*.incr.aof"))
        data = files[0].read_bytes() if files else b""
        return data if b"GEOSEARCHSTORE" in data else None

    data = wait_for(aof)
    assert data.count(b"zadd") == 1 and b"GEOADD" not in data and b"GEORADIUS" not in data
    assert RawConnection.encode("zadd", "Sicily", "CH", "3479099956230698", "Palermo",
                                "3479447370796909", "Catania") in data


# ---------------------------------------------------------------------------------------------
# Byte-for-byte comparison with redis-server on random inputs


@pytest.fixture(scope="module")
def ref():
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server not installed")
    handle = start_server(["--save", "", "--appendonly", "no"], binary=binary)
    yield handle
    _finish(handle)


def rand_coord(rng, lo, hi):
    style = rng.random()
    v = rng.uniform(lo, hi)
    if style < 0.2:
        return "%d" % int(v)
    if style < 0.6:
        return "%.6f" % v
    return repr(v)


def random_points(rng, n):
    """Random points, many of them clustered so searches find something."""
    centres = [(rng.uniform(-180, 180), rng.uniform(-85, 85)) for _ in range(6)]
    centres += [(179.9, 10.0), (-179.9, -10.0), (0.0, 84.9), (0.0, -84.9), (0.0, 0.0)]
    out = []
    for i in range(n):
        if rng.random() < 0.3:
            lon, lat = rand_coord(rng, -180, 180), rand_coord(rng, -85.05112878, 85.05112878)
        else:
            clon, clat = rng.choice(centres)
            spread = 10 ** rng.uniform(-4, 1)
            lon = "%.7f" % max(-180, min(180, clon + rng.uniform(-spread, spread)))
            lat = "%.7f" % max(-85.05, min(85.05, clat + rng.uniform(-spread, spread)))
        out.append((lon, lat, "m%d" % i))
    return out, centres


def random_search(rng, key, members, centres):
    unit = rng.choice(["m", "km", "ft", "mi", "KM"])
    scale = {"m": 1, "km": 1000, "ft": 0.3048, "mi": 1609.34, "KM": 1000}[unit]
    radius = "%.3f" % (10 ** rng.uniform(0, 7.3) / scale)
    if rng.random() < 0.7:
        clon, clat = rng.choice(centres)
        lon = "%.5f" % max(-180, min(180, clon + rng.uniform(-1, 1)))
        lat = "%.5f" % max(-85.05, min(85.05, clat + rng.uniform(-1, 1)))
    else:
        lon, lat = rand_coord(rng, -180, 180), rand_coord(rng, -85.05, 85.05)
    opts = []
    for o in ("WITHDIST", "WITHCOORD", "WITHHASH"):
        if rng.random() < 0.4:
            opts.append(o)
    r = rng.random()
    if r < 0.3:
        opts.append("ASC")
    elif r < 0.6:
        opts.append("DESC")
    if rng.random() < 0.4:
        opts += ["COUNT", str(rng.randint(1, 20))]
        if rng.random() < 0.3:
            opts.append("ANY")
    rng.shuffle(opts)  # option order doesn't matter; COUNT's value stays attached below
    opts = fix_count(opts)
    kind = rng.random()
    if kind < 0.25:
        return ["GEORADIUS", key, lon, lat, radius, unit] + opts
    if kind < 0.4:
        return ["GEORADIUSBYMEMBER_RO", key, rng.choice(members), radius, unit] + opts
    src = (["FROMMEMBER", rng.choice(members)] if rng.random() < 0.3
           else ["FROMLONLAT", lon, lat])
    if rng.random() < 0.5:
        shape = ["BYRADIUS", radius, unit]
    else:
        shape = ["BYBOX", "%.3f" % (float(radius) * rng.uniform(0.2, 3)),
                 "%.3f" % (float(radius) * rng.uniform(0.2, 3)), unit]
    return ["GEOSEARCH", key] + src + shape + opts


def fix_count(opts):
    """Re-attach COUNT's argument after a shuffle (and ANY after it, which is fine anywhere)."""
    out, count = [], None
    for o in opts:
        if o == "COUNT":
            continue
        if o.isdigit():
            count = o
            continue
        out.append(o)
    if count is not None:
        out += ["COUNT", count]
    return out


def compare(a: RawConnection, b: RawConnection, *cmd):
    got, want = a.execute(*cmd), b.execute(*cmd)
    assert got == want, (cmd, got[:400], want[:400])


def zset_items(conn: RawConnection, key):
    """(member, score) pairs with scores as floats: Redis 7.0 prints scores with %.17g where 7.2
    (and vireo) print the shortest round-trip form, so STOREDIST results are compared as numbers."""
    lines = conn.execute("ZRANGE", key, "0", "-1", "WITHSCORES").split(b"\r\n")
    values = lines[2::2][: (len(lines) - 2) // 2]
    return [(values[i], float(values[i + 1])) for i in range(0, len(values) - 1, 2)]


@pytest.mark.parametrize("seed", range(6))
def test_random_against_redis(server, ref, seed):
    rng = random.Random(seed)
    with server.raw() as ours, ref.raw() as theirs, server.raw() as ours3, ref.raw() as theirs3:
        ours3.execute("HELLO", "3")
        theirs3.execute("HELLO", "3")
        key = "geo%d" % seed
        for conn in (ours, theirs):
            conn.execute("DEL", key, "dst")
        n = rng.choice([50, 300, 2000])
        points, centres = random_points(rng, n)
        for i in range(0, n, 100):
            chunk = [x for p in points[i:i + 100] for x in p]
            compare(ours, theirs, "GEOADD", key, *chunk)
        members = [p[2] for p in points]
        compare(ours, theirs, "ZRANGE", key, "0", "-1", "WITHSCORES")
        for _ in range(60):
            sample = rng.sample(members, 5) + ["nosuch"]
            compare(ours, theirs, "GEOPOS", key, *sample)
            compare(ours3, theirs3, "GEOPOS", key, *sample[:2])
            compare(ours, theirs, "GEOHASH", key, *sample)
            compare(ours, theirs, "GEODIST", key, sample[0], sample[1],
                    rng.choice(["m", "km", "ft", "mi"]))
        for _ in range(250):
            cmd = random_search(rng, key, members, centres)
            compare(ours, theirs, *cmd)
            if rng.random() < 0.1:
                compare(ours3, theirs3, *cmd)
        for _ in range(20):
            cmd = random_search(rng, key, members, centres)
            if cmd[0] == "GEOSEARCH":
                cmd = ["GEOSEARCHSTORE", "dst"] + cmd[1:]
                cmd = [c for c in cmd if c not in ("WITHDIST", "WITHCOORD", "WITHHASH")]
                if rng.random() < 0.5:
                    cmd.append("STOREDIST")
            else:
                cmd = [c for c in cmd if c not in ("WITHDIST", "WITHCOORD", "WITHHASH")]
                cmd = [c.replace("_RO", "") for c in cmd] + [rng.choice(["STORE", "STOREDIST"]), "dst"]
            compare(ours, theirs, *cmd)
            assert zset_items(ours, "dst") == zset_items(theirs, "dst"), cmd


def test_random_extreme_radii_against_redis(server, ref):
    """Whole-world and tiny searches near the poles and the antimeridian, where the cell choice
    (step estimation, neighbour exclusion, wrap-around) is most fragile."""
    rng = random.Random(99)
    with server.raw() as ours, ref.raw() as theirs:
        for conn in (ours, theirs):
            conn.execute("DEL", "w")
        points = [("%.6f" % rng.uniform(-180, 180), "%.6f" % rng.uniform(-85.05, 85.05), "p%d" % i)
                  for i in range(3000)]
        for i in range(0, len(points), 500):
            compare(ours, theirs, "GEOADD", "w", *[x for p in points[i:i + 500] for x in p])
        for _ in range(400):
            lon = rng.choice(["180", "-180", "179.99", "%.4f" % rng.uniform(-180, 180)])
            lat = rng.choice(["85.05", "-85.05", "0", "70", "-81", "%.4f" % rng.uniform(-85, 85)])
            radius = rng.choice(["0", "1", "5000", "20000", "%.2f" % 10 ** rng.uniform(0, 4.5)])
            cmd = ["GEOSEARCH", "w", "FROMLONLAT", lon, lat, "BYRADIUS", radius, "km"]
            if rng.random() < 0.5:
                cmd = ["GEOSEARCH", "w", "FROMLONLAT", lon, lat, "BYBOX", radius,
                       "%.2f" % (float(radius) * rng.uniform(0.1, 2)), "km"]
            cmd += rng.choice([[], ["ASC"], ["DESC", "COUNT", "7"], ["COUNT", "3", "ANY"]])
            compare(ours, theirs, *cmd)

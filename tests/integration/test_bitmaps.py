"""Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO.

Expected replies and error texts are Redis 7.2's; the suite passes against Debian's redis-server
7.0 too (VIREO_SERVER=$(command -v redis-server)), except BITOP's Redis 8.2 operations, which are
skipped there.
"""

import pytest
import redis

from conftest import arity, call, call_error, start_server
from repl_helpers import assert_same_data, procs, start_redis, start_vireo, wait_in_sync, wait_link_up  # noqa: F401
from test_notifications import EventLog

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INT = "value is not an integer or out of range"
SYNTAX = "syntax error"
BAD_OFFSET = "bit offset is not an integer or out of range"
BAD_BIT = "bit is not an integer or out of range"
BAD_TYPE = ("Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported "
            "but i64 is.")


@pytest.fixture
def b(r):
    """conftest's bytes client on an empty keyspace, under a short name."""
    return r


@pytest.fixture(scope="module")
def has_bitop_82(server):
    c = server.client()
    try:
        c.execute_command("BITOP", "ONE", "__probe_dst", "__probe")
        return True
    except redis.ResponseError:
        return False
    finally:
        c.close()


def dirty(r):
    return r.info("persistence")["rdb_changes_since_last_save"]


# ---------------------------------------------------------------------------------------------
# SETBIT / GETBIT


def test_setbit_grows_with_zero_bytes_and_returns_old_bit(b):
    assert b.setbit("k", 7, 1) == 0
    assert b.get("k") == b"\x01"
    assert b.setbit("k", 7, 1) == 1
    assert b.setbit("k", 23, 1) == 0
    assert b.get("k") == b"\x01\x00\x01"
    assert b.setbit("k", 0, 1) == 0
    assert b.get("k") == b"\x81\x00\x01"
    assert b.setbit("k", 7, 0) == 1
    assert b.get("k") == b"\x80\x00\x01"
    assert b.object("encoding", "k") == b"raw"


def test_getbit(b):
    b.set("k", b"\x80\x01")
    assert [b.getbit("k", i) for i in (0, 1, 7, 15, 16, 10**6)] == [1, 0, 0, 1, 0, 0]
    assert b.getbit("missing", 5) == 0
    assert not b.exists("missing")


def test_bits_of_int_encoded_string(b):
    b.set("n", 5)  # "5" = 0x35 = 00110101
    assert b.object("encoding", "n") == b"int"
    assert [b.getbit("n", i) for i in range(8)] == [0, 0, 1, 1, 0, 1, 0, 1]
    assert b.bitcount("n") == 4
    assert b.setbit("n", 6, 1) == 0
    assert b.get("n") == b"7"
    assert b.object("encoding", "n") == b"raw"


def test_setbit_keeps_ttl(b):
    b.set("k", "a", ex=100)
    b.setbit("k", 100, 1)
    assert 0 < b.ttl("k") <= 100


def test_setbit_errors(plain):
    for offset in ("-1", "abc", "1.5", "", "4294967296", str(2**63)):
        assert call_error(plain, "SETBIT", "k", offset, "1") == BAD_OFFSET
    for bit in ("2", "-1", "x", "", "01"):
        assert call_error(plain, "SETBIT", "k", "0", bit) == BAD_BIT
    assert call_error(plain, "GETBIT", "k", "-1") == BAD_OFFSET
    plain.execute_command("RPUSH", "l", "x")
    assert call_error(plain, "SETBIT", "l", "0", "1") == WRONGTYPE
    assert call_error(plain, "GETBIT", "l", "0") == WRONGTYPE
    # The offset is checked before the key's type.
    assert call_error(plain, "GETBIT", "l", "x") == BAD_OFFSET
    assert call_error(plain, "SETBIT", "k", "0") == arity("setbit")[4:]
    assert call_error(plain, "GETBIT", "k") == arity("getbit")[4:]


def test_setbit_offset_limit_follows_proto_max_bulk_len(b):
    b.config_set("proto-max-bulk-len", 1024 * 1024)
    try:
        assert b.setbit("k", 8 * 1024 * 1024 - 1, 1) == 0
        assert b.strlen("k") == 1024 * 1024
        with pytest.raises(redis.ResponseError, match=BAD_OFFSET):
            b.setbit("k", 8 * 1024 * 1024, 1)
        assert b.getbit("k", 8 * 1024 * 1024 - 1) == 1
    finally:
        b.config_set("proto-max-bulk-len", 512 * 1024 * 1024)


def test_setbit_without_change_is_not_a_write(b):
    b.setbit("k", 3, 1)
    before = dirty(b)
    b.setbit("k", 3, 1)
    b.setbit("k", 4, 0)
    assert dirty(b) == before
    b.setbit("k", 4, 1)
    b.setbit("k", 100, 0)  # grows the string: a write even though the bit stays 0
    assert dirty(b) == before + 2


# ---------------------------------------------------------------------------------------------
# BITCOUNT


def test_bitcount_whole_and_byte_ranges(b):
    b.set("k", "foobar")
    assert b.bitcount("k") == 26
    assert b.bitcount("k", 0, 0) == 4
    assert b.bitcount("k", 1, 1) == 6
    assert b.bitcount("k", -2, -1) == 7
    assert b.bitcount("k", 0, -1, "BYTE") == 26
    assert b.bitcount("k", 5, 100) == 4
    assert b.bitcount("k", 4, 2) == 0
    assert b.bitcount("k", -1, -2) == 0
    assert b.bitcount("k", -100, -50) == 4  # both clamp to byte 0
    assert b.bitcount("missing") == 0


def test_bitcount_bit_ranges(b):
    b.set("k", "foobar")
    assert b.bitcount("k", 5, 30, "BIT") == 17
    assert b.bitcount("k", 0, 0, "BIT") == 0
    assert b.bitcount("k", 1, 1, "bit") == 1
    assert b.bitcount("k", -8, -1, "BIT") == 4
    assert b.bitcount("k", 0, 47, "BIT") == 26
    assert b.bitcount("k", 0, 1000, "BIT") == 26


def test_bitcount_large_value_matches_python(b):
    data = bytes((i * 37 + (i >> 3)) & 0xff for i in range(100_003))
    b.set("big", data)
    assert b.bitcount("big") == sum(bin(x).count("1") for x in data)
    assert b.bitcount("big", 13, 90_001) == sum(bin(x).count("1") for x in data[13:90_002])
    bits = "".join(f"{x:08b}" for x in data[:2000])
    assert b.bitcount("big", 3, 15_997, "BIT") == bits[3:15_998].count("1")


def test_bitcount_errors(plain):
    plain.set("k", "abc")
    assert call_error(plain, "BITCOUNT", "k", "0") == SYNTAX
    assert call_error(plain, "BITCOUNT", "k", "0", "1", "BITS") == SYNTAX
    assert call_error(plain, "BITCOUNT", "k", "0", "1", "BIT", "x") == SYNTAX
    assert call_error(plain, "BITCOUNT", "k", "a", "1") == NOT_INT
    assert call_error(plain, "BITCOUNT", "k", "0", "b") == NOT_INT
    # Crossed negative indexes answer 0 before the unit is looked at.
    assert call(plain, "BITCOUNT", "k", "-1", "-2", "BITS") == 0
    plain.execute_command("RPUSH", "l", "x")
    assert call_error(plain, "BITCOUNT", "l") == WRONGTYPE
    assert call_error(plain, "BITCOUNT") == arity("bitcount")[4:]


def test_bitcount_missing_key_ignores_other_arguments(plain, is_70):
    # Redis 7.2 (and 7.0) look the key up first.
    assert call(plain, "BITCOUNT", "missing", "0") == 0
    assert call(plain, "BITCOUNT", "missing", "x", "y", "z") == 0


# ---------------------------------------------------------------------------------------------
# BITPOS


def test_bitpos_without_range(b):
    b.set("k", b"\xff\xf0\x00")
    assert b.bitpos("k", 0) == 12
    assert b.bitpos("k", 1) == 0
    b.set("ones", b"\xff\xff\xff")
    assert b.bitpos("ones", 0) == 24  # the right is zero-padded
    assert b.bitpos("ones", 1) == 0
    b.set("zeros", b"\x00\x00\x00")
    assert b.bitpos("zeros", 1) == -1
    assert b.bitpos("zeros", 0) == 0
    assert b.bitpos("missing", 1) == -1
    assert b.bitpos("missing", 0) == 0
    b.set("empty", "")
    assert b.bitpos("empty", 0) == -1
    assert b.bitpos("empty", 1) == -1


def test_bitpos_byte_ranges(b):
    b.set("k", b"\x00\xff\xf0")
    assert b.bitpos("k", 1, 0) == 8
    assert b.bitpos("k", 1, 2) == 16
    assert b.bitpos("k", 1, 2, -1) == 16
    assert b.bitpos("k", 0, 1, 1) == -1  # an explicit end: no padding past it
    assert b.bitpos("k", 0, 1) == 20  # start only: still padded
    b.set("ones", b"\xff\xff\xff")
    assert b.bitpos("ones", 0, 1) == 24
    assert b.bitpos("ones", 0, 0, -1) == -1
    assert b.bitpos("k", 1, 3, 2) == -1  # empty range
    assert b.bitpos("k", 1, -100, 100) == 8


def test_bitpos_bit_ranges(b):
    b.set("k", b"\x00\xff\x00")
    assert b.bitpos("k", 1, 7, 15, "BIT") == 8
    assert b.bitpos("k", 0, 8, 15, "BIT") == -1
    assert b.bitpos("k", 0, 8, 16, "bit") == 16
    assert b.bitpos("k", 1, 12, 12, "BIT") == 12
    assert b.bitpos("k", 1, 0, 7, "BIT") == -1
    assert b.bitpos("k", 0, 5, 5, "BYTE") == -1
    assert b.bitpos("k", 1, -12, -1, "BIT") == 12


def test_bitpos_long_runs(b):
    data = b"\x00" * 10_000 + b"\x01" + b"\xff" * 5_000 + b"\x7f"
    b.set("k", data)
    assert b.bitpos("k", 1) == 10_000 * 8 + 7
    assert b.bitpos("k", 0, 10_001) == (10_001 + 5_000) * 8
    assert b.bitpos("k", 0, 10_001, -2) == -1


def test_bitpos_errors(plain):
    plain.set("k", "abc")
    assert call_error(plain, "BITPOS", "k", "2") == "The bit argument must be 1 or 0."
    assert call_error(plain, "BITPOS", "k", "x") == NOT_INT
    assert call_error(plain, "BITPOS", "k", "1", "x") == NOT_INT
    assert call_error(plain, "BITPOS", "k", "1", "0", "y") == NOT_INT
    assert call_error(plain, "BITPOS", "k", "1", "0", "1", "BITS") == SYNTAX
    assert call_error(plain, "BITPOS", "k", "1", "0", "1", "BIT", "x") == SYNTAX
    # The bit is checked before the key; a missing key answers before the range is read.
    assert call_error(plain, "BITPOS", "missing", "3") == "The bit argument must be 1 or 0."
    assert call(plain, "BITPOS", "missing", "0", "x") == 0
    plain.execute_command("RPUSH", "l", "x")
    assert call_error(plain, "BITPOS", "l", "1") == WRONGTYPE
    assert call_error(plain, "BITPOS", "k") == arity("bitpos")[4:]


# ---------------------------------------------------------------------------------------------
# BITOP


def test_bitop_and_or_xor_not(b):
    b.set("a", b"\xf0\x0f\xff")
    b.set("b", b"\x3c\x3c")
    assert b.bitop("AND", "d", "a", "b") == 3
    assert b.get("d") == b"\x30\x0c\x00"
    assert b.bitop("OR", "d", "a", "b") == 3
    assert b.get("d") == b"\xfc\x3f\xff"
    assert b.bitop("XOR", "d", "a", "b") == 3
    assert b.get("d") == b"\xcc\x33\xff"
    assert b.bitop("NOT", "d", "b") == 2
    assert b.get("d") == b"\xc3\xc3"
    assert b.bitop("and", "d", "a", "missing") == 3
    assert b.get("d") == b"\x00\x00\x00"
    assert b.object("encoding", "d") == b"raw"


def test_bitop_large_values(b):
    x = bytes((i * 7) & 0xff for i in range(70_001))
    y = bytes((i * 13 + 5) & 0xff for i in range(65_537))
    b.set("x", x)
    b.set("y", y)
    b.set("z", b"\x55" * 1000)
    assert b.bitop("AND", "d", "x", "y", "z") == 70_001
    expected = bytes((x[i] & (y[i] if i < len(y) else 0) & (0x55 if i < 1000 else 0))
                     for i in range(len(x)))
    assert b.get("d") == expected
    assert b.bitop("XOR", "d", "x", "y") == 70_001
    assert b.get("d") == bytes(x[i] ^ (y[i] if i < len(y) else 0) for i in range(len(x)))


def test_bitop_with_destination_among_sources_and_int_values(b):
    b.set("a", 12)  # "12" = 0x31 0x32
    b.set("b", b"\x0f")
    assert b.bitop("OR", "a", "a", "b") == 2
    assert b.get("a") == b"\x3f\x32"


def test_bitop_replaces_destination_of_any_type_and_drops_ttl(b):
    b.set("a", b"\x01")
    b.rpush("d", "x")
    b.expire("d", 100)
    assert b.bitop("OR", "d", "a") == 1
    assert b.get("d") == b"\x01"
    assert b.ttl("d") == -1


def test_bitop_of_empty_sources_deletes_destination(b):
    b.set("d", "old")
    b.set("empty", "")
    assert b.bitop("OR", "d", "missing", "empty") == 0
    assert not b.exists("d")
    before = dirty(b)
    assert b.bitop("AND", "d", "missing") == 0
    assert dirty(b) == before  # nothing to delete: not a write


def test_bitop_errors(plain):
    plain.set("a", "x")
    plain.execute_command("RPUSH", "l", "x")
    assert call_error(plain, "BITOP", "NAND", "d", "a") == SYNTAX
    assert call_error(plain, "BITOP", "NOT", "d", "a", "a") == \
        "BITOP NOT must be called with a single source key."
    assert call_error(plain, "BITOP", "AND", "d", "a", "l") == WRONGTYPE
    assert not plain.exists("d")
    assert call_error(plain, "BITOP", "AND", "d") == arity("bitop")[4:]


def test_bitop_redis_82_operations(b, has_bitop_82):
    if not has_bitop_82:
        pytest.skip("this server has no BITOP DIFF/DIFF1/ANDOR/ONE (Redis 8.2)")
    b.set("x", b"\xff\xf0")
    b.set("y1", b"\x0f")
    b.set("y2", b"\x30\x01\x80")
    assert b.bitop("DIFF", "d", "x", "y1", "y2") == 3
    assert b.get("d") == b"\xc0\xf0\x00"
    assert b.bitop("DIFF1", "d", "x", "y1", "y2") == 3
    assert b.get("d") == b"\x00\x01\x80"
    assert b.bitop("ANDOR", "d", "x", "y1", "y2") == 3
    assert b.get("d") == b"\x3f\x00\x00"
    b.set("k1", b"\x17")
    b.set("k2", b"\x26")
    b.set("k3", b"\x4d")
    assert b.execute_command("BITOP", "one", "d", "k1", "k2", "k3") == 1
    assert b.get("d") == b"\x78"
    assert b.bitop("ONE", "d", "k1") == 1
    assert b.get("d") == b"\x17"
    for op in ("DIFF", "diff1", "AndOr"):
        with pytest.raises(redis.ResponseError) as e:
            b.bitop(op, "d", "x")
        assert str(e.value) == f"BITOP {op.upper()} must be called with at least two source keys."


# ---------------------------------------------------------------------------------------------
# BITFIELD


def test_bitfield_set_get_incrby(b):
    assert b.execute_command("BITFIELD", "k", "SET", "u8", "0", "255", "GET", "u8", "0",
                             "GET", "i8", "0", "INCRBY", "u4", "8", "3", "GET", "u16", "0") == \
        [0, 255, -1, 3, 0xff30]
    assert b.get("k") == b"\xff\x30"


def test_bitfield_hash_offsets(b):
    assert b.execute_command("BITFIELD", "k", "SET", "i8", "#1", "-2", "SET", "u4", "#1", "9",
                             "GET", "u8", "#1", "GET", "i8", "8") == [0, 0, 0xfe, -2]
    assert b.get("k") == b"\x09\xfe"


def test_bitfield_unaligned_and_wide(b):
    b.execute_command("BITFIELD", "k", "SET", "i64", "3", str(-(2**63)))
    assert b.execute_command("BITFIELD", "k", "GET", "i64", "3", "GET", "u63", "4",
                             "GET", "u1", "3") == [-(2**63), 0, 1]
    assert b.get("k") == b"\x10" + b"\x00" * 8
    assert b.execute_command("BITFIELD", "k", "SET", "u63", "#1", str(2**63 - 1)) == [0]
    assert b.execute_command("BITFIELD", "k", "GET", "u63", "#1") == [2**63 - 1]


def test_bitfield_overflow_modes(b):
    assert b.execute_command("BITFIELD", "k", "INCRBY", "u2", "0", "5",
                             "OVERFLOW", "SAT", "INCRBY", "u2", "2", "5",
                             "OVERFLOW", "FAIL", "INCRBY", "u2", "4", "5",
                             "INCRBY", "u2", "4", "2") == [1, 3, None, 2]
    assert b.execute_command("BITFIELD", "s", "OVERFLOW", "WRAP", "INCRBY", "i8", "0", "130",
                             "OVERFLOW", "SAT", "INCRBY", "i8", "8", "-200",
                             "SET", "i8", "16", "1000", "GET", "i8", "16",
                             "OVERFLOW", "FAIL", "SET", "i8", "24", "128",
                             "SET", "i8", "24", "-128") == [-126, -128, 0, 127, None, 0]
    # OVERFLOW applies to the operations after it, including ones on the same command.
    assert b.execute_command("BITFIELD", "w", "SET", "u8", "0", "-1", "OVERFLOW", "SAT",
                             "SET", "u8", "8", "-1", "GET", "u8", "0", "GET", "u8", "8") == \
        [0, 0, 255, 255]


def test_bitfield_int64_edges(b):
    max64, min64 = 2**63 - 1, -(2**63)
    assert b.execute_command("BITFIELD", "k", "SET", "i64", "0", str(max64),
                             "INCRBY", "i64", "0", "1") == [0, min64]
    assert b.execute_command("BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "i64", "0", "-1",
                             "INCRBY", "i64", "0", str(min64)) == [min64, min64]
    assert b.execute_command("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "i64", "0", "-1",
                             "INCRBY", "i64", "0", str(max64)) == [None, -1]


def test_bitfield_get_only_does_not_create_the_key(b):
    assert b.execute_command("BITFIELD", "k", "GET", "u8", "0") == [0]
    assert b.execute_command("BITFIELD", "k") == []
    assert not b.exists("k")
    b.set("s", b"\xff")
    assert b.execute_command("BITFIELD", "s", "GET", "u16", "0") == [0xff00]


def test_bitfield_ro(b):
    b.set("k", b"\x81")
    assert b.execute_command("BITFIELD_RO", "k", "GET", "u8", "0", "GET", "i4", "#1") == [129, 1]
    assert b.execute_command("BITFIELD_RO", "k") == []
    assert b.execute_command("BITFIELD_RO", "missing", "GET", "i8", "0") == [0]
    for sub in (["SET", "u8", "0", "1"], ["INCRBY", "u8", "0", "1"]):
        with pytest.raises(redis.ResponseError) as e:
            b.execute_command("BITFIELD_RO", "k", "GET", "u8", "0", *sub)
        assert str(e.value) == "BITFIELD_RO only supports the GET subcommand"
    assert b.get("k") == b"\x81"


def test_bitfield_errors(plain):
    plain.execute_command("RPUSH", "l", "x")
    for t in ("u64", "i65", "u0", "I8", "x8", "u", "", "u08"):
        assert call_error(plain, "BITFIELD", "k", "GET", t, "0") == BAD_TYPE
    assert call_error(plain, "BITFIELD", "k", "GET", "u8", "-1") == BAD_OFFSET
    assert call_error(plain, "BITFIELD", "k", "GET", "u8", "#-1") == BAD_OFFSET
    assert call_error(plain, "BITFIELD", "k", "GET", "u8", "#x") == BAD_OFFSET
    assert call_error(plain, "BITFIELD", "k", "GET", "u8", "4294967296") == BAD_OFFSET
    assert call_error(plain, "BITFIELD", "k", "SET", "u8", "0", "x") == NOT_INT
    assert call_error(plain, "BITFIELD", "k", "INCRBY", "u8", "0", "1.5") == NOT_INT
    assert call_error(plain, "BITFIELD", "k", "OVERFLOW", "SATURATE") == \
        "Invalid OVERFLOW type specified"
    assert call_error(plain, "BITFIELD", "k", "FOO") == SYNTAX
    assert call_error(plain, "BITFIELD", "k", "GET", "u8") == SYNTAX
    assert call_error(plain, "BITFIELD", "k", "SET", "u8", "0") == SYNTAX
    assert call_error(plain, "BITFIELD", "k", "OVERFLOW") == SYNTAX
    # A bad operation anywhere leaves the key untouched.
    assert call_error(plain, "BITFIELD", "k", "SET", "u8", "0", "1", "GET", "u99", "0") == BAD_TYPE
    assert not plain.exists("k")
    assert call_error(plain, "BITFIELD", "l", "GET", "u8", "0") == WRONGTYPE
    assert call_error(plain, "BITFIELD", "l", "SET", "u8", "0", "1") == WRONGTYPE
    assert call_error(plain, "BITFIELD_RO", "l", "GET", "u8", "0") == WRONGTYPE
    assert call_error(plain, "BITFIELD") == arity("bitfield")[4:]
    assert call_error(plain, "BITFIELD_RO") == arity("bitfield_ro")[4:]


def test_bitfield_dirty_counts_changes(b):
    before = dirty(b)
    b.execute_command("BITFIELD", "k", "SET", "u8", "0", "0", "SET", "u8", "8", "1")
    assert dirty(b) == before + 2  # the key was created: every write counts
    before = dirty(b)
    b.execute_command("BITFIELD", "k", "SET", "u8", "0", "0", "SET", "u8", "8", "1",
                      "INCRBY", "u8", "0", "1")
    assert dirty(b) == before + 1
    before = dirty(b)
    b.execute_command("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "1000")
    assert dirty(b) == before


# ---------------------------------------------------------------------------------------------
# Events, transactions, replication


def test_keyspace_events(server, b):
    b.config_set("notify-keyspace-events", "KEA")
    try:
        log = EventLog(server)
        b.setbit("k", 1, 1)
        b.setbit("k", 1, 1)  # no change: no event
        b.bitop("NOT", "d", "k")
        b.bitop("AND", "d", "missing")
        b.execute_command("BITFIELD", "f", "SET", "u8", "0", "1")
        b.execute_command("BITFIELD", "f", "GET", "u8", "0")
        assert log.collect() == [(0, "setbit", "k"), (0, "set", "d"), (0, "del", "d"),
                                 (0, "setbit", "f")]
    finally:
        b.config_set("notify-keyspace-events", "")


def test_watch_sees_bit_writes(server, b):
    b.set("k", "a")
    other = server.client()
    with b.pipeline() as p:
        p.watch("k")
        other.setbit("k", 0, 1)
        p.multi()
        p.get("k")
        with pytest.raises(redis.WatchError):
            p.execute()
    other.close()


def test_command_info(b):
    info = b.command()
    assert info["setbit"]["flags"] == ["write", "denyoom"]
    assert info["getbit"]["flags"] == ["readonly", "fast"]
    assert info["bitfield_ro"]["flags"] == ["readonly", "fast"]
    assert info["bitop"]["first_key_pos"] == 2 and info["bitop"]["last_key_pos"] == -1


def test_replica_follows_bitmap_writes(procs):  # noqa: F811
    m = start_vireo(procs)
    mc = m.client()
    rep = start_redis(["--replicaof", "127.0.0.1", str(m.port)])
    procs.append(rep)
    rc = rep.client()
    wait_link_up(rc)
    mc.setbit("s", 100, 1)
    mc.setbit("s", 3, 1)
    mc.set("a", b"\x0f\xf0")
    mc.bitop("XOR", "x", "s", "a")
    mc.bitop("NOT", "n", "a")
    mc.execute_command("BITFIELD", "f", "SET", "i16", "#2", "-300", "INCRBY", "u7", "5", "99",
                       "OVERFLOW", "SAT", "INCRBY", "i8", "0", "-500")
    wait_in_sync(mc, rc)
    assert_same_data(mc, rc)
    assert rc.get("f") == mc.get("f")


def test_read_only_replica_refuses_bitfield_but_serves_bitfield_ro(procs):  # noqa: F811
    master = start_redis()
    procs.append(master)
    mc = master.client()
    rep = start_vireo(procs, "--replicaof", "127.0.0.1", master.port)
    rc = rep.client()
    wait_link_up(rc)
    mc.execute_command("BITFIELD", "f", "SET", "u8", "0", "200", "INCRBY", "i4", "8", "9")
    mc.setbit("s", 9, 1)
    wait_in_sync(mc, rc)
    assert rc.get("f") == mc.get("f") == b"\xc8\x90"
    assert rc.getbit("s", 9) == 1
    # BITFIELD is a write command even when it only reads, as in Redis.
    with pytest.raises(redis.ReadOnlyError):
        rc.execute_command("BITFIELD", "f", "GET", "u8", "0")
    with pytest.raises(redis.ReadOnlyError):
        rc.setbit("s", 0, 1)
    assert rc.execute_command("BITFIELD_RO", "f", "GET", "u8", "0", "GET", "i4", "8") == [200, -7]


def test_bitmaps_survive_a_reload(server_factory):
    srv = server_factory(["--enable-debug-command", "yes"])
    c = srv.client()
    c.setbit("s", 100_000, 1)
    c.execute_command("BITFIELD", "f", "SET", "i64", "#3", "-5")
    c.bitop("NOT", "n", "s")
    before = {k: c.get(k) for k in ("s", "f", "n")}
    assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    assert {k: c.get(k) for k in ("s", "f", "n")} == before
    assert c.bitcount("n") == c.strlen("n") * 8 - 1


def test_bitmap_writes_replay_from_the_aof(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    args = ["--dir", str(data), "--appendonly", "yes", "--appendfsync", "always"]
    h = start_server(args)
    try:
        c = h.client()
        c.setbit("s", 77, 1)
        c.setbit("s", 77, 1)  # no change: not logged, replays the same anyway
        c.set("a", b"\x0f")
        c.bitop("OR", "o", "s", "a")
        c.execute_command("BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "u4", "0", "100",
                          "OVERFLOW", "FAIL", "INCRBY", "u4", "0", "1", "SET", "i8", "#1", "-3")
        before = {k: c.get(k) for k in ("s", "o", "f")}
        c.close()
    finally:
        h.stop()
        h.cleanup()
    h = start_server(args)
    try:
        c = h.client()
        assert {k: c.get(k) for k in ("s", "o", "f")} == before
        c.close()
    finally:
        h.stop()
        h.cleanup()


def test_reads_count_keyspace_hits_and_writes_do_not(b):
    def hits_misses():
        s = b.info("stats")
        return s["keyspace_hits"], s["keyspace_misses"]

    b.set("k", "a")
    h0, m0 = hits_misses()
    b.setbit("k", 1, 1)
    b.setbit("new", 1, 1)
    b.execute_command("BITFIELD", "k", "SET", "u8", "0", "1")
    assert hits_misses() == (h0, m0)
    b.getbit("k", 0)
    b.getbit("missing", 0)
    b.bitcount("k")
    b.bitpos("missing", 1)
    b.bitop("AND", "d", "k", "missing")
    b.execute_command("BITFIELD", "k", "GET", "u8", "0")
    b.execute_command("BITFIELD_RO", "missing", "GET", "u8", "0")
    assert hits_misses() == (h0 + 4, m0 + 4)

"""Hostile arguments to the data-type commands: counts, offsets, limits and times at the INT64
edges, negative where a size is expected, and patterns built to backtrack. Every reply here is
what Redis 7.2 answers (checked against Debian's redis-server); the point of each test is that
vireo answers at all, without crashing, overflowing or buffering an unbounded reply."""

import pytest
import redis

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
EDGES = [INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX]
OUT_OF_RANGE = "value is out of range"
NOT_INTEGER = "value is not an integer or out of range"


@pytest.fixture
def c(server, r):
    client = server.client(decode_responses=True)
    client.response_callbacks.clear()
    yield client
    client.close()


def x(c, *args):
    return c.execute_command(*args)


def err(c, *args):
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command(*args)
    return str(e.value)


# SORT ----------------------------------------------------------------------------------------


def test_sort_limit_at_int64_edges(c):
    x(c, "LPUSH", "L", 2, 1, 0)
    # Redis's own sort unit sends this one; vireo read past the loaded window and died.
    assert x(c, "SORT_RO", "L", "BY", "a", "LIMIT", 2, INT64_MAX) == ["2"]
    # Signed overflow of start + count (UB; the sanitizer build aborts on it).
    assert x(c, "SORT", "L", "LIMIT", 1, INT64_MAX, "ALPHA") == ["1", "2"]
    assert x(c, "SORT", "L", "LIMIT", INT64_MAX, INT64_MAX) == []
    assert x(c, "SORT", "L", "LIMIT", INT64_MIN, INT64_MIN) == ["0", "1", "2"]
    assert x(c, "SORT", "L", "LIMIT", INT64_MIN, 1) == ["0"]
    assert x(c, "SORT", "L", "LIMIT", 1, INT64_MIN) == ["1", "2"]
    assert x(c, "SORT", "L", "BY", "nosort", "DESC", "LIMIT", 1, INT64_MAX) == ["1", "0"]
    assert x(c, "SORT", "L", "LIMIT", 0, 0) == []
    assert x(c, "SORT", "L", "LIMIT", 2, INT64_MAX, "STORE", "dst") == 1
    assert x(c, "LRANGE", "dst", 0, -1) == ["2"]
    x(c, "ZADD", "z", 1, "a", 2, "b", 3, "c")
    for off in EDGES:
        for cnt in EDGES:
            x(c, "SORT", "z", "BY", "nosort", "LIMIT", off, cnt)
            x(c, "SORT", "z", "BY", "nosort", "DESC", "LIMIT", off, cnt)
            x(c, "SORT", "L", "BY", "nosort", "LIMIT", off, cnt)
            x(c, "SORT", "L", "LIMIT", off, cnt, "ALPHA")
    assert x(c, "SORT", "z", "BY", "nosort", "DESC", "LIMIT", 2, INT64_MAX) == ["a"]
    assert err(c, "SORT", "L", "LIMIT", 2**63, 1) == NOT_INTEGER

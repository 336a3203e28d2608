"""Random member commands are uniform over the members on every encoding (issue 15).

Bucket-based picks are biased by chain length; Redis 7.2's unit tests (unit/type/set, hash,
zset: "... with <count> - hashtable") check the distribution with a chi-square test. Here each
command draws many members from a 200-member collection and the chi-square statistic
(199 degrees of freedom: mean 199, sd ~20) must stay under 330, which a fair pick exceeds with
probability below 1e-8 while a chain-length bias (a member in a chain of k is picked 1/k as
often) lands far above it. (Redis 7.0 itself fails the negative-count and SPOP cases here: its
"fair" pick samples a few buckets; vireo is held to the uniform distribution the issue asks for.)
"""

import collections

import pytest

from conftest import call

N = 200
DRAWS = 40000


def chi_square(counts, n=N, draws=DRAWS):
    expected = draws / n
    assert len(counts) <= n
    values = list(counts.values()) + [0] * (n - len(counts))
    return sum((c - expected) ** 2 / expected for c in values)


def _make(plain, kind, key, encoding):
    members = [f"member:{i}" for i in range(N)]
    if kind == "set":
        plain.execute_command("SADD", key, *members)
    elif kind == "hash":
        plain.config_set("hash-max-listpack-entries", 128)  # the default (512) is above N
        args = [x for m in members for x in (m, "v")]
        plain.execute_command("HSET", key, *args)
    else:
        args = [x for i, m in enumerate(members) for x in (i, m)]
        plain.execute_command("ZADD", key, *args)
    assert call(plain, "OBJECT", "ENCODING", key) == encoding


CASES = [
    ("set", "hashtable", ["SRANDMEMBER", "k"], 1),
    ("hash", "hashtable", ["HRANDFIELD", "k"], 1),
    ("zset", "skiplist", ["ZRANDMEMBER", "k"], 1),
]


@pytest.mark.parametrize("kind,encoding,cmd,_", CASES)
def test_negative_count_is_uniform(plain, kind, encoding, cmd, _):
    _make(plain, kind, "k", encoding)
    counts = collections.Counter()
    for _ in range(DRAWS // 1000):
        counts.update(call(plain, *cmd, "-1000"))
    assert sum(counts.values()) == DRAWS
    assert chi_square(counts) < 330, cmd


@pytest.mark.parametrize("kind,encoding,cmd,_", CASES)
def test_single_draw_is_uniform(plain, kind, encoding, cmd, _):
    _make(plain, kind, "k", encoding)
    pipe = plain.pipeline(transaction=False)
    for _ in range(DRAWS):
        pipe.execute_command(*cmd)
    counts = collections.Counter(pipe.execute())
    assert chi_square(counts) < 330, cmd


@pytest.mark.parametrize("kind,encoding,cmd,_", CASES)
@pytest.mark.parametrize("count", [10, 150])  # below and above Redis's size/3 case split
def test_positive_count_is_uniform_and_distinct(plain, kind, encoding, cmd, _, count):
    _make(plain, kind, "k", encoding)
    counts = collections.Counter()
    rounds = DRAWS // count
    for _ in range(rounds):
        got = call(plain, *cmd, str(count))
        assert len(got) == count and len(set(got)) == count
        counts.update(got)
    assert chi_square(counts, draws=rounds * count) < 330, cmd


def test_spop_is_uniform(plain):
    counts = collections.Counter()
    rounds = DRAWS // 20
    for _ in range(rounds):
        _make(plain, "set", "k", "hashtable")
        counts.update(call(plain, "SPOP", "k", "20"))
        plain.delete("k")
    assert chi_square(counts, draws=rounds * 20) < 330


def test_spop_single_is_uniform(plain):
    _make(plain, "set", "k", "hashtable")
    counts = collections.Counter()
    rounds = DRAWS // 10
    for _ in range(rounds):
        popped = call(plain, "SPOP", "k")
        counts[popped] += 1
        plain.execute_command("SADD", "k", popped)
    assert chi_square(counts, draws=rounds) < 330


def test_randomkey_is_uniform(plain):
    plain.mset({f"member:{i}": 1 for i in range(N)})
    pipe = plain.pipeline(transaction=False)
    for _ in range(DRAWS):
        pipe.execute_command("RANDOMKEY")
    counts = collections.Counter(pipe.execute())
    assert chi_square(counts) < 330


@pytest.mark.parametrize("total", [20000, 100000])
def test_uniform_after_mass_deletion(plain, total):
    # A table emptied down to N members by one SREM is left sparse (mid-shrink); picks must stay
    # uniform there too, not favour the members the probing happens to find.
    for i in range(0, total, 5000):
        plain.execute_command("SADD", "k", *[f"member:{j}" for j in range(i, i + 5000)])
    plain.execute_command("SREM", "k", *[f"member:{j}" for j in range(N, total)])
    counts = collections.Counter()
    for _ in range(DRAWS // 1000):
        counts.update(call(plain, "SRANDMEMBER", "k", "-1000"))
    assert chi_square(counts) < 330

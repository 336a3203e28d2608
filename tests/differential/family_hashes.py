"""Differential family: hash commands (HSET ... HSCAN).

Hashes keep the same encodings in Redis 7.0 and 7.2, so listpack-encoded hashes even answer
HKEYS/HGETALL in the same order; hashtable ones do not, so those replies compare as sets.
"""

from differential import (ARITY, STATE_DUMPERS, cmd, gen_float_arg, gen_int_arg, gen_pattern,
                          gen_value, register_family, wrong_arity)

HASH_COMMANDS = ["hset", "hsetnx", "hget", "hmget", "hmset", "hdel", "hexists", "hlen", "hstrlen",
                 "hkeys", "hvals", "hgetall", "hincrby", "hincrbyfloat", "hrandfield", "hscan"]
ARITY.update({"hset": -4, "hsetnx": 4, "hget": 3, "hmget": -3, "hmset": -4, "hdel": -3,
              "hexists": 3, "hlen": 2, "hstrlen": 3, "hkeys": 2, "hvals": 2, "hgetall": 2,
              "hincrby": 4, "hincrbyfloat": 4, "hrandfield": -2, "hscan": -3})


def field(rng):
    r = rng.random()
    if r < 0.85:
        return f"f{rng.randint(0, 12)}"
    if r < 0.9:
        return ""
    return rng.choice(["x" * 64, "x" * 65, "long-field-" * 8, "1", "-5"])


def g_hset(rng, ctx):
    name = rng.choice(["HSET", "HSET", "HSET", "HMSET"])
    pairs = rng.randint(1, 4)
    argv = [cmd(rng, name), ctx.key(rng)]
    for _ in range(pairs):
        argv += [field(rng), gen_value(rng)]
    if rng.random() < 0.03:
        argv.append("dangling")  # odd count: arity error
    return argv


def g_hset_bulk(rng, ctx):
    # Enough fields to cross hash-max-listpack-entries (512 by default) now and then.
    n = rng.choice([100, 511, 512, 513, 600])
    argv = [cmd(rng, "HSET"), ctx.key(rng)]
    for i in range(n):
        argv += [f"b{i}", str(i)]
    return argv


def g_hmget(rng, ctx):
    return [cmd(rng, "HMGET"), ctx.key(rng)] + [field(rng) for _ in range(rng.randint(1, 4))]


def g_hdel(rng, ctx):
    return [cmd(rng, "HDEL"), ctx.key(rng)] + [field(rng) for _ in range(rng.randint(1, 4))]


def g_hincrby(rng, ctx):
    return [cmd(rng, "HINCRBY"), ctx.key(rng), field(rng), gen_int_arg(rng)]


def g_hincrbyfloat(rng, ctx):
    return [cmd(rng, "HINCRBYFLOAT"), ctx.key(rng), field(rng), gen_float_arg(rng)]


def g_hrandfield(rng, ctx):
    argv = [cmd(rng, "HRANDFIELD"), ctx.key(rng)]
    r = rng.random()
    if r < 0.3:
        return argv
    argv.append(rng.choice(["0", "1", "3", "-3", "20", "-20", "200", "abc"]))
    if rng.random() < 0.4:
        argv.append(rng.choice(["WITHVALUES", "withvalues", "WITHVALUES", "bogus"]))
    return argv


def g_hrandfield_all(rng, ctx):
    # A count at least the hash size returns every field: comparable as a set.
    key = ctx.key(rng)
    argv = [cmd(rng, "HRANDFIELD"), key, "1000"]
    if rng.random() < 0.5:
        argv.append("WITHVALUES")
    return argv


def g_hscan(rng, ctx):
    argv = [cmd(rng, "HSCAN"), ctx.key(rng), "0"]
    if rng.random() < 0.4:
        argv += [cmd(rng, "MATCH"), rng.choice(["f1*", "b1?", "*", "f[0-5]", gen_pattern(rng)])]
    if rng.random() < 0.5:
        argv += [cmd(rng, "COUNT"), rng.choice(["1", "5", "10", "100"])]
    return argv


def g_hscan_bad(rng, ctx):
    key = ctx.key(rng)
    return rng.choice([
        ["HSCAN", key, rng.choice(["abc", "1.5", " 1"])],
        ["HSCAN", key, "0", "COUNT", rng.choice(["0", "-1", "abc"])],
        ["HSCAN", key, "0", "MATCH"],
        ["HSCAN", key, "0", "TYPE", "hash"],
    ])


def g_encoding(rng, ctx):
    key = ctx.key(rng)
    if ctx.probe(["TYPE", key]).value != b"hash":
        return [cmd(rng, "HLEN"), key]
    return ["OBJECT", "ENCODING", key]


def k1(name):
    return lambda rng, ctx: [cmd(rng, name), ctx.key(rng)]


def k2(name):
    return lambda rng, ctx: [cmd(rng, name), ctx.key(rng), field(rng)]


@register_family("hashes", share=3.0, tx_safe=True)
def family_hashes():
    return [
        (14, g_hset, "exact"),
        (1, g_hset_bulk, "exact"),
        (3, lambda rng, ctx: [cmd(rng, "HSETNX"), ctx.key(rng), field(rng), gen_value(rng)],
         "exact"),
        (6, k2("HGET"), "exact"),
        (3, g_hmget, "exact"),
        (5, g_hdel, "exact"),
        (3, k2("HEXISTS"), "exact"),
        (3, k1("HLEN"), "exact"),
        (3, k2("HSTRLEN"), "exact"),
        (2, k1("HKEYS"), "sorted"),
        (2, k1("HVALS"), "sorted"),
        (3, k1("HGETALL"), "pairs"),
        (5, g_hincrby, "exact"),
        (4, g_hincrbyfloat, "exact"),
        (3, g_hrandfield, "shape"),
        (1, g_hrandfield_all, "sorted"),
        (2, g_hscan, "scan"),
        (1, g_hscan_bad, "exact"),
        (2, g_encoding, "exact"),
        (1, lambda rng, ctx: ["SET", ctx.key(rng), gen_value(rng)], "exact"),
        (2, lambda rng, ctx: ["DEL", ctx.key(rng)], "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, HASH_COMMANDS), "exact"),
    ]


STATE_DUMPERS["hash"] = lambda key: [(["HGETALL", key], "pairs")]

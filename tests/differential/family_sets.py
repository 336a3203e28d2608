"""Differential family: set commands (SADD ... SSCAN).

The reference server is Redis 7.0, which has no listpack encoding for sets, so member order
of small string sets differs from 7.2's: member lists compare as sets. Random commands (SPOP,
SRANDMEMBER) compare by shape, and SPOP only pops in ways whose effect is deterministic
(everything, or the single member), so both keyspaces stay equal.
"""

from differential import (ARITY, STATE_DUMPERS, cmd, gen_pattern, gen_value, register_family,
                          wrong_arity)

SET_COMMANDS = ["sadd", "srem", "scard", "sismember", "smismember", "smembers", "spop",
                "srandmember", "smove", "sinter", "sintercard", "sinterstore", "sunion",
                "sunionstore", "sdiff", "sdiffstore", "sscan"]
ARITY.update({"sadd": -3, "srem": -3, "scard": 2, "sismember": 3, "smismember": -3,
              "smembers": 2, "spop": -2, "srandmember": -2, "smove": 4, "sinter": -2,
              "sintercard": -3, "sinterstore": -3, "sunion": -2, "sunionstore": -3, "sdiff": -2,
              "sdiffstore": -3, "sscan": -3})


def member(rng):
    r = rng.random()
    if r < 0.45:
        return str(rng.randint(-20, 20))
    if r < 0.8:
        return f"m{rng.randint(0, 15)}"
    if r < 0.85:
        return rng.choice(["9223372036854775807", "-9223372036854775808", "01", "+1", "1.0", ""])
    return gen_value(rng)


def g_sadd(rng, ctx):
    return [cmd(rng, "SADD"), ctx.key(rng)] + [member(rng) for _ in range(rng.randint(1, 5))]


def g_sadd_bulk(rng, ctx):
    # Cross set-max-intset-entries (512) and set-max-listpack-entries (128) now and then.
    n = rng.choice([127, 129, 511, 513])
    if rng.random() < 0.5:
        members = [str(i) for i in range(n)]
    else:
        members = [f"b{i}" for i in range(n)]
    return [cmd(rng, "SADD"), ctx.key(rng)] + members


def g_srem(rng, ctx):
    return [cmd(rng, "SREM"), ctx.key(rng)] + [member(rng) for _ in range(rng.randint(1, 5))]


def keys(rng, ctx, lo=1, hi=3):
    return [ctx.key(rng) for _ in range(rng.randint(lo, hi))]


def g_spop(rng, ctx):
    key = ctx.key(rng)
    card = ctx.probe(["SCARD", key])
    if card.is_error:
        return [cmd(rng, "SPOP"), key] + ([] if rng.random() < 0.5 else ["2"])
    n = card.value
    if n <= 1 and rng.random() < 0.5:
        return [cmd(rng, "SPOP"), key]
    return [cmd(rng, "SPOP"), key, str(n + rng.choice([0, 0, 1, 100]))]


def g_spop_bad(rng, ctx):
    return [cmd(rng, "SPOP"), ctx.key(rng)] + rng.choice([["-1"], ["abc"], ["1", "2"], ["0"]])


def g_srandmember(rng, ctx):
    argv = [cmd(rng, "SRANDMEMBER"), ctx.key(rng)]
    if rng.random() < 0.7:
        argv.append(rng.choice(["0", "1", "3", "-3", "20", "-20", "abc"]))
    return argv


def g_srandmember_all(rng, ctx):
    return [cmd(rng, "SRANDMEMBER"), ctx.key(rng), "100000"]


def g_smove(rng, ctx):
    src = ctx.key(rng)
    dst = src if rng.random() < 0.1 else ctx.key(rng)
    return [cmd(rng, "SMOVE"), src, dst, member(rng)]


def g_sintercard(rng, ctx):
    ks = keys(rng, ctx)
    r = rng.random()
    numkeys = str(len(ks)) if r < 0.9 else rng.choice(["0", "-1", "abc", str(len(ks) + 1)])
    argv = [cmd(rng, "SINTERCARD"), numkeys] + ks
    if rng.random() < 0.4:
        argv += [cmd(rng, "LIMIT"), rng.choice(["0", "1", "2", "5", "-1", "abc"])]
    if rng.random() < 0.03:
        argv.append("BOGUS")
    return argv


def g_sscan(rng, ctx):
    argv = [cmd(rng, "SSCAN"), ctx.key(rng), "0"]
    if rng.random() < 0.4:
        argv += [cmd(rng, "MATCH"), rng.choice(["m1*", "1?", "*", "-*", gen_pattern(rng)])]
    if rng.random() < 0.5:
        argv += [cmd(rng, "COUNT"), rng.choice(["1", "5", "10", "100"])]
    return argv


def g_sscan_bad(rng, ctx):
    key = ctx.key(rng)
    return rng.choice([
        ["SSCAN", key, rng.choice(["abc", "1.5", " 1"])],
        ["SSCAN", key, "0", "COUNT", rng.choice(["0", "-1", "abc"])],
        ["SSCAN", key, "0", "MATCH"],
    ])


def g_encoding(rng, ctx):
    # 7.0 has no listpack sets: only an intset answer is comparable.
    key = ctx.key(rng)
    if ctx.probe(["TYPE", key]).value != b"set" or \
            ctx.probe(["OBJECT", "ENCODING", key]).value != b"intset":
        return [cmd(rng, "SCARD"), key]
    return ["OBJECT", "ENCODING", key]


@register_family("sets", share=3.0, tx_safe=True)
def family_sets():
    return [
        (14, g_sadd, "exact"),
        (1, g_sadd_bulk, "exact"),
        (6, g_srem, "exact"),
        (3, lambda rng, ctx: [cmd(rng, "SCARD"), ctx.key(rng)], "exact"),
        (4, lambda rng, ctx: [cmd(rng, "SISMEMBER"), ctx.key(rng), member(rng)], "exact"),
        (3, lambda rng, ctx: [cmd(rng, "SMISMEMBER"), ctx.key(rng)] +
         [member(rng) for _ in range(rng.randint(1, 4))], "exact"),
        (3, lambda rng, ctx: [cmd(rng, "SMEMBERS"), ctx.key(rng)], "sorted"),
        (3, g_spop, "sorted"),
        (1, g_spop_bad, "exact"),
        (3, g_srandmember, "shape"),
        (1, g_srandmember_all, "sorted"),
        (4, g_smove, "exact"),
        (3, lambda rng, ctx: [cmd(rng, "SINTER")] + keys(rng, ctx), "sorted"),
        (3, g_sintercard, "exact"),
        (3, lambda rng, ctx: [cmd(rng, "SINTERSTORE"), ctx.key(rng)] + keys(rng, ctx), "exact"),
        (3, lambda rng, ctx: [cmd(rng, "SUNION")] + keys(rng, ctx), "sorted"),
        (3, lambda rng, ctx: [cmd(rng, "SUNIONSTORE"), ctx.key(rng)] + keys(rng, ctx), "exact"),
        (3, lambda rng, ctx: [cmd(rng, "SDIFF")] + keys(rng, ctx), "sorted"),
        (3, lambda rng, ctx: [cmd(rng, "SDIFFSTORE"), ctx.key(rng)] + keys(rng, ctx), "exact"),
        (2, g_sscan, "scan"),
        (1, g_sscan_bad, "exact"),
        # "sorted" (exact for a bulk reply) keeps this probing generator out of MULTI blocks.
        (2, g_encoding, "sorted"),
        (1, lambda rng, ctx: ["SET", ctx.key(rng), gen_value(rng)], "exact"),
        (2, lambda rng, ctx: ["DEL", ctx.key(rng)], "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, SET_COMMANDS), "exact"),
    ]


STATE_DUMPERS["set"] = lambda key: [(["SMEMBERS", key], "sorted")]

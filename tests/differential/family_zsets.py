"""Differential family: sorted-set commands (ZADD ... ZSCAN, blocking pops in their
non-blocking paths).

Known Redis 7.0 vs 7.2 differences the generator stays away from (vireo follows 7.2):
 * Score text: 7.0 prints "%.17g" (0.1 -> 0.10000000000000001), 7.2 the shortest round trip.
   Scores here are dyadic fractions with few digits (and +-inf, huge powers of ten) whose text
   is the same either way, and sums of them stay so (no 1e20: 1e20 + 0.5 prints 1.0000000000000007e+20 in 7.0
   and 100000000000000070000 in 7.2).
 * ZRANK/ZREVRANK ... WITHSCORE is 7.2 only.
Lexicographic ranges are only asked of sets whose members all share one score (the ordering
of a lex range over mixed scores is unspecified in Redis); ZRANDMEMBER compares by shape.
"""

from differential import ARITY, STATE_DUMPERS, cmd, gen_pattern, gen_value, register_family, \
    wrong_arity

ZSET_COMMANDS = ["zadd", "zincrby", "zrem", "zcard", "zscore", "zmscore", "zcount", "zlexcount",
                 "zrank", "zrevrank", "zrange", "zrangestore", "zrevrange", "zrangebyscore",
                 "zrevrangebyscore", "zrangebylex", "zrevrangebylex", "zremrangebyrank",
                 "zremrangebyscore", "zremrangebylex", "zpopmin", "zpopmax", "zmpop", "bzpopmin",
                 "bzpopmax", "bzmpop", "zunion", "zinter", "zdiff", "zunionstore", "zinterstore",
                 "zdiffstore", "zintercard", "zrandmember", "zscan"]
ARITY.update({"zadd": -4, "zincrby": 4, "zrem": -3, "zcard": 2, "zscore": 3, "zmscore": -3,
              "zcount": 4, "zlexcount": 4, "zrank": -3, "zrevrank": -3, "zrange": -4,
              "zrangestore": -5, "zrevrange": -4, "zrangebyscore": -4, "zrevrangebyscore": -4,
              "zrangebylex": -4, "zrevrangebylex": -4, "zremrangebyrank": 4,
              "zremrangebyscore": 4, "zremrangebylex": 4, "zpopmin": -2, "zpopmax": -2,
              "zmpop": -4, "bzpopmin": -3, "bzpopmax": -3, "bzmpop": -5, "zunion": -3,
              "zinter": -3, "zdiff": -3, "zunionstore": -4, "zinterstore": -4, "zdiffstore": -4,
              "zintercard": -3, "zrandmember": -2, "zscan": -3})

SCORES = ["0", "1", "2", "3", "-1", "1.5", "-2.5", "0.25", "10", "100", "0.5", "7", "inf",
          "-inf", "+inf", "1e9", "-0", "3.75", "1024", "65536.5"]
BAD_SCORES = ["nan", "abc", "", " 1", "1x", "1e400", "--1"]


def score(rng):
    if rng.random() < 0.03:
        return rng.choice(BAD_SCORES)
    return rng.choice(SCORES)


def member(rng):
    r = rng.random()
    if r < 0.6:
        return f"m{rng.randint(0, 12)}"
    if r < 0.8:
        return rng.choice("abcdefgh")
    if r < 0.9:
        return str(rng.randint(-5, 5))
    return gen_value(rng)


def bound(rng):
    r = rng.random()
    if r < 0.5:
        return rng.choice(SCORES[:12])
    if r < 0.8:
        return "(" + rng.choice(SCORES[:12])
    if r < 0.95:
        return rng.choice(["-inf", "+inf", "inf", "(-inf", "(+inf"])
    return rng.choice(["abc", "nan", "(", "((1", ""])


def lex_bound(rng):
    r = rng.random()
    if r < 0.4:
        return "[" + rng.choice("abcdefgh")
    if r < 0.7:
        return "(" + rng.choice("abcdefgh")
    if r < 0.95:
        return rng.choice(["-", "+", "[", "("])
    return rng.choice(["a", "+a", "-a", ""])


def keys(rng, ctx, lo=1, hi=3):
    return [ctx.key(rng) for _ in range(rng.randint(lo, hi))]


def g_zadd(rng, ctx):
    argv = [cmd(rng, "ZADD"), ctx.key(rng)]
    flags = ["NX", "XX", "GT", "LT", "CH", "INCR"]
    for f in flags:
        if rng.random() < 0.1:
            argv.append(cmd(rng, f))
    n = 1 if rng.random() < 0.5 else rng.randint(1, 5)
    for _ in range(n):
        argv += [score(rng), member(rng)]
    if rng.random() < 0.02:
        argv.append(score(rng))
    return argv


def g_zadd_same_score(rng, ctx):
    # Sets for lexicographic ranges: every member scored 0.
    argv = [cmd(rng, "ZADD"), ctx.key(rng)]
    for _ in range(rng.randint(1, 6)):
        argv += ["0", rng.choice("abcdefgh")]
    return argv


def g_zadd_bulk(rng, ctx):
    # Cross zset-max-listpack-entries (128) and -value (64) now and then.
    n = rng.choice([127, 128, 129, 200])
    argv = [cmd(rng, "ZADD"), ctx.key(rng)]
    for i in range(n):
        argv += [str(rng.randint(0, 50)), f"b{i}"]
    if rng.random() < 0.3:
        argv += ["1", "x" * rng.choice([64, 65])]
    return argv


def g_zincrby(rng, ctx):
    return [cmd(rng, "ZINCRBY"), ctx.key(rng), score(rng), member(rng)]


def g_range(rng, ctx):
    key = ctx.key(rng)
    kind = rng.random()
    if kind < 0.4:
        argv = [cmd(rng, "ZRANGE"), key, str(rng.randint(-6, 6)), str(rng.randint(-6, 6))]
        if rng.random() < 0.3:
            argv.append(cmd(rng, "REV"))
    else:
        argv = [cmd(rng, "ZRANGE"), key, bound(rng), bound(rng), cmd(rng, "BYSCORE")]
        if rng.random() < 0.4:
            argv.append(cmd(rng, "REV"))
        if rng.random() < 0.4:
            argv += [cmd(rng, "LIMIT"), str(rng.randint(-1, 4)), str(rng.randint(-2, 4))]
    if rng.random() < 0.5:
        argv.append(cmd(rng, "WITHSCORES"))
    if rng.random() < 0.03:
        argv.append(rng.choice(["BYLEX", "FOO", "LIMIT", "REV"]))
    return argv


def g_legacy_range(rng, ctx):
    key = ctx.key(rng)
    name = rng.choice(["ZREVRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE"])
    if name == "ZREVRANGE":
        argv = [cmd(rng, name), key, str(rng.randint(-6, 6)), str(rng.randint(-6, 6))]
    else:
        argv = [cmd(rng, name), key, bound(rng), bound(rng)]
        if rng.random() < 0.3:
            argv += [cmd(rng, "LIMIT"), str(rng.randint(-1, 4)), str(rng.randint(-2, 4))]
    if rng.random() < 0.5:
        argv.append(cmd(rng, "WITHSCORES"))
    return argv


def all_same_score(ctx, key):
    rep = ctx.probe(["ZRANGE", key, "0", "-1", "WITHSCORES"])
    if rep.is_error or rep.value is None:
        return False
    scores = {i.raw for i in rep.value[1::2]}
    return len(scores) <= 1


def g_lex(rng, ctx):
    key = ctx.key(rng)
    if not all_same_score(ctx, key):
        return [cmd(rng, "ZCARD"), key]
    r = rng.random()
    if r < 0.3:
        argv = [cmd(rng, "ZRANGE"), key, lex_bound(rng), lex_bound(rng), cmd(rng, "BYLEX")]
        if rng.random() < 0.3:
            argv.append(cmd(rng, "REV"))
        if rng.random() < 0.3:
            argv += [cmd(rng, "LIMIT"), str(rng.randint(-1, 3)), str(rng.randint(-1, 3))]
        return argv
    if r < 0.5:
        return [cmd(rng, rng.choice(["ZRANGEBYLEX", "ZREVRANGEBYLEX"])), key, lex_bound(rng),
                lex_bound(rng)]
    if r < 0.75:
        return [cmd(rng, "ZLEXCOUNT"), key, lex_bound(rng), lex_bound(rng)]
    if r < 0.9:
        return [cmd(rng, "ZREMRANGEBYLEX"), key, lex_bound(rng), lex_bound(rng)]
    return [cmd(rng, "ZRANGESTORE"), ctx.key(rng), key, lex_bound(rng), lex_bound(rng),
            cmd(rng, "BYLEX")]


def g_rangestore(rng, ctx):
    argv = [cmd(rng, "ZRANGESTORE"), ctx.key(rng), ctx.key(rng)]
    if rng.random() < 0.5:
        argv += [str(rng.randint(-5, 5)), str(rng.randint(-5, 5))]
    else:
        argv += [bound(rng), bound(rng), cmd(rng, "BYSCORE")]
        if rng.random() < 0.3:
            argv += [cmd(rng, "LIMIT"), str(rng.randint(0, 3)), str(rng.randint(-1, 3))]
    if rng.random() < 0.3:
        argv.append(cmd(rng, "REV"))
    return argv


def g_remrange(rng, ctx):
    key = ctx.key(rng)
    if rng.random() < 0.5:
        return [cmd(rng, "ZREMRANGEBYRANK"), key, str(rng.randint(-5, 5)), str(rng.randint(-5, 5))]
    return [cmd(rng, "ZREMRANGEBYSCORE"), key, bound(rng), bound(rng)]


def g_pop(rng, ctx):
    argv = [cmd(rng, rng.choice(["ZPOPMIN", "ZPOPMAX"])), ctx.key(rng)]
    if rng.random() < 0.5:
        argv.append(rng.choice(["0", "1", "2", "5", "-1", "abc"]))
    return argv


def mpop_tail(rng):
    tail = [cmd(rng, rng.choice(["MIN", "MAX", "MIN", "MAX", "BOTH"]))]
    if rng.random() < 0.4:
        tail += [cmd(rng, "COUNT"), rng.choice(["1", "2", "10", "0", "-1", "abc"])]
    return tail


def g_mpop(rng, ctx):
    ks = keys(rng, ctx)
    numkeys = str(len(ks)) if rng.random() < 0.9 else rng.choice(["0", "-1", "abc", str(len(ks) + 1)])
    return [cmd(rng, "ZMPOP"), numkeys] + ks + mpop_tail(rng)


def g_blocking(rng, ctx):
    # Only when a key has data (or the timeout is invalid): a real wait would stall the run.
    ks = keys(rng, ctx)
    has_data = any(ctx.probe(["ZCARD", k]).value not in (0, None) for k in ks)
    if not has_data:
        return [cmd(rng, "BZPOPMIN"), ks[0], rng.choice(["-1", "abc"])]
    if rng.random() < 0.6:
        return [cmd(rng, rng.choice(["BZPOPMIN", "BZPOPMAX"]))] + ks + ["0"]
    return [cmd(rng, "BZMPOP"), "0", str(len(ks))] + ks + mpop_tail(rng)


def setop_options(rng, n, allow_weights=True, allow_withscores=True):
    out = []
    if allow_weights and rng.random() < 0.3:
        out += [cmd(rng, "WEIGHTS")] + [rng.choice(["1", "2", "0", "-1", "0.5", "inf", "x"])
                                        for _ in range(n)]
    if allow_weights and rng.random() < 0.3:
        out += [cmd(rng, "AGGREGATE"), cmd(rng, rng.choice(["SUM", "MIN", "MAX", "AVG"]))]
    if allow_withscores and rng.random() < 0.5:
        out.append(cmd(rng, "WITHSCORES"))
    return out


def g_setop(rng, ctx):
    name = rng.choice(["ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"])
    ks = keys(rng, ctx)
    numkeys = str(len(ks)) if rng.random() < 0.95 else rng.choice(["0", "abc", str(len(ks) + 1)])
    store = name.endswith("STORE")
    argv = [cmd(rng, name)] + ([ctx.key(rng)] if store else []) + [numkeys] + ks
    argv += setop_options(rng, len(ks), allow_weights="DIFF" not in name or rng.random() < 0.05,
                          allow_withscores=not store or rng.random() < 0.05)
    return argv


def g_intercard(rng, ctx):
    ks = keys(rng, ctx)
    numkeys = str(len(ks)) if rng.random() < 0.9 else rng.choice(["0", "-1", "abc", str(len(ks) + 1)])
    argv = [cmd(rng, "ZINTERCARD"), numkeys] + ks
    if rng.random() < 0.4:
        argv += [cmd(rng, "LIMIT"), rng.choice(["0", "1", "2", "-1", "abc"])]
    return argv


def g_randmember(rng, ctx):
    argv = [cmd(rng, "ZRANDMEMBER"), ctx.key(rng)]
    if rng.random() < 0.7:
        argv.append(rng.choice(["0", "1", "3", "-3", "20", "-20", "abc"]))
        if rng.random() < 0.4:
            argv.append(cmd(rng, "WITHSCORES"))
    return argv


def g_randmember_all(rng, ctx):
    return [cmd(rng, "ZRANDMEMBER"), ctx.key(rng), "100000", cmd(rng, "WITHSCORES")]


def g_zscan(rng, ctx):
    argv = [cmd(rng, "ZSCAN"), ctx.key(rng), "0"]
    if rng.random() < 0.4:
        argv += [cmd(rng, "MATCH"), rng.choice(["m1*", "b?", "*", gen_pattern(rng)])]
    if rng.random() < 0.5:
        argv += [cmd(rng, "COUNT"), rng.choice(["1", "5", "10", "100"])]
    return argv


def g_zscan_bad(rng, ctx):
    key = ctx.key(rng)
    return rng.choice([
        ["ZSCAN", key, rng.choice(["abc", "1.5", " 1"])],
        ["ZSCAN", key, "0", "COUNT", rng.choice(["0", "-1", "abc"])],
        ["ZSCAN", key, "0", "MATCH"],
    ])


def g_encoding(rng, ctx):
    key = ctx.key(rng)
    if ctx.probe(["TYPE", key]).value != b"zset":
        return [cmd(rng, "ZCARD"), key]
    return ["OBJECT", "ENCODING", key]


@register_family("zsets", share=3.0, tx_safe=True)
def family_zsets():
    return [
        (14, g_zadd, "exact"),
        (3, g_zadd_same_score, "exact"),
        (1, g_zadd_bulk, "exact"),
        (4, g_zincrby, "exact"),
        (5, lambda rng, ctx: [cmd(rng, "ZREM"), ctx.key(rng)] +
         [member(rng) for _ in range(rng.randint(1, 4))], "exact"),
        (3, lambda rng, ctx: [cmd(rng, "ZCARD"), ctx.key(rng)], "exact"),
        (3, lambda rng, ctx: [cmd(rng, "ZSCORE"), ctx.key(rng), member(rng)], "exact"),
        (2, lambda rng, ctx: [cmd(rng, "ZMSCORE"), ctx.key(rng)] +
         [member(rng) for _ in range(rng.randint(1, 4))], "exact"),
        (3, lambda rng, ctx: [cmd(rng, "ZCOUNT"), ctx.key(rng), bound(rng), bound(rng)], "exact"),
        (3, lambda rng, ctx: [cmd(rng, rng.choice(["ZRANK", "ZREVRANK"])), ctx.key(rng),
                              member(rng)], "exact"),
        (8, g_range, "exact"),
        (4, g_legacy_range, "exact"),
        (5, g_lex, "sorted"),
        (3, g_rangestore, "exact"),
        (3, g_remrange, "exact"),
        (4, g_pop, "exact"),
        (2, g_mpop, "exact"),
        (2, g_blocking, "sorted"),
        (6, g_setop, "exact"),
        (2, g_intercard, "exact"),
        (2, g_randmember, "shape"),
        (1, g_randmember_all, "pairs"),
        (2, g_zscan, "scan"),
        (1, g_zscan_bad, "exact"),
        (2, g_encoding, "sorted"),
        (1, lambda rng, ctx: ["SADD", ctx.key(rng)] + [member(rng) for _ in range(3)], "exact"),
        (1, lambda rng, ctx: ["SET", ctx.key(rng), gen_value(rng)], "exact"),
        (2, lambda rng, ctx: ["DEL", ctx.key(rng)], "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, ZSET_COMMANDS), "exact"),
    ]


STATE_DUMPERS["zset"] = lambda key: [(["ZRANGE", key, "0", "-1", "WITHSCORES"], "exact")]

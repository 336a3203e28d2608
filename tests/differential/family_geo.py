"""Differential family: GEO commands (GEOADD, GEODIST, GEOHASH, GEOPOS, GEORADIUS[_RO],
GEORADIUSBYMEMBER[_RO], GEOSEARCH, GEOSEARCHSTORE) on a few geo sets, with every option and
the error paths.

Known Redis 7.0 vs 7.2 difference the generator stays away from (vireo follows 7.2): a zset
score prints with "%.17g" in 7.0 and as the shortest round trip in 7.2. Geo scores are integers
below 2^53 (same text either way), but STOREDIST stores distances: those destinations are read
back as members only (ZRANGE without scores) and deleted in the same op, so the state check
never prints their scores.

Ties: members at the same distance from the centre come back in Redis's sort order, which for
a full sort is glibc qsort's (stable merge sort: insertion order) and vireo's stable sort
matches it; with COUNT below the number of matches Redis uses its own partial quicksort, whose
order among ties is not reproduced. The generator keeps points distinct (a random %.6f
coordinate pair, never clamped onto a limit) so ties don't arise.
"""

from differential import ARITY, Seq, cmd, register_family, wrong_arity

GEO_COMMANDS = ["geoadd", "geodist", "geohash", "geopos", "georadius", "georadius_ro",
                "georadiusbymember", "georadiusbymember_ro", "geosearch", "geosearchstore"]
ARITY.update({"geoadd": -5, "geodist": -4, "geohash": -2, "geopos": -2, "georadius": -6,
              "georadius_ro": -6, "georadiusbymember": -5, "georadiusbymember_ro": -5,
              "geosearch": -7, "geosearchstore": -8})

SETS = ["geo1", "geo2", "geo3"]
CENTRES = [(13.36, 38.11), (-73.98, 40.75), (179.95, -16.5), (0.0, 84.9), (-0.1, -0.1)]
UNITS = ["m", "km", "ft", "mi", "KM", "Mi"]
BAD_UNITS = ["yd", "", "meters"]
BAD_NUMBERS = ["x", "", "nan", " 1", "1e400"]


def src(rng, ctx):
    r = rng.random()
    if r < 0.85:
        return rng.choice(SETS)
    if r < 0.95:
        return "geonone"
    return ctx.key(rng)  # may hold another type: WRONGTYPE


def member(rng):
    return "p%d" % rng.randint(0, 40)


def fold(v, limit):
    """Folds a coordinate that overshot a limit back inside (clamping would pile points on the
    limit, and equal points tie in distance; see the module docstring)."""
    if v > limit:
        return 2 * limit - v
    if v < -limit:
        return -2 * limit - v
    return v


def lonlat(rng):
    if rng.random() < 0.04:
        bad = [rng.choice(["181", "-180.5", "x", "inf"]), rng.choice(["85.06", "-91", "nan", "y"])]
        good = lonlat(rng)
        i = rng.randrange(2)
        good[i] = bad[i]
        return good
    clon, clat = rng.choice(CENTRES)
    s = 10 ** rng.uniform(-3, 0.5)
    return ["%.6f" % fold(clon + rng.uniform(-s, s), 180.0),
            "%.6f" % fold(clat + rng.uniform(-s, s), 85.05)]


def unit(rng):
    return rng.choice(BAD_UNITS) if rng.random() < 0.03 else cmd(rng, rng.choice(UNITS))


def number(rng, lo_exp, hi_exp):
    if rng.random() < 0.03:
        return rng.choice(BAD_NUMBERS + ["-1"])
    return "%.3f" % 10 ** rng.uniform(lo_exp, hi_exp)


def g_geoadd(rng, ctx):
    argv = [cmd(rng, "GEOADD"), src(rng, ctx)]
    for opt in ("NX", "XX", "CH"):
        if rng.random() < 0.15:
            argv.append(cmd(rng, opt))
    for _ in range(rng.randint(1, 5)):
        argv += lonlat(rng) + [member(rng)]
    if rng.random() < 0.03:
        argv.pop()
    return argv


def g_point_reads(rng, ctx):
    key = src(rng, ctx)
    r = rng.random()
    if r < 0.35:
        return [cmd(rng, "GEOPOS"), key] + [member(rng) for _ in range(rng.randint(0, 4))]
    if r < 0.6:
        return [cmd(rng, "GEOHASH"), key] + [member(rng) for _ in range(rng.randint(0, 4))]
    argv = [cmd(rng, "GEODIST"), key, member(rng), member(rng)]
    if rng.random() < 0.6:
        argv.append(unit(rng))
    if rng.random() < 0.02:
        argv.append("extra")
    return argv


def search_options(rng, allow_with=True):
    opts = []
    if allow_with:
        for o in ("WITHDIST", "WITHCOORD", "WITHHASH"):
            if rng.random() < 0.35:
                opts.append([cmd(rng, o)])
    r = rng.random()
    if r < 0.35:
        opts.append([cmd(rng, "ASC")])
    elif r < 0.7:
        opts.append([cmd(rng, "DESC")])
    if rng.random() < 0.4:
        count = str(rng.randint(1, 12)) if rng.random() < 0.95 else rng.choice(["0", "-1", "x"])
        opts.append([cmd(rng, "COUNT"), count])
    if rng.random() < 0.15:
        opts.append([cmd(rng, "ANY")])
    if rng.random() < 0.02:
        opts.append([rng.choice(["FOO", "STORE", "COUNT"])])
    rng.shuffle(opts)
    return [a for o in opts for a in o]


def shape_args(rng):
    if rng.random() < 0.5:
        return [cmd(rng, "BYRADIUS"), number(rng, 0, 6.5), unit(rng)]
    return [cmd(rng, "BYBOX"), number(rng, 0, 6.5), number(rng, 0, 6.5), unit(rng)]


def from_args(rng):
    if rng.random() < 0.35:
        return [cmd(rng, "FROMMEMBER"), member(rng)]
    return [cmd(rng, "FROMLONLAT")] + lonlat(rng)


def g_search(rng, ctx):
    key = src(rng, ctx)
    r = rng.random()
    if r < 0.25:
        name = rng.choice(["GEORADIUS", "GEORADIUS_RO"])
        return [cmd(rng, name), key] + lonlat(rng) + [number(rng, 0, 6.5), unit(rng)] + \
            search_options(rng)
    if r < 0.45:
        name = rng.choice(["GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"])
        return [cmd(rng, name), key, member(rng), number(rng, 0, 6.5), unit(rng)] + \
            search_options(rng)
    parts = [from_args(rng), shape_args(rng)]
    if rng.random() < 0.03:
        parts.pop(rng.randrange(2))  # a missing FROM or BY
    if rng.random() < 0.02:
        parts.append(from_args(rng) if rng.random() < 0.5 else shape_args(rng))
    rng.shuffle(parts)
    return [cmd(rng, "GEOSEARCH"), key] + [a for p in parts for a in p] + search_options(rng)


def g_store(rng, ctx):
    """Stores into geodst (scores are geohashes: exact) or, with STOREDIST, into geodist and
    reads that back without scores before deleting it (see the module docstring)."""
    key = src(rng, ctx)
    dist = rng.random() < 0.4
    dst = "geodist" if dist else "geodst"
    r = rng.random()
    with_opt = [cmd(rng, "WITHDIST")] if rng.random() < 0.03 else []
    if r < 0.3:
        argv = [cmd(rng, "GEORADIUS"), key] + lonlat(rng) + [number(rng, 0, 6.5), unit(rng)]
        argv += search_options(rng, False) + with_opt + [cmd(rng, "STOREDIST" if dist else "STORE"), dst]
    elif r < 0.5:
        argv = [cmd(rng, "GEORADIUSBYMEMBER"), key, member(rng), number(rng, 0, 6.5), unit(rng)]
        argv += search_options(rng, False) + with_opt + [cmd(rng, "STOREDIST" if dist else "STORE"), dst]
    else:
        argv = [cmd(rng, "GEOSEARCHSTORE"), dst, key] + from_args(rng) + shape_args(rng)
        argv += search_options(rng, False) + with_opt
        if dist:
            argv.append(cmd(rng, "STOREDIST"))
    if not dist:
        return argv
    return Seq([(argv, "exact"), (["ZRANGE", "geodist", "0", "-1"], "exact"),
                (["DEL", "geodist"], "exact")])


def g_dump(rng, ctx):
    return ["ZRANGE", rng.choice(SETS + ["geodst"]), "0", "-1", "WITHSCORES"]


@register_family("geo", share=1.0, tx_safe=False)
def family_geo():
    return [
        (8, g_geoadd, "exact"),
        (6, g_point_reads, "exact"),
        (12, g_search, "exact"),
        (4, g_store, "exact"),
        (2, g_dump, "exact"),
        (1, lambda rng, ctx: ["ZREM", rng.choice(SETS), member(rng), member(rng)], "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, GEO_COMMANDS), "exact"),
    ]

"""Differential family: SORT and SORT_RO over lists, sets and sorted sets, with BY (string
keys, hash fields, nosort), GET (#, string keys, hash fields), LIMIT, ASC/DESC, ALPHA and
STORE.

Replies compare exactly except where Redis's order is unspecified: a set read without sorting
(hash order) and ALPHA sorting by weights, where equal weights leave qsort's order (those
compare as multisets). Weight keys are w_<element> strings and h_<element> hashes with field f.

Known Redis quirk kept out (7.0 and 7.2 alike, still in 8.0): SORT tests `errno == ERANGE`
after strtod without clearing errno first, so once any command has left ERANGE behind, every
numeric SORT that converts a string element or weight fails with "One or more scores can't be
converted into double" until some later parse happens to reset errno. Other families leave it
on purpose (ZADD 1e400, SCAN 18446744073709551616: strtoul overflow in the cursor parse, a
stream ID past 2^64); vireo does not imitate the leak. So each SORT is preceded by an SSCAN of a
missing key with cursor 0, whose cursor parse sets errno to 0 in Redis and which is a no-op
with identical replies on both servers; inside MULTI it is queued just ahead of the SORT. No
element or weight overflows strtod itself, for the same reason.
"""

from differential import ARITY, PRELUDES, cmd, register_family, wrong_arity

ARITY.update({"sort": -2, "sort_ro": -2})
ERRNO_RESET = ["SSCAN", "sort-errno-reset", "0"]
PRELUDES.update({b"SORT": ERRNO_RESET, b"SORT_RO": ERRNO_RESET})

ELEMS = ["1", "2", "3", "10", "-1", "2.5", "a", "b", "c", "", "0x10", " 4"]
NUMERIC = ["1", "2", "3", "10", "-1", "2.5", "7", "0", "-3.5", "100"]
WEIGHTS = ["1", "2", "3", "-1", "0.5", "x", "", "10", "inf"]


def elem(rng):
    return rng.choice(NUMERIC) if rng.random() < 0.7 else rng.choice(ELEMS)


def src_key(rng):
    return rng.choice(["sl1", "sl2", "ss1", "ss2", "sz1", "sz2", "sstr", "snone"])


def g_fill(rng, ctx):
    key = src_key(rng)
    n = rng.randint(1, 6)
    items = [elem(rng) for _ in range(n)]
    if key.startswith("sl"):
        return ["RPUSH", key] + items
    if key.startswith("ss"):
        return ["SADD", key] + items
    if key.startswith("sz"):
        argv = ["ZADD", key]
        for e in items:
            argv += [rng.choice(["0", "1", "2", "3", "1.5"]), e]
        return argv
    if key == "sstr":
        return ["SET", key, "v"]
    return ["DEL", key]


def g_weight(rng, ctx):
    e = rng.choice(NUMERIC + ELEMS)
    if rng.random() < 0.5:
        return ["SET", f"w_{e}", rng.choice(WEIGHTS)]
    if rng.random() < 0.8:
        return ["HSET", f"h_{e}", "f", rng.choice(WEIGHTS), "g", rng.choice(["x", "y", "z"])]
    return ["DEL", rng.choice([f"w_{e}", f"h_{e}"])]


def sort_argv(rng, ctx, name):
    key = src_key(rng)
    argv = [cmd(rng, name), key]
    by = None
    if rng.random() < 0.25:
        by = rng.choice(["w_*", "h_*->f", "h_*->g", "nosort", "w_*->", "*"])
        argv += [cmd(rng, "BY"), by]
    alpha = rng.random() < 0.5
    store = name == "SORT" and rng.random() < 0.25
    unordered = (key.startswith("ss") and by == "nosort" and not store) or \
        (alpha and by is not None and by != "nosort")
    # A window of an unspecified order would hold different elements on each server.
    if rng.random() < 0.3 and not unordered:
        argv += [cmd(rng, "LIMIT"), str(rng.randint(-1, 3)), str(rng.randint(-1, 3))]
    for _ in range(rng.choice([0, 0, 1, 2])):
        argv += [cmd(rng, "GET"), rng.choice(["#", "w_*", "h_*->f", "h_*->nofield", "nostar"])]
    if rng.random() < 0.3:
        argv.append(cmd(rng, rng.choice(["ASC", "DESC"])))
    if alpha:
        argv.append(cmd(rng, "ALPHA"))
    if store:
        argv += [cmd(rng, "STORE"), rng.choice(["sdst", "sl2"])]
    if rng.random() < 0.02:
        argv.append(rng.choice(["FOO", "LIMIT", "GET", "BY"]))
    return argv, unordered


def g_sort_exact(rng, ctx):
    for _ in range(20):
        argv, unordered = sort_argv(rng, ctx, rng.choice(["SORT", "SORT_RO"]))
        if not unordered:
            return argv
    return ["SORT", "sl1", "ALPHA"]


def g_sort_unordered(rng, ctx):
    argv, _ = sort_argv(rng, ctx, "SORT_RO")
    return argv


@register_family("sort", share=1.5, tx_safe=True)
def family_sort():
    return [
        (6, g_fill, "exact"),
        (4, g_weight, "exact"),
        (10, g_sort_exact, "exact"),
        (3, g_sort_unordered, "sorted"),
        (1, lambda rng, ctx: ["LRANGE", "sdst", "0", "-1"], "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, ["sort", "sort_ro"]), "exact"),
    ]

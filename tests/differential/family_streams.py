"""Differential family: streams and consumer groups (XADD ... XINFO).

Every generated ID is explicit (or "<ms>-*"), so both servers hold the same entries and reply
the same bytes. Replies that carry clock readings (XPENDING's idle times, XINFO CONSUMERS)
compare by shape. XINFO STREAM is left out: its radix-tree fields describe Redis's internal
layout.
"""

from differential import (ARITY, COMPARATORS, STATE_DUMPERS, Seq, cmd, cmp_exact,
                          register_family, wrong_arity)

STREAM_COMMANDS = ["xadd", "xlen", "xrange", "xrevrange", "xdel", "xtrim", "xsetid", "xread",
                   "xreadgroup", "xack", "xpending", "xclaim", "xautoclaim"]
ARITY.update({"xadd": -5, "xlen": 2, "xrange": -4, "xrevrange": -4, "xdel": -3, "xtrim": -4,
              "xsetid": -3, "xread": -4, "xreadgroup": -7, "xack": -4, "xpending": -3,
              "xclaim": -6, "xautoclaim": -6})

GROUPS = ["g1", "g2"]
CONSUMERS = ["alice", "bob", "carol"]
# Managed only through XGROUP CREATECONSUMER/DELCONSUMER: Redis 7.2 creates a reading consumer on
# every attempt and 7.0 only on success, so those commands' replies about readers differ.
MANAGED = ["dave", "erin"]
FIELDS = ["f", "name", "n", "a-long-field-name"]


def gen_id(rng, ctx, valid=True):
    """An ID near the current clock of the run: usually above every ID added so far."""
    base = getattr(ctx, "stream_ms", 1)
    r = rng.random()
    if not valid and r < 0.5:
        return rng.choice(["abc", "1-x", "-1", "1-2-3", "", "18446744073709551616-0", "*-1"])
    if r < 0.7:
        ctx.stream_ms = base + rng.randint(0, 3)
        return f"{ctx.stream_ms}-{rng.randint(0, 3)}"
    if r < 0.8:
        return f"{ctx.stream_ms}-*" if hasattr(ctx, "stream_ms") else "1-*"
    if r < 0.9:
        return str(base + rng.randint(0, 2))
    return f"{max(0, base - rng.randint(1, 20))}-{rng.randint(0, 5)}"  # often too small


def old_id(rng, ctx):
    base = getattr(ctx, "stream_ms", 1)
    return f"{rng.randint(0, base)}-{rng.randint(0, 3)}"


def range_bound(rng, ctx, low):
    r = rng.random()
    if r < 0.3:
        return "-" if low else "+"
    if r < 0.45:
        return "(" + old_id(rng, ctx)
    if r < 0.55:
        return str(rng.randint(0, getattr(ctx, "stream_ms", 1)))
    if r < 0.58:
        return rng.choice(["(-", "(+", "x", "(18446744073709551615-18446744073709551615", "(0-0"])
    return old_id(rng, ctx)


def fields(rng):
    argv = []
    n = rng.choice([1, 1, 1, 2, 3])
    same = rng.random() < 0.7
    for i in range(n):
        argv.append(FIELDS[i] if same else rng.choice(FIELDS))
        argv.append(rng.choice(["v", "1", "-42", "123456789012", "", "x" * 30, str(rng.randint(0, 999))]))
    return argv


def trim_opts(rng, ctx):
    r = rng.random()
    if r < 0.6:
        return []
    if r < 0.8:
        return ["MAXLEN", rng.choice(["", "=", "="]), str(rng.randint(0, 30))]
    if r < 0.9:
        return ["MINID", "=", old_id(rng, ctx)]
    if r < 0.95:
        return ["MAXLEN", "~", str(rng.randint(0, 300)), "LIMIT", str(rng.randint(0, 200))]
    return rng.choice([["MAXLEN", "-1"], ["MAXLEN", "1", "LIMIT", "2"], ["LIMIT", "2"],
                       ["MAXLEN", "1", "MINID", "1"], ["MINID", "bad"]])


def g_xadd(rng, ctx):
    argv = [cmd(rng, "XADD"), ctx.key(rng)]
    if rng.random() < 0.1:
        argv.append("NOMKSTREAM")
    argv += [a for a in trim_opts(rng, ctx) if a != ""]
    argv.append(gen_id(rng, ctx, valid=rng.random() < 0.95))
    argv += fields(rng)
    if rng.random() < 0.02:
        argv.append("dangling")
    return argv


def g_xadd_many(rng, ctx):
    # Enough entries to span several nodes, so approximate trimming has whole nodes to drop.
    key = ctx.key(rng)
    steps = []
    for _ in range(rng.randint(50, 250)):
        ctx.stream_ms = getattr(ctx, "stream_ms", 1) + 1
        steps.append(["XADD", key, f"{ctx.stream_ms}-0", "f", str(rng.randint(0, 9))])
    return steps


# Node shapes for approximate trimming: XTRIM/XADD ~ drop whole nodes, so vireo must start a
# new block exactly where Redis starts a new listpack node (stream-node-max-bytes measured on
# Redis's listpack encoding, stream-node-max-entries counting deleted entries).
SHAPE_FIELDS = ["event", "jobId", "returnvalue", "prev", "x", "a-much-longer-field-name-" * 3]
SHAPE_VALUES = [
    lambda rng: "completed", lambda rng: "null", lambda rng: "",
    lambda rng: str(rng.randint(0, 127)), lambda rng: str(rng.randint(-4096, 4095)),
    lambda rng: str(rng.randint(-40000, 40000)), lambda rng: str(rng.randint(-2**23, 2**23)),
    lambda rng: str(rng.randint(-2**40, 2**40)), lambda rng: str(rng.choice([2**63 - 1, -2**63])),
    lambda rng: "007", lambda rng: "-0", lambda rng: "x" * rng.choice([63, 64, 200]),
    lambda rng: "y" * rng.choice([4095, 4096, 5000]),
]


def g_stream_shapes(rng, ctx):
    key = ctx.key(rng)
    steps = [(["DEL", key], "exact")]
    if rng.random() < 0.4:
        steps.append((["CONFIG", "SET", "stream-node-max-entries",
                       str(rng.choice([0, 1, 5, 100, 1000]))], "exact"))
        steps.append((["CONFIG", "SET", "stream-node-max-bytes",
                       str(rng.choice([0, 64, 300, 1000, 4096, 10000]))], "exact"))
    base_fields = rng.sample(SHAPE_FIELDS, rng.randint(1, 4))
    ms = getattr(ctx, "stream_ms", 1)
    seq = 0
    for _ in range(rng.randint(20, 300)):
        step = rng.choice([0, 0, 1, 1, 100, 5000, 70000, 2**33])
        if step == 0:
            seq += rng.choice([1, 1, 2, 300, 2**40])
        else:
            ms += step
            seq = rng.choice([0, 0, 5, 2**35])
        names = base_fields if rng.random() < 0.6 else rng.sample(SHAPE_FIELDS, rng.randint(1, 4))
        argv = ["XADD", key, f"{ms}-{seq}"]
        for name in names:
            argv += [name, rng.choice(SHAPE_VALUES)(rng)]
        steps.append((argv, "exact"))
        if rng.random() < 0.05:
            steps.append((["XDEL", key, f"{ms}-{seq}"], "exact"))
    ctx.stream_ms = ms
    steps.append((["XINFO", "STREAM", key], "xinfo_stream"))
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.6:
            argv = ["XTRIM", key, "MAXLEN", "~", str(rng.randint(0, 300))]
        else:
            argv = ["XTRIM", key, "MINID", "~", f"{rng.randint(1, ms)}-0"]
        if rng.random() < 0.3:
            argv += ["LIMIT", str(rng.choice([0, 1, 50, 100, 150]))]
        steps += [(argv, "exact"), (["XLEN", key], "exact"),
                  (["XINFO", "STREAM", key], "xinfo_stream")]
    steps.append((["CONFIG", "SET", "stream-node-max-entries", "100"], "exact"))
    steps.append((["CONFIG", "SET", "stream-node-max-bytes", "4096"], "exact"))
    return Seq(steps)


# radix-tree-nodes counts Redis's radix tree's inner nodes, and the IDMP fields are Redis 8.x
# additions the 7.0 reference lacks; every other field (the node count radix-tree-keys
# included) must match.
XINFO_STREAM_SKIPPED = {b"radix-tree-nodes", b"idmp-duration", b"idmp-maxsize", b"pids-tracked",
                        b"iids-tracked", b"iids-added", b"iids-duplicates"}


def _xinfo_stream_fields(rep):
    items = rep.value or []
    out = []
    for i in range(0, len(items) - 1, 2):
        if items[i].value not in XINFO_STREAM_SKIPPED:
            out += [items[i].raw, items[i + 1].raw]
    return out


def cmp_xinfo_stream(a, b):
    if a.is_error or b.is_error or a.kind != "*" or b.kind != "*":
        return cmp_exact(a, b)
    return _xinfo_stream_fields(a) == _xinfo_stream_fields(b)


COMPARATORS["xinfo_stream"] = cmp_xinfo_stream


def g_range(rng, ctx):
    rev = rng.random() < 0.4
    argv = [cmd(rng, "XREVRANGE" if rev else "XRANGE"), ctx.key(rng)]
    lo, hi = range_bound(rng, ctx, True), range_bound(rng, ctx, False)
    argv += [hi, lo] if rev else [lo, hi]
    if rng.random() < 0.5:
        argv += ["COUNT", rng.choice(["0", "1", "3", "10", "-1", "x"])]
    return argv


def g_xdel(rng, ctx):
    ids = [old_id(rng, ctx) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.05:
        ids.append("bad")
    return [cmd(rng, "XDEL"), ctx.key(rng)] + ids


def g_xtrim(rng, ctx):
    opts = [a for a in trim_opts(rng, ctx) if a != ""] or ["MAXLEN", str(rng.randint(0, 20))]
    return [cmd(rng, "XTRIM"), ctx.key(rng)] + opts


def g_xsetid(rng, ctx):
    argv = [cmd(rng, "XSETID"), ctx.key(rng), gen_id(rng, ctx)]
    if argv[2].endswith("*"):
        argv[2] = argv[2][:-1] + "9"
    if rng.random() < 0.3:
        argv += ["ENTRIESADDED", str(rng.randint(-1, 400))]
    if rng.random() < 0.2:
        argv += ["MAXDELETEDID", old_id(rng, ctx)]
    return argv


def g_xread(rng, ctx):
    argv = [cmd(rng, "XREAD")]
    if rng.random() < 0.5:
        argv += ["COUNT", rng.choice(["1", "2", "5", "0", "-1"])]
    keys = [ctx.key(rng) for _ in range(rng.randint(1, 2))]
    ids = [rng.choice(["0", "$", old_id(rng, ctx), old_id(rng, ctx)]) for _ in keys]
    return argv + ["STREAMS"] + keys + ids


def g_group_create(rng, ctx):
    argv = [cmd(rng, "XGROUP"), "CREATE", ctx.key(rng), rng.choice(GROUPS),
            rng.choice(["0", "$", old_id(rng, ctx)])]
    if rng.random() < 0.5:
        argv.append("MKSTREAM")
    if rng.random() < 0.2:
        argv += ["ENTRIESREAD", rng.choice(["0", "3", "-1", "-2"])]
    return argv


def g_group_misc(rng, ctx):
    key, group = ctx.key(rng), rng.choice(GROUPS)
    return rng.choice([
        [cmd(rng, "XGROUP"), "SETID", key, group, rng.choice(["0", "$", old_id(rng, ctx)])],
        [cmd(rng, "XGROUP"), "SETID", key, group, "0", "ENTRIESREAD", rng.choice(["0", "2", "-1"])],
        [cmd(rng, "XGROUP"), "DESTROY", key, group],
        [cmd(rng, "XGROUP"), "CREATECONSUMER", key, group, rng.choice(MANAGED)],
        [cmd(rng, "XGROUP"), "DELCONSUMER", key, group, rng.choice(MANAGED)],
    ])


def g_xreadgroup(rng, ctx):
    argv = [cmd(rng, "XREADGROUP"), "GROUP", rng.choice(GROUPS), rng.choice(CONSUMERS)]
    if rng.random() < 0.6:
        argv += ["COUNT", rng.choice(["1", "2", "5"])]
    if rng.random() < 0.15:
        argv.append("NOACK")
    key = ctx.key(rng)
    argv += ["STREAMS", key, rng.choice([">", ">", ">", "0", old_id(rng, ctx)])]
    return argv


def g_xack(rng, ctx):
    return [cmd(rng, "XACK"), ctx.key(rng), rng.choice(GROUPS)] + [
        old_id(rng, ctx) for _ in range(rng.randint(1, 3))]


def g_xpending_summary(rng, ctx):
    return [cmd(rng, "XPENDING"), ctx.key(rng), rng.choice(GROUPS)]


def g_xpending_ext(rng, ctx):
    argv = [cmd(rng, "XPENDING"), ctx.key(rng), rng.choice(GROUPS)]
    argv += [range_bound(rng, ctx, True), range_bound(rng, ctx, False), rng.choice(["1", "5", "100"])]
    if rng.random() < 0.3:
        argv.append(rng.choice(CONSUMERS))
    return argv


def g_xclaim(rng, ctx):
    argv = [cmd(rng, "XCLAIM"), ctx.key(rng), rng.choice(GROUPS), rng.choice(CONSUMERS), "0"]
    argv += [old_id(rng, ctx) for _ in range(rng.randint(1, 3))]
    argv.append("JUSTID") if rng.random() < 0.3 else None
    if rng.random() < 0.2:
        argv += ["RETRYCOUNT", str(rng.randint(0, 5))]
    if rng.random() < 0.1:
        argv.append("FORCE")
    return argv


def g_xautoclaim(rng, ctx):
    argv = [cmd(rng, "XAUTOCLAIM"), ctx.key(rng), rng.choice(GROUPS), rng.choice(CONSUMERS),
            "0", rng.choice(["0", "-", old_id(rng, ctx)])]
    if rng.random() < 0.5:
        argv += ["COUNT", rng.choice(["1", "2", "10", "0"])]
    if rng.random() < 0.3:
        argv.append("JUSTID")
    return argv


def _groups_without_consumer_counts(rep):
    # Redis 7.2 creates a consumer on every XREADGROUP/XCLAIM attempt, 7.0 only when it gets
    # something: the consumer counts of the 7.0 reference legitimately differ.
    if rep.kind != "*" or rep.value is None:
        return rep.raw
    out = []
    for group in rep.value:
        fields = [f.raw for f in (group.value or [])]
        for i in range(0, len(fields) - 1, 2):
            if fields[i] == b"$9\r\nconsumers\r\n":
                fields[i + 1] = b"?"
        out.append(b"".join(fields))
    return out


def cmp_xinfo_groups(a, b):
    if a.is_error or b.is_error:
        return cmp_exact(a, b)
    return _groups_without_consumer_counts(a) == _groups_without_consumer_counts(b)


COMPARATORS["xinfo_groups"] = cmp_xinfo_groups


def g_xinfo_groups(rng, ctx):
    return [cmd(rng, "XINFO"), "GROUPS", ctx.key(rng)]


@register_family("streams", share=3.0)
def family_streams():
    return [
        (16, g_xadd, "exact"),
        (1, lambda rng, ctx: _seq(g_xadd_many(rng, ctx)), "exact"),
        (1, g_stream_shapes, "exact"),
        (3, lambda rng, ctx: [cmd(rng, "XLEN"), ctx.key(rng)], "exact"),
        (6, g_range, "exact"),
        (3, g_xdel, "exact"),
        (3, g_xtrim, "exact"),
        (1, g_xsetid, "exact"),
        (4, g_xread, "exact"),
        (4, g_group_create, "exact"),
        (3, g_group_misc, "exact"),
        (8, g_xreadgroup, "exact"),
        (4, g_xack, "exact"),
        (3, g_xpending_summary, "exact"),
        (2, g_xpending_ext, "shape"),
        (3, g_xclaim, "exact"),
        (2, g_xautoclaim, "exact"),
        (2, g_xinfo_groups, "xinfo_groups"),
        (1, lambda rng, ctx: ["DEL", ctx.key(rng)], "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, STREAM_COMMANDS), "exact"),
    ]


def _seq(argvs):
    from differential import Seq
    return Seq([(a, "exact") for a in argvs])


STATE_DUMPERS["stream"] = lambda key: [(["XRANGE", key, "-", "+"], "exact"),
                                       (["XINFO", "GROUPS", key], "xinfo_groups"),
                                       (["XPENDING", key, "g1"], "exact"),
                                       (["XPENDING", key, "g2"], "exact")]

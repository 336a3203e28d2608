"""Differential family: HyperLogLog (PFADD, PFCOUNT, PFMERGE, PFDEBUG).

HLLs are strings, so the string state dumper (GET) compares their exact bytes: sparse opcodes,
dense registers and the cached count. Keys sometimes hold other types or plain strings, and
now and then a corrupted HLL, so the error paths are compared too.
"""

from differential import ARITY, cmd, gen_value, register_family, wrong_arity

HLL_COMMANDS = ["pfadd", "pfcount", "pfmerge", "pfdebug"]
ARITY.update({"pfadd": -2, "pfcount": -2, "pfmerge": -2, "pfdebug": 3})


def element(rng):
    r = rng.random()
    if r < 0.5:
        return str(rng.randint(0, 300))
    if r < 0.9:
        return f"e{rng.randint(0, 100000)}"
    return gen_value(rng)


def keys(rng, ctx, lo=1, hi=4):
    return [ctx.key(rng) for _ in range(rng.randint(lo, hi))]


def g_pfadd(rng, ctx):
    return [cmd(rng, "PFADD"), ctx.key(rng)] + [element(rng) for _ in range(rng.randint(0, 6))]


def g_pfadd_bulk(rng, ctx):
    # Enough elements to cross hll-sparse-max-bytes (3000) into the dense encoding.
    n = rng.choice([200, 1000, 3000])
    base = rng.randint(0, 10**6)
    return [cmd(rng, "PFADD"), ctx.key(rng)] + [f"b{base + i}" for i in range(n)]


def g_pfdebug(rng, ctx):
    sub = rng.choice(["ENCODING", "DECODE", "TODENSE", "GETREG", "encoding", "NOPE"])
    return [cmd(rng, "PFDEBUG"), sub, ctx.key(rng)]


def g_corrupt(rng, ctx):
    # A sparse header followed by opcodes that cover too few or too many registers, or a dense
    # one of the wrong length. Left out: a final XZERO cut to one byte. Redis reads the string's
    # terminator as its second byte and, when PFADD splits it, leaves the last new opcode byte
    # in that terminator, outside the value; vireo reads the missing byte as 0 and keeps the
    # split whole, so GET differs by that byte (both survive and agree on replies).
    header = b"HYLL\x01\x00\x00\x00" + b"\x00" * 7 + b"\x80"
    body = rng.choice([b"\x7f\xfe", b"\x7f\xff\x83", b"\x3f" * 300 + b"\x80", b""])
    if rng.random() < 0.2:
        return ["SET", ctx.key(rng), b"HYLL\x00" + b"\x00" * 11 + b"\x00" * 100]
    return ["SET", ctx.key(rng), header + body]


@register_family("hll", share=2.0, tx_safe=True)
def family_hll():
    return [
        (20, g_pfadd, "exact"),
        (2, g_pfadd_bulk, "exact"),
        (8, lambda rng, ctx: [cmd(rng, "PFCOUNT"), ctx.key(rng)], "exact"),
        (5, lambda rng, ctx: [cmd(rng, "PFCOUNT")] + keys(rng, ctx, 2), "exact"),
        (5, lambda rng, ctx: [cmd(rng, "PFMERGE"), ctx.key(rng)] + keys(rng, ctx, 0), "exact"),
        (3, g_pfdebug, "exact"),
        (1, g_corrupt, "exact"),
        (1, lambda rng, ctx: ["SET", ctx.key(rng), gen_value(rng)], "exact"),
        (1, lambda rng, ctx: ["SADD", ctx.key(rng), "x"], "exact"),
        (2, lambda rng, ctx: ["DEL", ctx.key(rng)], "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, HLL_COMMANDS), "exact"),
    ]

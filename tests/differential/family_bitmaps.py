"""Differential family: bitmap commands (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD,
BITFIELD_RO) over strings of every shape: int-encoded, embstr, raw, empty, and other types.

BITOP's Redis 8.2 operations (DIFF, DIFF1, ANDOR, ONE) are left out: the reference Redis 7.0
answers them with a syntax error. Offsets stay small (strings of at most a few hundred bytes)
except for the out-of-range ones, which both servers refuse before allocating anything.
"""

from differential import (ARITY, INT_EDGES, cmd, gen_index, gen_int_arg, gen_value, register_family,
                          wrong_arity)

BITMAP_COMMANDS = ["setbit", "getbit", "bitcount", "bitpos", "bitop", "bitfield", "bitfield_ro"]
ARITY.update({"setbit": 4, "getbit": 3, "bitcount": -2, "bitpos": -3, "bitop": -4,
              "bitfield": -2, "bitfield_ro": -2})

BAD_OFFSETS = ["-1", "abc", "1.5", "", "01", "4294967296", "4294967297",
               "9223372036854775807", "-9223372036854775808", "#1"]
TYPES_OK = ["u1", "u7", "u8", "u15", "u16", "u32", "u63", "i1", "i8", "i9", "i16", "i32",
            "i63", "i64"]
TYPES_BAD = ["u64", "i65", "u0", "i0", "I8", "U8", "x8", "u", "i", "", "u08", "i-8", "u+8"]


def bit_offset(rng):
    r = rng.random()
    if r < 0.9:
        return str(rng.randint(0, 200) if rng.random() < 0.8 else rng.randint(0, 2000))
    return rng.choice(BAD_OFFSETS)


def g_setbit(rng, ctx):
    r = rng.random()
    bit = rng.choice(["0", "1"]) if r < 0.92 else rng.choice(["2", "-1", "abc", "", "01", "1.0"])
    return [cmd(rng, "SETBIT"), ctx.key(rng), bit_offset(rng), bit]


def g_getbit(rng, ctx):
    return [cmd(rng, "GETBIT"), ctx.key(rng), bit_offset(rng)]


def unit(rng):
    return cmd(rng, rng.choice(["BIT", "BYTE"])) if rng.random() < 0.95 else "BITS"


def g_bitcount(rng, ctx):
    argv = [cmd(rng, "BITCOUNT"), ctx.key(rng)]
    r = rng.random()
    if r < 0.3:
        return argv
    if r < 0.33:
        return argv + [gen_index(rng)]  # start without end: syntax error
    argv += [gen_index(rng), gen_index(rng)]
    if rng.random() < 0.5:
        argv.append(unit(rng))
    if rng.random() < 0.03:
        argv.append("extra")
    return argv


def g_bitpos(rng, ctx):
    bit = rng.choice(["0", "1"]) if rng.random() < 0.93 else rng.choice(["2", "-1", "x", ""])
    argv = [cmd(rng, "BITPOS"), ctx.key(rng), bit]
    n = rng.choice([0, 0, 1, 2, 3, 3])
    if n >= 1:
        argv.append(gen_index(rng))
    if n >= 2:
        argv.append(gen_index(rng))
    if n >= 3:
        argv.append(unit(rng))
    if rng.random() < 0.03:
        argv.append("extra")
    return argv


def g_bitop(rng, ctx):
    op = rng.choice(["AND", "OR", "XOR", "NOT", "NOT", "and", "Or"]) if rng.random() < 0.97 \
        else rng.choice(["NAND", "AN", ""])
    n = 1 if op.upper() == "NOT" and rng.random() < 0.9 else rng.randint(1, 4)
    return [cmd(rng, "BITOP"), op, ctx.key(rng)] + [ctx.key(rng) for _ in range(n)]


def field_type(rng):
    return rng.choice(TYPES_OK) if rng.random() < 0.94 else rng.choice(TYPES_BAD)


def field_offset(rng):
    r = rng.random()
    if r < 0.6:
        return str(rng.randint(0, 100))
    if r < 0.9:
        return f"#{rng.randint(0, 12)}"
    return rng.choice(BAD_OFFSETS + ["#-1", "#", "#abc", "#9223372036854775807"])


def field_value(rng):
    r = rng.random()
    if r < 0.6:
        return str(rng.randint(-300, 300))
    if r < 0.9:
        return rng.choice(INT_EDGES + ["127", "128", "-128", "-129", "255", "256", "65535"])
    return gen_int_arg(rng)


def field_ops(rng, read_only):
    words = []
    for _ in range(rng.randint(0 if rng.random() < 0.05 else 1, 5)):
        r = rng.random()
        if r < 0.35 or (read_only and r < 0.95):
            words += [cmd(rng, "GET"), field_type(rng), field_offset(rng)]
        elif r < 0.6:
            words += [cmd(rng, "SET"), field_type(rng), field_offset(rng), field_value(rng)]
        elif r < 0.85:
            words += [cmd(rng, "INCRBY"), field_type(rng), field_offset(rng), field_value(rng)]
        elif r < 0.97:
            mode = rng.choice(["WRAP", "SAT", "FAIL"]) if rng.random() < 0.95 else "SATURATE"
            words += [cmd(rng, "OVERFLOW"), cmd(rng, mode)]
        else:
            words += [rng.choice(["GET", "SET", "INCRBY", "OVERFLOW", "BOGUS"])]  # short or unknown
    return words


def g_bitfield(rng, ctx):
    return [cmd(rng, "BITFIELD"), ctx.key(rng)] + field_ops(rng, False)


def g_bitfield_ro(rng, ctx):
    return [cmd(rng, "BITFIELD_RO"), ctx.key(rng)] + field_ops(rng, rng.random() < 0.9)


def g_fill(rng, ctx):
    r = rng.random()
    key = ctx.key(rng)
    if r < 0.6:
        return ["SET", key, gen_value(rng)]
    if r < 0.8:
        return ["DEL", key]
    if r < 0.9:
        # A long value so word-at-a-time paths run.
        return ["SET", key, bytes(rng.randrange(256) for _ in range(rng.randint(30, 300)))]
    return ["HSET", key, "f", "v"]  # another type: WRONGTYPE paths


def g_encoding(rng, ctx):
    # A string's encoding (what SETBIT makes of it); other types' encodings differ between
    # Redis 7.0 and 7.2 (listpack sets) and are compared by their own families.
    key = ctx.key(rng)
    if ctx.probe(["TYPE", key]).value != b"string":
        return ["STRLEN", key]
    return ["OBJECT", "ENCODING", key]


@register_family("bitmaps", share=2.0, tx_safe=True)
def family_bitmaps():
    k1 = lambda name: (lambda rng, ctx: [cmd(rng, name), ctx.key(rng)])  # noqa: E731
    return [
        (8, g_fill, "exact"),
        (10, g_setbit, "exact"),
        (6, g_getbit, "exact"),
        (6, g_bitcount, "exact"),
        (6, g_bitpos, "exact"),
        (5, g_bitop, "exact"),
        (8, g_bitfield, "exact"),
        (3, g_bitfield_ro, "exact"),
        (3, k1("GET"), "exact"),
        (1, g_encoding, "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, BITMAP_COMMANDS), "exact"),
    ]

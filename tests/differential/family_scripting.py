"""Differential family: EVAL / EVALSHA / EVAL_RO / SCRIPT with scripts drawn from templates
that run string and list commands through redis.call / redis.pcall, convert replies both ways
(numbers, nil, nested tables, status and error tables), raise errors of every shape, and use
the cjson, cmsgpack, struct and bit libraries and math.random. Replies compare exactly (error
texts include the script's SHA1 and line, so they must match byte for byte)."""

from differential import ARITY, cmd, register_family, wrong_arity

ARITY.update({"eval": -3, "evalsha": -3, "eval_ro": -3, "evalsha_ro": -3})

KEYS = ["sk1", "sk2", "sl1", "sn1"]
VALUES = ["1", "2", "-3", "abc", "", "10.5", "9223372036854775807", "x y"]

TEMPLATES = [
    "return redis.call('set', KEYS[1], ARGV[1])",
    "return redis.call('get', KEYS[1])",
    "return redis.pcall('incr', KEYS[1])",
    "return redis.call('incrby', KEYS[1], ARGV[1])",
    "return redis.call('rpush', KEYS[1], ARGV[1], ARGV[1])",
    "return redis.call('lrange', KEYS[1], 0, -1)",
    "return redis.pcall('lpop', KEYS[1])",
    "return {redis.call('exists', KEYS[1]), redis.call('type', KEYS[1])}",
    "return redis.call('type', KEYS[1]).ok",
    "local v = redis.call('get', KEYS[1]) if v == false then return 'nil' end return v",
    "return tonumber(ARGV[1])",
    "return {1, 2.7, -2.7, 'x', nil, 'y'}",
    "return {ok = ARGV[1]}",
    "return {err = 'ERR custom ' .. ARGV[1]}",
    "return redis.error_reply(ARGV[1])",
    "return redis.status_reply(ARGV[1])",
    "error(ARGV[1])",
    "error({err = 'WHOOPS ' .. ARGV[1]})",
    "return nosuchvar",
    "undeclared = 1",
    "return redis.call('nosuchcommand')",
    "return redis.call('get')",
    "return redis.call('get', {})",
    "return redis.call('incr', KEYS[1])",
    "local ok, e = pcall(redis.call, 'incr', KEYS[1]) return {tostring(ok), e}",
    "return cjson.encode({a = ARGV[1]})",
    "return cjson.encode(cjson.decode('[1,2,{\"x\":true}]'))",
    "return cmsgpack.pack({1, 2, {3, ARGV[1]}}, ARGV[1])",
    "local t = cmsgpack.unpack(cmsgpack.pack({ARGV[1], {k = 'v'}})) return {t[1], t[2].k}",
    "return struct.pack('>i2I4s', -2, 70000, ARGV[1])",
    "return {struct.unpack('<hb', struct.pack('<hb', -300, 7))}",
    "return bit.bxor(tonumber(ARGV[1]) or 0, 255)",
    "return {math.random(100), math.random(3, 9), math.floor(math.random() * 1000)}",
    "return redis.sha1hex(ARGV[1])",
    "return #KEYS .. ':' .. #ARGV",
    "return string.format('%5.2f|%s', 3.14159, ARGV[1])",
    "return table.concat({ARGV[1], ARGV[1]}, ',')",
    "redis.call('set', KEYS[1], 'a') return redis.call('incr', KEYS[1])",
    "return redis.call('multi')",
    "return 1 +",
    "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'v')",
    "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])",
    "#!lua flags=bogus\nreturn 1",
    "return redis.setresp(3)",
]


def g_eval(rng, ctx):
    body = rng.choice(TEMPLATES)
    key = rng.choice(KEYS)
    argv = [cmd(rng, rng.choice(["EVAL", "EVAL", "EVAL", "EVAL_RO"])), body]
    nkeys = rng.choice([1, 1, 1, 0])
    argv.append(str(nkeys))
    if nkeys:
        argv.append(key)
    argv += [rng.choice(VALUES) for _ in range(rng.choice([1, 1, 2]))]
    if rng.random() < 0.03:
        argv[2] = rng.choice(["-1", "5", "x"])
    return argv


def g_evalsha(rng, ctx):
    import hashlib
    body = rng.choice(TEMPLATES)
    sha = hashlib.sha1(body.encode()).hexdigest()
    if rng.random() < 0.5:
        return ["SCRIPT", "LOAD", body]
    if rng.random() < 0.2:
        return ["SCRIPT", "EXISTS", sha, "0" * 40]
    return [cmd(rng, "EVALSHA"), sha if rng.random() < 0.9 else sha.upper(), "1",
            rng.choice(KEYS), rng.choice(VALUES)]


def g_fill(rng, ctx):
    key = rng.choice(KEYS)
    if key == "sl1":
        return ["RPUSH", key, rng.choice(VALUES)]
    return ["SET", key, rng.choice(VALUES)]


@register_family("scripting", share=1.0)
def family_scripting():
    return [
        (3, g_fill, "exact"),
        (12, g_eval, "exact"),
        (3, g_evalsha, "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, ["eval", "evalsha"]), "exact"),
    ]

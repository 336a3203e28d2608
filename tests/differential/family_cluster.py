"""Differential family: cluster mode on a lone node (issue 17).

Runs against a second pair of servers started with cluster-enabled yes, each a one-node cluster
serving all 16384 slots (the runner's claim_all_slots). The runner sends OWN_NODE_ID as each
server's own node id and rewrites vireo's node id and ports in its replies to redis', so CLUSTER
NODES / SLOTS / SHARDS and -ASK replies compare byte for byte.

Generated: CLUSTER KEYSLOT (hash tags, empty and nested braces, binary), COUNTKEYSINSLOT and
GETKEYSINSLOT over keys the sequence writes, CLUSTER INFO (its message counters left out), MYID,
NODES, SLOTS, SHARDS, LINKS; slot ownership changes (ADDSLOTS, DELSLOTS and the RANGE forms,
SETSLOT MIGRATING/IMPORTING/NODE/STABLE with this node, unknown nodes and bad slots), with the
commands served or refused (-CLUSTERDOWN, -ASK to itself, -TRYAGAIN) while a slot is unassigned
or migrating; -CROSSSLOT on multi-key commands, scripts and MULTI/EXEC; shard channels (SSUBSCRIBE across
slots, SPUBLISH, PUBSUB SHARDCHANNELS / SHARDNUMSUB); FLUSHALL; READONLY, READWRITE,
ASKING; the refusals of SELECT, MOVE, SWAPDB, COPY ... DB and SORT BY/GET patterns; epochs
(BUMPEPOCH, SET-CONFIG-EPOCH); the other subcommands' errors and wrong arities.

Known differences with the Redis 7.0 reference, where vireo follows 7.2 (normalised or not
generated): CLUSTER MEET's bad port errors ("Invalid TCP base port" / "TCP bus port" in 7.0,
"Invalid base port" / "bus port" in 7.2); COPY ... DB 1 (7.0 refuses it as a cluster, 7.2 as
out of range: a 7.2 cluster node has one database, so CONFIG GET databases says 1 there); CLUSTER MYSHARDID and the shard id in CLUSTER SHARDS / NODES are 7.2 only; CLUSTER
HELP's text lists 7.2's subcommands.
"""

import re

from differential import COMPARATORS, OWN_NODE_ID, Seq, cmd, cmp_exact, register_family

# Keys in a handful of slots: three share the tag {t}, two {u}; the plain ones spread out.
KEYS = ["{t}a", "{t}b", "{t}c", "{u}a", "{u}b", "a", "b", "c", "{}a", "x{t}", "k{a}{b}"]
UNKNOWN_NODE = "0123456789abcdef0123456789abcdef01234567"


def crc16(data: bytes) -> int:
    # CRC-16/XMODEM (polynomial 0x1021), the checksum Redis Cluster maps keys with.
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key) -> int:
    key = key.encode() if isinstance(key, str) else key
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1:end]
    return crc16(key) % 16384


def key(rng):
    return rng.choice(KEYS)


def same_slot_keys(rng, n):
    tag = rng.choice(["{t}", "{u}"])
    return [tag + rng.choice("abcd") for _ in range(n)]


def multi_keys(rng, n):
    # Half the time keys of one slot (served), else any keys (usually -CROSSSLOT).
    return same_slot_keys(rng, n) if rng.random() < 0.5 else [key(rng) for _ in range(n)]


def slot_arg(rng):
    r = rng.random()
    if r < 0.5:
        return str(key_slot(key(rng)))
    if r < 0.75:
        return str(rng.choice([0, 1, 100, 5000, 16383]))
    return rng.choice(["-1", "16384", "x", "", "1.5", "99999999999999999999", " 1", "+1"])


# --------------------------------------------------------------------------
# Keys and slots


def keyslot_arg(rng):
    r = rng.random()
    if r < 0.3:
        return key(rng)
    if r < 0.8:
        parts = ["{", "}", "{}", "a", "b", "tag", "{{", "}}", "\x00", "\xff", "é"]
        return "".join(rng.choice(parts) for _ in range(rng.randint(0, 6))).encode("latin-1", "replace")
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 12)))


def g_keyslot(rng, ctx):
    argv = [cmd(rng, "CLUSTER"), cmd(rng, "KEYSLOT"), keyslot_arg(rng)]
    if rng.random() < 0.05:
        argv = argv[:2] if rng.random() < 0.5 else argv + ["extra"]
    return argv


def g_write(rng, ctx):
    k = key(rng)
    return rng.choice([
        ["SET", k, rng.choice(["v", "1", ""])],
        ["LPUSH", k, "e"],
        ["SADD", k, rng.choice(["m", "n"])],
        ["HSET", k, "f", "v"],
        ["DEL", k],
        ["GET", k],
        ["EXISTS", k],
    ])


def g_countkeys(rng, ctx):
    argv = [cmd(rng, "CLUSTER"), cmd(rng, "COUNTKEYSINSLOT"), slot_arg(rng)]
    if rng.random() < 0.05:
        argv.append("1")
    return argv


def g_getkeys(rng, ctx):
    slot = slot_arg(rng)
    count = rng.choice(["0", "1", "2", "10", "-1", "x", "9223372036854775807", "9223372036854775808"])
    argv = [cmd(rng, "CLUSTER"), cmd(rng, "GETKEYSINSLOT"), slot, count]
    if rng.random() < 0.05:
        argv.pop()
    # The order of a slot's keys is the server's own: when the count cuts the list short only
    # its length is compared, else the set of keys.
    mode = "sorted"
    if slot.isdigit() and count.isdigit():
        n = ctx.probe(["CLUSTER", "COUNTKEYSINSLOT", slot])
        if n.kind == ":" and n.value > int(count):
            mode = "shape"
    return Seq([(argv, mode)])


# --------------------------------------------------------------------------
# Introspection


def g_introspect(rng, ctx):
    sub = rng.choice(["INFO", "MYID", "NODES", "SLOTS", "SHARDS", "LINKS"])
    mode = "cluster_info" if sub == "INFO" else "exact"
    return Seq([([cmd(rng, "CLUSTER"), cmd(rng, sub)], mode)])


def g_info_section(rng, ctx):
    return ["INFO", rng.choice(["cluster", "CLUSTER"])]


# CLUSTER INFO's message counters depend on bus traffic; everything else is deterministic on a
# lone node (state, slot counts, known nodes, size, epochs).
CLUSTER_STATS = re.compile(rb"^cluster_stats_.*\r\n", re.M)


def cmp_cluster_info(a, b):
    if a.kind == b.kind == "$" and a.value is not None and b.value is not None:
        return CLUSTER_STATS.sub(b"", a.value) == CLUSTER_STATS.sub(b"", b.value)
    return cmp_exact(a, b)


# 7.0 texts and the 7.2 ones vireo follows: CLUSTER MEET's "Invalid TCP base port specified"
# ("TCP bus port") became "Invalid base port"; COPY ... DB n in cluster mode, refused in 7.0 by a
# cluster check, fails in 7.2 because a cluster node has a single database.
TEXTS_7_0 = [(b"Invalid TCP ", b"Invalid "),
             (b"Copying to another database is not allowed in cluster mode", b"DB index is out of range")]


def cmp_cluster(a, b):
    if cmp_exact(a, b):
        return True
    if a.kind != "-" or b.kind != "-":
        return False
    text = b.value
    for old, new in TEXTS_7_0:
        text = text.replace(old, new)
    return a.value == text


COMPARATORS["cluster_info"] = cmp_cluster_info
COMPARATORS["cluster"] = cmp_cluster


# --------------------------------------------------------------------------
# Slot ownership


def unassigned_slots(ctx):
    """The slots the reference serves no more (CLUSTER SLOTS of redis)."""
    rep = ctx.probe(["CLUSTER", "SLOTS"])
    owned = set()
    for rng_ in rep.value or []:
        owned.update(range(rng_.value[0].value, rng_.value[1].value + 1))
    return sorted(set(range(16384)) - owned)


def ranges(slots):
    out = []
    for s in slots:
        if out and out[-1][1] == s - 1:
            out[-1][1] = s
        else:
            out.append([s, s])
    return out


def g_slots(rng, ctx):
    """Gives slots up or takes them back; unserved slots are mostly restored soon after."""
    missing = unassigned_slots(ctx)
    if missing and rng.random() < 0.85:
        # Take back what is missing (sometimes with an error-making extra or as one range).
        if rng.random() < 0.5:
            argv = [cmd(rng, "CLUSTER"), cmd(rng, "ADDSLOTS")] + [str(s) for s in missing]
        else:
            argv = [cmd(rng, "CLUSTER"), cmd(rng, "ADDSLOTSRANGE")]
            for lo, hi in ranges(missing):
                argv += [str(lo), str(hi)]
        if rng.random() < 0.1:
            argv.append(rng.choice([argv[-1], "16384", "x", str(key_slot(key(rng)))]))
        return argv
    r = rng.random()
    # Never all slots: a master left without any is held in the fail state for seconds after
    # it gets them back (Redis' rejoin delay).
    if r < 0.35:
        return [cmd(rng, "CLUSTER"), cmd(rng, "DELSLOTS")] + [slot_arg(rng) for _ in range(rng.randint(1, 3))]
    if r < 0.6:
        argv = [cmd(rng, "CLUSTER"), cmd(rng, "DELSLOTSRANGE")]
        for _ in range(rng.randint(1, 2)):
            if rng.random() < 0.9:
                lo = key_slot(key(rng)) if rng.random() < 0.7 else rng.randrange(16384)
                argv += [str(lo), str(lo + rng.choice([0, 1, 5, -1]))]
            else:
                argv += [slot_arg(rng), slot_arg(rng)]
        if rng.random() < 0.05:
            argv.pop()
        return argv
    if r < 0.8:
        return [cmd(rng, "CLUSTER"), cmd(rng, "ADDSLOTS")] + [slot_arg(rng) for _ in range(rng.randint(1, 3))]
    if r < 0.9:
        lo = key_slot(key(rng))
        return [cmd(rng, "CLUSTER"), cmd(rng, "ADDSLOTSRANGE"), str(lo), str(lo + rng.choice([0, 2, -1]))]
    return [cmd(rng, "CLUSTER"), cmd(rng, rng.choice(["ADDSLOTS", "DELSLOTS", "ADDSLOTSRANGE", "DELSLOTSRANGE"]))]


def g_setslot(rng, ctx):
    slot = slot_arg(rng) if rng.random() < 0.3 else str(key_slot(key(rng)))
    action = rng.choice(["MIGRATING", "IMPORTING", "NODE", "STABLE", "STABLE", "bogus"])
    argv = [cmd(rng, "CLUSTER"), cmd(rng, "SETSLOT"), slot, cmd(rng, action)]
    if action in ("MIGRATING", "IMPORTING", "NODE"):
        if rng.random() < 0.95:
            argv.append(rng.choice([OWN_NODE_ID] * 4 + [UNKNOWN_NODE, "abc", ""]))
    elif rng.random() < 0.05:
        argv.append(OWN_NODE_ID)
    if rng.random() < 0.03:
        argv.append("extra")
    return argv


def g_migrating_session(rng, ctx):
    """A slot marked MIGRATING to this very node: what key commands get, then STABLE again."""
    k = key(rng)
    slot = str(key_slot(k))
    steps = [([cmd(rng, "CLUSTER"), cmd(rng, "SETSLOT"), slot, "MIGRATING", OWN_NODE_ID], "exact")]
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        if r < 0.3:
            steps.append((["GET", k], "exact"))
        elif r < 0.5:
            steps.append((["SET", k, "v"], "exact"))
        elif r < 0.65:
            steps.append((["MGET"] + same_slot_keys(rng, 2), "exact"))
        elif r < 0.75:
            steps.append(([cmd(rng, "ASKING")], "exact"))
        elif r < 0.85:
            steps.append(([cmd(rng, "CLUSTER"), "NODES"], "exact"))
        else:
            steps.append(([cmd(rng, "CLUSTER"), "COUNTKEYSINSLOT", slot], "exact"))
    steps.append(([cmd(rng, "CLUSTER"), cmd(rng, "SETSLOT"), slot, "STABLE"], "exact"))
    return Seq(steps)


# --------------------------------------------------------------------------
# Multi-key commands, scripts, transactions


def g_multikey(rng, ctx):
    r = rng.random()
    if r < 0.15:
        argv = ["MSET"]
        for k in multi_keys(rng, rng.randint(2, 3)):
            argv += [k, "v"]
        return argv
    ks = multi_keys(rng, rng.randint(2, 3))
    if r < 0.3:
        return ["MGET"] + ks
    if r < 0.4:
        return ["DEL"] + ks
    if r < 0.5:
        return ["SUNION"] + ks
    if r < 0.6:
        return [rng.choice(["RENAME", "RENAMENX"])] + ks[:2]
    if r < 0.7:
        return ["LMOVE"] + ks[:2] + ["LEFT", "RIGHT"]
    if r < 0.8:
        return [rng.choice(["EXISTS", "TOUCH", "UNLINK", "SINTERSTORE", "PFCOUNT"])] + ks
    if r < 0.9:
        return ["COPY"] + ks[:2] + (["REPLACE"] if rng.random() < 0.5 else [])
    return [rng.choice(["BLPOP", "BRPOP"])] + ks + ["0.01"]


SCRIPTS = [
    "return redis.call('get', KEYS[1])",
    "return redis.call('mget', KEYS[1], KEYS[2])",
    "return redis.call('get', '{t}a')",
    "return redis.call('mget', 'a', 'b')",
    "return redis.pcall('mget', 'a', 'b')",
    "return redis.call('set', '{u}a', 'v')",
    "#!lua\nreturn redis.call('get', '{t}a')",
    "#!lua\nredis.call('get', KEYS[1]); return redis.call('get', '{u}b')",
    "#!lua flags=allow-cross-slot-keys\nreturn redis.call('mget', '{t}a', '{u}a')",
    "#!lua flags=no-cluster\nreturn 1",
]


def g_eval(rng, ctx):
    n = rng.randint(0, 2)
    return [cmd(rng, "EVAL"), rng.choice(SCRIPTS), str(n)] + multi_keys(rng, n)


def g_multi(rng, ctx):
    steps = [(["MULTI"], "exact")]
    same = rng.random() < 0.5
    tag = rng.choice(["{t}", "{u}"])
    for _ in range(rng.randint(1, 3)):
        k = tag + rng.choice("abc") if same else key(rng)
        steps.append(((["SET", k, "v"] if rng.random() < 0.5 else ["GET", k]), "exact"))
    if rng.random() < 0.2:
        steps.append((["MGET", "a", "b"], "exact"))  # cross-slot on its own: EXECABORT
    steps.append((["EXEC"] if rng.random() < 0.9 else ["DISCARD"], "exact"))
    return Seq(steps)


# --------------------------------------------------------------------------
# Sharded pub/sub: shard channels are routed like keys


def g_shard_pubsub(rng, ctx):
    r = rng.random()
    if r < 0.3:
        return Seq([([cmd(rng, "SPUBLISH"), key(rng), "m"], "exact")])
    if r < 0.45:
        return Seq([(["PUBSUB", "SHARDNUMSUB"] + [key(rng) for _ in range(rng.randint(0, 2))], "exact")])
    # Two channels of different slots: one -CROSSSLOT reply, no subscription.
    if r < 0.55:
        a, b = rng.sample(["{t}a", "{u}a", "a", "b", "c"], 2)
        return Seq([([cmd(rng, "SSUBSCRIBE"), a, b], "exact")])
    # Subscribe channel by channel (one reply each), a command or two in subscribed mode, then
    # leave the same way.
    channels = list(dict.fromkeys(same_slot_keys(rng, rng.randint(1, 2))))
    steps = [([cmd(rng, "SSUBSCRIBE"), ch], "exact") for ch in channels]
    if rng.random() < 0.5:
        steps.append((["PUBSUB", "SHARDCHANNELS"], "sorted"))
    if rng.random() < 0.3:
        steps.append((["SPUBLISH", channels[0], "m"], "exact"))
    for ch in channels:
        steps.append(([cmd(rng, "SUNSUBSCRIBE"), ch], "exact"))
    return Seq(steps)


# --------------------------------------------------------------------------
# Connection and db refusals, epochs, other subcommands


def g_refusals(rng, ctx):
    # Compared with "cluster": COPY ... DB 1 has a 7.0 text (see TEXTS_7_0).
    k = rng.choice(["{t}a", "a"])
    return rng.choice([
        [cmd(rng, "SELECT"), rng.choice(["0", "1", "15", "16", "x", "-1"])],
        [cmd(rng, "MOVE"), k, rng.choice(["0", "1", "x"])],
        [cmd(rng, "SWAPDB"), rng.choice(["0", "1"]), rng.choice(["0", "1", "x"])],
        [cmd(rng, "COPY"), "{t}a", "{t}b", "DB", rng.choice(["0", "1", "x"])] + (
            ["REPLACE"] if rng.random() < 0.3 else []),
        [cmd(rng, "SORT"), k, "BY", rng.choice(["w_*", "nosort", "{t}*"])],
        [cmd(rng, "SORT"), k, "GET", rng.choice(["#", "h_*->f", "x"])],
        [cmd(rng, "SORT_RO"), k, "BY", "w_*"],
        [cmd(rng, rng.choice(["READONLY", "READWRITE", "ASKING"]))],
        [cmd(rng, rng.choice(["READONLY", "READWRITE", "ASKING"])), "x"],
    ])


def g_nodes_cmds(rng, ctx):
    node = rng.choice([OWN_NODE_ID] * 3 + [UNKNOWN_NODE, "abc", ""])
    sub = rng.choice(["COUNT-FAILURE-REPORTS", "REPLICAS", "SLAVES", "FORGET", "REPLICATE"])
    argv = [cmd(rng, "CLUSTER"), cmd(rng, sub), node]
    if rng.random() < 0.05:
        argv = argv[:2] if rng.random() < 0.5 else argv + ["x"]
    return argv


def g_epochs(rng, ctx):
    if rng.random() < 0.6:
        return [cmd(rng, "CLUSTER"), cmd(rng, "BUMPEPOCH")]
    return [cmd(rng, "CLUSTER"), cmd(rng, "SET-CONFIG-EPOCH"),
            rng.choice(["0", "1", "7", "-1", "x", "9223372036854775807", "18446744073709551616"])]


def g_misc_errors(rng, ctx):
    r = rng.random()
    if r < 0.2:
        return [cmd(rng, "CLUSTER"), cmd(rng, "FAILOVER")] + rng.choice(
            [[], ["FORCE"], ["TAKEOVER"], ["bogus"], ["FORCE", "TAKEOVER"]])
    if r < 0.35:
        # Only invalid addresses: a valid one would start a handshake with a stranger.
        return [cmd(rng, "CLUSTER"), cmd(rng, "MEET"), rng.choice(["127.0.0.1", "nohost", ""]),
                rng.choice(["x", "70000", "-1"])] + rng.choice([[], ["y"], ["70000"]])
    if r < 0.45:
        # RESET of a master holding keys is refused; otherwise it would drop the slots, so only
        # the refused or malformed forms are sent.
        keys = ctx.probe(["DBSIZE"]).value
        argv = [cmd(rng, "CLUSTER"), cmd(rng, "RESET")]
        if keys:
            argv += rng.choice([[], ["HARD"], ["soft"]])
        return argv + ["bogus"] if not keys or rng.random() < 0.3 else argv
    if r < 0.55:
        if ctx.probe(["DBSIZE"]).value:
            return [cmd(rng, "CLUSTER"), cmd(rng, "FLUSHSLOTS")]
        return [cmd(rng, "CLUSTER"), cmd(rng, "FLUSHSLOTS"), "x"]
    if r < 0.65:
        return [cmd(rng, "CLUSTER"), cmd(rng, "SAVECONFIG")] + (["x"] if rng.random() < 0.3 else [])
    if r < 0.8:
        return [cmd(rng, "CLUSTER"), rng.choice(["nosuch", "KEYSLOTS", "", "SETSLOTS", "MYSHARD"])] + \
            [key(rng) for _ in range(rng.randint(0, 2))]
    arity = {"INFO": 2, "MYID": 2, "NODES": 2, "SLOTS": 2, "SHARDS": 2, "LINKS": 2, "KEYSLOT": 3,
             "COUNTKEYSINSLOT": 3, "GETKEYSINSLOT": 4, "BUMPEPOCH": 2, "SAVECONFIG": 2,
             "FLUSHSLOTS": 2, "SETSLOT": -4, "MEET": -4, "HELP": 2}
    sub = rng.choice(list(arity))
    n = arity[sub]
    argc = rng.choice([n - 1, n + 1]) if n > 0 else rng.randint(2, -n - 1)
    argv = [cmd(rng, "CLUSTER"), cmd(rng, sub)]
    while len(argv) < argc:
        argv.append(rng.choice(["1", "x"]))
    return argv if len(argv) == argc else argv[:argc]


@register_family("cluster", share=1.0, cluster=True)
def family_cluster():
    return [
        (5, g_keyslot, "exact"),
        (8, g_write, "exact"),
        (4, g_countkeys, "exact"),
        (4, g_getkeys, None),
        (3, g_introspect, None),
        (1, g_info_section, "cluster_info"),
        (5, g_slots, "exact"),
        (4, g_setslot, "exact"),
        (2, g_migrating_session, None),
        (6, g_multikey, "exact"),
        (3, g_eval, "exact"),
        (3, g_multi, None),
        (3, g_shard_pubsub, None),
        (1, lambda rng, ctx: [cmd(rng, rng.choice(["FLUSHALL", "FLUSHDB"]))], "exact"),
        (4, g_refusals, "cluster"),
        (3, g_nodes_cmds, "exact"),
        (2, g_epochs, "exact"),
        (3, g_misc_errors, "cluster"),
    ]

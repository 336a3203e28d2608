"""Differential family: pub/sub on one connection per server (RESP2).

PUBLISH/SPUBLISH with no subscribers, PUBSUB introspection (CHANNELS, NUMSUB, NUMPAT,
SHARDCHANNELS, SHARDNUMSUB, HELP and their errors), and short subscribed-mode sessions: the
connection subscribes to a channel, pattern or shard channel, runs what RESP2 subscribed mode
allows (PING, more subscriptions) and what it refuses (GET, PUBLISH, PUBSUB...), then
unsubscribes from everything so the next op finds a normal connection again. Every reply is
compared byte for byte.
"""

from differential import ARITY, Seq, cmd, register_family, wrong_arity

ARITY.update({"publish": 3, "spublish": 3, "subscribe": -2, "psubscribe": -2, "ssubscribe": -2})

CHANNELS = ["news", "news.tech", "n", "", "ch\r\n", "a*b", "x" * 70]
PATTERNS = ["*", "news.*", "n?ws", "[ab]*", "\\*", "[", "a*a*a*a*b", ""]


def channel(rng):
    return rng.choice(CHANNELS)


def pattern(rng):
    return rng.choice(PATTERNS)


def g_publish(rng, ctx):
    return [cmd(rng, rng.choice(["publish", "spublish"])), channel(rng), rng.choice(["m", "", "x" * 100])]


def g_pubsub(rng, ctx):
    sub = rng.random()
    if sub < 0.2:
        argv = [cmd(rng, "pubsub"), cmd(rng, "channels")]
        if rng.random() < 0.6:
            argv.append(pattern(rng))
        if rng.random() < 0.1:
            argv.append(pattern(rng))  # one too many: a subcommand syntax error
        return argv
    if sub < 0.4:
        argv = [cmd(rng, "pubsub"), cmd(rng, "shardchannels")]
        if rng.random() < 0.6:
            argv.append(pattern(rng))
        if rng.random() < 0.1:
            argv.append(pattern(rng))
        return argv
    if sub < 0.6:
        return [cmd(rng, "pubsub"), cmd(rng, rng.choice(["numsub", "shardnumsub"]))] + [
            channel(rng) for _ in range(rng.randint(0, 3))]
    if sub < 0.75:
        return [cmd(rng, "pubsub"), cmd(rng, "numpat")] + (["x"] if rng.random() < 0.2 else [])
    if sub < 0.85:
        return [cmd(rng, "pubsub"), cmd(rng, "help")] + (["x"] if rng.random() < 0.2 else [])
    if sub < 0.95:
        return [cmd(rng, "pubsub"), rng.choice(["nosuch", "CHANNEL", "", "numsubs"])]
    return [cmd(rng, "pubsub")]


def g_session(rng, ctx):
    """SUBSCRIBE/PSUBSCRIBE/SSUBSCRIBE, a few commands in subscribed mode, then leave it."""
    steps = []
    kinds = rng.sample(["subscribe", "psubscribe", "ssubscribe"], rng.randint(1, 3))
    names = {}
    for kind in kinds:
        name = pattern(rng) if kind == "psubscribe" else channel(rng)
        names[kind] = name
        steps.append(([cmd(rng, kind), name], "exact"))
        if rng.random() < 0.3:  # a duplicate subscription still gets a confirmation
            steps.append(([cmd(rng, kind), name], "exact"))
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        if r < 0.3:
            steps.append(([cmd(rng, "ping")] + (["hi"] if rng.random() < 0.5 else []), "exact"))
        elif r < 0.5:
            steps.append(([cmd(rng, "get"), ctx.key(rng)], "exact"))
        elif r < 0.65:
            steps.append(([cmd(rng, "publish"), channel(rng), "m"], "exact"))
        elif r < 0.8:
            steps.append(([cmd(rng, "pubsub"), cmd(rng, "numpat")], "exact"))
        else:
            # Unsubscribing from something never subscribed: a confirmation with the count.
            steps.append(([cmd(rng, "unsubscribe"), "never-subscribed"], "exact"))
    # Leave subscribed mode: one explicit name per kind, so each gives exactly one reply.
    for kind in kinds:
        steps.append(([cmd(rng, "unsubscribe" if kind == "subscribe" else kind[0] + "un" + kind[1:]),
                       names[kind]], "exact"))
    steps.append(([cmd(rng, "ping")], "exact"))
    return Seq(steps)


def g_unsubscribe_idle(rng, ctx):
    # Not subscribed: the all-channels form answers with a null name and a zero count.
    return [cmd(rng, rng.choice(["unsubscribe", "punsubscribe", "sunsubscribe"]))]


@register_family("pubsub", share=0.5)
def family_pubsub():
    return [
        (6, g_publish, "exact"),
        (8, g_pubsub, "exact"),
        (4, g_session, "exact"),
        (2, g_unsubscribe_idle, "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, ["publish", "spublish", "subscribe",
                                                    "psubscribe", "ssubscribe"]), "exact"),
    ]

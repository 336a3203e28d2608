"""Differential family: the replication commands a lone master answers the same way as Redis —
WAIT (0 replicas: the count, after at most a millisecond), ROLE, REPLCONF's configuration
options and errors, FAILOVER's refusals, CLIENT PAUSE / UNPAUSE with tiny timeouts, REPLICAOF
NO ONE and its port errors. Nothing here makes the server a replica, and REPLCONF ACK/GETACK
(never answered) are left out so replies stay one per command. WAITAOF is Redis 7.2's (7.0
has no such command)."""

from differential import ARITY, cmd, register_family, wrong_arity

ARITY.update({"wait": 3, "role": 1, "replconf": -1, "failover": -1, "replicaof": 3})


def g_wait(rng, ctx):
    numreplicas = rng.choice(["0", "1", "2", "-1", "x", "9223372036854775807"])
    timeout = rng.choice(["0", "1", "-1", "abc"]) if numreplicas != "0" else rng.choice(["0", "1"])
    if numreplicas not in ("0", "-1", "x") and timeout == "0":
        timeout = "1"  # never block for ever
    return [cmd(rng, "wait"), numreplicas, timeout]


def g_replconf(rng, ctx):
    option = rng.choice(["listening-port", "ip-address", "capa", "rdb-only", "foo"])
    value = {
        "listening-port": rng.choice(["6380", "x", "-1"]),
        "ip-address": rng.choice(["10.0.0.1", "x" * 60]),
        "capa": rng.choice(["eof", "psync2", "other"]),
        "rdb-only": rng.choice(["0", "1", "2", "x"]),
        "foo": "bar",
    }[option]
    argv = [cmd(rng, "replconf"), option, value]
    if rng.random() < 0.1:
        argv.pop()  # an odd argument count: syntax error
    return argv


def g_failover(rng, ctx):
    return rng.choice([
        [cmd(rng, "failover")],
        [cmd(rng, "failover"), "ABORT"],
        [cmd(rng, "failover"), "TIMEOUT", rng.choice(["0", "-5", "x", "100"])],
        [cmd(rng, "failover"), "TO", "127.0.0.1", rng.choice(["1", "x"])],
        [cmd(rng, "failover"), "FORCE"],
        [cmd(rng, "failover"), "BOGUS"],
    ])


def g_pause(rng, ctx):
    if rng.random() < 0.3:
        return ["CLIENT", "UNPAUSE"]
    argv = ["CLIENT", "PAUSE", rng.choice(["0", "1", "-1", "x"])]
    if rng.random() < 0.6:
        argv.append(rng.choice(["WRITE", "ALL", "read"]))
    return argv


def g_replicaof(rng, ctx):
    return rng.choice([
        [cmd(rng, "replicaof"), "NO", "ONE"],
        [cmd(rng, "slaveof"), "no", "one"],
        [cmd(rng, "replicaof"), "127.0.0.1", rng.choice(["x", "-1", "70000"])],
    ])


@register_family("replication", share=0.5)
def family_replication():
    return [
        (4, g_wait, "exact"),
        (2, lambda rng, ctx: [cmd(rng, "role")], "exact"),
        (3, g_replconf, "exact"),
        (3, g_failover, "exact"),
        (2, g_pause, "exact"),
        (2, g_replicaof, "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, ["wait", "role", "replicaof"]), "exact"),
    ]

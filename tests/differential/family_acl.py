"""Differential family: ACL users and their rules (issue 18).

ACL SETUSER with random rule lists (valid and malformed: a bad rule must reject the whole
command and change nothing), then GETUSER, LIST, USERS, DELUSER, DRYRUN and CAT read back
what each server made of them. Users are a1..a4; the default user is never touched, so the
connection stays authorised.

Redis 7.0 (the installed reference) and 7.2 differ in text vireo follows 7.2 on: 7.2 lists the
`sanitize-payload` flag in ACL LIST, its DRYRUN denials name the user ("User a1 has no
permissions...") where 7.0 says "This user has...", and 7.0 rebuilds the command-rule text
from the permission bitmap while 7.2 keeps the rules as given. The "acl" comparison removes
those three; what the command rules allow is compared through DRYRUN probes.
"""

import re

from differential import COMPARATORS, Seq, cmd, cmp_exact, register_family

USERS = ["a1", "a2", "a3", "a4"]
CATEGORIES = ["@all", "@read", "@write", "@string", "@list", "@hash", "@set", "@keyspace",
              "@dangerous", "@admin", "@pubsub", "@fast", "@slow", "@scripting", "@nosuch"]
COMMANDS = ["get", "set", "lpush", "hset", "del", "publish", "config", "client", "flushall",
            "info", "nosuchcmd"]
SUBCOMMANDS = ["config|get", "config|set", "client|list", "client|kill", "get|x", "acl|whoami"]
PATTERNS = ["*", "app:*", "k?", "[ab]*", "x", "", "{t}*"]
PASSWORDS = ["pw", "secret", "", "p w"]


def rule(rng):
    r = rng.random()
    if r < 0.08:
        return rng.choice(["on", "off"])
    if r < 0.16:
        return (">" if rng.random() < 0.8 else "<") + rng.choice(PASSWORDS)
    if r < 0.2:
        return rng.choice(["nopass", "resetpass", "reset", "clearselectors"])
    if r < 0.22:
        # A SHA-256 hash: valid (64 hex) or not.
        return rng.choice(["#", "!"]) + rng.choice(["a" * 64, "A1" * 32, "xyz", "0" * 63])
    if r < 0.42:
        return rng.choice("+-") + rng.choice(CATEGORIES)
    if r < 0.6:
        return rng.choice("+-") + rng.choice(COMMANDS + SUBCOMMANDS)
    if r < 0.66:
        return rng.choice(["allcommands", "nocommands", "allkeys", "resetkeys", "allchannels",
                           "resetchannels"])
    if r < 0.8:
        return rng.choice(["~", "%R~", "%W~", "%RW~", "%X~", "%~"]) + rng.choice(PATTERNS)
    if r < 0.88:
        return "&" + rng.choice(PATTERNS)
    if r < 0.96:
        inner = " ".join(rule_for_selector(rng) for _ in range(rng.randint(1, 3)))
        return "(" + inner + ")"
    return rng.choice(["bogus", "+", "~", "(unclosed", "on off", ""])


def rule_for_selector(rng):
    # Selectors take command, key and channel rules only.
    r = rng.random()
    if r < 0.4:
        return rng.choice("+-") + rng.choice(CATEGORIES + COMMANDS)
    if r < 0.8:
        return rng.choice(["~", "%R~", "%W~"]) + rng.choice(PATTERNS)
    if r < 0.95:
        return "&" + rng.choice(PATTERNS)
    return rng.choice(["on", ">pw", "allkeys"])


def user(rng):
    return rng.choice(USERS)


def g_setuser(rng, ctx):
    return [cmd(rng, "acl"), cmd(rng, "setuser"), user(rng)] + [
        rule(rng) for _ in range(rng.randint(0, 5))]


def g_read(rng, ctx):
    r = rng.random()
    if r < 0.45:
        return [cmd(rng, "acl"), cmd(rng, "getuser"), user(rng)]
    if r < 0.7:
        return [cmd(rng, "acl"), cmd(rng, "list")]
    if r < 0.85:
        return [cmd(rng, "acl"), cmd(rng, "users")]
    return [cmd(rng, "acl"), cmd(rng, "whoami")]


def g_deluser(rng, ctx):
    return [cmd(rng, "acl"), cmd(rng, "deluser")] + [user(rng) for _ in range(rng.randint(1, 2))]


DRYRUN_ARGS = [["get", "app:1"], ["set", "x", "1"], ["set", "k1", "v"], ["lpush", "k1", "v"],
               ["publish", "ch", "m"], ["config", "get", "maxmemory"], ["info"],
               ["get"], ["nosuchcmd"], ["hset", "app:h", "f", "v"], ["del", "app:1", "x"],
               ["flushall"], ["client", "list"], ["client", "kill", "id", "1"],
               ["config", "set", "maxmemory", "0"], ["acl", "whoami"], ["sadd", "bx", "m"],
               ["subscribe", "ch"], ["psubscribe", "a*"], ["eval", "return 1", "0"],
               ["keys", "*"], ["get", "{t}a"], ["mget", "app:1", "x", "k1"]]


def g_dryrun(rng, ctx):
    return [cmd(rng, "acl"), cmd(rng, "dryrun"), rng.choice(USERS + ["nobody"])] + list(
        rng.choice(DRYRUN_ARGS))


def g_cat(rng, ctx):
    # The category list; the members of a category differ between Redis versions (commands
    # added since 7.0), so only a missing category's error is asked for by name.
    if rng.random() < 0.7:
        return [cmd(rng, "acl"), cmd(rng, "cat")]
    return [cmd(rng, "acl"), cmd(rng, "cat"), rng.choice(["nosuch", "", "@read"])]


def g_session(rng, ctx):
    """A user made usable, its rules read back, then removed: one op on one connection."""
    name = user(rng)
    steps = [([cmd(rng, "acl"), cmd(rng, "setuser"), name, "reset", "on", ">pw"] +
              [rule(rng) for _ in range(rng.randint(1, 4))], "acl")]
    steps.append(([cmd(rng, "acl"), cmd(rng, "getuser"), name], "acl"))
    for args in rng.sample(DRYRUN_ARGS, 4):
        steps.append(([cmd(rng, "acl"), cmd(rng, "dryrun"), name] + list(args), "acl"))
    steps.append(([cmd(rng, "acl"), cmd(rng, "deluser"), name], "acl"))
    return Seq(steps)


THIS_USER = re.compile(rb"^User .* has no permissions")
# A command rule token in an ACL LIST line ("+get", "-@all", "-config|set").
COMMAND_RULE = re.compile(rb" [+-][^ ]*")


def normalised(rep, after_commands=False):
    """The reply as nested tuples of kind and bytes, without 7.0/7.2 text differences.

    Command rules are left out of the comparison: 7.0 rebuilds their text from the permission
    bitmap (so "-@all -flushall" reads "-@all"), 7.2 keeps the rules as given. What they allow
    is compared through ACL DRYRUN instead, which both versions answer alike.
    """
    if rep.kind == "*" and rep.value is not None:
        items = [i for i in rep.value if not (i.kind == "$" and i.value == b"sanitize-payload")]
        out, previous = [], None
        for item in items:
            out.append(normalised(item, previous == b"commands"))
            previous = item.value if item.kind == "$" else None
        return ("*", tuple(out))
    if rep.kind in "$+-" and isinstance(rep.value, bytes):
        if after_commands:
            return (rep.kind, b"<command rules>")
        text = rep.value.replace(b" sanitize-payload", b"")
        if text.startswith(b"user "):
            text = COMMAND_RULE.sub(b"", text)
        return (rep.kind, THIS_USER.sub(b"This user has no permissions", text))
    return rep.raw


def cmp_acl(a, b):
    return cmp_exact(a, b) or normalised(a) == normalised(b)


COMPARATORS["acl"] = cmp_acl


@register_family("acl", share=0.5)
def family_acl():
    return [
        (10, g_setuser, "acl"),
        (8, g_read, "acl"),
        (3, g_deluser, "acl"),
        (5, g_dryrun, "acl"),
        (1, g_cat, "acl"),
        (3, g_session, "acl"),
    ]

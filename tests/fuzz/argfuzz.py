#!/usr/bin/python3
"""Argument fuzzer: every command and subcommand, hostile values, vireo against redis-server.

The generator walks each command's argument tree as vireo serves it in COMMAND DOCS and fills
it with hostile values (argfuzz_gen.py): INT64 edges, huge and negative counts, offsets near
512 MB and 2^32 / 2^63, NaN / inf / -0.0, empty and 1 MB strings, binary with NUL and CR/LF,
backtracking globs, keys of every type. Commands go out in pipelined batches, some wrapped in
MULTI/EXEC or EVAL (redis.pcall). Every batch starts from the same small keyspace, so a batch
is reproducible on its own from (seed, batch number).

Checks, per batch: the server answers every command (any reply or error) and PING after the
batch, the process stays alive with no sanitizer report, and the class of every reply (value,
or error plus its first word: ERR, WRONGTYPE, NOSCRIPT...) matches redis-server's for the same
sequence, where redis-server has the command (allowed() lists the accepted differences).

    tests/fuzz/argfuzz.py --seed 7 --ops 1000000              # a long run
    tests/fuzz/argfuzz.py --seed 7 --replay 1234              # re-run batch 1234, minimise
    tests/fuzz/argfuzz.py --vireo build-asan/vireo-server --keep-going --ops 200000

A failure prints the seed, the batch, the failing command and the replay command line; replay
narrows the batch to the fewest commands that still fail.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import socket
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO_ROOT / "tests" / "differential"))

import argfuzz_gen as gen  # noqa: E402
from differential import ProtocolError, RespConn, Server, encode, show_arg  # noqa: E402


def show_argv(argv, limit: int = 0) -> str:
    """A command for humans: long arguments abbreviated one by one, so every argument shows."""
    del limit  # the per-argument abbreviation keeps lines short
    out = []
    for a in argv:
        if len(a) > 64:
            out.append(f"{show_arg(a[:24])}...({len(a)} bytes of {show_arg(a[:1])}...)"
                       if a.count(a[:1]) == len(a) else f"{show_arg(a[:40])}...({len(a)} bytes)")
        else:
            out.append(show_arg(a))
    return " ".join(out)

EVAL_WRAPPER = b"return redis.pcall(unpack(ARGV))"
SANITIZER_RE = re.compile(rb"runtime error:|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer")

# Accepted reply-class differences between vireo (which follows Redis 7.2 and, for streams,
# the newer releases named in reference/redis-semantics.md) and Debian's redis-server 7.0. Each
# rule says why the reference is not the behaviour vireo must have. (Options newer than 7.0
# never reach a compared batch at all: argfuzz_gen.NEWER_OPTIONS.)

# 7.0 flagged the blocking list / zset commands NOSCRIPT; 7.2 runs them in scripts in their
# non-blocking form (redis commit d0da0a6a3, "Support for RM_Call on blocking commands"). Inside
# EVAL they stay out of compared batches: 7.0 would refuse the write vireo makes, and the two
# keyspaces would drift apart.
BLOCKING_IN_SCRIPTS = {"blpop", "brpop", "brpoplpush", "blmove", "blmpop", "bzpopmin",
                       "bzpopmax", "bzmpop"}


# 7.2 refuses LPOS RANK LONG_MIN (its negation overflows); 7.0 accepts it.
def lpos_rank_min(name: str, argv: list[bytes]) -> bool:
    return name == "lpos" and b"-9223372036854775808" in argv


# Redis's SORT tests `errno == ERANGE` after strtod without clearing errno first, so after any
# earlier command parsed an out-of-range double (1e309...) or unsigned integer (a SCAN cursor or
# stream ID past 2^64: 20+ digits, a superset), SORT of a numeric key fails with "One or more
# scores can't be converted into double" (7.0 and 7.2 alike). Not a behaviour to copy;
# diff_batch marks such batches.
ERANGE_RE = re.compile(rb"^[-+]?(?:[0-9.]*e[-+]?[0-9]{3,}|[0-9]{20,})", re.I)


def allowed(name: str, vcls: str, rcls: str, argv: list[bytes], erange: bool = False) -> bool:
    if erange and name in ("sort", "sort_ro") and rcls == "-ERR":
        return True
    if vcls == "-ERR" and lpos_rank_min(name, argv):
        return True
    # HELLO: 7.2 parses every option (syntax, SETNAME's name) before trying AUTH's credentials;
    # 7.0 authenticated as soon as it met AUTH, so a later bad option came second.
    if name == "hello" and vcls == "-ERR" and rcls == "-WRONGPASS":
        return True
    # WAIT: 7.0 flagged it noscript; 7.2 runs it in scripts, replying at once.
    if name == "wait" and rcls == "-ERR" and vcls != "-ERR":
        return True
    return False


# Differences that are bugs in vireo being fixed on other branches of the hardening work; they
# print as KNOWN and do not fail the run. Remove an entry once its fix is merged.
PENDING: list = []


def pending(name, vcls, rcls, argv) -> bool:
    return any(rule(name, vcls, rcls, argv) for rule in PENDING)


class ClassReader(RespConn):
    """Reads replies off a socket and keeps only their class: the fuzzer compares classes, and
    building objects for every element of the large arrays it provokes would halve its speed."""

    def __init__(self, host: str, port: int, timeout: float):
        super().__init__(host, port, timeout)
        self.errors = None  # a list to collect full error lines into (replay display)

    def _skip(self, n: int):
        while len(self.buf) - self.pos < n:
            self._fill()
        if self.buf[self.pos + n - 2:self.pos + n] != b"\r\n":
            raise ProtocolError("bulk string not followed by CRLF")
        self.pos += n

    def _length(self, line: bytes) -> int:
        try:
            return int(line[1:])
        except ValueError:
            raise ProtocolError(f"bad length in {line[:100]!r}") from None

    def _skip_rest(self, line: bytes) -> None:
        """Consume the body of a value whose first line was `line` (RESP2 only)."""
        pending = 1
        while True:
            t = line[:1]
            if t == b"$":
                n = self._length(line)
                if n >= 0:
                    self._skip(n + 2)
            elif t == b"*":
                pending += max(self._length(line), 0)
            elif t not in (b"+", b"-", b":"):
                raise ProtocolError(f"not a RESP2 reply: {line[:100]!r}")
            pending -= 1
            if not pending:
                return
            line = self._line()

    def read(self, children: bool = False):
        """The class of the next reply ("value" or "-WORD"); with `children`, an array's reply
        comes back as (class, [class of each element]) for EXEC."""
        line = self._line()
        if not line:
            raise ProtocolError("empty reply line")
        if line[:1] == b"-":
            if self.errors is not None:
                self.errors.append(line[:300])
            cls = "-" + line[1:].split(b" ", 1)[0].decode(errors="replace")
            return (cls, None) if children else cls
        if children and line[:1] == b"*" and self._length(line) >= 0:
            return "value", [self.read() for _ in range(self._length(line))]
        if line == b"+PONG":
            return "+PONG"
        self._skip_rest(line)
        return (("value", None) if children else "value")


class Failure(Exception):
    """The server crashed, hung, stopped answering or answered out of frame."""

    def __init__(self, kind: str, answered: int, detail: str):
        super().__init__(f"{kind} after {answered} replies: {detail}")
        self.kind = kind
        self.answered = answered
        self.detail = detail

    @property
    def signature(self) -> str:
        """The sanitizer's first line (file:line and what), else the kind: groups a run's
        failures into distinct findings."""
        m = re.search(r"(\S+:\d+:\d+: runtime error: [^\n]{0,120})|(ERROR: AddressSanitizer: [\w-]+)"
                      r"|(#\d+ 0x[0-9a-f]+ in \S+ \S+)|(process ended with status -?\d+)",
                      self.detail)
        return m.group(0) if m else self.kind


def plain(rep):
    """A parsed Reply as python values (bytes / int / None / list)."""
    if rep.kind == "*" and rep.value is not None:
        return [plain(r) for r in rep.value]
    return rep.value


def flat_map(items) -> dict:
    return {items[i].decode() if isinstance(items[i], bytes) else items[i]: items[i + 1]
            for i in range(0, len(items) - 1, 2)}


def docs_args(raw) -> list[dict]:
    out = []
    for a in raw or []:
        m = flat_map(a)
        d = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in m.items()
             if k in ("name", "type", "token")}
        d["flags"] = [f.decode() for f in m.get("flags", [])]
        if "arguments" in m:
            d["arguments"] = docs_args(m["arguments"])
        out.append(d)
    return out


def command_info(conn: RespConn) -> dict[str, tuple[list[str], int]]:
    """name (with "container|sub") -> (flags, arity) from COMMAND."""
    conn.send(encode([b"COMMAND"]))
    info = {}

    def add(row):
        name = row[0].decode().lower()
        info[name] = ([f.decode() if isinstance(f, bytes) else str(f) for f in row[2]], row[1])
        if len(row) > 9 and row[9]:
            for sub in row[9]:
                add(sub)
    for row in plain(conn.read()):
        add(row)
    return info


def load_entries(conn: RespConn) -> list[gen.Entry]:
    info = command_info(conn)
    conn.send(encode([b"COMMAND", b"DOCS"]))
    docs = flat_map(plain(conn.read()))
    entries = []

    def add(name: str, doc: dict):
        m = flat_map(doc)
        if m.get("subcommands"):
            for sub, sdoc in flat_map(m["subcommands"]).items():
                add(sub, sdoc)
            return
        flags, arity = info.get(name.lower(), ([], -1))
        entries.append(gen.Entry([w.upper() for w in name.split("|")], docs_args(m.get("arguments")),
                                 flags, arity))
    for name in sorted(docs):
        add(name, docs[name])
    if not any(e.name == "debug" for e in entries):
        entries.append(gen.Entry(["DEBUG"], [], [], -2))
    return entries


# ----------------------------------------------------------------------------------------------
# Batches: (seed, number) -> units. A unit is a list of commands sent together; each command is
# (argv, name-for-comparison or None).


class Unit:
    def __init__(self, kind: str, cmds: list, names: list):
        self.kind = kind      # "cmd", "multi" or "eval"
        self.cmds = cmds      # list[list[bytes]]
        self.names = names    # entry name per command (None: framing, compared as-is)

    def show(self) -> str:
        return " ; ".join(show_argv(a, 200) for a in self.cmds)


# Commands whose replies run to thousands of lines: drawn 20 times less often, because parsing
# their replies would otherwise take most of the fuzzer's time.
HEAVY = {"command", "command|docs", "command|info", "command|list", "config|get", "acl|cat",
         "memory|malloc-stats", "info", "latency|doctor", "memory|doctor", "cluster|slots",
         "cluster|shards"}


def gen_one(st: gen.GenState, entries: list[gen.Entry]):
    for _ in range(50):
        entry = st.rng.choice(entries)
        if entry.name in HEAVY and st.rng.random() < 0.95:
            continue
        argv = gen.generate(st, entry)
        if argv is not None:
            return entry.name, argv
    return "ping", [b"PING"]


# Every VIREO_ONLY_EVERY-th batch draws from all of vireo's commands and is only checked for
# survival; the others use only commands redis-server has too, so a command the reference lacks
# (it would refuse it and leave the keyspace alone) cannot make the two keyspaces drift apart.
VIREO_ONLY_EVERY = 8


def vireo_only(fz, number: int) -> bool:
    return fz.redis is None or number % VIREO_ONLY_EVERY == VIREO_ONLY_EVERY - 1


def batch_for(fz, seed: int, number: int) -> list[Unit]:
    only = vireo_only(fz, number)
    return gen_batch(seed, number, fz.entries if only else fz.shared_entries, fz.args.batch,
                     not only, fz.config_params, fz.args.include_pending)


def gen_batch(seed: int, number: int, entries: list[gen.Entry], size: int,
              shared: bool, config_params: list[str], include_pending: bool) -> list[Unit]:
    rng = random.Random(f"argfuzz/{seed}/{number}")
    units = []
    st = gen.GenState(rng, in_tx=False)
    st.shared = shared
    st.config_params = config_params
    st.include_pending = include_pending
    for _ in range(size):
        r = rng.random()
        repro = gen.issue_repro(st) if not shared and rng.random() < 0.01 else None
        if repro:
            units.append(Unit("repro", repro, [None] * len(repro)))
        elif rng.random() < 0.01:
            st.in_tx = False
            cmds = gen.pubsub_unit(st)
            units.append(Unit("pubsub", cmds, ["pubsub"] * len(cmds)))
        elif r < 0.07:
            st.in_tx = True
            names, cmds = [None], [[b"MULTI"]]
            for _ in range(rng.randint(1, 4)):
                name, argv = gen_one(st, entries)
                names.append(name)
                cmds.append(argv)
            names.append("exec")
            cmds.append([b"EXEC"])
            units.append(Unit("multi", cmds, names))
        elif r < 0.13:
            st.in_tx = True
            name, argv = gen_one(st, entries)
            if shared and name in BLOCKING_IN_SCRIPTS:
                continue
            units.append(Unit("eval", [[b"EVAL", EVAL_WRAPPER, b"0", *argv]], [name]))
        else:
            st.in_tx = False
            name, argv = gen_one(st, entries)
            units.append(Unit("cmd", [argv], [name]))
    return units


# ----------------------------------------------------------------------------------------------
# Running a batch on one server.


class Target:
    """One server (started here) plus a connection and the prologue that resets its state."""

    def __init__(self, name: str, binary: str, extra: list[str], timeout: float):
        self.name, self.binary, self.extra, self.timeout = name, binary, extra, timeout
        self.srv = None
        self.conn = None
        self.log_seen = 0
        self.broken = False
        self.start()

    def start(self):
        self.broken = False
        self.log_seen = 0
        self.srv = Server(self.name, self.binary, self.extra)
        self.setup = RespConn(self.srv.host, self.srv.port, timeout=self.timeout)
        self.conn = ClassReader(self.srv.host, self.srv.port, self.timeout)
        self.config_reset = self._config_reset()

    def restart(self):
        self.stop()
        self.start()

    def shutdown_report(self) -> str:
        """Stop the server with SIGTERM and return any sanitizer report it wrote on the way out
        (LeakSanitizer runs at exit)."""
        if not self.srv or self.srv.dead():
            return ""
        self.srv.proc.terminate()
        try:
            self.srv.proc.wait(60)
        except Exception:  # noqa: BLE001 - stop() below kills it
            return ""
        return self.sanitizer_report()

    def stop(self):
        for c in (self.conn, self.setup):
            if c:
                c.close()
        if self.srv:
            self.srv.stop()
        self.srv = self.conn = self.setup = None

    def _config_reset(self) -> list[bytes]:
        """CONFIG SET of every parameter the fuzzer may change back to this server's start value."""
        pairs = []
        for p in gen.CONFIG_SAFE:
            self.setup.send(encode([b"CONFIG", b"GET", p.encode()]))
            got = plain(self.setup.read())
            if got and len(got) == 2:
                pairs += [p.encode(), got[1]]
        return [b"CONFIG", b"SET", *pairs] if pairs else [b"PING"]

    def drop_acl_users(self):
        """ACL users outlive FLUSHALL: delete the ones the last batch created (on the setup
        connection, which always stays the default user). CLIENT KILL TYPE normal and the like
        may have closed that connection: then it is opened again."""
        for attempt in (1, 2):
            try:
                self.setup.send(encode([b"ACL", b"USERS"]))
                rep = self.setup.read()
                if rep.kind != "*":
                    return  # no ACL command (vireo has only the default user)
                users = [u for u in plain(rep) if u != b"default"]
                if users:
                    self.setup.send(encode([b"ACL", b"DELUSER", *users]))
                    self.setup.read()
                return
            except (ProtocolError, OSError):
                if attempt == 2 or self.srv.dead():
                    raise
                self.setup.close()
                self.setup = RespConn(self.srv.host, self.srv.port, timeout=self.timeout)

    def prologue(self) -> list[list[bytes]]:
        # AUTH first: the last batch may have authenticated as a user it created.
        # UNWATCH: keys the last batch watched would make this batch's first EXEC depend on it.
        return [[b"AUTH", b"default", b"argfuzz"], [b"UNWATCH"], [b"SELECT", b"0"], [b"FLUSHALL"], [b"SCRIPT", b"FLUSH"], [b"FUNCTION", b"FLUSH"],
                self.config_reset, *gen.keyspace_setup()]

    def sanitizer_report(self) -> str:
        try:
            with open(self.srv.log, "rb") as f:
                f.seek(self.log_seen)
                data = f.read()
        except OSError:
            return ""
        self.log_seen += len(data)
        m = SANITIZER_RE.search(data)
        if not m:
            return ""
        start = max(0, data.rfind(b"\n", 0, m.start()) + 1)
        return data[start:start + 4000].decode(errors="replace")

    def run(self, cmds: list[list[bytes]]) -> list:
        """Send prologue + cmds + PING pipelined; return the reply classes of cmds (EXEC's as
        (class, element classes)), or raise Failure."""
        if self.broken:  # unread replies or a dead process from the last run
            self.restart()
        try:
            self.drop_acl_users()
        except (ProtocolError, OSError) as e:
            self.broken = True
            raise Failure("crash" if self.srv.dead() else "protocol", -1, f"ACL USERS: {e}")
        pro = self.prologue()
        payload = b"".join(encode(a) for a in pro + cmds + [[b"PING"]])
        sender = threading.Thread(target=self._send, args=(payload,), daemon=True)
        sender.start()
        replies = []
        try:
            for a in pro:
                replies.append(self.conn.read())
            for a, n in zip(cmds, reply_counts(cmds)):
                if n == 1:
                    replies.append(self.conn.read(children=(a == [b"EXEC"])))
                else:
                    replies.append(tuple(self.conn.read() for _ in range(n)))
            replies.append(self.conn.read())
        except (socket.timeout, TimeoutError):
            self.broken = True
            raise Failure("hang", len(replies) - len(pro), f"no reply within {self.timeout}s")
        except (ProtocolError, OSError) as e:
            self.broken = True
            time.sleep(0.2)  # let a crashing process finish dying before asking
            if self.srv.dead():
                report = (self.sanitizer_report() or
                          f"process ended with status {self.srv.proc.returncode}\n"
                          + self.srv.log_tail(2000))
                raise Failure("crash", len(replies) - len(pro), f"{e}\n{report}")
            raise Failure("protocol", len(replies) - len(pro), f"{e}")
        finally:
            sender.join(self.timeout)
        if replies[-1] != "+PONG":
            self.broken = True
            raise Failure("desync", len(cmds), f"PING after the batch answered {replies[-1]!r}")
        rep = self.sanitizer_report()
        if rep:
            self.broken = True
            raise Failure("sanitizer", len(cmds), rep)
        if self.srv.dead():
            self.broken = True
            raise Failure("crash", len(cmds), "process exited")
        return replies[len(pro):-1]

    def _send(self, payload: bytes):
        try:
            self.conn.send(payload)
        except OSError:
            pass  # the reader reports what happened


# ----------------------------------------------------------------------------------------------
# Comparison


class Fuzzer:
    def __init__(self, args, entries, redis_names):
        self.args = args
        self.entries = entries
        self.redis_names = redis_names
        self.shared_entries = [e for e in entries if e.name in redis_names or e.name == "debug"]
        self.vireo = None
        self.redis = None
        self.mismatches: dict[tuple, tuple] = {}   # signature -> (batch, argv text)
        self.failures: list[tuple] = []              # (batch, Failure, culprit text)
        self.known: set[tuple] = set()               # PENDING signatures seen

    def comparable(self, name) -> bool:
        if name == "pubsub":
            return True  # a pubsub unit's (un)subscribe / PING / refused command, compared
        return (name is not None and name in self.redis_names and name not in gen.NO_COMPARE
                and name.split("|")[0] not in gen.NO_COMPARE)

    def unit_diffs(self, unit: Unit, vrep: list, rrep: list) -> list[tuple]:
        """(name, vireo class, redis class, argv) for each compared command that differs."""
        out = []
        for name, argv, v, r in zip(unit.names, unit.cmds, vrep, rrep):
            if unit.kind == "eval":
                argv = argv[3:]  # the command the script ran
            if unit.kind == "multi" and name == "exec":
                inner = unit.names[1:-1]
                (v, vkids), (r, rkids) = v, r
                if vkids is not None and rkids is not None:
                    # EXEC's elements belong to the commands that were queued (a command refused
                    # at queue time without aborting, like WATCH, has none), per server.
                    vq = queued(vrep[1:-1], vkids)
                    rq = queued(rrep[1:-1], rkids)
                    for i, (iname, iargv) in enumerate(zip(inner, unit.cmds[1:-1])):
                        if i in vq and i in rq and self.comparable(iname) and vq[i] != rq[i]:
                            out.append((iname, vq[i], rq[i], iargv, "in EXEC"))
                    continue
                if not all(self.comparable(n) for n in inner):
                    continue
            elif name is None:
                continue
            elif not self.comparable(name):
                continue
            if v != r:
                out.append((name, v, r, argv, unit.kind))
        return out

    def diff_batch(self, units, vrep, rrep) -> list[tuple]:
        """(unit index, name, vireo class, redis class, argv, where, errno-leak) per diff."""
        diffs, i, erange = [], 0, False
        for idx, u in enumerate(units):
            n = len(u.cmds)
            for d in self.unit_diffs(u, vrep[i:i + n], rrep[i:i + n]):
                diffs.append((idx, *d, erange))
            erange = erange or any(ERANGE_RE.match(a) for c in u.cmds for a in c)
            i += n
        return diffs



def queued(queue_replies: list, kids: list) -> dict[int, str]:
    """Inner command index -> class of its EXEC element."""
    idx = [i for i, c in enumerate(queue_replies) if c == "value"]
    return dict(zip(idx, kids))


SUBSCRIBE_FAMILIES = {b"SUBSCRIBE": 0, b"UNSUBSCRIBE": 0, b"PSUBSCRIBE": 1,
                      b"PUNSUBSCRIBE": 1, b"SSUBSCRIBE": 2, b"SUNSUBSCRIBE": 2}


def reply_counts(cmds: list[list[bytes]]) -> list[int]:
    """Replies each command gets: one, except the (un)subscribe commands of pubsub units, which
    answer once per channel; an UNSUBSCRIBE without channels, once per channel still
    subscribed (or once if none)."""
    subscribed: list[set] = [set(), set(), set()]
    out = []
    for a in cmds:
        family = SUBSCRIBE_FAMILIES.get(a[0].upper()) if a else None
        if family is None:
            out.append(1)
            continue
        chans = a[1:]
        if a[0].upper().endswith(b"UNSUBSCRIBE") or a[0].upper() == b"SUNSUBSCRIBE":
            if chans:
                subscribed[family].difference_update(chans)
                out.append(len(chans))
            else:
                out.append(max(1, len(subscribed[family])))
                subscribed[family].clear()
        else:
            subscribed[family].update(chans)
            out.append(max(1, len(chans)))
    return out


def flatten(units: list[Unit]) -> list[list[bytes]]:
    return [a for u in units for a in u.cmds]


def culprit_unit(units: list[Unit], answered: int) -> int:
    """Index of the unit holding the first command without a reply."""
    i = 0
    for idx, u in enumerate(units):
        i += len(u.cmds)
        if i > answered:
            return idx
    return len(units) - 1


# ----------------------------------------------------------------------------------------------
# Minimisation: the fewest units of a batch that still fail the same way.


def ddmin(units: list[Unit], fails) -> list[Unit]:
    """Classic delta debugging over units; `fails(subset)` re-runs and reports."""
    n = 2
    while len(units) >= 2:
        chunk = max(1, len(units) // n)
        reduced = False
        for start in range(0, len(units), chunk):
            rest = units[:start] + units[start + chunk:]
            if rest and fails(rest):
                units, n, reduced = rest, max(n - 1, 2), True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(units), n * 2)
    return units


def minimise(fz: Fuzzer, units: list[Unit], failure: Failure | None, diff: tuple | None):
    if failure is not None:
        kind = failure.kind

        def fails(subset):
            try:
                fz.vireo.run(flatten(subset))
                return False
            except Failure as e:
                return e.kind == kind
        guess = culprit_unit(units, failure.answered)
        for cand in ([units[guess]], units[guess:guess + 1] + units[guess + 1:guess + 3]):
            if fails(cand):
                return ddmin(cand, fails)
        return ddmin(units, fails)

    target = units[diff[0]]
    sig = diff[1:4]

    def fails(subset):
        if target not in subset:
            return False
        try:
            vr, rr = fz.vireo.run(flatten(subset)), fz.redis.run(flatten(subset))
        except Failure:
            return False
        return any(d[1:4] == sig and subset[d[0]] is target for d in fz.diff_batch(subset, vr, rr))
    if fails([target]):
        return [target]
    return ddmin(units[:diff[0] + 1], fails)


# ----------------------------------------------------------------------------------------------


def run(args) -> int:
    timeout = args.timeout
    extra = []
    vireo = Target("vireo", args.vireo, debug_args(args.vireo) + extra, timeout)
    redis = Target("redis", args.redis, ["--save", "", "--appendonly", "no",
                                         "--enable-debug-command", "yes"], timeout) if not args.no_redis else None
    try:
        entries = load_entries(vireo.setup)
        redis_info = command_info(redis.setup) if redis else {}
        redis_names = set(redis_info)
        for e in entries:
            # A subcommand's arity counts the container word too, as COMMAND reports it.
            e.redis_arity = redis_info.get(e.name, (None, 0))[1]
        fz = Fuzzer(args, entries, redis_names)
        fz.vireo, fz.redis = vireo, redis
        # Only parameters both servers have (vireo lacks a few, e.g. lfu-decay-time).
        fz.config_params = [p for p in gen.CONFIG_SAFE
                            if all(p.encode() in t.config_reset for t in (vireo, redis) if t)]
        print(f"argfuzz: seed {args.seed}, ops {args.ops}, batch {args.batch}, "
              f"{len(entries)} commands/subcommands, vireo {args.vireo}", flush=True)
        if args.replay is not None:
            return replay(fz, args)
        return fuzz(fz, args)
    finally:
        vireo.stop()
        if redis:
            redis.stop()


def debug_args(binary: str) -> list[str]:
    """`--enable-debug-command yes` if this vireo knows the option (older builds have DEBUG on)."""
    try:
        srv = Server("probe", binary, ["--enable-debug-command", "yes"])
    except SystemExit:
        return []
    srv.stop()
    return ["--enable-debug-command", "yes"]


def run_batch(fz: Fuzzer, units: list[Unit], compare: bool, number: int = -1):
    """(failure or None, diffs) for one batch on both servers."""
    cmds = flatten(units)
    try:
        vr = fz.vireo.run(cmds)
    except Failure as e:
        return e, []
    if not compare:
        return None, []
    try:
        rr = fz.redis.run(cmds)
    except Failure as e:
        idx = culprit_unit(units, e.answered)
        print(f"  redis-server itself failed ({e}) in batch {number}, at or after unit {idx}: "
              f"{units[idx].show()[:300]}; batch not compared", flush=True)
        return None, []
    return None, fz.diff_batch(units, vr, rr)


def report_failure(fz, args, b, units, e: Failure):
    idx = culprit_unit(units, e.answered)
    print(f"FAIL seed {args.seed} batch {b}: vireo {e.kind}: {e.signature}\n{e.detail[:3000]}")
    print(f"  first command without a reply (unit {idx}; the culprit is this or a later one): "
          f"{units[idx].show()}")
    print(f"  reproduce: {sys.argv[0]} --seed {args.seed} --batch {args.batch} --replay {b}", flush=True)


def fuzz(fz: Fuzzer, args) -> int:
    t0 = time.monotonic()
    sent, b, bad = 0, args.start_batch, 0
    while sent < args.ops:
        units = batch_for(fz, args.seed, b)
        sent += sum(len(u.cmds) for u in units)
        failure, diffs = run_batch(fz, units, not vireo_only(fz, b), b)
        if failure:
            bad += 1
            report_failure(fz, args, b, units, failure)
            fz.failures.append((b, failure))
            if not args.keep_going:
                break
        for idx, name, vcls, rcls, argv, where, erange in diffs:
            if allowed(name, vcls, rcls, argv, erange):
                continue
            sig = (name, vcls, rcls)
            if pending(name, vcls, rcls, argv):
                if sig not in fz.known:
                    fz.known.add(sig)
                    print(f"KNOWN {name}: vireo {vcls}, redis {rcls} ({where}) batch {b} unit {idx}: "
                          f"{show_argv(argv, 300)}", flush=True)
                continue
            if sig not in fz.mismatches:
                fz.mismatches[sig] = (b, idx, show_argv(argv, 300), where)
                print(f"MISMATCH {name}: vireo {vcls}, redis {rcls} ({where}) batch {b} unit {idx}: "
                      f"{show_argv(argv, 300)}", flush=True)
        b += 1
        if args.progress and b % args.progress == 0:
            print(f"  {sent} commands, batch {b}, {time.monotonic() - t0:.0f}s", flush=True)
    dt = time.monotonic() - t0
    leak = fz.vireo.shutdown_report()
    if leak:
        bad += 1
        fz.failures.append((b - 1, Failure("sanitizer", 0, leak)))
        print(f"FAIL seed {args.seed}: sanitizer report at shutdown:\n{leak[:3000]}")
    sigs = {}
    for bb, f in fz.failures:
        sigs.setdefault(f.signature, bb)
    for sig, bb in sigs.items():
        print(f"  failure {sig}  [--replay {bb}]")
    print(f"argfuzz: {sent} commands in {b - args.start_batch} batches, {dt:.1f}s "
          f"({sent / max(dt, 1e-9):.0f}/s), {bad} failures, {len(fz.mismatches)} distinct mismatches")
    for (name, vcls, rcls), (bb, idx, text, where) in sorted(fz.mismatches.items()):
        print(f"  mismatch {name}: vireo {vcls} / redis {rcls}: {text}  "
              f"[--replay {bb} --unit {idx}]")
    return 1 if (bad or fz.mismatches) else 0


def replay(fz: Fuzzer, args) -> int:
    b = args.replay
    units = batch_for(fz, args.seed, b)
    failure, diffs = run_batch(fz, units, not vireo_only(fz, b), b)
    if failure:
        report_failure(fz, args, b, units, failure)
        if args.no_minimise:
            return 1
        small = minimise(fz, units, failure, None)
    else:
        diffs = [d for d in diffs if not allowed(d[1], d[2], d[3], d[4], erange=d[6])]
        if args.unit is not None:
            diffs = [d for d in diffs if d[0] == args.unit]
        if not diffs:
            print(f"batch {b}: no failure and no mismatch")
            return 0
        d = diffs[0]
        print(f"MISMATCH {d[1]}: vireo {d[2]}, redis {d[3]} unit {d[0]}: {show_argv(d[4], 300)}")
        small = minimise(fz, units, None, d)
    print(f"minimal reproduction ({len(small)} unit(s), after the keyspace setup in "
          f"argfuzz_gen.keyspace_setup):")
    cmds = flatten(small)
    for t in (fz.vireo, fz.redis):
        if t:
            t.conn.errors = []
    try:
        vr = fz.vireo.run(cmds)
    except Failure as e:
        vr = [f"({e.kind})"] * len(cmds)
    rr = fz.redis.run(cmds) if fz.redis else ["-"] * len(cmds)
    for argv, v, r in zip(cmds, vr, rr):
        print(f"  {show_argv(argv, 2000)}\n      vireo {v}  redis {r}")
    for t in (fz.vireo, fz.redis):
        if t:
            print(f"  {t.name} errors: " + "; ".join(e.decode(errors="replace")
                                                    for e in t.conn.errors or []))
    return 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vireo", default=os.environ.get("VIREO_SERVER", str(REPO_ROOT / "build" / "vireo-server")))
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--no-redis", action="store_true", help="only check that vireo survives")
    ap.add_argument("--seed", type=int, default=None, help="default: random (printed)")
    ap.add_argument("--ops", type=int, default=100000, help="fuzzed commands to send")
    ap.add_argument("--batch", type=int, default=200, help="units per pipelined batch")
    ap.add_argument("--start-batch", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=None, help="seconds to wait for a reply")
    ap.add_argument("--keep-going", action="store_true", help="restart after a crash and go on")
    ap.add_argument("--replay", type=int, help="re-run one batch and minimise its failure")
    ap.add_argument("--include-pending", action="store_true",
                    help="also send the inputs of bugs being fixed elsewhere (argfuzz_gen.PENDING_INPUTS)")
    ap.add_argument("--no-minimise", action="store_true", help="with --replay: only re-run")
    ap.add_argument("--unit", type=int, help="with --replay: the mismatching unit to minimise")
    ap.add_argument("--progress", type=int, default=0, help="print progress every N batches")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 31)
    if args.timeout is None:
        args.timeout = 60.0 if os.environ.get("VIREO_SANITIZED") else 20.0
    if os.sep in args.vireo:
        args.vireo = os.path.abspath(args.vireo)
    # SIGTERM (ctest's timeout, kill) unwinds like Ctrl-C, so the servers are stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    return run(args)


if __name__ == "__main__":
    sys.exit(main())

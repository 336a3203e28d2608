#!/usr/bin/env python3
"""Generate docs/commands.md from a running vireo's COMMAND DOCS and COMMAND INFO.

    docs/generate_commands.py --vireo build/vireo-server           # rewrite docs/commands.md
    docs/generate_commands.py --vireo build/vireo-server --check   # exit 1 if it is stale

The server's own command table is the single source: every command declares its syntax,
summary, flags and ACL categories once (src/core/command_table.h), and this page, COMMAND
DOCS and redis-cli's hints all come from that declaration. Coverage is measured against
docs/redis-7.2-commands.txt, one Redis 7.2 command or "container|subcommand" per line.

Only the standard library is used, so any python3 can run it.
"""

from __future__ import annotations

import argparse
import difflib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DOCS_DIR = Path(__file__).resolve().parent
OUTPUT = DOCS_DIR / "commands.md"
REDIS_LIST = DOCS_DIR / "redis-7.2-commands.txt"


# ----------------------------------------------------------------------------------------------
# A minimal RESP2 client: enough for COMMAND DOCS / COMMAND INFO.


class Resp:
    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n: int) -> bytes:
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        kind, body = line[:1], line[1:]
        if kind == b"+":
            return body.decode()
        if kind == b"-":
            raise RuntimeError(body.decode())
        if kind == b":":
            return int(body)
        if kind == b"$":
            n = int(body)
            return None if n < 0 else self._exact(n).decode()
        if kind == b"*":
            n = int(body)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ValueError(f"unexpected reply {line!r}")

    def call(self, *args: str):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            data = a.encode()
            out.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.sock.sendall(b"".join(out))
        return self.read()


def pairs(flat) -> dict:
    return dict(zip(flat[0::2], flat[1::2]))


# ----------------------------------------------------------------------------------------------
# Server lifetime


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(binary: str, workdir: str):
    binary = os.path.abspath(binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary}: not an executable")
    for _ in range(3):
        port = free_port()
        proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1"], cwd=workdir,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                conn = Resp(port)
                if conn.call("PING") == "PONG":
                    return proc, conn
            except OSError:
                time.sleep(0.02)
        proc.kill()
        proc.wait()
    sys.exit(f"could not start {binary}")


def fetch(binary: str):
    with tempfile.TemporaryDirectory(prefix="vireo-docs-") as workdir:
        proc, conn = start_server(binary, workdir)
        try:
            docs = pairs(conn.call("COMMAND", "DOCS"))
            infos = {info[0]: info for info in conn.call("COMMAND")}
        finally:
            conn.sock.close()
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return docs, infos


# ----------------------------------------------------------------------------------------------
# Rendering


def render_arg(arg: dict) -> str:
    """One argument the way redis-cli shows it in its hints."""
    kind = arg["type"]
    flags = arg.get("flags") or []
    token = arg.get("token", "")
    if kind == "oneof":
        body = "|".join(render_arg(pairs(a)) for a in arg["arguments"])
    elif kind == "block":
        body = " ".join(render_arg(pairs(a)) for a in arg["arguments"])
    elif kind == "pure-token":
        # MIGRATE's empty-key token is empty in the reply: show it as the documentation does.
        body = "" if token else '""'
    else:
        body = arg.get("display_text") or arg["name"]
    head = token + (" " if token and body else "")
    text = head + body
    if "multiple" in flags:
        repeat = (head if "multiple_token" in flags else "") + body
        text += f" [{repeat} ...]"
    if "optional" in flags:
        text = f"[{text}]"
    return text


def syntax(name: str, doc: dict) -> str:
    words = name.upper().replace("|", " ")
    args = " ".join(render_arg(pairs(a)) for a in doc.get("arguments", []))
    return f"{words} {args}".strip()


def entries(docs: dict, infos: dict):
    """(full name, docs, info) for every command and subcommand, sorted by name."""
    out = []
    for name in sorted(docs):
        doc = pairs(docs[name])
        info = infos.get(name)
        out.append((name, doc, info))
        subinfos = {sub[0]: sub for sub in (info[9] if info else [])}
        subdocs = pairs(doc.get("subcommands", []))
        for sub in sorted(subdocs):
            out.append((sub, pairs(subdocs[sub]), subinfos.get(sub)))
    return out


def render(docs: dict, infos: dict, redis_names: list[str]) -> str:
    all_entries = entries(docs, infos)
    ours = {name for name, _, _ in all_entries}
    redis_set = set(redis_names)
    implemented = sorted(ours & redis_set)
    missing = sorted(redis_set - ours)
    extra = sorted(ours - redis_set)

    lines = [
        "# Commands",
        "",
        "<!-- Generated by docs/generate_commands.py from the server's COMMAND DOCS and COMMAND",
        "     INFO. Do not edit by hand: change the command's declaration and regenerate. -->",
        "",
        f"vireo implements {len(implemented)} of the {len(redis_set)} commands and subcommands "
        "of Redis 7.2 (docs/redis-7.2-commands.txt).",
        "",
        "| Group | Commands |",
        "| --- | --- |",
    ]
    groups: dict[str, list[str]] = {}
    for name, doc, _ in all_entries:
        groups.setdefault(doc.get("group", "?"), []).append(name)
    for group in sorted(groups):
        names = ", ".join(f"`{n.upper().replace('|', ' ')}`" for n in groups[group])
        lines.append(f"| {group} | {names} |")
    lines.append("")

    for group in sorted(groups):
        lines += [f"## {group}", ""]
        for name, doc, info in all_entries:
            if doc.get("group", "?") != group:
                continue
            lines += [f"### {name.upper().replace('|', ' ')}", "", "```", syntax(name, doc), "```",
                      "", doc.get("summary", ""), ""]
            facts = [f"Since {doc.get('since', '?')}"]
            if doc.get("complexity"):
                facts.append(f"Complexity: {doc['complexity']}")
            if info is not None:
                facts.append(f"Arity: {info[1]}")
                if info[2]:
                    facts.append("Flags: " + " ".join(info[2]))
                if info[6]:
                    facts.append("ACL: " + " ".join(info[6]))
            lines += [" · ".join(facts), ""]
            if doc.get("deprecated_since"):
                lines += [f"Deprecated since {doc['deprecated_since']}. Replaced by "
                          f"{doc.get('replaced_by', '?')}.", ""]

    lines += ["## Not implemented yet", ""]
    if missing:
        lines += [f"- `{n.upper().replace('|', ' ')}`" for n in missing]
    else:
        lines.append("Nothing: every Redis 7.2 command is implemented.")
    lines.append("")
    if extra:
        lines += ["## Not in Redis 7.2", ""]
        lines += [f"- `{n.upper().replace('|', ' ')}`" for n in extra]
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vireo", required=True, help="path to the vireo-server binary")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if docs/commands.md differs from what would be generated")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()

    redis_names = [line.strip() for line in REDIS_LIST.read_text().splitlines()
                   if line.strip() and not line.startswith("#")]
    docs, infos = fetch(args.vireo)
    text = render(docs, infos, redis_names)

    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current == text:
            return 0
        diff = difflib.unified_diff(current.splitlines(), text.splitlines(), str(args.output),
                                    "generated", lineterm="", n=1)
        sys.stdout.writelines(line + "\n" for line in list(diff)[:60])
        print(f"{args.output} is stale: run docs/generate_commands.py --vireo {args.vireo}",
              file=sys.stderr)
        return 1
    args.output.write_text(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

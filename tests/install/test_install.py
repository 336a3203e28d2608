#!/usr/bin/python3
"""`cmake --install` into a temporary DESTDIR, then checks what it put there.

The server, its file checkers, its config and the systemd unit must be at their installed paths
(and nothing else installed); the unit must run that server with that config as Type=notify
under `--supervised systemd`; and the installed server, started with the installed config the
way the unit starts it, must tell a NOTIFY_SOCKET this test owns that it is ready and answer
PING. A reinstall must keep an edited config. Needs no root, no systemd and no network (loopback
only); everything lives in one temporary directory that is removed at the end.

CTest runs it as `install` (CMakeLists.txt), with the paths the build was configured for.
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The only line the test changes in the installed config: /var/lib/vireo is created by
# systemd (StateDirectory=vireo) and doesn't exist here, and the server chdir()s into `dir`
# as it reads the file, before any command-line override could apply.
INSTALLED_DIR_LINE = "dir /var/lib/vireo"
READY_TIMEOUT = 30  # seconds; the sanitizer build starts several times slower


def fail(message: str) -> None:
    raise AssertionError(message)


def check(condition: bool, message: str) -> None:
    if not condition:
        fail(message)


def staged(destdir: Path, path: str) -> Path:
    """Where an installed absolute path lands under DESTDIR."""
    return destdir / path.lstrip("/")


def install(cmake: str, build_dir: str, destdir: Path) -> None:
    result = subprocess.run([cmake, "--install", build_dir], env={**os.environ, "DESTDIR": str(destdir)},
                            capture_output=True, text=True, timeout=60)
    check(result.returncode == 0, f"cmake --install failed:\n{result.stdout}{result.stderr}")


def unit_settings(unit: Path) -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in unit.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        key, _, value = line.partition("=")
        settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse(buf: bytes, at: int = 0):
    """One RESP2 value from buf[at:] as (value, end), or None while it is incomplete."""
    eol = buf.find(b"\r\n", at)
    if eol < 0:
        return None
    kind, line = buf[at:at + 1], buf[at + 1:eol]
    if kind in (b"+", b"-", b":"):
        return line, eol + 2
    if kind == b"$":
        end = eol + 2 + int(line)
        return (buf[eol + 2:end], end + 2) if len(buf) >= end + 2 else None
    check(kind == b"*", f"unexpected reply {buf!r}")
    items, at = [], eol + 2
    for _ in range(int(line)):
        item = parse(buf, at)
        if item is None:
            return None
        items.append(item[0])
        at = item[1]
    return items, at


def command(port: int, *args: str):
    """One request on a fresh connection; the parsed reply, or None if the server closed it."""
    request = b"*%d\r\n" % len(args)
    for arg in args:
        request += b"$%d\r\n%s\r\n" % (len(arg.encode()), arg.encode())
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        reply = b""
        while (parsed := parse(reply)) is None:
            chunk = s.recv(4096)
            if not chunk:
                return None
            reply += chunk
        return parsed[0]


def run_installed_server(args: argparse.Namespace, destdir: Path, work: Path,
                         exec_start: list[str]) -> None:
    conf_text = staged(destdir, args.conf).read_text()
    lines = conf_text.splitlines()
    check(INSTALLED_DIR_LINE in lines, f"installed config lacks `{INSTALLED_DIR_LINE}`")
    check("supervised auto" in lines, "installed config lacks `supervised auto`")
    data = work / "data"
    data.mkdir()
    conf = work / "vireo.conf"
    conf.write_text("\n".join(f"dir {data}" if line == INSTALLED_DIR_LINE else line
                              for line in lines) + "\n")

    # The unit's command line with the staged binary and the test's copy of the config, then
    # a free port; --daemonize no guards against a test that detaches and leaks a server.
    port = free_port()
    argv = [str(staged(destdir, exec_start[0])), str(conf), *exec_start[2:],
            "--port", str(port), "--daemonize", "no"]
    notify_path = work / "notify.sock"
    log_path = work / "server.log"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify, open(log_path, "wb") as log:
        notify.bind(str(notify_path))
        notify.settimeout(READY_TIMEOUT)
        proc = subprocess.Popen(argv, cwd=work, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, "NOTIFY_SOCKET": str(notify_path)})
        try:
            try:
                message = notify.recv(4096).decode()
            except socket.timeout:
                fail(f"no readiness notification within {READY_TIMEOUT} s")
            check("READY=1" in message.splitlines(), f"notification without READY=1: {message!r}")
            check(proc.poll() is None, "the server exited after notifying")
            check(command(port, "PING") == b"PONG", "PING did not answer PONG")
            reply = command(port, "CONFIG", "GET", "dir")
            check(reply == [b"dir", str(data).encode()], f"CONFIG GET dir: {reply!r}")
            command(port, "SHUTDOWN", "NOSAVE")
            check(proc.wait(timeout=30) == 0, f"exit status {proc.returncode} after SHUTDOWN")
        except BaseException:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            sys.stderr.write(f"argv: {argv}\nserver log:\n{log_path.read_text(errors='replace')}")
            raise


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cmake", required=True)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--server", required=True, help="installed path of vireo-server")
    parser.add_argument("--conf", required=True, help="installed path of vireo.conf")
    parser.add_argument("--unit", required=True, help="installed path of vireo.service")
    args = parser.parse_args()

    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="vireo-install-")).resolve()  # as CONFIG GET dir shows it
    try:
        destdir = work / "root"
        install(args.cmake, args.build_dir, destdir)
        # The file checkers go beside the server, as redis-check-aof/-rdb beside redis-server.
        tools = [str(Path(args.server).with_name(name))
                 for name in ("vireo-check-aof", "vireo-check-rdb")]
        expected = {staged(destdir, p) for p in (args.server, args.conf, args.unit, *tools)}
        found = {p for p in destdir.rglob("*") if p.is_file()}
        check(found == expected, f"installed files: {sorted(map(str, found))}, "
                                 f"expected {sorted(map(str, expected))}")
        check(os.access(staged(destdir, args.server), os.X_OK), "vireo-server is not executable")
        for tool in tools:
            # Without a file each prints its usage and exits 1, as Redis's tools do.
            usage = subprocess.run([staged(destdir, tool)], capture_output=True, text=True,
                                   timeout=30)
            check(usage.returncode == 1 and "Usage:" in usage.stdout + usage.stderr,
                  f"{tool} did not run: {usage}")

        unit = unit_settings(staged(destdir, args.unit))
        check(unit.get("Type") == ["notify"], f"Type={unit.get('Type')}")
        check(unit.get("WantedBy") == ["multi-user.target"], f"WantedBy={unit.get('WantedBy')}")
        check(unit.get("StateDirectory") == ["vireo"], "StateDirectory is not vireo")
        exec_start = unit.get("ExecStart", [""])[0].split()
        check(exec_start[:2] == [args.server, args.conf],
              f"ExecStart runs {exec_start[:2]}, not {[args.server, args.conf]}")
        check(exec_start[2:] == ["--supervised", "systemd"],
              f"ExecStart's options are {exec_start[2:]}")
        print(f"installed: {', '.join(sorted(str(p.relative_to(destdir)) for p in found))}")

        run_installed_server(args, destdir, work, exec_start)
        print("the installed server started with the installed config, notified READY=1, "
              "answered PING and shut down")

        conf = staged(destdir, args.conf)
        conf.write_text(conf.read_text() + "# a local edit\n")
        install(args.cmake, args.build_dir, destdir)
        check(conf.read_text().endswith("# a local edit\n"), "a reinstall overwrote the config")
        print("a reinstall kept the edited config")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"install test passed in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

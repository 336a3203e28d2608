"""INFO, SLOWLOG, CONFIG, TIME, LASTSAVE, DEBUG and SHUTDOWN."""

from __future__ import annotations

import re
import threading
import time

import pytest
import redis

from conftest import wait_for

DEFAULT_SECTIONS = ["Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU",
                    "Modules", "Errorstats", "Cluster", "Keyspace"]
ALL_SECTIONS = ["Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU",
                "Modules", "Commandstats", "Errorstats", "Latencystats", "Cluster", "Keyspace"]


def info_text(r, *sections) -> str:
    """INFO's raw text (redis-py would parse it into a dict)."""
    conn = r.connection_pool.get_connection("INFO")
    try:
        conn.send_command("INFO", *sections)
        return conn.read_response().decode()
    finally:
        r.connection_pool.release(conn)


def headers(text: str) -> list[str]:
    return [line[2:] for line in text.split("\r\n") if line.startswith("# ")]


# ---------------------------------------------------------------------------------------------
# INFO


def test_info_default_sections_and_layout(r):
    text = info_text(r)
    assert headers(text) == DEFAULT_SECTIONS
    # "# Section\r\n" then "field:value\r\n" lines; sections separated by an empty line.
    assert text.startswith("# Server\r\nredis_version:7.2.4\r\n")
    assert text.endswith("\r\n")
    for block in text.split("\r\n\r\n"):
        lines = block.rstrip("\r\n").split("\r\n")
        assert lines[0].startswith("# "), block
        for line in lines[1:]:
            assert re.fullmatch(r"[a-z0-9_|]+:[^\r\n]*", line, re.I), line


@pytest.mark.parametrize("arg", ["all", "everything", "ALL"])
def test_info_all(r, arg):
    assert headers(info_text(r, arg)) == ALL_SECTIONS


def test_info_default_keyword(r):
    assert headers(info_text(r, "default")) == DEFAULT_SECTIONS


def test_info_sections_keep_server_order(r):
    assert headers(info_text(r, "keyspace", "CPU", "server")) == ["Server", "CPU", "Keyspace"]
    assert headers(info_text(r, "cpu", "cpu")) == ["CPU"]
    assert headers(info_text(r, "commandstats", "default")) == ALL_SECTIONS[:8] + [
        "Commandstats", "Errorstats", "Cluster", "Keyspace"]


def test_info_unknown_section_is_empty(raw):
    assert raw.execute("INFO", "nosuchsection") == b"$0\r\n\r\n"
    assert raw.execute("INFO", "nosuch", "cpu").startswith(b"$")


def test_info_resp3_is_verbatim(raw):
    raw.execute("HELLO", "3")
    reply = raw.execute("INFO", "server")
    header, body = reply.split(b"\r\n", 1)
    assert header.startswith(b"=") and int(header[1:]) == len(body) - 2
    assert body.startswith(b"txt:# Server\r\n")


def test_info_server_fields(server, r):
    info = r.info("server")
    assert info["redis_version"] == "7.2.4"
    assert info["redis_mode"] == "standalone"
    assert info["tcp_port"] == server.port
    assert info["process_id"] == server.proc.pid
    assert info["arch_bits"] == 64
    assert len(info["run_id"]) == 40
    assert info["uptime_in_seconds"] >= 0 and info["uptime_in_days"] == 0
    assert info["hz"] == info["configured_hz"] == 10
    assert abs(info["server_time_usec"] / 1e6 - time.time()) < 5
    assert "vireo_version" in info
    assert info["executable"].endswith("server")
    assert info["config_file"] == ""


def test_info_clients(server, r):
    extra = [server.client() for _ in range(3)]
    for c in extra:
        c.ping()
    info = r.info("clients")
    assert info["connected_clients"] == len(r.client_list()) >= 4
    assert info["blocked_clients"] == 0
    assert info["maxclients"] == 10000
    for field in ("cluster_connections", "tracking_clients", "pubsub_clients",
                  "watching_clients", "clients_in_timeout_table", "total_watched_keys",
                  "total_blocking_keys", "total_blocking_keys_on_nokey"):
        assert info[field] >= 0, field
    for c in extra:
        c.connection_pool.disconnect()
    wait_for(lambda: r.info("clients")["connected_clients"] <= info["connected_clients"] - 3)


def test_info_watching_clients(server, r):
    watcher = server.raw()
    watcher.execute("WATCH", "a", "b")
    info = r.info("clients")
    assert info["watching_clients"] == 1
    assert info["total_watched_keys"] == 2


def test_info_memory(r):
    info = r.info("memory")
    assert info["used_memory"] > 0
    assert re.fullmatch(r"\d+(\.\d\d[KMGTP])?B?", info["used_memory_human"])
    assert info["used_memory_rss"] > 0
    assert info["used_memory_peak"] >= info["used_memory"]
    assert isinstance(info["mem_fragmentation_ratio"], float)
    assert info["maxmemory"] == 0 and info["maxmemory_human"] == "0B"
    assert info["maxmemory_policy"] == "noeviction"
    assert info["total_system_memory"] > 0


def test_info_memory_grows_with_data(r):
    before = r.info("memory")["used_memory"]
    r.mset({f"key:{i}": "x" * 100 for i in range(5000)})
    assert r.info("memory")["used_memory"] > before + 5000 * 100


def test_info_persistence(r):
    info = r.info("persistence")
    assert info["loading"] == 0
    assert info["aof_enabled"] == 0
    assert abs(info["rdb_last_save_time"] - time.time()) < 3600
    before = info["rdb_changes_since_last_save"]
    r.set("a", 1)
    r.set("b", 2)
    assert r.info("persistence")["rdb_changes_since_last_save"] == before + 2


def test_info_stats(server, r):
    before = r.info("stats")
    r.ping()
    r.ping()
    after = r.info("stats")
    # The first INFO and two PINGs ran in between.
    assert after["total_commands_processed"] == before["total_commands_processed"] + 3
    assert after["total_net_input_bytes"] > before["total_net_input_bytes"]
    assert after["total_net_output_bytes"] > before["total_net_output_bytes"]
    server.client().ping()
    assert r.info("stats")["total_connections_received"] > before["total_connections_received"]
    for field in ("rejected_connections", "expired_keys", "evicted_keys", "keyspace_hits",
                  "keyspace_misses", "total_error_replies", "instantaneous_ops_per_sec",
                  "total_reads_processed", "total_writes_processed"):
        assert isinstance(after[field], int), field
    assert isinstance(after["instantaneous_input_kbps"], float)


def test_info_instantaneous_ops_per_sec(server, r):
    busy = server.client()
    stop = threading.Event()

    def load():
        while not stop.is_set():
            busy.ping()

    thread = threading.Thread(target=load)
    thread.start()
    try:
        wait_for(lambda: r.info("stats")["instantaneous_ops_per_sec"] > 0)
    finally:
        stop.set()
        thread.join()


def test_info_replication_and_cluster(r):
    info = r.info("replication")
    assert info["role"] == "master"
    assert info["connected_slaves"] == 0
    assert len(info["master_replid"]) == 40
    assert r.info("cluster")["cluster_enabled"] == 0


def test_info_cpu(r):
    info = r.info("cpu")
    for field in ("used_cpu_sys", "used_cpu_user", "used_cpu_sys_children",
                  "used_cpu_user_children", "used_cpu_sys_main_thread",
                  "used_cpu_user_main_thread"):
        assert re.fullmatch(r"\d+\.\d{6}", str(info_text(r, "cpu").split(field + ":")[1]
                                                .split("\r\n")[0])), field
        assert info[field] >= 0


def test_info_keyspace(r):
    assert r.info("keyspace") == {}
    r.set("a", 1)
    r.set("b", 2, ex=100)
    r.execute_command("SELECT", 5)
    r.set("c", 3)
    r.execute_command("SELECT", 0)
    info = r.info("keyspace")
    assert info["db0"]["keys"] == 2 and info["db0"]["expires"] == 1
    assert 0 <= info["db0"]["avg_ttl"] <= 100000
    assert info["db5"] == {"keys": 1, "expires": 0, "avg_ttl": 0, "subexpiry": 0}
    assert re.search(r"\r\ndb0:keys=2,expires=1,avg_ttl=\d+,subexpiry=0\r\n", info_text(r, "keyspace"))


def test_info_commandstats(r):
    r.config_resetstat()
    r.set("k", "v")
    r.get("k")
    r.get("k")
    r.config_get("maxmemory")
    with pytest.raises(redis.ResponseError):
        r.execute_command("GET")  # rejected: wrong arity
    with pytest.raises(redis.ResponseError):
        r.execute_command("INCR", "k")  # failed: not an integer
    text = info_text(r, "commandstats")
    assert re.search(r"\r\ncmdstat_get:calls=2,usec=\d+,usec_per_call=\d+\.\d\d,"
                     r"rejected_calls=1,failed_calls=0\r\n", text), text
    assert re.search(r"\r\ncmdstat_incr:calls=1,usec=\d+,usec_per_call=\d+\.\d\d,"
                     r"rejected_calls=0,failed_calls=1\r\n", text), text
    assert re.search(r"\r\ncmdstat_config\|get:calls=1,", text), text
    stats = r.info("commandstats")
    assert stats["cmdstat_set"]["calls"] == 1


def test_info_errorstats(r):
    r.config_resetstat()
    r.set("s", "x")
    for _ in range(2):
        with pytest.raises(redis.ResponseError):
            r.execute_command("NOSUCHCOMMAND")
    pipe = r.pipeline(transaction=False)
    pipe.execute_command("MULTI")
    pipe.execute_command("NOSUCHCOMMAND")
    pipe.execute_command("EXEC")
    pipe.execute(raise_on_error=False)
    text = info_text(r, "errorstats")
    assert text == "# Errorstats\r\nerrorstat_ERR:count=3\r\nerrorstat_EXECABORT:count=1\r\n"
    assert r.info("stats")["total_error_replies"] == 4


def test_config_resetstat(r):
    r.set("k", "v")
    with pytest.raises(redis.ResponseError):
        r.execute_command("NOSUCHCOMMAND")
    assert r.config_resetstat() is True
    # As in Redis, the RESETSTAT itself is counted once it has run.
    assert re.fullmatch(r"# Commandstats\r\ncmdstat_config\|resetstat:calls=1,usec=\d+,"
                        r"usec_per_call=\d+\.\d\d,rejected_calls=0,failed_calls=0\r\n",
                        info_text(r, "commandstats"))
    assert info_text(r, "errorstats") == "# Errorstats\r\n"
    stats = r.info("stats")
    assert stats["total_commands_processed"] == 3  # RESETSTAT and the two INFOs
    assert stats["total_error_replies"] == 0


# ---------------------------------------------------------------------------------------------
# SLOWLOG


@pytest.fixture
def slowlog(r):
    r.config_set("slowlog-log-slower-than", 0)
    r.slowlog_reset()
    yield r
    r.config_set("slowlog-log-slower-than", 10000)
    r.config_set("slowlog-max-len", 128)
    r.slowlog_reset()


def test_slowlog_records_entries(slowlog, raw):
    r = slowlog
    raw.execute("CLIENT", "SETNAME", "slowpoke")
    raw.execute("SET", "foo", "bar")
    entries = r.execute_command("SLOWLOG", "GET", 1)
    assert len(entries) == 1
    entry = entries[0]
    assert len(entry) == 6
    entry_id, timestamp, duration, args, peer, name = entry
    assert isinstance(entry_id, int)
    assert abs(timestamp - time.time()) < 10
    assert duration >= 0
    assert args == [b"SET", b"foo", b"bar"]
    assert re.fullmatch(rb"127\.0\.0\.1:\d+", peer)
    assert name == b"slowpoke"


def test_slowlog_newest_first_and_count(slowlog):
    r = slowlog
    for i in range(15):
        r.set(f"k{i}", i)
    default = r.execute_command("SLOWLOG", "GET")
    assert len(default) == 10
    ids = [e[0] for e in default]
    assert ids == sorted(ids, reverse=True)
    assert default[0][3] == [b"SET", b"k14", b"14"]
    everything = r.execute_command("SLOWLOG", "GET", -1)
    assert len(everything) == r.slowlog_len() - 1 or len(everything) == r.slowlog_len()
    assert r.execute_command("SLOWLOG", "GET", 0) == []
    parsed = r.slowlog_get(2)
    assert parsed[0]["command"].startswith(b"SLOWLOG GET")


def test_slowlog_len_and_reset(slowlog):
    r = slowlog
    r.set("a", 1)
    r.set("b", 2)
    assert r.slowlog_len() >= 2  # SET, SET (and the SLOWLOG RESET before them)
    assert r.slowlog_reset() is True
    # The RESET itself is logged once it has run.
    assert r.slowlog_len() == 1
    assert [e[3] for e in r.execute_command("SLOWLOG", "GET")] == [
        [b"SLOWLOG", b"LEN"], [b"SLOWLOG", b"RESET"]]


def test_slowlog_max_len(slowlog):
    r = slowlog
    r.config_set("slowlog-max-len", 3)
    for i in range(10):
        r.set(f"k{i}", i)
    assert r.slowlog_len() == 3


def test_slowlog_threshold(r):
    r.config_set("slowlog-log-slower-than", 1000000)
    try:
        r.slowlog_reset()
        r.set("a", 1)
        assert r.slowlog_len() == 0
    finally:
        r.config_set("slowlog-log-slower-than", 10000)


def test_slowlog_truncates_long_arguments(slowlog):
    r = slowlog
    r.set("big", "x" * 200)
    args = r.execute_command("SLOWLOG", "GET", 1)[0][3]
    assert args[2] == b"x" * 128 + b"... (72 more bytes)"
    r.execute_command("DEL", *[f"k{i}" for i in range(40)])
    args = r.execute_command("SLOWLOG", "GET", 1)[0][3]
    assert len(args) == 32
    assert args[-1] == b"... (10 more arguments)"


def test_slowlog_resp3_shape(slowlog, server):
    conn = server.raw()
    conn.execute("HELLO", "3")
    conn.execute("PING")
    reply = conn.execute("SLOWLOG", "GET", 1)
    assert re.fullmatch(rb"\*1\r\n\*6\r\n:\d+\r\n:\d+\r\n:\d+\r\n\*1\r\n\$4\r\nPING\r\n"
                        rb"\$\d+\r\n127\.0\.0\.1:\d+\r\n\$0\r\n\r\n", reply), reply


@pytest.mark.parametrize("args, error", [
    (("GET", "abc"), "ERR count should be greater than or equal to -1"),
    (("GET", "-2"), "ERR count should be greater than or equal to -1"),
    (("GET", "1", "2"),
     "ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP."),
    (("LEN", "1"), "ERR wrong number of arguments for 'slowlog|len' command"),
    (("RESET", "1"), "ERR wrong number of arguments for 'slowlog|reset' command"),
    (("foo",), "ERR unknown subcommand 'foo'. Try SLOWLOG HELP."),
    ((), "ERR wrong number of arguments for 'slowlog' command"),
])
def test_slowlog_errors(raw, args, error):
    assert raw.execute("SLOWLOG", *args) == b"-" + error.encode() + b"\r\n"


def test_slowlog_help(r):
    lines = r.execute_command("SLOWLOG", "HELP")
    assert lines[0] == b"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"GET [<count>]" in lines and lines[-2:] == [b"HELP", b"    Prints this help."]


# ---------------------------------------------------------------------------------------------
# CONFIG


def test_config_get_set(r):
    assert r.config_get("maxmemory") == {"maxmemory": "0"}
    assert r.config_set("maxmemory", "10mb") is True
    assert r.config_get("maxmemory") == {"maxmemory": "10485760"}
    assert r.info("memory")["maxmemory"] == 10485760
    r.execute_command("CONFIG", "SET", "maxmemory", "0", "hz", "20")
    assert r.config_get("maxmemory") == {"maxmemory": "0"}
    assert r.info("server")["hz"] == 20
    r.config_set("hz", 10)


def test_config_get_multiple_patterns(raw):
    raw.execute("HELLO", "3")
    reply = raw.execute("CONFIG", "GET", "maxmemory", "timeout")
    assert reply.startswith(b"%2\r\n")
    assert raw.execute("CONFIG", "GET", "nosuchparam") == b"%0\r\n"


def test_config_set_errors(raw):
    assert raw.execute("CONFIG", "SET", "maxmemory") == (
        b"-ERR wrong number of arguments for 'config|set' command\r\n")
    assert raw.execute("CONFIG", "SET", "a", "b", "c") == b"-ERR syntax error\r\n"
    reply = raw.execute("CONFIG", "SET", "nosuchparam", "1")
    assert reply.startswith(b"-ERR ") and b"nosuchparam" in reply
    assert raw.execute("CONFIG", "GET") == (
        b"-ERR wrong number of arguments for 'config|get' command\r\n")
    assert raw.execute("CONFIG", "foo") == b"-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n"


def test_config_rewrite_without_file(raw):
    assert raw.execute("CONFIG", "REWRITE") == (
        b"-ERR The server is running without a config file\r\n")


def test_config_rewrite_with_file(server_factory):
    srv = server_factory(config_text="hz 10\n")
    c = srv.client()
    c.config_set("hz", 15)
    assert c.config_rewrite() == b"OK"
    text = (srv.workdir / "server.conf").read_text()
    assert "hz 15" in text


def test_config_help(r):
    lines = r.execute_command("CONFIG", "HELP")
    assert lines[0] == b"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"RESETSTAT" in lines and b"REWRITE" in lines


# ---------------------------------------------------------------------------------------------
# TIME, LASTSAVE


def test_time(raw, r):
    reply = raw.execute("TIME")
    assert re.fullmatch(rb"\*2\r\n\$\d+\r\n\d+\r\n\$\d+\r\n\d+\r\n", reply)
    seconds, micros = r.time()
    assert abs(seconds + micros / 1e6 - time.time()) < 5
    assert 0 <= micros < 1000000
    assert raw.execute("TIME", "x") == b"-ERR wrong number of arguments for 'time' command\r\n"


def test_lastsave(r, raw):
    reply = raw.execute("LASTSAVE")
    assert re.fullmatch(rb":\d+\r\n", reply)
    value = int(reply[1:-2])
    assert value <= time.time() + 1
    assert value == r.info("persistence")["rdb_last_save_time"]
    assert raw.execute("LASTSAVE", "x") == (
        b"-ERR wrong number of arguments for 'lastsave' command\r\n")


# ---------------------------------------------------------------------------------------------
# DEBUG


def test_debug_sleep_blocks_the_server(server, r):
    sleeper = server.raw()
    start = time.monotonic()
    sleeper.send_command("DEBUG", "SLEEP", "0.5")
    # Give the server a head start on the sleep; the other client's PING must then wait.
    time.sleep(0.1)
    assert r.ping() is True
    pinged = time.monotonic()
    assert sleeper.read_reply() == b"+OK\r\n"
    assert pinged - start >= 0.45


def test_debug_sleep_zero_and_garbage(raw):
    assert raw.execute("DEBUG", "SLEEP", "0") == b"+OK\r\n"
    assert raw.execute("DEBUG", "SLEEP", "abc") == b"+OK\r\n"


def test_debug_set_active_expire(r):
    assert r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0) == b"OK"
    try:
        r.set("k", "v", px=10)
        time.sleep(0.3)  # several cron cycles; nothing may delete the key meanwhile
        assert r.dbsize() == 1
    finally:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    wait_for(lambda: r.dbsize() == 0)


def test_debug_protocol_resp2(raw):
    expected = {
        "string": b"$11\r\nHello World\r\n",
        "integer": b":12345\r\n",
        "double": b"$5\r\n3.141\r\n",
        "bignum": b"$37\r\n1234567999999999999999999999999999999\r\n",
        "null": b"$-1\r\n",
        "array": b"*3\r\n:0\r\n:1\r\n:2\r\n",
        "set": b"*3\r\n:0\r\n:1\r\n:2\r\n",
        "map": b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n",
        "attrib": b"$39\r\nSome real reply following the attribute\r\n",
        "true": b":1\r\n",
        "false": b":0\r\n",
        "verbatim": b"$25\r\nThis is a verbatim\nstring\r\n",
        "push": b"-ERR RESP2 is not supported by this command\r\n",
    }
    for name, reply in expected.items():
        assert raw.execute("DEBUG", "PROTOCOL", name) == reply, name


def test_debug_protocol_resp3(raw):
    raw.execute("HELLO", "3")
    expected = {
        "double": b",3.141\r\n",
        "bignum": b"(1234567999999999999999999999999999999\r\n",
        "null": b"_\r\n",
        "set": b"~3\r\n:0\r\n:1\r\n:2\r\n",
        "map": b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n",
        "true": b"#t\r\n",
        "verbatim": b"=29\r\ntxt:This is a verbatim\nstring\r\n",
        "attrib": b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"
                  b"$39\r\nSome real reply following the attribute\r\n",
    }
    for name, reply in expected.items():
        assert raw.execute("DEBUG", "PROTOCOL", name) == reply, name
    assert raw.execute("DEBUG", "PROTOCOL", "push") == (
        b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n")
    assert raw.read_reply() == b"$40\r\nSome real reply following the push reply\r\n"


def test_debug_errors(raw):
    assert raw.execute("DEBUG", "ERROR", "MYCODE custom message") == b"-MYCODE custom message\r\n"
    assert raw.execute("DEBUG", "ERROR", "two\nlines") == b"-two lines\r\n"
    assert raw.execute("DEBUG", "foo") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'foo'. Try DEBUG HELP.\r\n")
    assert raw.execute("DEBUG", "SLEEP") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'SLEEP'. Try DEBUG HELP.\r\n")
    assert raw.execute("DEBUG") == b"-ERR wrong number of arguments for 'debug' command\r\n"
    assert raw.execute("DEBUG", "PROTOCOL", "nope").startswith(b"-ERR Wrong protocol type name.")


def test_debug_help_and_log(r):
    lines = r.execute_command("DEBUG", "HELP")
    assert lines[0] == b"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert b"SLEEP <seconds>" in lines and b"SET-ACTIVE-EXPIRE <0|1>" in lines
    assert r.execute_command("DEBUG", "LOG", "hello from the tests") == b"OK"


# ---------------------------------------------------------------------------------------------
# SHUTDOWN


@pytest.mark.parametrize("args", [(), ("NOSAVE",), ("SAVE",), ("NOW", "FORCE"), ("nosave", "now")])
def test_shutdown_stops_the_server(server_factory, args):
    srv = server_factory()
    srv.expect_exit = True
    conn = srv.raw()
    conn.send_command("SHUTDOWN", *args)
    assert conn.read_until_closed() == b""
    srv.proc.wait(10)
    assert srv.proc.returncode == 0


@pytest.mark.parametrize("args, error", [
    (("foo",), b"-ERR syntax error\r\n"),
    (("NOSAVE", "SAVE"), b"-ERR syntax error\r\n"),
    (("ABORT", "NOW"), b"-ERR syntax error\r\n"),
    (("ABORT",), b"-ERR No shutdown in progress.\r\n"),
])
def test_shutdown_errors(raw, server, args, error):
    assert raw.execute("SHUTDOWN", *args) == error
    assert server.alive()


def test_shutdown_not_allowed_in_multi(raw, server):
    raw.execute("MULTI")
    assert raw.execute("SHUTDOWN") == b"-ERR Command not allowed inside a transaction\r\n"
    raw.execute("DISCARD")
    assert server.alive()

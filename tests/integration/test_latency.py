"""LATENCY (DOCTOR, GRAPH, HISTOGRAM, HISTORY, LATEST, RESET, HELP), latency-monitor-threshold,
latency-tracking and INFO latencystats, as Redis 7.2 behaves."""

import re
import time

import pytest

from conftest import call, call_error, wait_for


@pytest.fixture
def lat(plain):
    call(plain, "CONFIG", "SET", "latency-monitor-threshold", "0")
    call(plain, "CONFIG", "SET", "latency-tracking", "yes")
    call(plain, "CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")
    call(plain, "LATENCY", "RESET")
    call(plain, "CONFIG", "RESETSTAT")
    yield plain
    call(plain, "CONFIG", "SET", "latency-monitor-threshold", "0")


def as_dict(flat):
    return dict(zip(flat[0::2], flat[1::2]))


def histogram(client, *names):
    return {k: as_dict(v) for k, v in as_dict(call(client, "LATENCY", "HISTOGRAM", *names)).items()}


def test_histogram_after_resetstat_has_only_resetstat(lat):
    call(lat, "CONFIG", "RESETSTAT")
    h = histogram(lat)
    assert list(h) == ["config|resetstat"]
    assert h["config|resetstat"]["calls"] == 1


def test_histogram_counts_calls_and_buckets(lat):
    call(lat, "SET", "a", "b")
    call(lat, "SET", "c", "d")
    h = histogram(lat)
    assert h["set"]["calls"] == 2
    buckets = as_dict(h["set"]["histogram_usec"])
    # Cumulative counts ending at the number of calls; keys are power-of-two µs bounds.
    assert list(buckets.values())[-1] == 2
    assert all(k in (1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113) or k > 2113 for k in buckets)


def test_histogram_subcommands_and_subsets(lat):
    call(lat, "CLIENT", "ID")
    call(lat, "CLIENT", "LIST")
    h = histogram(lat, "client")
    assert set(h) == {"client|id", "client|list"}
    assert set(histogram(lat, "client|id")) == {"client|id"}
    assert set(histogram(lat, "CLIENT|ID")) == {"client|id"}
    call(lat, "GET", "a")
    # Unknown names and commands without calls are skipped.
    assert set(histogram(lat, "blabla", "get", "zadd", "nosuch|sub")) == {"get"}
    assert call(lat, "LATENCY", "HISTOGRAM", "blabla") == []


def test_histogram_blocked_command_counted_once(lat, server):
    raw = server.raw()
    raw.send_command("BLPOP", "q", "0")
    wait_for(lambda: "blocked_clients:1" in call(lat, "INFO", "clients"))
    call(lat, "RPUSH", "q", "x")
    assert raw.read_reply() == b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n"
    raw.close()
    assert histogram(lat, "blpop")["blpop"]["calls"] == 1
    assert "latency_percentiles_usec_blpop:p50=" in call(lat, "INFO", "latencystats")


def test_resetstat_clears_histograms(lat):
    call(lat, "SET", "a", "b")
    assert "latency_percentiles_usec_set:" in call(lat, "INFO", "latencystats")
    call(lat, "CONFIG", "RESETSTAT")
    assert "latency_percentiles_usec_set:" not in call(lat, "INFO", "latencystats")
    assert "set" not in histogram(lat)


def test_latency_tracking_off_records_nothing(lat):
    call(lat, "CONFIG", "SET", "latency-tracking", "no")
    call(lat, "SET", "a", "b")
    assert histogram(lat, "set") == {}
    assert call(lat, "INFO", "latencystats").strip() == "# Latencystats"
    call(lat, "CONFIG", "SET", "latency-tracking", "yes")
    call(lat, "SET", "a", "b")
    assert histogram(lat, "set")["set"]["calls"] == 1


def test_info_latencystats_percentiles(lat):
    call(lat, "SET", "a", "b")
    info = call(lat, "INFO", "latencystats")
    line = re.search(r"latency_percentiles_usec_set:(.*)\r\n", info).group(1)
    assert re.fullmatch(r"p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}", line), line
    call(lat, "CONFIG", "SET", "latency-tracking-info-percentiles", "0 25.5 100")
    assert call(lat, "CONFIG", "GET", "latency-tracking-info-percentiles") == [
        "latency-tracking-info-percentiles", "0 25.5 100"]
    info = call(lat, "INFO", "latencystats")
    assert re.search(r"latency_percentiles_usec_set:p0=[\d.]+,p25\.5=[\d.]+,p100=[\d.]+\r\n", info)
    call(lat, "CONFIG", "SET", "latency-tracking-info-percentiles", "0.0 50.0 100.0")
    assert call(lat, "CONFIG", "GET", "latency-tracking-info-percentiles")[1] == "0 50 100"
    call(lat, "CONFIG", "SET", "latency-tracking-info-percentiles", "")
    assert call(lat, "CONFIG", "GET", "latency-tracking-info-percentiles")[1] == ""
    assert "latency_percentiles_usec_set:\r\n" in call(lat, "INFO", "latencystats")
    # In INFO everything, not in the default sections.
    assert "latency_percentiles_usec_" in call(lat, "INFO", "everything")
    assert "Latencystats" not in call(lat, "INFO")


def test_info_latencystats_sleep_percentile_value(lat):
    call(lat, "DEBUG", "SLEEP", "0.01")
    info = call(lat, "INFO", "latencystats")
    p50 = float(re.search(r"latency_percentiles_usec_debug:p50=([\d.]+)", info).group(1))
    assert p50 >= 10000


def test_percentiles_config_errors(lat):
    assert "Invalid latency-tracking-info-percentiles parameters" in call_error(
        lat, "CONFIG", "SET", "latency-tracking-info-percentiles", "50 abc")
    assert "should sit between [0.0,100.0]" in call_error(
        lat, "CONFIG", "SET", "latency-tracking-info-percentiles", "101")
    assert "should sit between [0.0,100.0]" in call_error(
        lat, "CONFIG", "SET", "latency-tracking-info-percentiles", "-1")
    assert call(lat, "CONFIG", "GET", "latency-tracking-info-percentiles")[1] == "50 99 99.9"


def test_threshold_config(lat):
    assert call(lat, "CONFIG", "GET", "latency-monitor-threshold") == ["latency-monitor-threshold", "0"]
    assert "argument couldn't be parsed" in call_error(
        lat, "CONFIG", "SET", "latency-monitor-threshold", "x")
    assert call_error(lat, "CONFIG", "SET", "latency-monitor-threshold", "-1")
    assert call(lat, "CONFIG", "GET", "latency-tracking") == ["latency-tracking", "yes"]


def test_monitor_off_records_no_event(lat):
    call(lat, "DEBUG", "SLEEP", "0.05")
    assert call(lat, "LATENCY", "LATEST") == []
    assert "Latency monitoring is disabled" in call(lat, "LATENCY", "DOCTOR")


def test_command_events_latest_history_graph(lat):
    call(lat, "CONFIG", "SET", "latency-monitor-threshold", "20")
    before = int(time.time())
    call(lat, "DEBUG", "SLEEP", "0.03")
    call(lat, "PING")  # under the threshold: nothing
    latest = call(lat, "LATENCY", "LATEST")
    assert len(latest) == 1
    event, when, last_ms, max_ms = latest[0]
    assert event == "command" and when >= before and 30 <= last_ms < 1000 and max_ms == last_ms
    history = call(lat, "LATENCY", "HISTORY", "command")
    assert len(history) == 1 and history[0] == [when, last_ms]
    graph = call(lat, "LATENCY", "GRAPH", "command")
    assert re.match(rf"command - high {last_ms} ms, low {last_ms} ms \(all time high {last_ms} ms\)\n-{{80}}\n",
                    graph), graph
    # The same second keeps its worst sample only.
    call(lat, "DEBUG", "SLEEP", "0.06")
    history = call(lat, "LATENCY", "HISTORY", "command")
    if history[-1][0] == when:
        assert len(history) == 1 and history[0][1] >= 60
    assert call(lat, "LATENCY", "LATEST")[0][3] >= 60


def test_slow_command_is_not_fast_command(lat):
    call(lat, "CONFIG", "SET", "latency-monitor-threshold", "1")
    # DEBUG is not flagged fast, so its time is a "command" event, never "fast-command".
    call(lat, "DEBUG", "SLEEP", "0.005")
    events = [e[0] for e in call(lat, "LATENCY", "LATEST")]
    assert events == ["command"]


def test_doctor_reports_events(lat):
    call(lat, "CONFIG", "SET", "latency-monitor-threshold", "20")
    assert "no latency spike was observed" in call(lat, "LATENCY", "DOCTOR")
    call(lat, "DEBUG", "SLEEP", "0.03")
    doctor = call(lat, "LATENCY", "DOCTOR")
    assert "1. command: 1 latency spikes" in doctor
    assert "Slow Log" in doctor


def test_reset(lat):
    call(lat, "CONFIG", "SET", "latency-monitor-threshold", "20")
    call(lat, "DEBUG", "SLEEP", "0.03")
    assert call(lat, "LATENCY", "RESET", "blabla") == 0
    assert call(lat, "LATENCY", "RESET", "COMMAND", "command") == 1
    assert call(lat, "LATENCY", "LATEST") == []
    call(lat, "DEBUG", "SLEEP", "0.03")
    assert call(lat, "LATENCY", "RESET") == 1
    assert call(lat, "LATENCY", "RESET") == 0


def test_history_and_graph_of_unknown_event(lat):
    assert call(lat, "LATENCY", "HISTORY", "blabla") == []
    assert call_error(lat, "LATENCY", "GRAPH", "blabla") == "No samples available for event 'blabla'"


def big_set(client, key, members=300000):
    client.execute_command(
        "EVAL", "for i = 1, tonumber(ARGV[1]) do redis.call('SADD', KEYS[1], i) end", "1", key,
        str(members))


def test_expire_cycle_event(lat):
    big_set(lat, "big")
    call(lat, "CONFIG", "SET", "latency-monitor-threshold", "1")
    call(lat, "LATENCY", "RESET")
    # Freeing 300k members in the active expiry cycle takes well over a millisecond.
    call(lat, "PEXPIRE", "big", "1")
    wait_for(lambda: call(lat, "DBSIZE") == 0)
    events = [e[0] for e in call(lat, "LATENCY", "LATEST")]
    assert "expire-cycle" in events
    assert call(lat, "LATENCY", "GRAPH", "expire-cycle").startswith("expire-cycle - high ")


def test_eviction_events(lat):
    big_set(lat, "big")
    call(lat, "CONFIG", "SET", "latency-monitor-threshold", "1")
    call(lat, "LATENCY", "RESET")
    call(lat, "CONFIG", "SET", "maxmemory-policy", "allkeys-random")
    call(lat, "CONFIG", "SET", "maxmemory", "1")
    try:
        # The write that finds memory over the limit evicts the big set (and is then refused:
        # nothing fits in one byte).
        assert call_error(lat, "SET", "k", "v").startswith("OOM")
    finally:
        call(lat, "CONFIG", "SET", "maxmemory", "0")
        call(lat, "CONFIG", "SET", "maxmemory-policy", "noeviction")
    events = {e[0] for e in call(lat, "LATENCY", "LATEST")}
    assert {"eviction-del", "eviction-cycle"} <= events, events


def test_help_and_errors(lat):
    help_lines = call(lat, "LATENCY", "HELP")
    assert help_lines[0].startswith("LATENCY <subcommand>")
    assert any(line.startswith("HISTOGRAM") for line in help_lines)
    assert call_error(lat, "LATENCY", "HELP", "xxx") == "wrong number of arguments for 'latency|help' command"
    assert call_error(lat, "LATENCY") == "wrong number of arguments for 'latency' command"
    assert call_error(lat, "LATENCY", "foo") == "unknown subcommand 'foo'. Try LATENCY HELP."
    assert call_error(lat, "LATENCY", "LATEST", "x") == "wrong number of arguments for 'latency|latest' command"
    assert call_error(lat, "LATENCY", "DOCTOR", "x") == "wrong number of arguments for 'latency|doctor' command"
    assert call_error(lat, "LATENCY", "GRAPH") == "wrong number of arguments for 'latency|graph' command"
    assert call_error(lat, "LATENCY", "HISTORY", "a", "b") == "wrong number of arguments for 'latency|history' command"


def test_command_info_flags(lat):
    info = call(lat, "COMMAND", "INFO", "latency")[0]
    assert info[0] == "latency" and info[1] == -2
    subs = {s[0]: s for s in info[9]}
    assert set(subs) == {"latency|doctor", "latency|graph", "latency|histogram", "latency|history",
                         "latency|latest", "latency|reset", "latency|help"}
    assert set(subs["latency|reset"][2]) == {"admin", "noscript", "loading", "stale"}
    assert set(subs["latency|help"][2]) == {"loading", "stale"}


def test_resp3_histogram_is_a_map(raw):
    raw.execute("HELLO", "3")
    raw.execute("CONFIG", "RESETSTAT")
    reply = raw.execute("LATENCY", "HISTOGRAM", "config")
    assert reply.startswith(b"%1\r\n$16\r\nconfig|resetstat\r\n%2\r\n$5\r\ncalls\r\n:1\r\n"
                            b"$14\r\nhistogram_usec\r\n%1\r\n"), reply
    assert raw.execute("LATENCY", "DOCTOR").startswith(b"=")


def test_config_file_options(server_factory):
    srv = server_factory(config_text="latency-monitor-threshold 25\nlatency-tracking no\n"
                                     "latency-tracking-info-percentiles 10 99.99\n")
    c = srv.client(decode_responses=True)
    assert c.config_get("latency-*") == {
        "latency-monitor-threshold": "25", "latency-tracking": "no",
        "latency-tracking-info-percentiles": "10 99.99"}
    c.execute_command("DEBUG", "SLEEP", "0.03")
    assert [e[0] for e in c.execute_command("LATENCY", "LATEST")] == ["command"]
    assert c.execute_command("LATENCY", "HISTOGRAM") == []
    c.close()


def test_config_rewrite_keeps_latency_options(server_factory):
    srv = server_factory(config_text="latency-monitor-threshold 5\n")
    c = srv.client(decode_responses=True)
    c.config_set("latency-tracking-info-percentiles", "")
    c.config_set("latency-tracking", "no")
    c.config_rewrite()
    text = (srv.workdir / "server.conf").read_text()
    c.close()
    assert 'latency-tracking-info-percentiles ""' in text
    assert "latency-tracking no" in text
    assert "latency-monitor-threshold 5" in text


def test_aof_and_fork_events_use_redis_names(server_factory):
    # Disk and fork speed decide whether these reach even 1 ms, so only the names are checked:
    # whatever the AOF and BGSAVE record is one of Redis's events.
    srv = server_factory(["--appendonly", "yes", "--appendfsync", "always",
                          "--latency-monitor-threshold", "1"])
    c = srv.client(decode_responses=True)
    big_set(c, "big", 100000)
    for i in range(200):
        c.set(f"k{i}", "v" * 1000)
    c.bgsave()
    wait_for(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0)
    allowed = {"command", "fast-command", "fork", "aof-write", "aof-write-alone",
               "aof-write-active-child", "aof-write-pending-fsync", "aof-fsync-always", "aof-rename"}
    events = {e[0] for e in c.execute_command("LATENCY", "LATEST")}
    assert events <= allowed, events
    assert "command" in events  # the EVAL
    c.close()

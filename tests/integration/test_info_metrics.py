"""INFO's event-loop metrics (Redis 7.2): eventloop_* in INFO stats and the INFO debug section."""

from conftest import wait_for


def debug_info(r):
    return r.info("debug")


def test_cycles_and_durations_grow_with_cron_ticks(r):
    before = r.info("stats")
    assert before["eventloop_cycles"] > 0
    assert before["eventloop_duration_sum"] > 0
    cron_before = debug_info(r)["eventloop_duration_cron_sum"]
    # The cron runs with no client activity: its ticks are cycles of their own.
    wait_for(lambda: debug_info(r)["eventloop_duration_cron_sum"] > cron_before)
    after = r.info("stats")
    assert after["eventloop_cycles"] > before["eventloop_cycles"]
    assert after["eventloop_duration_sum"] > before["eventloop_duration_sum"]


def test_command_time_is_counted(r):
    before = r.info("stats")["eventloop_duration_cmd_sum"]
    r.execute_command("DEBUG", "SLEEP", "0.02")
    after = r.info("stats")["eventloop_duration_cmd_sum"]
    assert after - before >= 20000
    # The sleeping command's cycle is the longest one.
    assert debug_info(r)["eventloop_duration_max"] >= 20000


def test_commands_per_cycle_max_counts_a_pipeline(r):
    pipe = r.pipeline(transaction=False)
    for i in range(20):
        pipe.set(f"k{i}", i)
    pipe.execute()
    assert debug_info(r)["eventloop_cmd_per_cycle_max"] >= 20


def test_instantaneous_eventloop_metrics(r):
    r.config_resetstat()
    # Rates need two cron samples. An idle server at hz 10 runs about ten cycles a second, and
    # this slow polling adds about ten more: a loop that spun would show thousands.
    stats = wait_for(lambda: (s := r.info("stats"))["instantaneous_eventloop_cycles_per_sec"] > 0
                     and s["instantaneous_eventloop_duration_usec"] > 0 and s, interval=0.1)
    assert stats["instantaneous_eventloop_cycles_per_sec"] < 60
    assert stats["instantaneous_eventloop_duration_usec"] < 100000


def test_resetstat_zeroes_the_counters(r):
    r.execute_command("DEBUG", "SLEEP", "0.05")
    r.config_resetstat()
    stats = r.info("stats")
    # Only the cycles since the reset (this INFO's and maybe a cron tick's) are counted.
    assert stats["eventloop_duration_cmd_sum"] < 50000
    assert debug_info(r)["eventloop_duration_max"] < 50000


def test_debug_section_only_when_named(r, plain):
    for sections in ((), ("all",), ("everything",), ("default",)):
        text = plain.execute_command("INFO", *sections)
        assert "# Debug" not in text
        assert "eventloop_duration_aof_sum" not in text
    # Named with others, it comes last, as in Redis.
    text = plain.execute_command("INFO", "debug", "keyspace", "stats")
    headers = [line for line in text.split("\r\n") if line.startswith("#")]
    assert headers == ["# Stats", "# Keyspace", "# Debug"]
    fields = debug_info(r)
    assert set(fields) == {"eventloop_duration_aof_sum", "eventloop_duration_cron_sum",
                           "eventloop_duration_max", "eventloop_cmd_per_cycle_max"}
    assert fields["eventloop_duration_cron_sum"] > 0


def test_flushall_with_save_points_saves_and_resets_the_change_count(server_factory):
    # Redis 7.2 saves the emptied dataset in the foreground when save points are set.
    srv = server_factory(["--save", "3600 1 300 100 60 10000"])
    c = srv.client()
    c.set("key", "value")
    saves_before = c.info("persistence")["rdb_last_save_time"]
    c.flushall()
    persistence = c.info("persistence")
    assert persistence["rdb_changes_since_last_save"] == 0
    assert persistence["rdb_last_save_time"] >= saves_before
    assert (srv.workdir / "dump.rdb").exists()


def test_flushall_without_save_points_does_not_save(server_factory):
    srv = server_factory(["--save", ""])
    c = srv.client()
    c.set("key", "value")
    c.flushall()
    assert c.info("persistence")["rdb_changes_since_last_save"] > 0
    assert not (srv.workdir / "dump.rdb").exists()


def proc_cmdline(client) -> str:
    pid = client.info("server")["process_id"]
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().rstrip(b"\0").decode()


def test_process_title_follows_the_template(server_factory):
    srv = server_factory()
    c = srv.client()
    port = srv.port
    # The default template: the program, then the first bind address and the port.
    assert proc_cmdline(c).endswith(f"/vireo-server 127.0.0.1:{port}")
    # Longer than the original command line: the title runs on over the environment's room.
    c.config_set("proc-title-template",
                 "TEST {title} {listen-addr} {port} {tls-port} {{literal} " + "x" * 300)
    words = proc_cmdline(c).split(" ")
    assert words[0] == "TEST"
    assert words[1].endswith("/vireo-server")
    assert words[2:6] == [f"127.0.0.1:{port}", str(port), "0", "{literal}"]
    assert words[6] == "x" * 300
    # A BGSAVE child starts from the moved environment and the server carries on.
    c.set("k", "v")
    c.bgsave()
    wait_for(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0
             and c.info("persistence")["rdb_last_bgsave_status"] == "ok")


def test_set_proc_title_no_keeps_the_command_line(server_factory):
    srv = server_factory(["--set-proc-title", "no"])
    c = srv.client()
    c.config_set("proc-title-template", "TEST {title}")
    assert not proc_cmdline(c).startswith("TEST")

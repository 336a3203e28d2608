"""The allocator as Redis 7.2 on jemalloc shows it: INFO memory's mem_allocator and allocator_*
fields, DEBUG MALLCTL / MALLCTL-STR, MEMORY MALLOC-STATS and MEMORY PURGE. The sanitizer build
keeps its own allocator and answers as a Redis built with MALLOC=libc."""

import pytest
import redis

from conftest import call, call_error


@pytest.fixture(scope="module")
def jemalloc(server):
    client = server.client()
    allocator = client.info("memory")["mem_allocator"]
    client.close()
    if allocator == "libc":
        pytest.skip("not linked with jemalloc (sanitizer build)")
    return allocator


def test_mem_allocator_names_the_jemalloc_release(r, jemalloc):
    assert jemalloc == "jemalloc-5.3.0"


def test_allocator_fields_are_jemalloc_figures(r, jemalloc):
    # Enough small values that the figures are the dataset's, not the start-up's.
    r.execute_command("DEBUG", "POPULATE", 20000, "k", 100)
    m = r.info("memory")
    allocated, active, resident = (m["allocator_allocated"], m["allocator_active"],
                                   m["allocator_resident"])
    # jemalloc counts what its thread caches hold as allocated: used_memory is a little less.
    assert m["used_memory"] <= allocated < m["used_memory"] * 1.2
    assert allocated <= active <= resident
    assert m["allocator_frag_bytes"] == active - allocated
    assert m["allocator_frag_ratio"] == pytest.approx(active / allocated, abs=0.006)
    assert m["allocator_rss_bytes"] == resident - active
    assert m["allocator_rss_ratio"] == pytest.approx(resident / active, abs=0.006)
    assert m["rss_overhead_bytes"] == m["used_memory_rss"] - resident
    # The same counters through mallctl (a later epoch, so only roughly equal).
    assert call(r, "DEBUG", "MALLCTL", "stats.allocated") == pytest.approx(allocated, rel=0.05)


def test_fragmentation_after_deletes_shows_in_allocator_frag_ratio(r, jemalloc):
    r.execute_command("DEBUG", "POPULATE", 100000, "k", 200)
    before = r.info("memory")["allocator_frag_ratio"]
    pipe = r.pipeline(transaction=False)
    for i in range(0, 100000, 2):
        pipe.delete(f"k:{i}")
    pipe.execute()
    after = r.info("memory")["allocator_frag_ratio"]
    # Half of every slab freed: the pages stay active, the bytes in use halve.
    assert before < 1.2 and after > 1.5, (before, after)


def test_debug_mallctl_reads_and_writes(r, jemalloc):
    assert call(r, "DEBUG", "MALLCTL", "arenas.page") == 4096
    assert call(r, "DEBUG", "MALLCTL", "opt.narenas") > 0  # a 32-bit option
    assert call(r, "DEBUG", "MALLCTL-STR", "version").startswith(b"5.3.0-")
    assert call(r, "DEBUG", "MALLCTL-STR", "opt.dss") == b"secondary"
    # Writing returns the old value; a read-only option refuses, an unknown name is ENOENT.
    old = call(r, "DEBUG", "MALLCTL", "arena.0.dirty_decay_ms")
    assert call(r, "DEBUG", "MALLCTL", "arena.0.dirty_decay_ms", 5000) == old
    assert call(r, "DEBUG", "MALLCTL", "arena.0.dirty_decay_ms", old) == 5000
    assert call_error(r, "DEBUG", "MALLCTL", "arenas.page", 5) == "Operation not permitted"
    assert call_error(r, "DEBUG", "MALLCTL", "no.such") == "No such file or directory"
    assert call_error(r, "DEBUG", "MALLCTL-STR", "no.such") == "No such file or directory"
    assert call_error(r, "DEBUG", "MALLCTL", "arenas.page", "x") == (
        "value is not an integer or out of range")
    # A void control: VOID writes nothing, which runs it.
    assert call(r, "DEBUG", "MALLCTL-STR", "thread.tcache.flush", "VOID") == b"OK"


def test_memory_malloc_stats_is_jemallocs_report(r, jemalloc):
    report = call(r, "MEMORY", "MALLOC-STATS").decode()
    assert report.startswith("___ Begin jemalloc statistics ___")
    assert report.rstrip().endswith("--- End jemalloc statistics ---")
    assert "Allocated:" in report


def test_memory_purge_returns_dirty_pages(r, jemalloc):
    r.execute_command("DEBUG", "POPULATE", 50000, "k", 1000)
    call(r, "DEBUG", "MALLCTL", "arena.0.dirty_decay_ms", -1)  # keep every dirty page
    try:
        r.flushall()
        dirty = r.info("memory")["allocator_resident"]
        assert r.memory_purge()
        assert r.info("memory")["allocator_resident"] < dirty - 20_000_000
    finally:
        call(r, "DEBUG", "MALLCTL", "arena.0.dirty_decay_ms", 10000)


def test_libc_build_answers_as_redis_without_jemalloc(r):
    if r.info("memory")["mem_allocator"] != "libc":
        pytest.skip("jemalloc build")
    assert r.execute_command("MEMORY", "MALLOC-STATS") == (
        b"Stats not supported for the current allocator")
    assert r.memory_purge()
    with pytest.raises(redis.ResponseError, match="unknown subcommand"):
        r.execute_command("DEBUG", "MALLCTL", "arenas.page")

"""A work pool built from the Lua scripts in this directory (the pattern of BullMQ, Sidekiq,
smart-redis-queue...): idempotent publish, per-partition ordered get with a lock key,
priorities, delayed tasks, ack, reject with requeue, heartbeats and reclaim of dead consumers.

Used by test_workpool.py and by bench/scripting_bench.py.
"""
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ("publish", "get", "ack", "reject", "heartbeat", "reclaim", "stats")


def script_source(name: str) -> str:
    return (HERE / f"{name}.lua").read_text()


class WorkPool:
    def __init__(self, client, prefix: str = "wp", visibility_ms: int = 30000, heartbeat_s: int = 10):
        self.r = client
        self.prefix = prefix
        self.visibility_ms = visibility_ms
        self.heartbeat_s = heartbeat_s
        self.sha = {name: client.script_load(script_source(name)) for name in SCRIPTS}

    def _call(self, name, *args):
        return self.r.evalsha(self.sha[name], 1, self.prefix, *args)

    def publish(self, tasks):
        """tasks: iterable of (id, payload, partition, priority, delay_ms)."""
        args = []
        for task in tasks:
            args.extend(task)
        return self._call("publish", *args)

    def get(self, consumer: str, prefetch: int = 1):
        return self._call("get", consumer, prefetch, self.visibility_ms, self.heartbeat_s)

    def ack(self, consumer: str, *ids):
        return self._call("ack", consumer, *ids)

    def reject(self, consumer: str, task_id, requeue: bool = True, max_attempts: int = 5):
        return self._call("reject", consumer, task_id, "1" if requeue else "0", max_attempts)

    def heartbeat(self, consumer: str, seconds: int | None = None):
        return self._call("heartbeat", consumer, seconds or self.heartbeat_s)

    def reclaim(self):
        return self._call("reclaim")

    def stats(self):
        return self._call("stats")

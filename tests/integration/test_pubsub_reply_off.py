"""CLIENT REPLY OFF/SKIP drop replies, but not pub/sub pushes: (un)subscribe confirmations and
messages still arrive, in RESP2 and RESP3, as in Redis 7.2."""

import pytest


@pytest.mark.parametrize("proto", [2, 3])
def test_confirmations_and_messages_pass_reply_off(server, proto):
    sub = server.raw()
    if proto == 3:
        sub.execute("HELLO", "3")
    sub.send_command("CLIENT", "REPLY", "OFF")
    sub.send_command("SUBSCRIBE", "ch")
    head = b">" if proto == 3 else b"*"
    assert sub.read_reply() == head + b"3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
    sub.send_command("PSUBSCRIBE", "c*")
    assert sub.read_reply() == head + b"3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:2\r\n"
    pub = server.client()
    assert pub.publish("ch", "hello") == 2
    assert sub.read_reply() == head + b"3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n"
    assert sub.read_reply() == (
        head + b"4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$5\r\nhello\r\n")
    sub.send_command("UNSUBSCRIBE", "ch")
    assert sub.read_reply() == head + b"3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:1\r\n"
    if proto == 3:
        # Ordinary replies stay silenced: PING's PONG never arrives, the next push does.
        sub.send_command("PING")
    sub.send_command("PUNSUBSCRIBE", "c*")
    assert sub.read_reply() == head + b"3\r\n$12\r\npunsubscribe\r\n$2\r\nc*\r\n:0\r\n"


def test_reply_skip_keeps_the_confirmation(server):
    sub = server.raw()
    sub.execute("HELLO", "3")
    sub.send_command("CLIENT", "REPLY", "SKIP")
    sub.send_command("PSUBSCRIBE", "*")
    assert sub.read_reply() == b">3\r\n$10\r\npsubscribe\r\n$1\r\n*\r\n:1\r\n"
    # SKIP covered that one command: the next reply arrives.
    assert sub.execute("PING") == b"+PONG\r\n"


def test_reply_off_still_drops_other_replies(server):
    c = server.raw()
    c.send_command("CLIENT", "REPLY", "OFF")
    c.send_command("SET", "k", "v")
    c.send_command("CLIENT", "REPLY", "ON")
    assert c.read_reply() == b"+OK\r\n"
    assert c.execute("GET", "k") == b"$1\r\nv\r\n"

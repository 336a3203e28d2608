"""AGGREGATE COUNT (Redis 8.8) of ZUNION, ZINTER, ZUNIONSTORE and ZINTERSTORE: the input scores
are ignored and each input holding a member adds its weight (1 unless WEIGHTS says otherwise)."""

from conftest import err


def test_union_counts_the_inputs_holding_each_member(plain):
    # The example of redis/redis#14892.
    plain.zadd("s1", {"foo": 1, "bar": 1})
    plain.zadd("s2", {"foo": 2, "bar": 2})
    plain.zadd("s3", {"foo": 3})
    assert plain.execute_command("ZUNIONSTORE", "out", 3, "s1", "s2", "s3",
                                 "AGGREGATE", "COUNT") == 2
    assert plain.execute_command("ZRANGE", "out", 0, -1, "WITHSCORES") == ["bar", "2", "foo", "3"]
    assert plain.execute_command("ZUNION", 3, "s1", "s2", "s3", "AGGREGATE", "count",
                                 "WITHSCORES") == ["bar", "2", "foo", "3"]


def test_weights_are_summed_and_plain_sets_count(plain):
    plain.zadd("z", {"a": 100, "b": -5})
    plain.sadd("s", "a", "c")
    assert plain.execute_command("ZUNION", 2, "z", "s", "WEIGHTS", 2, 0.5, "AGGREGATE", "COUNT",
                                 "WITHSCORES") == ["c", "0.5", "b", "2", "a", "2.5"]
    assert plain.execute_command("ZINTER", 2, "z", "s", "WEIGHTS", 2, 0.5, "AGGREGATE", "COUNT",
                                 "WITHSCORES") == ["a", "2.5"]
    assert plain.execute_command("ZINTERSTORE", "o", 2, "z", "s", "AGGREGATE", "COUNT") == 1
    assert plain.zscore("o", "a") == "2"
    # inf + -inf is NaN, which counts as 0 as for SUM.
    assert plain.execute_command("ZUNION", 2, "z", "s", "WEIGHTS", "inf", "-inf", "AGGREGATE",
                                 "COUNT", "WITHSCORES") == ["c", "-inf", "a", "0", "b", "inf"]


def test_resp3_scores_are_doubles(raw):
    raw.execute("HELLO", "3")
    raw.execute("ZADD", "z", "7", "a")
    assert raw.execute("ZUNION", 1, "z", "AGGREGATE", "COUNT", "WITHSCORES") == \
        b"*1\r\n*2\r\n$1\r\na\r\n,1\r\n"


def test_bad_aggregate_is_a_syntax_error(raw):
    assert err(raw, "ZUNION", 1, "z", "AGGREGATE", "AVG") == "ERR syntax error"
    assert err(raw, "ZDIFF", 1, "z", "AGGREGATE", "COUNT") == "ERR syntax error"


def test_history_in_command_docs(plain):
    for name in ("zunion", "zinter", "zunionstore", "zinterstore"):
        docs = plain.execute_command("COMMAND", "DOCS", name)[1]
        history = dict(zip(docs[0::2], docs[1::2]))["history"]
        assert ["8.8.0", "Added `COUNT` aggregate option."] in history

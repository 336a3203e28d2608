"""Findings of the argument fuzzer (tests/fuzz/argfuzz.py), one test each, in the minimal form
the fuzzer's --replay narrowed them to. Expected replies are Redis 7.2's."""

from conftest import err

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOSCRIPT = "NOSCRIPT No matching script. Please use EVAL."


def test_evalsha_with_a_malformed_sha_is_noscript_before_numkeys(raw):
    # Found as `EVALSHA x* -9223372036854775807 ...`: a sha that is not 40 characters long can
    # name no script, and Redis says so before it parses numkeys.
    assert err(raw, "EVALSHA", "x*", "-9223372036854775807") == NOSCRIPT
    assert err(raw, "EVALSHA", "abc", "5", "k") == NOSCRIPT
    assert err(raw, "EVALSHA_RO", "", "abc") == NOSCRIPT
    # A well-formed sha still gets numkeys checked first.
    assert err(raw, "EVALSHA", "a" * 40, "x") == "ERR value is not an integer or out of range"
    assert err(raw, "EVALSHA", "a" * 40, "0") == NOSCRIPT


def test_xgroup_setid_parses_entriesread_before_the_key(raw):
    # Found as `XGROUP SETID s:int ... ENTRIESREAD nil` (WRONGTYPE) and on a stream without the
    # group (NOGROUP): Redis rejects the option first.
    raw.execute("SET", "str", "v")
    raw.execute("XADD", "x", "1-1", "f", "v")
    bad = "ERR value is not an integer or out of range"
    assert err(raw, "XGROUP", "SETID", "str", "g", "$", "ENTRIESREAD", "nil") == bad
    assert err(raw, "XGROUP", "SETID", "x", "nogroup", "$", "ENTRIESREAD", "nil") == bad
    assert err(raw, "XGROUP", "SETID", "x", "nogroup", "$", "ENTRIESREAD", "-2") == (
        "ERR value for ENTRIESREAD must be positive or -1")
    assert err(raw, "XGROUP", "SETID", "missing", "g", "$", "BOGUS").startswith(
        "ERR unknown subcommand or wrong number of arguments for 'SETID'")
    # MKSTREAM belongs to CREATE only.
    assert err(raw, "XGROUP", "SETID", "x", "g", "$", "MKSTREAM").startswith(
        "ERR unknown subcommand or wrong number of arguments for 'SETID'")
    # Valid options still reach the key checks; a repeated ENTRIESREAD parses but is not a
    # form SETID has, which Redis reports only after the key and group checks.
    assert err(raw, "XGROUP", "SETID", "str", "g", "$", "ENTRIESREAD", "1") == WRONGTYPE
    twice = ("ENTRIESREAD", "1", "ENTRIESREAD", "2")
    assert err(raw, "XGROUP", "SETID", "x", "nogroup", "$", *twice).startswith("NOGROUP")
    raw.execute("XGROUP", "CREATE", "x", "g", "0")
    assert err(raw, "XGROUP", "SETID", "x", "g", "$", *twice).startswith(
        "ERR unknown subcommand or wrong number of arguments for 'SETID'")
    assert raw.execute("XGROUP", "SETID", "x", "g", "$", "ENTRIESREAD", "1") == b"+OK\r\n"


def test_xgroup_create_takes_at_most_three_option_words(raw):
    # Found as `XGROUP CREATE z:dst ... MKSTREAM MKSTREAM ENTRIESREAD -1`: the options parse, but
    # Redis dispatches CREATE only with 5 to 8 arguments, after the key checks.
    syntax = "ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP."
    assert err(raw, "XGROUP", "CREATE", "x", "g", "$", "MKSTREAM", "MKSTREAM", "ENTRIESREAD",
               "-1") == syntax
    assert raw.execute("EXISTS", "x") == b":0\r\n"
    raw.execute("SET", "str", "v")
    assert err(raw, "XGROUP", "CREATE", "str", "g", "$", "MKSTREAM", "MKSTREAM", "MKSTREAM",
               "MKSTREAM") == WRONGTYPE
    assert raw.execute("XGROUP", "CREATE", "x", "g", "$", "MKSTREAM", "ENTRIESREAD", "3") == (
        b"+OK\r\n")


def test_xinfo_stream_checks_the_key_before_its_options(raw):
    # Found as `XINFO STREAM z:big FULL COUNT +1`: Redis looks the key up (WRONGTYPE, no such
    # key) before it parses FULL / COUNT.
    raw.execute("ZADD", "z", "1", "a")
    assert err(raw, "XINFO", "STREAM", "z", "FULL", "COUNT", "+1") == WRONGTYPE
    assert err(raw, "XINFO", "STREAM", "z", "FULL", "FULL") == WRONGTYPE
    assert err(raw, "XINFO", "STREAM", "missing", "FULL", "COUNT", "x") == "ERR no such key"
    raw.execute("XADD", "x", "1-1", "f", "v")
    assert err(raw, "XINFO", "STREAM", "x", "FULL", "COUNT", "x") == (
        "ERR value is not an integer or out of range")
    assert err(raw, "XINFO", "STREAM", "x", "FULL", "FULL").startswith(
        "ERR unknown subcommand or wrong number of arguments for 'STREAM'")


def test_script_reads_int64_min_reply(raw):
    # Found as `EVAL 'return redis.pcall(unpack(ARGV))' 0 INCRBY ...` under UBSan: converting
    # the integer reply -9223372036854775808 into a Lua value overflowed (the sanitizer build
    # aborted; Release happened to produce the right number).
    raw.execute("SET", "k", "-9223372036854775808")
    assert raw.execute("EVAL", "return redis.call('incrby', KEYS[1], 0)", "1", "k") == (
        b":-9223372036854775808\r\n")
    assert raw.execute("EVAL", "return redis.pcall(unpack(ARGV))", "0", "DECRBY", "k", "0") == (
        b":-9223372036854775808\r\n")
    # INT64_MAX becomes the Lua number 2^63, which Redis's (long long) cast turns into INT64_MIN.
    raw.execute("SET", "k", "9223372036854775807")
    assert raw.execute("EVAL", "return redis.call('incrby', KEYS[1], 0)", "1", "k") == (
        b":-9223372036854775808\r\n")


def test_hello_checks_its_options_before_authenticating(raw, only_72):
    # Found as `HELLO 2 AUTH ... <option error>`: Redis 7.2 parses every option (syntax, the
    # client name) before it tries the credentials.
    bad_name = "ERR Client names cannot contain spaces, newlines or special characters."
    assert err(raw, "HELLO", "2", "SETNAME", "a b", "AUTH", "nosuchuser", "pw") == bad_name
    assert err(raw, "HELLO", "2", "AUTH", "nosuchuser", "pw", "SETNAME", "a b") == bad_name
    assert err(raw, "HELLO", "2", "AUTH", "nosuchuser", "pw", "foo") == (
        "ERR Syntax error in HELLO option 'foo'")
    assert err(raw, "HELLO", "2", "AUTH", "nosuchuser", "pw").startswith("WRONGPASS")


def test_user_names_are_case_sensitive(raw):
    # Redis's user is "default"; "DEFAULT" names no user, with or without requirepass.
    wrongpass = "WRONGPASS invalid username-password pair or user is disabled."
    assert err(raw, "AUTH", "DEFAULT", "x") == wrongpass
    assert err(raw, "HELLO", "2", "AUTH", "Default", "x") == wrongpass
    assert raw.execute("AUTH", "default", "x") == b"+OK\r\n"

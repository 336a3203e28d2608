"""Findings of the argument fuzzer (tests/fuzz/argfuzz.py), one test each, in the minimal form
the fuzzer's --replay narrowed them to. Expected replies are Redis 7.2's."""

from conftest import err

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

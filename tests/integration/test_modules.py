"""MODULE without module support, and the protected-command gating (src/commands/modules.cc)."""

MODULE_REFUSED = (
    b"-ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", "
    b"you can run it from a local connection, otherwise you need to set this option in the "
    b"configuration file, and then restart the server.\r\n")
LOAD_FAILED = b"-ERR Error loading the extension. Please check the server logs.\r\n"


def test_list_and_help_need_no_permission(server_factory):
    raw = server_factory(["--enable-module-command", "no"]).raw()
    # LIST and HELP are not protected commands in Redis 7.
    assert raw.execute("MODULE", "LIST") == b"*0\r\n"
    help_reply = raw.execute("MODULE", "HELP")
    assert help_reply.startswith(b"*11\r\n+MODULE <subcommand> [<arg> [value] [opt] ...]. ")
    assert b"+UNLOAD <name>\r\n" in help_reply
    for args in (("LOAD", "/x.so"), ("LOADEX", "/x.so", "CONFIG", "a", "b"), ("UNLOAD", "m")):
        assert raw.execute("MODULE", *args) == MODULE_REFUSED, args


def test_load_and_unload_fail_as_redis_says(server_factory):
    raw = server_factory(["--enable-module-command", "yes"]).raw()
    assert raw.execute("MODULE", "LOAD", "/nonexistent/module.so", "arg") == LOAD_FAILED
    assert raw.execute("MODULE", "LOADEX", "/nonexistent/module.so", "ARGS", "a") == LOAD_FAILED
    assert raw.execute("MODULE", "UNLOAD", "nosuch") == (
        b"-ERR Error unloading module: no such module with that name\r\n")
    assert raw.execute("MODULE", "LIST") == b"*0\r\n"
    assert raw.execute("MODULE", "LOAD") == (
        b"-ERR wrong number of arguments for 'module|load' command\r\n")
    assert raw.execute("MODULE", "NOPE") == b"-ERR unknown subcommand 'NOPE'. Try MODULE HELP.\r\n"


def test_local_allows_loopback(server_factory):
    raw = server_factory(["--enable-module-command", "local"]).raw()
    assert raw.execute("MODULE", "UNLOAD", "x") == (
        b"-ERR Error unloading module: no such module with that name\r\n")


def test_module_is_not_allowed_from_scripts(server):
    r = server.client()
    import pytest
    import redis
    with pytest.raises(redis.ResponseError, match="not allowed from script"):
        r.eval("return redis.call('module', 'list')", 0)

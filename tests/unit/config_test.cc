#include "core/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#ifndef VIREO_VERSION
#define VIREO_VERSION "unknown"  // standalone builds outside CMake, as in config.cc
#endif

namespace vireo {
namespace {

namespace fs = std::filesystem;

using Pairs = std::vector<std::pair<std::string, std::string>>;

// Each test gets a scratch directory so file-based tests never collide.
class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "vireo_config_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    cwd_ = fs::current_path();
  }
  void TearDown() override {
    fs::current_path(cwd_);  // the `dir` directive chdir()s, like Redis
    fs::remove_all(dir_);
  }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (fs::path(dir_) / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  static std::string Get1(const Config& c, const std::string& name) {
    auto r = c.Get({name});
    return r.size() == 1 ? r[0].second : "<missing>";
  }
  static std::string Fatal(int line, const std::string& text, const std::string& err) {
    return "\n*** FATAL CONFIG FILE ERROR (vireo " VIREO_VERSION
           ") ***\nReading the configuration file, at line " +
           std::to_string(line) + "\n>>> '" + text + "'\n" + err;
  }

  std::string dir_;
  fs::path cwd_;
};

TEST_F(ConfigTest, DefaultsAsConfigGetShowsThem) {
  Config c;
  EXPECT_EQ(Get1(c, "bind"), "* -::*");
  EXPECT_EQ(Get1(c, "port"), "6379");
  EXPECT_EQ(Get1(c, "protected-mode"), "yes");
  EXPECT_EQ(Get1(c, "loglevel"), "notice");
  EXPECT_EQ(Get1(c, "logfile"), "");
  EXPECT_EQ(Get1(c, "unixsocketperm"), "0");
  EXPECT_EQ(Get1(c, "save"), "3600 1 300 100 60 10000");
  EXPECT_EQ(Get1(c, "maxmemory"), "0");
  EXPECT_EQ(Get1(c, "proto-max-bulk-len"), "536870912");
  EXPECT_EQ(Get1(c, "client-output-buffer-limit"),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
  EXPECT_EQ(Get1(c, "notify-keyspace-events"), "");
  EXPECT_EQ(Get1(c, "appendfsync"), "everysec");
  EXPECT_EQ(Get1(c, "dir"), fs::current_path().string());
  // Every option's recorded default is what GET shows on a fresh config.
  for (const Config::Option& o : c.options()) {
    if (o.name != "dir") {
      EXPECT_EQ(o.get(c.values()), o.default_value) << o.name;
    }
  }
  const ServerConfig& v = c.values();
  EXPECT_EQ(v.client_obuf_limits[kObufReplica].hard_bytes, 256LL << 20);
  EXPECT_EQ(v.save_params.size(), 3u);
}

// conf/vireo.conf documents the defaults: loading it must change nothing.
TEST_F(ConfigTest, ShippedConfigFileHoldsTheDefaults) {
  fs::path conf = fs::path(__FILE__).parent_path() / "../../conf/vireo.conf";
  if (!fs::exists(conf)) GTEST_SKIP() << "conf/vireo.conf not found from " << __FILE__;
  conf = fs::absolute(conf);
  // The file's `dir ./data` chdir()s: load it from a scratch directory that has data/.
  fs::path cwd = fs::current_path();
  fs::path scratch = fs::path(dir_) / "run";
  fs::create_directories(scratch / "data");
  fs::current_path(scratch);
  Config c;
  std::string load_error = c.LoadFile(conf.string());
  fs::current_path(cwd);
  ASSERT_EQ(load_error, "");
  const ServerConfig defaults;
  // The shipped file turns the AOF on (a new user's data survives a restart); Redis's default
  // is off. Like redis.conf it binds loopback only, where the built-in default is every
  // interface.
  EXPECT_TRUE(c.values().appendonly);
  EXPECT_EQ(c.values().bind, (std::vector<std::string>{"127.0.0.1", "-::1"}));
  for (const Config::Option& o : c.options()) {
    if (o.name != "dir" && o.name != "appendonly" && o.name != "bind") {
      EXPECT_EQ(o.get(c.values()), o.get(defaults)) << o.name;
    }
  }
  // Every option is mentioned, set or commented out (but the hidden test-only ones).
  std::string text = Read(conf.string());
  for (const Config::Option& o : c.options()) {
    if (o.hidden) continue;
    EXPECT_TRUE(text.find("\n" + o.name + " ") != std::string::npos ||
                text.find("# " + o.name + " ") != std::string::npos)
        << o.name;
  }
}

TEST(ParseMemoryTest, UnitsLikeRedisMemtoull) {
  int64_t v = -1;
  EXPECT_TRUE(ParseMemory("10", &v));
  EXPECT_EQ(v, 10);
  EXPECT_TRUE(ParseMemory("10b", &v));
  EXPECT_EQ(v, 10);
  EXPECT_TRUE(ParseMemory("100k", &v));
  EXPECT_EQ(v, 100000);
  EXPECT_TRUE(ParseMemory("100kb", &v));
  EXPECT_EQ(v, 102400);
  EXPECT_TRUE(ParseMemory("2m", &v));
  EXPECT_EQ(v, 2000000);
  EXPECT_TRUE(ParseMemory("512mb", &v));
  EXPECT_EQ(v, 512LL << 20);
  EXPECT_TRUE(ParseMemory("1g", &v));
  EXPECT_EQ(v, 1000000000);
  EXPECT_TRUE(ParseMemory("1gb", &v));
  EXPECT_EQ(v, 1LL << 30);
  EXPECT_TRUE(ParseMemory("1GB", &v));
  EXPECT_EQ(v, 1LL << 30);
  EXPECT_TRUE(ParseMemory("2Kb", &v));
  EXPECT_EQ(v, 2048);
  EXPECT_TRUE(ParseMemory("007", &v));
  EXPECT_EQ(v, 7);
  // strtoull("") is 0, so Redis accepts an empty number.
  EXPECT_TRUE(ParseMemory("", &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(ParseMemory("kb", &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(ParseMemory("9223372036854775807", &v));
  EXPECT_EQ(v, INT64_MAX);

  v = 42;
  for (const char* bad : {"-1", "1.5gb", "1 gb", " 1", "+1", "1t", "1gbb", "abc",
                          "9223372036854775808", "9000000000gb"}) {
    EXPECT_FALSE(ParseMemory(bad, &v)) << bad;
  }
  EXPECT_EQ(v, 42);
}

TEST(ParseMemoryTest, FormatMemoryForRewrite) {
  EXPECT_EQ(FormatMemory(0), "0");
  EXPECT_EQ(FormatMemory(1000), "1000");
  EXPECT_EQ(FormatMemory(2048), "2kb");
  EXPECT_EQ(FormatMemory(64LL << 20), "64mb");
  EXPECT_EQ(FormatMemory(3LL << 30), "3gb");
  EXPECT_EQ(FormatMemory((1LL << 30) + 1024), "1048577kb");
}

TEST_F(ConfigTest, FileWithCommentsQuotesAndAliases) {
  std::string path = Write("a.conf",
                           "# a comment\n"
                           "\n"
                           "   PORT 7000   \n"
                           "bind 127.0.0.1 ::1\n"
                           "requirepass \"pa ss\\n\\\"x\"\n"
                           "logfile ''\n"
                           "hash-max-ziplist-entries 100\n"
                           "Loglevel WARNING\n"
                           "maxmemory 1gb\r\n"
                           "unixsocketperm 0700\n"
                           "notify-keyspace-events KEA\n"
                           "list-max-ziplist-entries 5\n"  // deprecated: accepted, ignored
                           "\t# indented comment\n");
  Config c;
  ASSERT_EQ(c.LoadFile(path), "");
  const ServerConfig& v = c.values();
  EXPECT_EQ(v.port, 7000);
  EXPECT_EQ(v.bind, (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_EQ(v.requirepass, "pa ss\n\"x");
  EXPECT_EQ(v.logfile, "");
  EXPECT_EQ(v.hash_max_listpack_entries, 100);
  EXPECT_EQ(v.loglevel, "warning");
  EXPECT_EQ(v.maxmemory, 1LL << 30);
  EXPECT_EQ(v.unixsocketperm, 0700);
  EXPECT_EQ(Get1(c, "unixsocketperm"), "700");
  EXPECT_EQ(Get1(c, "notify-keyspace-events"), "AKE");
  EXPECT_EQ(v.notify_keyspace_flags, kNotifyAll | kNotifyKeyspace | kNotifyKeyevent);
  EXPECT_EQ(v.config_file, path);
}

TEST_F(ConfigTest, MultiArgOptionsInFiles) {
  // One quoted argument is re-split; save lines accumulate, the first replacing the defaults.
  std::string path = Write("m.conf",
                           "bind \"127.0.0.1 ::1\"\n"
                           "save \"60 1 300 2\"\n"
                           "save 5 5\n"
                           "client-output-buffer-limit \"pubsub 1mb 2mb 3\"\n"
                           "client-output-buffer-limit replica 1gb 0 0\n"
                           "hz 1000\n");
  Config c;
  ASSERT_EQ(c.LoadFile(path), "");
  EXPECT_EQ(Get1(c, "bind"), "127.0.0.1 ::1");
  EXPECT_EQ(Get1(c, "save"), "60 1 300 2 5 5");
  EXPECT_EQ(c.values().save_params.back(), (std::pair<int64_t, int64_t>{5, 5}));
  EXPECT_EQ(Get1(c, "client-output-buffer-limit"),
            "normal 0 0 0 slave 1073741824 0 0 pubsub 1048576 2097152 3");
  EXPECT_EQ(Get1(c, "hz"), "500");

  Config d;
  ASSERT_EQ(d.LoadFile(Write("s.conf", "save 10 1\nsave \"\"\nsave 20 2\n")), "");
  EXPECT_EQ(Get1(d, "save"), "20 2");
  Config e;
  ASSERT_EQ(e.LoadFile(Write("s2.conf", "save \"\"\n")), "");
  EXPECT_EQ(Get1(e, "save"), "");
  EXPECT_TRUE(e.values().save_params.empty());
}

TEST_F(ConfigTest, FileErrorsHaveRedisShape) {
  struct Case {
    std::string text;
    int line;
    std::string shown;
    std::string err;
  };
  std::vector<Case> cases = {
      {"port 1\n  foo bar  \n", 2, "foo bar", "Bad directive or wrong number of arguments"},
      {"port abc\n", 1, "port abc", "argument couldn't be parsed into an integer"},
      {"port 1 2\n", 1, "port 1 2", "wrong number of arguments"},
      {"port\n", 1, "port", "wrong number of arguments"},
      {"requirepass \"abc\n", 1, "requirepass \"abc", "Unbalanced quotes in configuration line"},
      {"hz 0\nport 70000\n", 2, "port 70000", "argument must be between 0 and 65535 inclusive"},
      {"LoGlEvEl bogus\n", 1, "LoGlEvEl bogus",
       "argument(s) must be one of the following: debug, verbose, notice, warning, nothing"},
      {"unixsocketperm 999\n", 1, "unixsocketperm 999",
       "argument couldn't be parsed as an octal number"},
      {"unixsocketperm 1000\n", 1, "unixsocketperm 1000",
       "argument must be between 0 and 777 inclusive"},
      {"include\n", 1, "include", "Bad directive or wrong number of arguments"},
      {"protected-mode maybe\n", 1, "protected-mode maybe", "argument must be 'yes' or 'no'"},
      {"dbfilename a/b.rdb\n", 1, "dbfilename a/b.rdb",
       "dbfilename can't be a path, just a filename"},
      {"appendfilename \"\"\n", 1, "appendfilename \"\"", "appendfilename can't be empty"},
      {"save 1 2 3\n", 1, "save 1 2 3", "Invalid save parameters"},
      {"maxmemory -1\n", 1, "maxmemory -1", "argument must be a memory value"},
      {"bind 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", 1,
       "bind 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", "Too many bind addresses specified."},
  };
  for (const Case& k : cases) {
    Config c;
    EXPECT_EQ(c.LoadFile(Write("e.conf", k.text)), Fatal(k.line, k.shown, k.err)) << k.text;
  }
  Config c;
  std::string missing = (fs::path(dir_) / "nope.conf").string();
  EXPECT_EQ(c.LoadFile(missing),
            "Fatal error, can't open config file '" + missing + "': No such file or directory");
}

TEST_F(ConfigTest, Include) {
  std::string inc = Write("inc.conf", "timeout 5\nport 7001\n");
  std::string bad = Write("bad.conf", "\n\nport abc\n");
  Config c;
  ASSERT_EQ(c.LoadFile(Write("main.conf", "port 7000\ninclude " + inc + "\nhz 20\n")), "");
  EXPECT_EQ(c.values().port, 7001);  // the include is read in place; later lines win
  EXPECT_EQ(c.values().timeout, 5);
  EXPECT_EQ(c.values().hz, 20);

  // Errors inside an included file carry that file's line numbers, as in Redis.
  Config d;
  EXPECT_EQ(d.LoadFile(Write("m2.conf", "hz 5\ninclude " + bad + "\n")),
            Fatal(3, "port abc", "argument couldn't be parsed into an integer"));

  // A wildcard matching nothing is fine; a missing plain file is fatal.
  Config e;
  EXPECT_EQ(e.LoadFile(Write("m3.conf", "include " + dir_ + "/conf.d/*.conf\n")), "");
  std::string missing = dir_ + "/missing.conf";
  EXPECT_EQ(e.LoadFile(Write("m4.conf", "include " + missing + "\n")),
            "Fatal error, can't open config file '" + missing + "': No such file or directory");

  // Include relative to the working directory, and a wildcard that matches.
  Write("w1.conf", "databases 4\n");
  fs::current_path(dir_);
  Config f;
  ASSERT_EQ(f.LoadFile(Write("m5.conf", "include w*.conf\n")), "");
  EXPECT_EQ(f.values().databases, 4);

  // Include loops are refused instead of recursing forever.
  std::string self = (fs::path(dir_) / "loop.conf").string();
  Write("loop.conf", "include " + self + "\n");
  Config g;
  EXPECT_EQ(g.LoadFile(self), "\n*** FATAL CONFIG FILE ERROR (vireo " VIREO_VERSION
                              ") ***\nRecursive include of '" +
                                  self + "'");
}

TEST_F(ConfigTest, CommandLine) {
  Config c;
  ASSERT_EQ(c.LoadCommandLine({"--port", "7000", "--save", "", "--bind", "a", "b", "--loglevel",
                               "verbose", "--requirepass", "--secret", "--maxmemory 1mb"}),
            "");
  const ServerConfig& v = c.values();
  EXPECT_EQ(v.port, 7000);
  EXPECT_EQ(v.save, "");
  EXPECT_EQ(v.bind, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(v.loglevel, "verbose");
  EXPECT_EQ(v.requirepass, "--secret");  // right after a bare --name, "--x" is a value
  EXPECT_EQ(v.maxmemory, 1 << 20);       // "--name value" in one argument
  EXPECT_EQ(v.config_file, "");

  // `--save` followed by another option, or last, means save "".
  Config d;
  ASSERT_EQ(d.LoadCommandLine({"--save", "--port", "7001"}), "");
  EXPECT_EQ(d.values().save, "");
  EXPECT_EQ(d.values().port, 7001);
  Config e;
  ASSERT_EQ(e.LoadCommandLine({"--port", "7002", "--save"}), "");
  EXPECT_EQ(e.values().save, "");
  Config f;
  ASSERT_EQ(f.LoadCommandLine({"--save", "60 1 300 10", "--save", "5", "5"}), "");
  EXPECT_EQ(f.values().save, "60 1 300 10 5 5");
  Config g;
  ASSERT_EQ(g.LoadCommandLine({"--bind", "127.0.0.1 ::1", "--dbfilename", "my file.rdb"}), "");
  EXPECT_EQ(Get1(g, "bind"), "127.0.0.1 ::1");
  EXPECT_EQ(g.values().dbfilename, "my file.rdb");
}

TEST_F(ConfigTest, CommandLineWithFileAndErrors) {
  std::string path = Write("c.conf", "port 7000\nhz 20");  // no trailing newline
  Config c;
  ASSERT_EQ(c.LoadCommandLine({path, "--port", "7001"}), "");
  EXPECT_EQ(c.values().port, 7001);  // command line wins
  EXPECT_EQ(c.values().hz, 20);
  EXPECT_EQ(c.values().config_file, path);

  // Options are appended after the file plus one newline; line numbers count through both,
  // and values are shown quoted, exactly as redis-server reports them.
  Config d;
  EXPECT_EQ(d.LoadCommandLine({path, "--hz", "999", "--maxmemory-policy", "bogus"}),
            Fatal(4, "maxmemory-policy \"bogus\"",
                  "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
                  "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
                  "noeviction"));
  Config e;
  EXPECT_EQ(e.LoadCommandLine({"--port", "7000", "--bogus", "1", "2"}),
            Fatal(3, "bogus \"1\" \"2\"", "Bad directive or wrong number of arguments"));
  Config f;
  EXPECT_EQ(f.LoadCommandLine({"--port"}), Fatal(2, "port", "wrong number of arguments"));
  Config g;
  EXPECT_EQ(
      g.LoadCommandLine({"--nonexist-file", "--port", "1"}),
      Fatal(2, "nonexist-file \"--port\" \"1\"", "Bad directive or wrong number of arguments"));
  Config h;
  std::string missing = dir_ + "/none.conf";
  EXPECT_EQ(h.LoadCommandLine({missing}),
            "Fatal error, can't open config file '" + missing + "': No such file or directory");
}

TEST_F(ConfigTest, CommandLineStdin) {
  std::istringstream in("port 7005\nhz 30\n");
  std::streambuf* old = std::cin.rdbuf(in.rdbuf());
  Config c;
  std::string err = c.LoadCommandLine({"-", "--hz", "40"});
  std::cin.rdbuf(old);
  ASSERT_EQ(err, "");
  EXPECT_EQ(c.values().port, 7005);
  EXPECT_EQ(c.values().hz, 40);
}

TEST_F(ConfigTest, GetWithGlobsAndAliases) {
  Config c;
  auto names = [](const Pairs& r) {
    std::vector<std::string> out;
    for (const auto& p : r) out.push_back(p.first);
    std::sort(out.begin(), out.end());
    return out;
  };
  // Aliases take part in glob matching under their own names, as in Redis 7.
  EXPECT_EQ(names(c.Get({"*ziplist*"})),
            (std::vector<std::string>{"hash-max-ziplist-entries", "hash-max-ziplist-value",
                                      "list-max-ziplist-size", "zset-max-ziplist-entries",
                                      "zset-max-ziplist-value"}));
  EXPECT_EQ(names(c.Get({"hash-max-*"})),
            (std::vector<std::string>{"hash-max-listpack-entries", "hash-max-listpack-value",
                                      "hash-max-ziplist-entries", "hash-max-ziplist-value"}));
  EXPECT_EQ(names(c.Get({"HASH-MAX-ZIP*"})),
            (std::vector<std::string>{"hash-max-ziplist-entries", "hash-max-ziplist-value"}));
  // An exact name is echoed as typed, once, case-insensitively deduplicated.
  EXPECT_EQ(c.Get({"HZ", "hz", "h?"}), (Pairs{{"HZ", "10"}}));
  EXPECT_EQ(c.Get({"lua-time-limit", "busy-reply-threshold"}),
            (Pairs{{"lua-time-limit", "5000"}, {"busy-reply-threshold", "5000"}}));
  EXPECT_TRUE(c.Get({"nonexistent"}).empty());
  EXPECT_TRUE(c.Get({"nomatch*"}).empty());
  size_t all = c.Get({"*"}).size();
  size_t aliases = 0, hidden = 0;
  for (const Config::Option& o : c.options()) {
    aliases += o.alias.empty() ? 0 : 1;
    hidden += o.hidden ? 1 : 0;
  }
  EXPECT_EQ(aliases, 21u);  // lua-time-limit, the *-ziplist-* names, the (cluster-)slave-* names,
                           // Valkey's two commandlog-* names of the slowlog options
  // Hidden options (DEBUG-style test switches such as key-load-delay) stay out of CONFIG GET *,
  // as in Redis.
  EXPECT_EQ(all, c.options().size() - hidden + aliases);
  EXPECT_EQ(c.Get({"*", "*"}).size(), all);
  EXPECT_EQ(names(c.Get({"*max-*-entries"})),
            (std::vector<std::string>{"hash-max-listpack-entries", "hash-max-ziplist-entries",
                                      "set-max-intset-entries", "set-max-listpack-entries",
                                      "zset-max-listpack-entries", "zset-max-ziplist-entries"}));
}

TEST_F(ConfigTest, SetValidationMessages) {
  Config c;
  auto failed = [](const std::string& arg, const std::string& err) {
    return "ERR CONFIG SET failed (possibly related to argument '" + arg + "') - " + err;
  };
  EXPECT_EQ(c.Set({{"databases", "5"}}), failed("databases", "can't set immutable config"));
  EXPECT_EQ(c.Set({{"Logfile", "x"}}), failed("Logfile", "can't set immutable config"));
  EXPECT_EQ(c.Set({{"appendfilename", "x"}}),
            failed("appendfilename", "can't set immutable config"));
  EXPECT_EQ(c.Set({{"dir", "/tmp"}}), failed("dir", "can't set protected config"));
  EXPECT_EQ(c.Set({{"dbfilename", "x"}}), failed("dbfilename", "can't set protected config"));
  // Even from a local client while enable-protected-configs is "no" (the default).
  EXPECT_EQ(c.Set({{"dbfilename", "x"}}, true), failed("dbfilename", "can't set protected config"));
  EXPECT_EQ(c.Set({{"foo", "bar"}}),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'");
  EXPECT_EQ(c.Set({{"hz", "-1"}}),
            failed("hz", "argument must be between 0 and 2147483647 inclusive"));
  EXPECT_EQ(c.Set({{"hz", "abc"}}), failed("hz", "argument couldn't be parsed into an integer"));
  EXPECT_EQ(c.Set({{"hz", " 5"}}), failed("hz", "argument couldn't be parsed into an integer"));
  EXPECT_EQ(c.Set({{"maxmemory", "abc"}}), failed("maxmemory", "argument must be a memory value"));
  EXPECT_EQ(c.Set({{"maxmemory", "1.5gb"}}),
            failed("maxmemory", "argument must be a memory value"));
  EXPECT_EQ(c.Set({{"proto-max-bulk-len", "1000"}}),
            failed("proto-max-bulk-len",
                   "argument must be between 1048576 and 9223372036854775807 inclusive"));
  EXPECT_EQ(c.Set({{"maxclients", "0"}}),
            failed("maxclients", "argument must be between 1 and 4294967295 inclusive"));
  EXPECT_EQ(c.Set({{"slowlog-log-slower-than", "-2"}}),
            failed("slowlog-log-slower-than",
                   "argument must be between -1 and 9223372036854775807 inclusive"));
  EXPECT_EQ(c.Set({{"set-max-intset-entries", "1kb"}}),
            failed("set-max-intset-entries", "argument couldn't be parsed into an integer"));
  EXPECT_EQ(c.Set({{"protected-mode", "1"}}),
            failed("protected-mode", "argument must be 'yes' or 'no'"));
  EXPECT_EQ(
      c.Set({{"appendfsync", "x"}}),
      failed("appendfsync", "argument(s) must be one of the following: everysec, always, no"));
  EXPECT_EQ(
      c.Set({{"notify-keyspace-events", "Q"}}),
      failed("notify-keyspace-events", "Invalid event class character. Use 'Ag$lshzxeKEtmdnoc'."));
  for (const char* bad : {"1 2 3", "0 1", "10 -1", "10 1x", " 10  5 "}) {
    EXPECT_EQ(c.Set({{"save", bad}}), failed("save", "Invalid save parameters")) << bad;
  }
  EXPECT_EQ(c.Set({{"client-output-buffer-limit", "normal 1 2"}}),
            failed("client-output-buffer-limit",
                   "Wrong number of arguments in buffer limit configuration."));
  EXPECT_EQ(c.Set({{"client-output-buffer-limit", "master 1 2 3"}}),
            failed("client-output-buffer-limit",
                   "Invalid client class specified in buffer limit configuration."));
  EXPECT_EQ(c.Set({{"client-output-buffer-limit", "normal 1 2 -3"}}),
            failed("client-output-buffer-limit",
                   "Error in hard, soft or soft_seconds setting in buffer limit configuration."));
  // Value errors name the canonical option even when set through an alias or other case.
  EXPECT_EQ(c.Set({{"HZ", "x"}}), failed("hz", "argument couldn't be parsed into an integer"));
  EXPECT_EQ(c.Set({{"hash-max-ziplist-value", "x"}}),
            failed("hash-max-listpack-value", "argument must be a memory value"));
  // Duplicates compare names case-insensitively; an alias is a different name.
  EXPECT_EQ(c.Set({{"hz", "20"}, {"HZ", "30"}}), failed("HZ", "duplicate parameter"));
  EXPECT_EQ(c.Set({{"hash-max-ziplist-entries", "3"}, {"hash-max-listpack-entries", "4"}}), "");
  EXPECT_EQ(c.values().hash_max_listpack_entries, 4);
  // The first bad name in argument order wins.
  EXPECT_EQ(c.Set({{"hz", "20"}, {"databases", "3"}, {"foo", "1"}}),
            failed("databases", "can't set immutable config"));
  EXPECT_EQ(c.Set({{"foo", "1"}, {"databases", "3"}}),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'");
}

TEST_F(ConfigTest, SetValues) {
  Config c;
  std::vector<std::string> changed;
  c.on_change = [&](const std::string& name) { changed.push_back(name); };
  EXPECT_EQ(c.Set({{"hz", "1000"}}), "");
  EXPECT_EQ(Get1(c, "hz"), "500");
  EXPECT_EQ(c.Set({{"hz", "0"}}), "");
  EXPECT_EQ(c.values().hz, 1);
  EXPECT_EQ(c.Set({{"maxmemory", "1GB"}, {"loglevel", "WARNING"}, {"lua-time-limit", "3000"}}), "");
  EXPECT_EQ(Get1(c, "maxmemory"), "1073741824");
  EXPECT_EQ(Get1(c, "loglevel"), "warning");
  EXPECT_EQ(Get1(c, "busy-reply-threshold"), "3000");
  EXPECT_EQ(c.Set({{"maxmemory", ""}}), "");  // Redis reads an empty memory value as 0
  EXPECT_EQ(c.values().maxmemory, 0);
  EXPECT_EQ(c.Set({{"stream-node-max-bytes", "1k"}, {"hash-max-listpack-value", "1kb"}}), "");
  EXPECT_EQ(Get1(c, "stream-node-max-bytes"), "1000");
  EXPECT_EQ(Get1(c, "hash-max-listpack-value"), "1024");
  // More clients than the descriptor limit can ever allow (fs.nr_open caps even root) are
  // refused with the number that would fit, as Redis does; the value stays.
  int before = c.values().maxclients;
  std::string refused = c.Set({{"maxclients", "4294967295"}});
  EXPECT_TRUE(refused.starts_with(
      "ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating system "
      "is not able to handle the specified number of clients, try with "))
      << refused;
  EXPECT_EQ(c.values().maxclients, before);
  EXPECT_EQ(c.Set({{"list-max-ziplist-size", "-7"}}), "");
  EXPECT_EQ(c.values().list_max_listpack_size, -7);
  EXPECT_EQ(c.Set({{"requirepass", "a b"}}), "");
  EXPECT_EQ(c.values().requirepass, "a b");

  EXPECT_EQ(c.Set({{"save", "100 1 200 2"}}), "");
  EXPECT_EQ(Get1(c, "save"), "100 1 200 2");
  EXPECT_EQ(c.Set({{"save", ""}}), "");
  EXPECT_EQ(Get1(c, "save"), "");
  EXPECT_TRUE(c.values().save_params.empty());

  EXPECT_EQ(c.Set({{"client-output-buffer-limit", "replica 1mb 2kb 3 pubsub 1gb 0 0"}}), "");
  EXPECT_EQ(Get1(c, "client-output-buffer-limit"),
            "normal 0 0 0 slave 1048576 2048 3 pubsub 1073741824 0 0");
  EXPECT_EQ(c.values().client_obuf_limits[kObufPubsub].hard_bytes, 1LL << 30);
  EXPECT_EQ(c.Set({{"client-output-buffer-limit", ""}}), "");  // no classes: no change
  EXPECT_EQ(Get1(c, "client-output-buffer-limit"),
            "normal 0 0 0 slave 1048576 2048 3 pubsub 1073741824 0 0");

  // notify-keyspace-events prints in Redis's canonical order; 'n' hides behind 'A'.
  struct Case {
    const char* in;
    const char* out;
  };
  for (Case k :
       {Case{"gn", "gn"}, Case{"Ex", "xE"}, Case{"KA", "AK"}, Case{"nm", "nm"}, Case{"Kn", "nK"},
        Case{"ed$", "$ed"}, Case{"g$lshzxetd", "A"}, Case{"AKEmn", "AKEm"}, Case{"", ""}}) {
    ASSERT_EQ(c.Set({{"notify-keyspace-events", k.in}}), "") << k.in;
    EXPECT_EQ(Get1(c, "notify-keyspace-events"), k.out) << k.in;
  }
  ASSERT_EQ(c.Set({{"notify-keyspace-events", "An"}}), "");
  EXPECT_TRUE(c.values().notify_keyspace_flags & kNotifyNew);

  EXPECT_NE(std::find(changed.begin(), changed.end(), "busy-reply-threshold"), changed.end());
  EXPECT_NE(std::find(changed.begin(), changed.end(), "hz"), changed.end());
}

TEST_F(ConfigTest, SetIsAtomic) {
  Config c;
  ASSERT_EQ(c.Set({{"notify-keyspace-events", "An"}, {"maxmemory", "5mb"}}), "");
  int calls = 0;
  c.on_change = [&](const std::string&) { ++calls; };
  ServerConfig before = c.values();
  EXPECT_EQ(c.Set({{"hz", "20"},
                   {"notify-keyspace-events", "Ex"},
                   {"save", "1 1"},
                   {"client-output-buffer-limit", "pubsub 1 1 1"},
                   {"maxmemory-policy", "bad"}}),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - "
            "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
            "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, "
            "noeviction");
  EXPECT_EQ(calls, 0);
  const ServerConfig& after = c.values();
  EXPECT_EQ(after.hz, before.hz);
  EXPECT_EQ(after.notify_keyspace_flags, before.notify_keyspace_flags);  // 'n' survives
  EXPECT_EQ(after.save_params, before.save_params);
  EXPECT_EQ(after.client_output_buffer_limit, before.client_output_buffer_limit);
  EXPECT_EQ(after.maxmemory, 5LL << 20);
  for (const Config::Option& o : c.options()) {
    EXPECT_EQ(o.get(after), o.get(before)) << o.name;
  }
}

TEST_F(ConfigTest, DirChangesWorkingDirectory) {
  Config c;
  std::string sub = dir_ + "/data";
  fs::create_directory(sub);
  ASSERT_EQ(c.LoadCommandLine({"--dir", sub}), "");
  EXPECT_EQ(fs::current_path(), fs::canonical(sub));
  EXPECT_EQ(Get1(c, "dir"), fs::canonical(sub).string());
  Config d;
  EXPECT_EQ(d.LoadCommandLine({"--dir", dir_ + "/nope"}),
            Fatal(2, "dir \"" + dir_ + "/nope\"", "No such file or directory"));
}

TEST_F(ConfigTest, RewriteWithoutFile) {
  Config c;
  EXPECT_EQ(c.Rewrite(), "ERR The server is running without a config file");
}

TEST_F(ConfigTest, RewriteRoundTrip) {
  std::string inc = Write("inc.conf", "timeout 5\n");
  std::string path = Write("r.conf",
                           "# my config\n"
                           "port 7000\n"
                           "hash-max-ziplist-entries 100\n"
                           "save 900 1\n"
                           "save 300 10\n"
                           "include " +
                               inc +
                               "\n"
                               "\n"
                               "requirepass foo\n"
                               "maxmemory 1mb\n");
  Config c;
  ASSERT_EQ(c.LoadCommandLine({path}), "");
  ASSERT_EQ(c.Set({{"hash-max-listpack-entries", "200"},
                   {"save", "100 1"},
                   {"requirepass", ""},
                   {"maxmemory", "2gb"},
                   {"notify-keyspace-events", "Ex"},
                   {"client-output-buffer-limit", "pubsub 1mb 1000 5"},
                   {"loglevel", "warning"}}),
            "");
  ASSERT_EQ(c.Rewrite(), "");
  std::string cwd = fs::current_path().string();
  EXPECT_EQ(Read(path),
            "# my config\n"
            "port 7000\n"
            "hash-max-listpack-entries 200\n"
            "save 100 1\n"
            "\n"
            "include " +
                inc +
                "\n"
                "\n"
                "maxmemory 2gb\n"
                "\n"
                "# Generated by CONFIG REWRITE\n"
                "timeout 5\n"
                "loglevel warning\n"
                "dir \"" +
                cwd +
                "\"\n"
                "notify-keyspace-events \"xE\"\n"
                "client-output-buffer-limit pubsub 1mb 1000 5\n");
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::owner_write, fs::perms::owner_write);

  // Reloading the rewritten file reproduces the running configuration.
  Config d;
  ASSERT_EQ(d.LoadCommandLine({path}), "");
  EXPECT_EQ(d.Get({"*"}), c.Get({"*"}));

  // A second rewrite keeps the single signature and changes nothing but blank lines.
  ASSERT_EQ(d.Set({{"hz", "15"}}), "");
  ASSERT_EQ(d.Rewrite(), "");
  std::string again = Read(path);
  EXPECT_EQ(again.find("# Generated by CONFIG REWRITE"),
            again.rfind("# Generated by CONFIG REWRITE"));
  EXPECT_NE(again.find("\nhz 15\n"), std::string::npos);
  Config e;
  ASSERT_EQ(e.LoadCommandLine({path}), "");
  EXPECT_EQ(e.Get({"*"}), d.Get({"*"}));

  // No temp files are left behind.
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 2);
}

TEST_F(ConfigTest, RewriteSpecialCases) {
  std::string path = Write("s.conf",
                           "bind 10.0.0.1\n"
                           "pidfile /tmp/x.pid\n"
                           "save \"\"\n"
                           "list-max-ziplist-entries 5\n"
                           "unixsocketperm 700\n");
  Config c;
  ASSERT_EQ(c.LoadCommandLine({path, "--requirepass", "a \"b\"\n"}), "");
  ASSERT_EQ(c.Rewrite(), "");
  std::string cwd = fs::current_path().string();
  EXPECT_EQ(Read(path),
            "bind 10.0.0.1\n"
            "pidfile \"/tmp/x.pid\"\n"
            "save \"\"\n"
            "# ??? list-max-ziplist-entries 5\n"
            "unixsocketperm 700\n"
            "\n"
            "# Generated by CONFIG REWRITE\n"
            "requirepass \"a \\\"b\\\"\\n\"\n"
            "dir \"" +
                cwd + "\"\n");
  Config d;
  ASSERT_EQ(d.LoadCommandLine({path}), "");
  EXPECT_EQ(d.values().requirepass, "a \"b\"\n");
  EXPECT_EQ(d.values().unixsocketperm, 0700);

  // A missing file is created; save and dir are always written, defaults otherwise omitted.
  std::string fresh = dir_ + "/fresh.conf";
  Config e;
  e.values().config_file = fresh;
  ASSERT_EQ(e.Rewrite(), "");
  EXPECT_EQ(Read(fresh),
            "# Generated by CONFIG REWRITE\nsave 3600 1\nsave 300 100\nsave 60 10000\ndir \"" +
                cwd + "\"\n");

  // Back at the default bind, a bind line in the file is dropped.
  std::string b = Write("b.conf", "bind * -::*\nport 7000\n");
  Config f;
  ASSERT_EQ(f.LoadCommandLine({b}), "");
  ASSERT_EQ(f.Rewrite(), "");
  EXPECT_EQ(Read(b).substr(0, 11), "\nport 7000\n");
}

TEST(ConfigProtectedActions, DefaultsAndLocal) {
  Config c;
  EXPECT_EQ(c.values().enable_debug_command, "no");
  EXPECT_EQ(c.values().enable_module_command, "no");
  EXPECT_EQ(c.values().enable_protected_configs, "no");
  EXPECT_EQ(c.Set({{"enable-debug-command", "yes"}}),
            "ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - can't "
            "set immutable config");
  EXPECT_EQ(c.Apply("enable-debug-command", {"maybe"}, true),
            "argument(s) must be one of the following: no, yes, local");
  EXPECT_EQ(c.Apply("enable-protected-configs", {"LOCAL"}, true), "");
  EXPECT_EQ(c.values().enable_protected_configs, "local");
  EXPECT_EQ(c.Set({{"dbfilename", "remote.rdb"}}, false),
            "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set "
            "protected config");
  EXPECT_EQ(c.Set({{"dbfilename", "local.rdb"}}, true), "");
  EXPECT_EQ(c.values().dbfilename, "local.rdb");
  EXPECT_TRUE(ProtectedActionAllowed("yes", false));
  EXPECT_TRUE(ProtectedActionAllowed("local", true));
  EXPECT_FALSE(ProtectedActionAllowed("local", false));
  EXPECT_FALSE(ProtectedActionAllowed("no", true));
}

// Redis 7.2's process options (src/core/config_process.cc).
TEST_F(ConfigTest, ShutdownSignalFlags) {
  Config c;
  EXPECT_EQ(Get1(c, "shutdown-on-sigint"), "default");
  EXPECT_EQ(c.Set({{"shutdown-on-sigint", "FORCE nosave"}}), "");
  EXPECT_EQ(Get1(c, "shutdown-on-sigint"), "nosave force");
  EXPECT_EQ(c.values().shutdown_on_sigint, kShutdownNosave | kShutdownForce);
  EXPECT_NE(c.Set({{"shutdown-on-sigint", "save nosave"}}).find("can't be used simultaneously"),
            std::string::npos);
  EXPECT_NE(c.Set({{"shutdown-on-sigint", ""}}).find("must be one of the following"),
            std::string::npos);
  // A config file line takes the flags as separate words or one quoted argument.
  std::string path = Write("f.conf", "shutdown-on-sigterm save now\nshutdown-on-sigint \"now\"\n");
  Config f;
  ASSERT_EQ(f.LoadFile(path), "");
  EXPECT_EQ(Get1(f, "shutdown-on-sigterm"), "save now");
  EXPECT_EQ(Get1(f, "shutdown-on-sigint"), "now");
}

TEST_F(ConfigTest, OomScoreAdjAndProcTitle) {
  Config c;
  EXPECT_EQ(c.Set({{"oom-score-adj", "RELATIVE"}}), "");
  EXPECT_EQ(Get1(c, "oom-score-adj"), "yes");
  EXPECT_EQ(c.Set({{"oom-score-adj-values", "-2000 0 2000"}}), "");
  EXPECT_EQ(Get1(c, "oom-score-adj-values"), "-2000 0 2000");
  EXPECT_NE(c.Set({{"oom-score-adj-values", "1 2 x"}}).find("between -2000 and 2000"),
            std::string::npos);
  for (const char* good :
       {"{title} {listen-addr} {server-mode}", "plain", "{{ {port}", "{config-file}"}) {
    EXPECT_EQ(c.Set({{"proc-title-template", good}}), "") << good;
  }
  for (const char* bad : {"{title}", "{server-mode}", "{unknown}", "x {port", "{", "  "}) {
    EXPECT_NE(c.Set({{"proc-title-template", bad}}).find("template format is invalid"),
              std::string::npos)
        << bad;
  }
}

TEST_F(ConfigTest, ForceAllRewriteWritesEveryOptionAndLoadsBack) {
  std::string path = Write("r.conf", "maxmemory 1mb\n");
  Config c;
  ASSERT_EQ(c.LoadFile(path), "");
  ASSERT_EQ(c.Rewrite(true), "");
  std::string text = "\n" + Read(path);
  for (const Config::Option& o : c.options()) {
    // Unset strings (requirepass, unixsocket...) and "not a replica" have no line, as in Redis.
    if ((o.empty_is_null && o.get(c.values()).empty()) || o.name == "replicaof") continue;
    EXPECT_NE(text.find("\n" + o.name + " "), std::string::npos) << o.name;
  }
  Config again;
  ASSERT_EQ(again.LoadFile(path), "");
  for (const Config::Option& o : c.options()) {
    if (o.name == "dir") continue;
    EXPECT_EQ(o.get(again.values()), o.get(c.values())) << o.name;
  }
}

}  // namespace
}  // namespace vireo

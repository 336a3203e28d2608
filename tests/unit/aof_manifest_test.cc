#include "persistence/aof_manifest.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "persistence/aof_loader.h"
#include "server/server.h"
#include "test_commands.h"

namespace vireo {
namespace {

TEST(AofManifestTest, ParsesRedisOutput) {
  // As redis-server 7.0 writes it after a few rewrites.
  AofManifest m;
  ASSERT_EQ(m.Parse("file appendonly.aof.4.base.rdb seq 4 type b\n"
                    "file appendonly.aof.4.incr.aof seq 4 type i\n"),
            "");
  ASSERT_TRUE(m.base.has_value());
  EXPECT_EQ(m.base->name, "appendonly.aof.4.base.rdb");
  EXPECT_EQ(m.base->seq, 4);
  ASSERT_EQ(m.incrs.size(), 1u);
  EXPECT_EQ(m.incrs[0].name, "appendonly.aof.4.incr.aof");
  EXPECT_EQ(m.base_seq, 4);
  EXPECT_EQ(m.incr_seq, 4);
  EXPECT_TRUE(m.history.empty());
}

TEST(AofManifestTest, RoundTripsWithHistoryAndOrder) {
  AofManifest m;
  const std::string text =
      "file appendonly.aof.2.base.rdb seq 2 type b\n"
      "file appendonly.aof.1.incr.aof seq 1 type h\n"
      "file appendonly.aof.4.incr.aof seq 4 type i\n"
      "file appendonly.aof.5.incr.aof seq 5 type i\n";
  ASSERT_EQ(m.Parse(text), "");
  EXPECT_EQ(m.history.size(), 1u);
  EXPECT_EQ(m.incrs.size(), 2u);
  EXPECT_EQ(m.ToString(), text);
}

TEST(AofManifestTest, IgnoresCommentsUnknownKeysAndKeyCase) {
  AofManifest m;
  ASSERT_EQ(m.Parse("# a comment\n"
                    "FILE x.1.base.aof SEQ 1 TYPE b extra value\n"
                    "file x.1.incr.aof seq 1 type i\n"),
            "");
  EXPECT_EQ(m.base->name, "x.1.base.aof");
  EXPECT_EQ(m.incrs.size(), 1u);
}

TEST(AofManifestTest, Errors) {
  AofManifest m;
  int line = 0;
  EXPECT_EQ(m.Parse("", &line), "Found an empty AOF manifest");
  EXPECT_EQ(m.Parse("file a seq 1 type b\n\n", &line), "Invalid AOF manifest file format");
  EXPECT_EQ(line, 2);
  EXPECT_EQ(m.Parse("file a seq 1\n"), "Invalid AOF manifest file format");
  EXPECT_EQ(m.Parse("file a seq 1 type b extra\n"), "Invalid AOF manifest file format");
  EXPECT_EQ(m.Parse("file a seq 0 type b\n"), "Invalid AOF manifest file format");
  EXPECT_EQ(m.Parse("file dir/a seq 1 type b\n"), "File can't be a path, just a filename");
  EXPECT_EQ(m.Parse("file a seq 1 type b\nfile b seq 2 type b\n"),
            "Found duplicate base file information");
  EXPECT_EQ(m.Parse("file a seq 2 type i\nfile b seq 2 type i\n", &line),
            "Found a non-monotonic sequence number");
  EXPECT_EQ(line, 2);
  EXPECT_EQ(m.Parse("file a seq 1 type x\n"), "Unknown AOF file type");
  // No newline at the end: Redis's fixed line buffer reads it as too long.
  EXPECT_EQ(m.Parse("file a seq 1 type b"), "The AOF manifest file contains too long line");
  EXPECT_EQ(m.Parse("file " + std::string(1100, 'a') + " seq 1 type b\n"),
            "The AOF manifest file contains too long line");
  EXPECT_EQ(m.Parse("file \"unterminated seq 1 type b\n"), "Invalid AOF manifest file format");
}

TEST(AofManifestTest, QuotesNamesThatNeedIt) {
  AofManifestName("x");
  EXPECT_EQ(QuoteManifestName("plain.aof"), "plain.aof");
  EXPECT_EQ(QuoteManifestName("a b"), "\"a b\"");
  EXPECT_EQ(QuoteManifestName("q\"\\\n\x01"), "\"q\\\"\\\\\\n\\x01\"");
  AofManifest m;
  m.base = AofFileInfo{"my file\t.1.base.rdb", 1, AofFileType::kBase};
  m.incrs.push_back(AofFileInfo{"my file\t.1.incr.aof", 1, AofFileType::kIncr});
  AofManifest back;
  ASSERT_EQ(back.Parse(m.ToString()), "");
  EXPECT_EQ(back.base->name, "my file\t.1.base.rdb");
  EXPECT_EQ(back.incrs[0].name, "my file\t.1.incr.aof");
}

TEST(AofManifestTest, SplitArgs) {
  std::vector<std::string> args;
  ASSERT_TRUE(SplitManifestArgs("  a 'b c' \"d\\x41\\n\"  ", &args));
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0], "a");
  EXPECT_EQ(args[1], "b c");
  EXPECT_EQ(args[2], "dA\n");
  EXPECT_FALSE(SplitManifestArgs("\"a\"b", &args));
  EXPECT_FALSE(SplitManifestArgs("'a", &args));
}

TEST(AofManifestTest, NextFilesAndReplaceBase) {
  AofManifest m;
  AofFileInfo base = m.NextBase("appendonly.aof", true);
  EXPECT_EQ(base.name, "appendonly.aof.1.base.rdb");
  m.ReplaceBase(base, 0);
  m.incrs.push_back(m.NextIncr("appendonly.aof"));
  m.incrs.push_back(m.NextIncr("appendonly.aof"));
  EXPECT_EQ(m.incrs[1].name, "appendonly.aof.2.incr.aof");
  // A rewrite started when incr 2 was opened: incr 1 and the old base become history.
  m.ReplaceBase(m.NextBase("appendonly.aof", false), 1);
  EXPECT_EQ(m.base->name, "appendonly.aof.2.base.aof");
  ASSERT_EQ(m.incrs.size(), 1u);
  EXPECT_EQ(m.incrs[0].seq, 2);
  ASSERT_EQ(m.history.size(), 2u);
  // Newest history first, as Redis lists it.
  EXPECT_EQ(m.history[0].name, "appendonly.aof.1.incr.aof");
  EXPECT_EQ(m.history[1].name, "appendonly.aof.1.base.rdb");
  EXPECT_EQ(m.ToString(),
            "file appendonly.aof.2.base.aof seq 2 type b\n"
            "file appendonly.aof.1.incr.aof seq 1 type h\n"
            "file appendonly.aof.1.base.rdb seq 1 type h\n"
            "file appendonly.aof.2.incr.aof seq 2 type i\n");
}

TEST(AofManifestTest, WriteFileAtomically) {
  char tmpl[] = "/tmp/aofmanifestXXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  ASSERT_EQ(WriteFileAtomically(dir, "m.manifest", "hello\n"), "");
  std::ifstream in(dir + "/m.manifest");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "hello\n");
  EXPECT_NE(access((dir + "/temp-m.manifest").c_str(), F_OK), 0);
  EXPECT_NE(WriteFileAtomically(dir + "/missing", "m", "x"), "");
  unlink((dir + "/m.manifest").c_str());
  rmdir(dir.c_str());
}

// Writes `text` to dir/name.
void WriteFile(const std::string& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir + "/" + name, std::ios::binary) << text;
}

class AofLoaderTest : public ::testing::Test {
 protected:
  AofLoaderTest() : server_(Config(), TestCommands()) {
    char tmpl[] = "/tmp/vireo_aof_loaderXXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~AofLoaderTest() override { std::filesystem::remove_all(dir_); }
  Server server_;
  std::string dir_;
};

TEST_F(AofLoaderTest, MissingListedFileFailsBeforeLoadingAnything) {
  WriteFile(dir_, "a.1.base.aof", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
  AofManifest m;
  ASSERT_EQ(m.Parse("file a.1.base.aof seq 1 type b\nfile a.1.incr.aof seq 1 type i\n"), "");
  bool loaded_any = true;
  std::string err = LoadAofFiles(server_, dir_, m, {}, &loaded_any);
  EXPECT_EQ(err,
            "Unable to obtain the AOF file a.1.incr.aof length. stat: No such file or directory");
  EXPECT_FALSE(loaded_any);
  EXPECT_EQ(server_.db(0).size(), 0u);
}

TEST_F(AofLoaderTest, ImpossibleArgumentCountIsATruncatedTail) {
  const std::string good = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
  for (const char* tail : {"*2147483647\r\n", "*2\r\n$3\r\nGET\r\n$99999999999\r\n"}) {
    WriteFile(dir_, "t.aof", good + tail);
    AofLoadOptions options;
    options.load_truncated = false;
    EXPECT_EQ(LoadAofFile(server_, dir_, "t.aof", options), AofLoadStatus::kFailed);
    server_.db(0).Clear();
    options.load_truncated = true;
    EXPECT_EQ(LoadAofFile(server_, dir_, "t.aof", options), AofLoadStatus::kTruncated);
    EXPECT_NE(server_.db(0).Find("k"), nullptr);
    EXPECT_EQ(std::filesystem::file_size(dir_ + "/t.aof"), good.size());
    server_.db(0).Clear();
  }
}

}  // namespace
}  // namespace vireo

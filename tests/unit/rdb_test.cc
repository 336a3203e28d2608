#include "persistence/rdb.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <random>
#include <string>

#include "persistence/rdb_encoding.h"
#include "persistence/rdb_internal.h"
#include "server/server.h"
#include "types/packed_list.h"

namespace vireo {
namespace {

using namespace rdb;  // NOLINT

TEST(RdbEncoding, Crc64MatchesRedis) {
  // The check value from Redis's crc64.c test.
  EXPECT_EQ(Crc64(0, "123456789", 9), 0xe9c6d914c4b8d9caULL);
  std::string li = "This is a test of the emergency broadcast system. This is only a test.";
  // Incremental == one shot, across the 8-byte fast path and the tail.
  uint64_t whole = Crc64(0, li.data(), li.size());
  uint64_t part = Crc64(Crc64(0, li.data(), 13), li.data() + 13, li.size() - 13);
  EXPECT_EQ(whole, part);
}

TEST(RdbEncoding, LzfRoundTrip) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    size_t n = rng() % 5000 + 1;
    std::string in(n, '\0');
    int alphabet = round % 3 == 0 ? 256 : 4;  // random bytes and highly repetitive text
    for (char& c : in) c = static_cast<char>('a' + rng() % alphabet);
    std::string out(n + n / 32 + 64, '\0');  // incompressible input grows by 1/32
    size_t c = LzfCompress(in.data(), in.size(), out.data(), out.size());
    ASSERT_GT(c, 0u);
    std::string back(n, '\0');
    ASSERT_TRUE(LzfDecompress(out.data(), c, back.data(), n));
    EXPECT_EQ(back, in);
    // A too-small output buffer fails cleanly.
    EXPECT_FALSE(LzfDecompress(out.data(), c, back.data(), n - 1 + (n == 1 ? 1 : 0)) && n > 1);
  }
  std::string rep(1000, 'x');
  std::string out(1000, '\0');
  size_t c = LzfCompress(rep.data(), rep.size(), out.data(), 996);
  EXPECT_GT(c, 0u);
  EXPECT_LT(c, 50u);
}

TEST(RdbEncoding, LzfRejectsCorruptInput) {
  std::string bad = "\xe0\xff\xff";  // a back reference before the start of the output
  char out[16];
  EXPECT_FALSE(LzfDecompress(bad.data(), bad.size(), out, sizeof(out)));
}

std::string RoundTripString(std::string_view s, bool compress) {
  std::string enc;
  AppendString(&enc, s, compress);
  Reader r(enc);
  std::string out;
  EXPECT_TRUE(r.ReadString(&out));
  EXPECT_EQ(r.consumed(), static_cast<int64_t>(enc.size()));
  return out;
}

TEST(RdbEncoding, StringEncodings) {
  for (std::string s : std::vector<std::string>{
           "", "0", "-1", "127", "-128", "128", "32767", "-32769", "2147483647", "2147483648",
           "12345678901", "007", "-0", "hello", std::string(100, 'a'), std::string(70000, 'b')}) {
    EXPECT_EQ(RoundTripString(s, true), s);
    EXPECT_EQ(RoundTripString(s, false), s);
  }
  std::string enc;
  AppendString(&enc, "-100", true);
  EXPECT_EQ(enc, std::string("\xc0\x9c", 2));  // INT8
  enc.clear();
  AppendString(&enc, std::string(100, 'a'), true);
  EXPECT_EQ(static_cast<uint8_t>(enc[0]), 0xC3);  // LZF
}

TEST(RdbEncoding, Lengths) {
  for (uint64_t n : {0ULL, 63ULL, 64ULL, 16383ULL, 16384ULL, 4294967295ULL, 4294967296ULL}) {
    std::string enc;
    AppendLength(&enc, n);
    Reader r(enc);
    uint64_t back;
    ASSERT_TRUE(r.ReadLength(&back));
    EXPECT_EQ(back, n);
  }
}

TEST(RdbEncoding, ListpackRoundTrip) {
  std::vector<std::string> in = {"a",
                                 "",
                                 "0",
                                 "127",
                                 "128",
                                 "-1",
                                 "-4096",
                                 "4095",
                                 "4096",
                                 "-32768",
                                 "32768",
                                 "8388607",
                                 "-8388609",
                                 "2147483648",
                                 "-9223372036854775808",
                                 "9223372036854775807",
                                 "01",
                                 std::string(63, 'x'),
                                 std::string(64, 'y'),
                                 std::string(4095, 'z'),
                                 std::string(4096, 'w'),
                                 std::string(70000, 'v')};
  ListpackWriter w;
  for (const auto& s : in) w.Add(s);
  std::string blob = w.Finish();
  ListpackReader r;
  ASSERT_TRUE(r.Init(blob));
  EXPECT_EQ(r.header_count(), in.size());
  PackedElem e;
  char buf[32];
  size_t i = 0;
  while (r.Next(&e)) {
    ASSERT_LT(i, in.size());
    EXPECT_EQ(e.View(buf), in[i]);
    ++i;
  }
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(i, in.size());
  // Truncations are detected, never read past the end.
  for (size_t cut = 1; cut < 200; ++cut) {
    std::string bad = blob.substr(0, blob.size() - cut);
    ListpackReader br;
    if (!br.Init(bad)) continue;
    while (br.Next(&e)) {
    }
    EXPECT_FALSE(br.ok());
  }
}

class RdbServerTest : public ::testing::Test {
 protected:
  RdbServerTest() : server_(Config()) {}
  Server server_;
};

TEST_F(RdbServerTest, DumpRestoreStringAndList) {
  Value s = Value::String("hello world");
  std::string payload = RdbDumpValue(s, true);
  Value back;
  std::string err;
  ASSERT_TRUE(RdbRestoreValue(server_, payload, &back, &err)) << err;
  char scratch[24];
  EXPECT_EQ(back.StringView(scratch), "hello world");

  auto list = std::make_unique<PackedList>();
  for (int i = 0; i < 5000; ++i) list->PushBack("element-" + std::to_string(i % 300));
  Value lv = Value::Object(ValueType::kList, std::move(list));
  payload = RdbDumpValue(lv, true);
  ASSERT_TRUE(RdbRestoreValue(server_, payload, &back, &err)) << err;
  const auto* l = back.As<PackedList>();
  ASSERT_EQ(l->size(), 5000u);
  std::string x;
  ASSERT_TRUE(l->Get(4999, &x));
  EXPECT_EQ(x, "element-" + std::to_string(4999 % 300));

  payload[1] ^= 1;
  EXPECT_FALSE(RdbRestoreValue(server_, payload, &back, &err));
  EXPECT_EQ(err, "ERR DUMP payload version or checksum are wrong");
}

TEST_F(RdbServerTest, SaveAndLoadFile) {
  Database& db = server_.db(0);
  db.Add("a", Value::String("1"));
  db.Add("b", Value::String(std::string(300, 'q')));
  DbEntry* e = db.Add("c", Value::String("ttl"));
  db.SetExpire(e, 4102444800000);  // 2100
  server_.db(3).Add("d", Value::String("db3"));
  char path[] = "/tmp/vireo_rdb_testXXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(RdbSave(server_, fd, {}), "");
  off_t written = lseek(fd, 0, SEEK_CUR);
  ssize_t extra = write(fd, "*1\r\n$4\r\nPING\r\n", 14);  // an AOF tail after the preamble
  ASSERT_EQ(extra, 14);
  lseek(fd, 0, SEEK_SET);
  Server other{Config()};
  RdbLoadStats stats;
  ASSERT_EQ(RdbLoad(other, fd, {}, &stats), "");
  EXPECT_EQ(stats.keys_loaded, 4u);
  EXPECT_EQ(stats.bytes_read, written);
  EXPECT_EQ(lseek(fd, 0, SEEK_CUR), written);
  close(fd);
  unlink(path);
  char scratch[24];
  EXPECT_EQ(other.db(0).Find("b")->value.StringView(scratch), std::string(300, 'q'));
  EXPECT_EQ(other.db(0).GetExpire(other.db(0).Find("c")), 4102444800000);
  EXPECT_EQ(other.db(3).Find("d")->value.StringView(scratch), "db3");
}

}  // namespace
}  // namespace vireo

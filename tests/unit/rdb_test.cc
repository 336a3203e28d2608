#include "persistence/rdb.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fake_persistence_host.h"
#include "persistence/rdb_encoding.h"
#include "persistence/rdb_internal.h"
#include "server/server.h"
#include "test_commands.h"
#include "types/packed_list.h"
#include "util/clock.h"

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

// Walks a listpack; true when the walk ends cleanly.
bool WalkListpack(std::string_view blob, bool deep) {
  ListpackReader r;
  if (!r.Init(blob, deep)) return false;
  PackedElem e;
  while (r.Next(&e)) {
  }
  return r.ok();
}

TEST(RdbEncoding, ListpackDeepChecksCountAndBacklen) {
  ListpackWriter w;
  w.Add("a");
  w.Add("bb");
  std::string blob = w.Finish();
  EXPECT_TRUE(WalkListpack(blob, false));
  EXPECT_TRUE(WalkListpack(blob, true));
  std::string wrong_count = blob;
  wrong_count[4] = 7;  // the header says 7 elements
  EXPECT_TRUE(WalkListpack(wrong_count, false));
  EXPECT_FALSE(WalkListpack(wrong_count, true));
  std::string unknown_count = blob;
  unknown_count[4] = '\xff';
  unknown_count[5] = '\xff';  // 65535: "count them", valid either way
  EXPECT_TRUE(WalkListpack(unknown_count, true));
  std::string wrong_backlen = blob;
  wrong_backlen[8] = 5;  // the first entry (0x81 'a') is 2 bytes long
  EXPECT_TRUE(WalkListpack(wrong_backlen, false));
  EXPECT_FALSE(WalkListpack(wrong_backlen, true));
}

TEST(RdbEncoding, IntsetDeepChecksOrder) {
  std::string blob("\x02\x00\x00\x00\x02\x00\x00\x00\x05\x00\x03\x00", 12);
  auto noop = [](void*, int64_t) {};
  EXPECT_TRUE(IntsetForEach(blob, noop, nullptr, false));
  EXPECT_FALSE(IntsetForEach(blob, noop, nullptr, true));
  std::swap(blob[8], blob[10]);
  EXPECT_TRUE(IntsetForEach(blob, noop, nullptr, true));
}

TEST(RdbEncoding, LzfExpansionBoundHolds) {
  // The longest match LZF can encode in 3 bytes; the bound the loader relies on.
  std::string zeros(100000, '\0');
  std::string out(zeros.size(), '\0');
  size_t c = LzfCompress(zeros.data(), zeros.size(), out.data(), out.size());
  ASSERT_GT(c, 0u);
  EXPECT_LE(zeros.size(), c * kLzfMaxExpansion);
}

class RdbServerTest : public ::testing::Test {
 protected:
  RdbServerTest() : server_(Config(), TestCommands()) {}
  Server server_;
};

TEST_F(RdbServerTest, DumpRestoreStringAndList) {
  Value s = Value::String("hello world");
  std::string payload = RdbDumpValue(s, true);
  Value back;
  std::string err;
  ASSERT_TRUE(RdbRestoreValue(server_.cfg(), payload, &back, &err)) << err;
  char scratch[24];
  EXPECT_EQ(back.StringView(scratch), "hello world");

  auto list = std::make_unique<PackedList>();
  for (int i = 0; i < 5000; ++i) list->PushBack("element-" + std::to_string(i % 300));
  Value lv = Value::Object(ValueType::kList, std::move(list));
  payload = RdbDumpValue(lv, true);
  ASSERT_TRUE(RdbRestoreValue(server_.cfg(), payload, &back, &err)) << err;
  const auto* l = back.As<PackedList>();
  ASSERT_EQ(l->size(), 5000u);
  std::string x;
  ASSERT_TRUE(l->Get(4999, &x));
  EXPECT_EQ(x, "element-" + std::to_string(4999 % 300));

  payload[1] ^= 1;
  EXPECT_FALSE(RdbRestoreValue(server_.cfg(), payload, &back, &err));
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
  Server other{Config(), TestCommands()};
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

// An image read from a source a few bytes at a time (a replica reading its master's socket)
// goes to the databases it is given, libraries set aside, with progress reported on the way.
TEST_F(RdbServerTest, LoadFromSourceIntoDetachedDatabases) {
  // Incompressible values, so the image outgrows the progress interval.
  std::mt19937 rng(7);
  for (int i = 0; i < 4; ++i) {
    std::string value(2000, ' ');
    for (char& c : value) c = static_cast<char>(rng());
    server_.db(i % 2 == 0 ? 0 : 2).Add("k" + std::to_string(i), Value::String(value));
  }
  std::string image;
  char path[] = "/tmp/vireo_rdb_sourceXXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(RdbSave(server_, fd, {}), "");
  image.resize(static_cast<size_t>(lseek(fd, 0, SEEK_CUR)));
  ASSERT_EQ(pread(fd, image.data(), image.size(), 0), static_cast<ssize_t>(image.size()));
  close(fd);
  unlink(path);
  Server target{Config(), TestCommands()};
  target.db(0).Add("old", Value::String("kept"));
  std::vector<std::unique_ptr<Database>> loaded;
  std::vector<Database*> dbs;
  for (int i = 0; i < target.db_count(); ++i) {
    loaded.push_back(target.NewDetachedDatabase());
    dbs.push_back(loaded.back().get());
  }
  auto source_of = [](const std::string& bytes, size_t* at) {
    return [&bytes, at](char* dst, size_t cap) -> ssize_t {
      size_t n = std::min({cap, bytes.size() - *at, size_t{7}});
      memcpy(dst, bytes.data() + *at, n);
      *at += n;
      return static_cast<ssize_t>(n);
    };
  };
  RdbLoadOptions options;
  options.target_dbs = dbs;
  std::vector<std::string> libraries;
  options.deferred_libraries = &libraries;
  options.progress_interval = 1024;
  int progress_calls = 0;
  options.progress = [&](int64_t) { return ++progress_calls > 0; };
  size_t at = 0;
  RdbLoadStats stats;
  ASSERT_EQ(RdbLoadFromSource(target, source_of(image, &at), options, &stats), "");
  EXPECT_EQ(stats.keys_loaded, 4u);
  EXPECT_GE(progress_calls, 3);
  EXPECT_EQ(loaded[0]->size(), 2u);
  EXPECT_EQ(loaded[2]->size(), 2u);
  EXPECT_EQ(target.db(0).size(), 1u);  // the live databases are untouched
  EXPECT_NE(target.db(0).Find("old"), nullptr);

  // Bytes after the image, and a progress callback that gives up, fail the load.
  std::string longer = image + "junk";
  at = 0;
  std::vector<std::unique_ptr<Database>> again;
  std::vector<Database*> again_dbs;
  for (int i = 0; i < target.db_count(); ++i) {
    again.push_back(target.NewDetachedDatabase());
    again_dbs.push_back(again.back().get());
  }
  options.target_dbs = again_dbs;
  options.progress = nullptr;
  EXPECT_EQ(RdbLoadFromSource(target, source_of(longer, &at), options, &stats), kRdbTrailingBytes);
  for (auto& db : again) db->Clear();
  at = 0;
  options.progress = [](int64_t) { return false; };
  EXPECT_EQ(RdbLoadFromSource(target, source_of(image, &at), options, &stats), "Loading aborted");
}

// A DUMP payload around `body` (type byte + value) with a valid footer.
std::string Payload(std::string body) {
  body.push_back(11);
  body.push_back(0);
  AppendMillis(&body, static_cast<int64_t>(Crc64(0, body.data(), body.size())));
  return body;
}

std::string HugeLength() {
  std::string len;
  AppendLength(&len, uint64_t{1} << 62);
  return len;
}

TEST_F(RdbServerTest, ClaimedCountsAndLengthsAreCheckedBeforeAllocating) {
  std::vector<std::string> bodies;
  for (uint8_t type : {kTypeSet, kTypeZset, kTypeZset2, kTypeList, kTypeHash}) {
    std::string b(1, static_cast<char>(type));
    b += HugeLength();
    AppendString(&b, "a", false);
    bodies.push_back(b);
  }
  bodies.push_back(std::string(1, kTypeString) + HugeLength() + "abc");
  std::string lzf(1, kTypeString);
  lzf.push_back(static_cast<char>(0xC3));
  AppendLength(&lzf, 4);
  AppendLength(&lzf, uint64_t{1} << 36);
  bodies.push_back(lzf + "\x02" + "abc");
  for (const std::string& body : bodies) {
    for (bool deep : {false, true}) {
      Value v;
      std::string err;
      EXPECT_FALSE(RdbRestoreValue(server_.cfg(), Payload(body), &v, &err, deep));
      EXPECT_EQ(err, "ERR Bad data format");
      EXPECT_TRUE(v.is_string());
    }
  }
}

TEST_F(RdbServerTest, HugeStringThroughAPipeFailsWithoutAllocatingIt) {
  // A pipe has no size to check a length against: the reader grows with the bytes that
  // arrive, so an 8 GB claim followed by a few bytes is a short read, not an 8 GB buffer.
  std::string f = "REDIS0011";
  f.push_back(static_cast<char>(kOpSelectDb));
  AppendLength(&f, 0);
  f.push_back(static_cast<char>(kTypeString));
  AppendString(&f, "k", false);
  AppendLength(&f, uint64_t{8} << 30);
  f += std::string(3 << 20, 'x');  // more than the reader's buffer, far less than claimed
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::thread writer([&] {
    size_t off = 0;
    while (off < f.size()) {
      ssize_t n = write(fds[1], f.data() + off, f.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(fds[1]);
  });
  RdbLoadStats stats;
  std::string err = RdbLoad(server_, fds[0], {}, &stats);
  writer.join();
  close(fds[0]);
  EXPECT_NE(err.find("short read"), std::string::npos) << err;
  EXPECT_EQ(server_.db(0).size(), 0u);
}

// ---- Access data (RDB IDLE / FREQ opcodes) ----------------------------------------------------

TEST(AccessClock, HintsFollowThePolicy) {
  const int64_t now = 1'700'000'000'000;
  AccessTracking lru, lfu;
  lfu.lfu = true;
  uint32_t clock = 7;
  // LRU (and any non-LFU policy): the idle time counts, the frequency doesn't.
  ASSERT_TRUE(ClockFromHints(lru, -1, 1000, now, &clock));
  EXPECT_EQ(LruIdleMs(clock, now), 1000'000);
  clock = 7;
  EXPECT_FALSE(ClockFromHints(lru, 100, -1, now, &clock));
  EXPECT_EQ(clock, 7u);
  // LFU: the counter counts, stamped now (no decay owed yet); the idle time doesn't.
  ASSERT_TRUE(ClockFromHints(lfu, 100, 5, now, &clock));
  EXPECT_EQ(LfuDecayed(clock, now, 1), 100);
  clock = 7;
  EXPECT_FALSE(ClockFromHints(lfu, -1, 1000, now, &clock));
  EXPECT_EQ(clock, 7u);
}

TEST(AccessClock, IdleTimesSurviveTheClockWrap) {
  // Just after the 24-bit seconds clock wrapped: stamps "before zero" read back exactly.
  const int64_t now = (int64_t{kAccessClockMax} + 1 + 30) * 1000;
  for (int64_t idle : {0, 29, 30, 31, 1000, 100000}) {
    EXPECT_EQ(LruIdleMs(LruClockForIdle(idle * 1000, now), now), idle * 1000) << idle;
  }
}

// Saves `from` into a temporary file and loads the image into `to`.
void SaveAndLoad(Server& from, Server& to, std::string* image = nullptr) {
  char path[] = "/tmp/vireo_rdb_clockXXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(RdbSave(from, fd, {}), "");
  if (image != nullptr) {
    off_t size = lseek(fd, 0, SEEK_CUR);
    image->resize(static_cast<size_t>(size));
    ASSERT_EQ(pread(fd, image->data(), image->size(), 0), size);
  }
  lseek(fd, 0, SEEK_SET);
  RdbLoadStats stats;
  ASSERT_EQ(RdbLoad(to, fd, {}, &stats), "");
  close(fd);
  unlink(path);
}

void SetPolicy(Server& server, const std::string& policy) {
  ASSERT_EQ(server.config().Set({{"maxmemory-policy", policy}}, true), "");
}

// RESIZEDB of a database with one key and no TTLs, just before its first key record.
const std::string kResized("\xfb\x01\x00", 3);

// The bytes a key record starts with when `opcode` carries `payload` for it.
std::string Hinted(RdbOpcode opcode, std::string payload, std::string_view key) {
  std::string out(1, static_cast<char>(opcode));
  out += payload;
  out.push_back(0);  // string type
  AppendString(&out, key, false);
  return out;
}

TEST_F(RdbServerTest, IdleTimeRoundTripsUnderLru) {
  SetPolicy(server_, "allkeys-lru");
  const int64_t now = NowMs();
  server_.db(0)
      .Add("idle", Value::String("v"))
      ->value.set_access_clock(LruClockForIdle(500'000, now));
  Server other{Config(), TestCommands()};
  SetPolicy(other, "volatile-lru");
  std::string image;
  SaveAndLoad(server_, other, &image);
  std::string len;
  AppendLength(&len, 500);
  // RESIZEDB 1 0, then only IDLE before the key.
  EXPECT_NE(image.find(kResized + Hinted(kOpIdle, len, "idle")), std::string::npos);
  const int64_t idle = LruIdleMs(other.db(0).Peek("idle")->value.access_clock(), NowMs());
  EXPECT_GE(idle, 500'000);
  EXPECT_LE(idle, 502'000);
}

TEST_F(RdbServerTest, FrequencyRoundTripsUnderLfu) {
  SetPolicy(server_, "allkeys-lfu");
  const int64_t now = NowMs();
  server_.db(0)
      .Add("hot", Value::String("v"))
      ->value.set_access_clock(LfuPack(LfuMinutes(now), 77));
  Server other{Config(), TestCommands()};
  SetPolicy(other, "volatile-lfu");
  std::string image;
  SaveAndLoad(server_, other, &image);
  EXPECT_NE(image.find(kResized + Hinted(kOpFreq, std::string(1, 77), "hot")), std::string::npos);
  EXPECT_EQ(LfuCounter(other.db(0).Peek("hot")->value.access_clock()), 77);
}

TEST_F(RdbServerTest, HintsOfAnotherPolicyAreIgnoredOrAbsent) {
  // noeviction writes neither opcode.
  server_.db(0).Add("k", Value::String("v"));
  std::string image;
  Server plain{Config(), TestCommands()};
  SaveAndLoad(server_, plain, &image);
  EXPECT_NE(image.find(kResized + std::string("\x00\x01k", 3)), std::string::npos);

  // An idle time loads under any non-LFU policy (as Redis's objectSetLRUOrLFU) ...
  Server lru{Config(), TestCommands()};
  SetPolicy(lru, "allkeys-lru");
  lru.db(0)
      .Add("k", Value::String("v"))
      ->value.set_access_clock(LruClockForIdle(3600'000, NowMs()));
  Server noevict{Config(), TestCommands()};
  SaveAndLoad(lru, noevict);
  EXPECT_GE(LruIdleMs(noevict.db(0).Peek("k")->value.access_clock(), NowMs()), 3600'000);
  // ... but not under LFU, where the key starts as a new one.
  Server lfu{Config(), TestCommands()};
  SetPolicy(lfu, "allkeys-lfu");
  SaveAndLoad(lru, lfu);
  EXPECT_EQ(LfuCounter(lfu.db(0).Peek("k")->value.access_clock()), kLfuInitCounter);
}

// The RDB code needs no server: a host that only holds databases saves and loads, and the
// replication position it reports goes into the repl-* AUX fields.
TEST(RdbHost, SaveAndLoadThroughAFakeHost) {
  FakePersistenceHost from;
  from.PersistedDb(0).Add("a", Value::String("1"));
  DbEntry* e = from.PersistedDb(2).Add("b", Value::String(std::string(100, 'x')));
  from.PersistedDb(2).SetExpire(e, 4102444800000);  // 2100
  from.replication = {"0123456789012345678901234567890123456789", 1234, 2};
  char path[] = "/tmp/vireo_rdb_hostXXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  RdbSaveOptions options;
  options.exclude = kRdbExcludeFunctions;
  ASSERT_EQ(RdbSave(from, fd, options), "");
  lseek(fd, 0, SEEK_SET);
  FakePersistenceHost to;
  RdbLoadStats stats;
  ASSERT_EQ(RdbLoad(to, fd, {}, &stats), "");
  close(fd);
  unlink(path);
  EXPECT_EQ(stats.keys_loaded, 2u);
  EXPECT_EQ(stats.replication.replid, from.replication.replid);
  EXPECT_EQ(stats.replication.offset, 1234);
  EXPECT_EQ(stats.replication.stream_db, 2);
  char scratch[24];
  EXPECT_EQ(to.PersistedDb(0).Peek("a")->value.StringView(scratch), "1");
  EXPECT_EQ(to.PersistedDb(2).GetExpire(to.PersistedDb(2).Peek("b")), 4102444800000);
}

}  // namespace
}  // namespace vireo

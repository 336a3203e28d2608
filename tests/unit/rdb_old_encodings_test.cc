// The decoders of the encodings older Redis versions wrote (ziplist, zipmap, intset, quicklist
// 1) and how RESTORE converts and validates them (src/persistence/rdb_encoding.h, rdb.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "db/value.h"
#include "persistence/rdb.h"
#include "persistence/rdb_encoding.h"
#include "types/hash_object.h"
#include "types/packed_list.h"
#include "types/set_object.h"
#include "types/zset.h"

namespace vireo {
namespace {

using namespace rdb;  // NOLINT

void PutLE(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// A ziplist of short strings (< 64 bytes) and integers 0..12 (the 4-bit immediate form) or
// int16 values, as Redis 6.2 and older wrote it.
std::string Ziplist(const std::vector<std::string>& strings, const std::vector<int> ints = {}) {
  std::string body;
  size_t prev = 0, tail = 10, count = 0;
  auto add = [&](const std::string& entry_tail) {
    std::string entry(1, static_cast<char>(prev));
    entry += entry_tail;
    tail = 10 + body.size();
    body += entry;
    prev = entry.size();
    ++count;
  };
  for (const std::string& s : strings) add(std::string(1, static_cast<char>(s.size())) + s);
  for (int v : ints) {
    if (v >= 0 && v <= 12) {
      add(std::string(1, static_cast<char>(0xF1 + v)));
    } else {
      std::string e("\xC0", 1);
      PutLE(&e, static_cast<uint16_t>(v), 2);
      add(e);
    }
  }
  std::string out;
  PutLE(&out, 10 + body.size() + 1, 4);
  PutLE(&out, tail, 4);
  PutLE(&out, count, 2);
  return out + body + "\xFF";
}

std::string Zipmap(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out(1, static_cast<char>(pairs.size()));
  for (const auto& [f, v] : pairs) {
    out += static_cast<char>(f.size()) + f;
    out += static_cast<char>(v.size());
    out += '\0';  // free bytes after the value
    out += v;
  }
  return out + "\xFF";
}

std::vector<std::string> WalkZiplist(std::string_view blob, bool deep, bool* ok) {
  std::vector<std::string> out;
  ZiplistReader r;
  *ok = false;
  if (!r.Init(blob, deep)) return out;
  PackedElem e;
  char buf[32];
  while (r.Next(&e)) out.emplace_back(e.View(buf));
  *ok = r.ok();
  return out;
}

TEST(ZiplistReader, DecodesStringsAndIntegers) {
  bool ok;
  auto elems = WalkZiplist(Ziplist({"a", "bc"}, {7, 300, -2}), true, &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(elems, (std::vector<std::string>{"a", "bc", "7", "300", "-2"}));
  elems = WalkZiplist(Ziplist({}), true, &ok);
  EXPECT_TRUE(ok);
  EXPECT_TRUE(elems.empty());
}

TEST(ZiplistReader, DeepChecksPrevLenTailAndCount) {
  const std::string good = Ziplist({"a", "b"});
  bool ok;
  std::string bad_prev = good;
  bad_prev[13] = 9;  // the second entry's previous-entry length (the first is 3 bytes)
  WalkZiplist(bad_prev, false, &ok);
  EXPECT_TRUE(ok);
  WalkZiplist(bad_prev, true, &ok);
  EXPECT_FALSE(ok);
  std::string bad_tail = good;
  bad_tail[4] = 10;  // the tail offset points at the first entry
  WalkZiplist(bad_tail, true, &ok);
  EXPECT_FALSE(ok);
  std::string bad_count = good;
  bad_count[8] = 5;
  WalkZiplist(bad_count, true, &ok);
  EXPECT_FALSE(ok);
  bad_count[8] = '\xFF';
  bad_count[9] = '\xFF';  // 65535: "count them"
  WalkZiplist(bad_count, true, &ok);
  EXPECT_TRUE(ok);
}

TEST(ZiplistReader, RejectsTruncationAndBadHeaders) {
  const std::string good = Ziplist({"abc", "de"}, {1000});
  for (size_t cut = 1; cut < good.size(); ++cut) {
    bool ok;
    WalkZiplist(good.substr(0, good.size() - cut), false, &ok);
    EXPECT_FALSE(ok) << cut;
  }
  std::string long_entry = good;
  long_entry[11] = 0x30;  // the first string claims 48 bytes
  bool ok;
  WalkZiplist(long_entry, false, &ok);
  EXPECT_FALSE(ok);
  std::string bytes = good;
  bytes[0] = static_cast<char>(bytes[0] + 1);  // zlbytes disagrees with the blob
  WalkZiplist(bytes, false, &ok);
  EXPECT_FALSE(ok);
}

std::vector<std::pair<std::string, std::string>> WalkZipmap(std::string_view blob, bool* ok) {
  std::vector<std::pair<std::string, std::string>> out;
  *ok = ZipmapForEach(
      blob,
      [](void* arg, std::string_view f, std::string_view v) {
        static_cast<std::vector<std::pair<std::string, std::string>>*>(arg)->emplace_back(f, v);
      },
      &out);
  return out;
}

TEST(Zipmap, DecodesPairsSkippingFreeBytes) {
  std::string blob = Zipmap({{"f1", "v1"}, {"f2", "value2"}});
  bool ok;
  auto pairs = WalkZipmap(blob, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(pairs,
            (std::vector<std::pair<std::string, std::string>>{{"f1", "v1"}, {"f2", "value2"}}));
  // Free bytes after a value (left by an in-place update) are skipped.
  std::string with_free =
      "\x01\x01"
      "f"
      "\x01\x02"
      "vxx\xFF";
  pairs = WalkZipmap(with_free, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(pairs[0].second, "v");
  // 254 in the header means "too many to count here".
  blob[0] = '\xFE';
  WalkZipmap(blob, &ok);
  EXPECT_TRUE(ok);
}

TEST(Zipmap, RejectsEmptyWrongCountAndOverruns) {
  bool ok;
  WalkZipmap(std::string("\x00\xFF", 2), &ok);
  EXPECT_FALSE(ok);  // Redis never wrote an empty zipmap
  std::string blob = Zipmap({{"f1", "v1"}, {"f2", "v2"}});
  std::string wrong_count = blob;
  wrong_count[0] = 3;
  WalkZipmap(wrong_count, &ok);
  EXPECT_FALSE(ok);
  for (size_t cut = 1; cut < blob.size(); ++cut) {
    WalkZipmap(blob.substr(0, blob.size() - cut), &ok);
    EXPECT_FALSE(ok) << cut;
  }
  std::string long_value = blob;
  long_value[4] = 100;  // the first value claims 100 bytes
  WalkZipmap(long_value, &ok);
  EXPECT_FALSE(ok);
}

TEST(Intset, DecodesEveryWidthAndRejectsBadSizes) {
  std::vector<int64_t> got;
  auto collect = [](void* arg, int64_t v) {
    static_cast<std::vector<int64_t>*>(arg)->push_back(v);
  };
  std::string i64;
  PutLE(&i64, 8, 4);
  PutLE(&i64, 2, 4);
  PutLE(&i64, static_cast<uint64_t>(-5), 8);
  PutLE(&i64, 1ull << 40, 8);
  ASSERT_TRUE(IntsetForEach(i64, collect, &got, true));
  EXPECT_EQ(got, (std::vector<int64_t>{-5, 1ll << 40}));
  EXPECT_FALSE(IntsetForEach(i64.substr(0, i64.size() - 1), collect, &got, false));
  std::string width3 = i64;
  width3[0] = 3;
  EXPECT_FALSE(IntsetForEach(width3, collect, &got, false));
}

TEST(ListpackReader, HeaderCountZeroOverEntriesIsCorrupt) {
  ListpackWriter w;
  w.Add("a");
  std::string blob = w.Finish();
  ListpackReader r;
  ASSERT_TRUE(r.Init(blob, false));
  blob[4] = 0;  // claims to be empty
  EXPECT_FALSE(r.Init(blob, false));
  EXPECT_TRUE(r.Init(ListpackWriter().Finish(), true));  // a truly empty listpack is fine
}

// ---- RESTORE of the old encodings ---------------------------------------------------------------

std::string Payload(uint8_t type, const std::string& body, int version = 9) {
  std::string out(1, static_cast<char>(type));
  out += body;
  PutLE(&out, version, 2);
  PutLE(&out, Crc64(0, out.data(), out.size()), 8);
  return out;
}

std::string Str(const std::string& s) {
  std::string out;
  AppendLength(&out, s.size());
  return out + s;
}

class OldEncodingRestore : public ::testing::Test {
 protected:
  bool Restore(const std::string& payload, bool deep = false, bool verify_checksum = true) {
    error_.clear();
    return RdbRestoreValue(config_, payload, &value_, &error_, deep, verify_checksum);
  }
  ServerConfig config_;
  Value value_;
  std::string error_;
};

TEST_F(OldEncodingRestore, ListZiplistAndQuicklist1BecomeLists) {
  ASSERT_TRUE(Restore(Payload(10, Str(Ziplist({"a", "b"}, {3}))))) << error_;
  EXPECT_EQ(value_.As<PackedList>()->size(), 3u);
  std::string nodes;
  AppendLength(&nodes, 2);
  nodes += Str(Ziplist({"x"})) + Str(Ziplist({"y", "z"}));
  ASSERT_TRUE(Restore(Payload(14, nodes))) << error_;
  const auto* list = value_.As<PackedList>();
  ASSERT_EQ(list->size(), 3u);
  std::string last;
  ASSERT_TRUE(list->Get(2, &last));
  EXPECT_EQ(last, "z");
}

TEST_F(OldEncodingRestore, HashZiplistZipmapZsetZiplistAndIntset) {
  ASSERT_TRUE(Restore(Payload(13, Str(Ziplist({"f", "v"}))))) << error_;
  EXPECT_EQ(value_.type(), ValueType::kHash);
  ASSERT_TRUE(Restore(Payload(9, Str(Zipmap({{"f", "v"}, {"g", "w"}}))))) << error_;
  EXPECT_EQ(value_.As<HashObject>()->size(), 2u);
  ASSERT_TRUE(Restore(Payload(12, Str(Ziplist({"m", "1.5", "n"}, {2}))))) << error_;
  double score = 0;
  ASSERT_TRUE(value_.As<ZSet>()->Score("m", &score));
  EXPECT_EQ(score, 1.5);
  std::string intset;
  PutLE(&intset, 2, 4);
  PutLE(&intset, 2, 4);
  PutLE(&intset, 1, 2);
  PutLE(&intset, 9, 2);
  ASSERT_TRUE(Restore(Payload(11, Str(intset)))) << error_;
  EXPECT_EQ(value_.As<SetObject>()->size(), 2u);
}

TEST_F(OldEncodingRestore, ZiplistsAreCheckedDeeplyWithoutBeingAsked) {
  std::string bad = Ziplist({"a", "b"});
  bad[13] = 9;  // a wrong previous-entry length: only a deep check notices
  EXPECT_FALSE(Restore(Payload(10, Str(bad)), /*deep=*/false));
  EXPECT_EQ(error_, "ERR Bad data format");
  EXPECT_FALSE(Restore(Payload(13, Str(bad)), /*deep=*/false));
  std::string nodes;
  AppendLength(&nodes, 1);
  EXPECT_FALSE(Restore(Payload(14, nodes + Str(bad)), /*deep=*/false));
}

TEST_F(OldEncodingRestore, DuplicatesAndEmptyContainersAreBadData) {
  EXPECT_FALSE(Restore(Payload(13, Str(Ziplist({"f", "v", "f", "w"})))));
  EXPECT_FALSE(Restore(Payload(9, Str(Zipmap({{"f", "v"}, {"f", "w"}})))));
  EXPECT_FALSE(Restore(Payload(12, Str(Ziplist({"m", "1", "m", "2"})))));
  EXPECT_FALSE(Restore(Payload(10, Str(Ziplist({})))));
  EXPECT_EQ(error_, "ERR Bad data format");
}

TEST_F(OldEncodingRestore, ChecksumCanBeSkippedButNotTheVersion) {
  std::string payload = Payload(13, Str(Ziplist({"f", "v"})));
  payload.back() ^= 1;
  EXPECT_FALSE(Restore(payload));
  EXPECT_EQ(error_, "ERR DUMP payload version or checksum are wrong");
  EXPECT_TRUE(Restore(payload, false, /*verify_checksum=*/false)) << error_;
  std::string newer = Payload(13, Str(Ziplist({"f", "v"})), 99);
  EXPECT_FALSE(Restore(newer, false, false));
  EXPECT_EQ(error_, "ERR DUMP payload version or checksum are wrong");
}

}  // namespace
}  // namespace vireo

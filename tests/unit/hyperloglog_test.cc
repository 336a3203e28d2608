// The HLL code against values Redis produced (redis-server 7.0, whose HLL code equals 7.2's
// apart from buffer allocation): exact bytes, estimates, encodings.
#include "types/hyperloglog.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace vireo::hll {
namespace {

constexpr size_t kMaxBytes = 3000;

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

std::string Build(int n, size_t max_bytes = kMaxBytes) {
  std::string h = NewSparse();
  for (int i = 0; i < n; ++i) {
    EXPECT_GE(Add(&h, std::to_string(i), max_bytes), 0);
  }
  InvalidateCache(&h);
  return h;
}

TEST(HyperLogLog, EmptyIsOneXZero) {
  std::string h = NewSparse();
  EXPECT_EQ(h.size(), 18u);
  EXPECT_TRUE(HasValidHeader(h));
  EXPECT_EQ(DecodeSparse(h), "Z:16384");
  EXPECT_EQ(Estimate(h), 0u);
  EXPECT_EQ(CachedCount(h), 0u);
}

TEST(HyperLogLog, SmallSparseBytesMatchRedis) {
  std::string h = NewSparse();
  EXPECT_EQ(Add(&h, "a", kMaxBytes), 1);
  EXPECT_EQ(Add(&h, "b", kMaxBytes), 1);
  EXPECT_EQ(Add(&h, "c", kMaxBytes), 1);
  EXPECT_EQ(Add(&h, "a", kMaxBytes), 0);
  InvalidateCache(&h);
  EXPECT_EQ(h, FromHex("48594c4c01000000000000000000008060f38050b1844bfb80425a"));
  EXPECT_EQ(CachedCount(h), std::nullopt);
  EXPECT_EQ(DecodeSparse(h), "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603");
  ASSERT_EQ(Estimate(h), 3u);
  StoreCachedCount(&h, 3);
  EXPECT_EQ(h, FromHex("48594c4c01000000030000000000000060f38050b1844bfb80425a"));
}

TEST(HyperLogLog, LargerValuesMatchRedis) {
  std::string sparse = Build(200);
  EXPECT_EQ(Encoding(sparse), kSparse);
  EXPECT_EQ(sparse.size(), 507u);
  EXPECT_EQ(Estimate(sparse), 201u);
  StoreCachedCount(&sparse, 201);  // Redis's bytes were taken after a PFCOUNT
  EXPECT_EQ(Fnv1a(sparse), 0x28c7b3a23b871ad6ULL);

  std::string dense = Build(10000);
  EXPECT_EQ(Encoding(dense), kDense);
  EXPECT_EQ(dense.size(), kDenseSize);
  EXPECT_EQ(Estimate(dense), 9987u);
  StoreCachedCount(&dense, 9987);
  EXPECT_EQ(Fnv1a(dense), 0x99d49421db1c95c2ULL);

  // hll-sparse-max-bytes 100 promotes early.
  std::string promoted = Build(200, 100);
  EXPECT_EQ(Encoding(promoted), kDense);
  EXPECT_EQ(Fnv1a(promoted), 0x5275ce1388244211ULL);
  EXPECT_EQ(Estimate(promoted), 201u);
}

TEST(HyperLogLog, MergeAndRawEstimate) {
  std::string small = NewSparse();
  for (const char* e : {"a", "b", "c"}) Add(&small, e, kMaxBytes);
  std::vector<uint8_t> max(kRegisters, 0);
  ASSERT_TRUE(MergeInto(Build(200), max.data()));
  ASSERT_TRUE(MergeInto(small, max.data()));
  ASSERT_TRUE(MergeInto(Build(10000), max.data()));
  EXPECT_EQ(EstimateRegisters(max.data()), 9990u);

  // PFMERGE u s k, Redis's way: registers written one by one into a new sparse value.
  std::vector<uint8_t> union_regs(kRegisters, 0);
  ASSERT_TRUE(MergeInto(Build(200), union_regs.data()));
  ASSERT_TRUE(MergeInto(small, union_regs.data()));
  std::string merged = NewSparse();
  for (uint32_t i = 0; i < kRegisters; ++i) {
    if (union_regs[i] != 0) SetRegister(&merged, i, union_regs[i], kMaxBytes);
  }
  InvalidateCache(&merged);
  EXPECT_EQ(merged.size(), 514u);
  EXPECT_EQ(Fnv1a(merged), 0x580677c506daaaa3ULL);
  EXPECT_EQ(Estimate(merged), 204u);
}

TEST(HyperLogLog, DenseAndSparseAgree) {
  std::string sparse = NewSparse();
  std::string dense = NewSparse();
  ASSERT_TRUE(ToDense(&dense));
  for (int i = 0; i < 3000; ++i) {
    const std::string e = "element:" + std::to_string(i);
    Add(&sparse, e, 1 << 20);
    Add(&dense, e, 1 << 20);
    if (i % 97 == 0) {
      ASSERT_EQ(Estimate(sparse), Estimate(dense)) << i;
    }
  }
  EXPECT_EQ(Encoding(sparse), kSparse);
  std::vector<uint8_t> a(kRegisters), b(kRegisters);
  ASSERT_TRUE(Unpack(sparse, a.data()));
  ASSERT_TRUE(Unpack(dense, b.data()));
  EXPECT_EQ(a, b);
  ASSERT_TRUE(ToDense(&sparse));
  EXPECT_EQ(sparse.substr(kHeaderSize), dense.substr(kHeaderSize));
}

TEST(HyperLogLog, LargeRegisterValuePromotes) {
  std::string h = NewSparse();
  EXPECT_EQ(SetRegister(&h, 5, 33, kMaxBytes), 1);
  EXPECT_EQ(Encoding(h), kDense);
  std::vector<uint8_t> regs(kRegisters);
  ASSERT_TRUE(Unpack(h, regs.data()));
  EXPECT_EQ(regs[5], 33);
  EXPECT_EQ(SetRegister(&h, 5, 20, kMaxBytes), 0);
  EXPECT_EQ(SetRegister(&h, kRegisters - 1, 63, kMaxBytes), 1);
  ASSERT_TRUE(Unpack(h, regs.data()));
  EXPECT_EQ(regs[kRegisters - 1], 63);
  EXPECT_EQ(regs[kRegisters - 2], 0);
}

TEST(HyperLogLog, HeaderChecks) {
  EXPECT_FALSE(HasValidHeader(""));
  EXPECT_FALSE(HasValidHeader("HYLL"));
  std::string h = NewSparse();
  h[0] = 'X';
  EXPECT_FALSE(HasValidHeader(h));
  h = NewSparse();
  h[4] = 2;
  EXPECT_FALSE(HasValidHeader(h));
  h = NewSparse();
  ASSERT_TRUE(ToDense(&h));
  EXPECT_TRUE(HasValidHeader(h));
  h.pop_back();
  EXPECT_FALSE(HasValidHeader(h));
}

TEST(HyperLogLog, CorruptSparseIsDetected) {
  std::vector<uint8_t> regs(kRegisters);
  // Too few registers covered.
  std::string h = NewSparse();
  h.back() = static_cast<char>(0xfe);
  EXPECT_EQ(Estimate(h), std::nullopt);
  EXPECT_FALSE(MergeInto(h, regs.data()));
  EXPECT_FALSE(ToDense(&h));
  // Too many: a VAL run past the end.
  h = NewSparse() + '\x83';
  EXPECT_EQ(Estimate(h), std::nullopt);
  EXPECT_FALSE(Unpack(h, regs.data()));
  // Truncated XZERO: its missing byte reads as 0.
  h = NewSparse();
  h.pop_back();
  EXPECT_EQ(Estimate(h), std::nullopt);
  EXPECT_EQ(DecodeSparse(h), "Z:16129");
  // A register beyond the opcodes cannot be set.
  h = NewSparse();
  h.resize(kHeaderSize);
  EXPECT_EQ(SetRegister(&h, 0, 1, kMaxBytes), -1);
  EXPECT_EQ(Add(&h, "x", kMaxBytes), -1);
  // Runs of XZERO covering far more than 16384 registers, then a VAL.
  h = NewSparse();
  for (int i = 0; i < 10; ++i) h += "\x7f\xff";
  h += '\x80';
  EXPECT_EQ(Estimate(h), std::nullopt);
  EXPECT_FALSE(ToDense(&h));
}

TEST(HyperLogLog, MurmurHashKnownValues) {
  // Redis's decode of PFADD k a b c: value 1 at 8436 and 15780, value 2 at 12711.
  std::set<std::pair<uint32_t, int>> seen;
  for (const char* e : {"a", "b", "c"}) {
    uint32_t index;
    const int value = PatternLength(e, &index);
    seen.emplace(index, value);
  }
  EXPECT_EQ(seen, (std::set<std::pair<uint32_t, int>>{{8436, 1}, {12711, 2}, {15780, 1}}));
}

TEST(HyperLogLog, SelfTestPasses) { EXPECT_EQ(SelfTest(12345, kMaxBytes), ""); }

}  // namespace
}  // namespace vireo::hll

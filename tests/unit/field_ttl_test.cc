#include "types/field_ttl.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "types/hash_object.h"

namespace vireo {
namespace {

TEST(FieldTtlsTest, SetGetMoveRemove) {
  FieldTtls t;
  EXPECT_EQ(t.Earliest(), FieldTtls::kNever);
  t.Set("a", 300);
  t.Set("b", 100);
  t.Set("a-field-name-longer-than-sso", 200);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.Get("a"), 300);
  EXPECT_EQ(t.Get("zz"), FieldTtls::kNoTtl);
  EXPECT_EQ(t.Earliest(), 100);
  t.Set("b", 400);  // moved later: "a-field..." is now first
  EXPECT_EQ(t.Earliest(), 200);
  EXPECT_EQ(t.Get("b"), 400);
  EXPECT_TRUE(t.Remove("a-field-name-longer-than-sso"));
  EXPECT_FALSE(t.Remove("a-field-name-longer-than-sso"));
  EXPECT_EQ(t.Earliest(), 300);
  EXPECT_EQ(t.size(), 2u);
}

TEST(FieldTtlsTest, PopExpiredInOrderAndBounded) {
  FieldTtls t;
  for (int i = 0; i < 10; ++i) t.Set("f" + std::to_string(i), 1000 - i * 10);
  std::vector<std::string> popped;
  // 910..1000 are the expiries; at 950, f5..f9 (950, 940, ... 910) are due.
  size_t n = t.PopExpired(950, 3, [&](std::string_view f) { popped.emplace_back(f); });
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(popped, (std::vector<std::string>{"f9", "f8", "f7"}));
  n = t.PopExpired(950, 100, [&](std::string_view f) { popped.emplace_back(f); });
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(t.size(), 5u);
  EXPECT_EQ(t.Get("f6"), FieldTtls::kNoTtl);
  EXPECT_EQ(t.Earliest(), 960);
}

TEST(FieldTtlsTest, CopyIsIndependent) {
  FieldTtls t;
  t.Set("x", 5);
  FieldTtls c(t);
  c.Set("x", 7);
  c.Remove("x");
  EXPECT_EQ(t.Get("x"), 5);
  EXPECT_TRUE(c.empty());
  EXPECT_GT(t.MemoryUsage(), sizeof(FieldTtls));
}

TEST(HashObjectTtlTest, SetDeleteAndOverwriteDropTtl) {
  HashObject h;
  HashLimits limits;
  h.Set("a", "1", limits);
  h.Set("b", "2", limits);
  EXPECT_FALSE(h.has_field_ttls());
  h.SetFieldExpire("a", 100);
  h.SetFieldExpire("b", 50);
  EXPECT_EQ(h.NextFieldExpire(), 50);
  h.Set("b", "3", limits, /*keep_ttl=*/true);
  EXPECT_EQ(h.FieldExpire("b"), 50);
  h.Set("b", "4", limits);  // HSET drops the TTL
  EXPECT_EQ(h.FieldExpire("b"), FieldTtls::kNoTtl);
  EXPECT_EQ(h.NextFieldExpire(), 100);
  h.Delete("a");
  EXPECT_FALSE(h.has_field_ttls());  // the side structure is freed with its last TTL
  EXPECT_EQ(h.NextFieldExpire(), FieldTtls::kNever);
}

TEST(HashObjectTtlTest, ExpireFieldsAndConversionAndClone) {
  HashObject h;
  HashLimits limits;
  limits.max_listpack_entries = 4;
  for (int i = 0; i < 8; ++i) h.Set("f" + std::to_string(i), "v", limits);
  EXPECT_STREQ(h.EncodingName(), "hashtable");
  for (int i = 0; i < 8; ++i) h.SetFieldExpire("f" + std::to_string(i), 100 + i);
  auto copy = h.Clone();
  std::vector<std::string> gone;
  EXPECT_EQ(h.ExpireFields(103, 100, [&](std::string_view f) { gone.emplace_back(f); }), 4u);
  EXPECT_EQ(gone, (std::vector<std::string>{"f0", "f1", "f2", "f3"}));
  EXPECT_EQ(h.size(), 4u);
  EXPECT_FALSE(h.Contains("f0"));
  EXPECT_EQ(h.field_ttl_count(), 4u);
  EXPECT_EQ(h.ExpireFields(1000, 100, [](std::string_view) {}), 4u);
  EXPECT_TRUE(h.empty());
  EXPECT_FALSE(h.has_field_ttls());
  auto* c = static_cast<HashObject*>(copy.get());
  EXPECT_EQ(c->size(), 8u);
  EXPECT_EQ(c->FieldExpire("f7"), 107);
}

TEST(HashObjectTtlTest, ListpackKeepsEncodingWithTtls) {
  HashObject h;
  HashLimits limits;
  h.Set("a", "1", limits);
  h.SetFieldExpire("a", 10);
  EXPECT_STREQ(h.EncodingName(), "listpack");
  size_t with = h.MemoryUsage();
  h.PersistField("a");
  EXPECT_LT(h.MemoryUsage(), with);
}

}  // namespace
}  // namespace vireo

#include "types/packed_strings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vireo {
namespace {

std::vector<std::string> All(const PackedStrings& p) {
  std::vector<std::string> out;
  p.ForEach([&](std::string_view s) {
    out.emplace_back(s);
    return true;
  });
  return out;
}

TEST(PackedStringsTest, AppendFindErase) {
  PackedStrings p;
  p.Append("a");
  p.Append("");
  p.Append(std::string(300, 'x'));  // two-byte length
  p.Append("b");
  EXPECT_EQ(p.count(), 4u);
  EXPECT_EQ(p.Find(""), p.OffsetOf(1));
  EXPECT_EQ(p.At(p.Find(std::string(300, 'x'))).size(), 300u);
  EXPECT_EQ(p.Find("zz"), PackedStrings::kNpos);
  p.Erase(p.OffsetOf(1), 2);
  EXPECT_EQ(All(p), (std::vector<std::string>{"a", "b"}));
}

TEST(PackedStringsTest, FindWithStrideSkipsValues) {
  PackedStrings p;  // field, value pairs
  p.Append("f1");
  p.Append("f2");
  p.Append("f2");
  p.Append("v2");
  // "f2" as a value (index 1) must not match a field lookup.
  EXPECT_EQ(p.Find("f2", 2), p.OffsetOf(2));
  EXPECT_EQ(p.Find("v2", 2), PackedStrings::kNpos);
}

TEST(PackedStringsTest, ReplaceChangesLength) {
  PackedStrings p;
  p.Append("k");
  p.Append("short");
  p.Append("tail");
  p.Replace(p.OffsetOf(1), std::string(200, 'y'));
  EXPECT_EQ(All(p)[1], std::string(200, 'y'));
  EXPECT_EQ(All(p)[2], "tail");
  p.Replace(p.OffsetOf(1), "");
  EXPECT_EQ(All(p), (std::vector<std::string>{"k", "", "tail"}));
  EXPECT_EQ(p.count(), 3u);
}

}  // namespace
}  // namespace vireo

#include "protocol/reply_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace vireo {
namespace {

struct Both {
  std::string resp2, resp3;
};

template <typename F>
Both Build(F&& f) {
  Both out;
  ReplyBuilder r2(&out.resp2);
  f(r2);
  ReplyBuilder r3(&out.resp3);
  r3.set_resp3(true);
  f(r3);
  return out;
}

TEST(ReplyBuilderTest, Scalars) {
  auto b = Build([](ReplyBuilder& r) {
    r.SimpleString("OK");
    r.Integer(-42);
    r.Bulk("hi");
    r.Bulk("");
    r.Error("ERR bad\r\nthing");
  });
  EXPECT_EQ(b.resp2, "+OK\r\n:-42\r\n$2\r\nhi\r\n$0\r\n\r\n-ERR bad  thing\r\n");
  EXPECT_EQ(b.resp3, b.resp2);
}

TEST(ReplyBuilderTest, Nulls) {
  auto b = Build([](ReplyBuilder& r) {
    r.Null();
    r.NullArray();
  });
  EXPECT_EQ(b.resp2, "$-1\r\n*-1\r\n");
  EXPECT_EQ(b.resp3, "_\r\n_\r\n");
}

TEST(ReplyBuilderTest, Aggregates) {
  auto b = Build([](ReplyBuilder& r) {
    r.Map(1);
    r.Bulk("k");
    r.Set(2);
    r.Integer(1);
    r.Integer(2);
    r.Push(0);
  });
  EXPECT_EQ(b.resp2, "*2\r\n$1\r\nk\r\n*2\r\n:1\r\n:2\r\n*0\r\n");
  EXPECT_EQ(b.resp3, "%1\r\n$1\r\nk\r\n~2\r\n:1\r\n:2\r\n>0\r\n");
}

TEST(ReplyBuilderTest, DoublesBoolsVerbatim) {
  auto b = Build([](ReplyBuilder& r) {
    r.Double(1.5);
    r.Double(std::numeric_limits<double>::infinity());
    r.Bool(true);
    r.Verbatim("abc");
  });
  EXPECT_EQ(b.resp2, "$3\r\n1.5\r\n$3\r\ninf\r\n:1\r\n$3\r\nabc\r\n");
  EXPECT_EQ(b.resp3, ",1.5\r\n,inf\r\n#t\r\n=7\r\ntxt:abc\r\n");
}

TEST(ReplyBuilderTest, DeferredLengths) {
  auto b = Build([](ReplyBuilder& r) {
    size_t mark = r.DeferLength();
    r.Bulk("a");
    r.Bulk("b");
    r.SetDeferredArray(mark, 2);
    size_t map = r.DeferLength();
    r.Bulk("k");
    r.Integer(1);
    r.SetDeferredMap(map, 1);
  });
  EXPECT_EQ(b.resp2, "*2\r\n$1\r\na\r\n$1\r\nb\r\n*2\r\n$1\r\nk\r\n:1\r\n");
  EXPECT_EQ(b.resp3, "*2\r\n$1\r\na\r\n$1\r\nb\r\n%1\r\n$1\r\nk\r\n:1\r\n");
}

TEST(ReplyBuilderTest, ErrorHookSeesCode) {
  std::string out, code;
  ReplyBuilder r(&out);
  r.set_error_hook([](void* ctx, std::string_view c) { *static_cast<std::string*>(ctx) = c; },
                   &code);
  r.Error("WRONGTYPE Operation against a key");
  EXPECT_EQ(code, "WRONGTYPE");
}

}  // namespace
}  // namespace vireo

#include "replication/sync_payload.h"

#include <gtest/gtest.h>

#include <string>

namespace vireo {
namespace {

const std::string kMark(40, 'a');

// Feeds `wire` in pieces of `step` bytes; returns the payload and what was left over.
std::pair<std::string, std::string> FeedInSteps(SyncPayloadReader& r, const std::string& wire,
                                                size_t step) {
  std::string payload, rest;
  for (size_t pos = 0; pos < wire.size(); pos += step) {
    std::string_view piece = std::string_view(wire).substr(pos, step);
    if (r.state() == SyncPayloadReader::State::kDone) {
      rest.append(piece);
      continue;
    }
    size_t used = r.Feed(piece, &payload);
    rest.append(piece.substr(used));
  }
  return {payload, rest};
}

TEST(SyncPayloadReader, LengthFramingAfterKeepAlives) {
  for (size_t step : {1, 3, 7, 100}) {
    SyncPayloadReader r;
    auto [payload, rest] = FeedInSteps(r, "\n\n$10\r\n0123456789*1\r\n$4\r\nPING\r\n", step);
    EXPECT_EQ(r.state(), SyncPayloadReader::State::kDone) << step;
    EXPECT_FALSE(r.eof_mode());
    EXPECT_EQ(r.expected(), 10);
    EXPECT_EQ(payload, "0123456789");
    EXPECT_EQ(rest, "*1\r\n$4\r\nPING\r\n");
  }
}

TEST(SyncPayloadReader, EofFramingMarkAcrossReads) {
  std::string body = "REDIS0011" + std::string(100, 'x') + std::string(39, 'a') + "b";
  for (size_t step : {1, 2, 5, 38, 39, 40, 41, 79, 80, 150, 1000}) {
    SyncPayloadReader r;
    auto [payload, rest] = FeedInSteps(r, "\n$EOF:" + kMark + "\r\n" + body + kMark + "+X", step);
    EXPECT_EQ(r.state(), SyncPayloadReader::State::kDone) << step;
    EXPECT_TRUE(r.eof_mode());
    EXPECT_EQ(payload, body) << step;
    EXPECT_EQ(r.received(), static_cast<int64_t>(body.size()));
    EXPECT_EQ(rest, "+X") << step;
  }
}

TEST(SyncPayloadReader, TruncatedPayloadIsNotDone) {
  SyncPayloadReader r;
  std::string payload;
  r.Feed("$100\r\nabc", &payload);
  EXPECT_EQ(r.state(), SyncPayloadReader::State::kBody);
  EXPECT_EQ(r.received(), 3);
}

TEST(SyncPayloadReader, EmptyPayload) {
  SyncPayloadReader r;
  std::string payload;
  EXPECT_EQ(r.Feed("$0\r\n", &payload), 4u);
  EXPECT_EQ(r.state(), SyncPayloadReader::State::kDone);
}

TEST(SyncPayloadReader, BadHeaders) {
  for (const char* wire : {"+OK\r\n", "$abc\r\n", "$-5\r\n", "-ERR nope\r\n"}) {
    SyncPayloadReader r;
    std::string payload;
    r.Feed(wire, &payload);
    EXPECT_EQ(r.state(), SyncPayloadReader::State::kError) << wire;
    EXPECT_FALSE(r.error().empty());
  }
}

}  // namespace
}  // namespace vireo

#include "protocol/resp_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vireo {
namespace {

using Commands = std::vector<std::vector<std::string>>;

// Feeds `stream` to a parser in pieces cut at `splits` (offsets), the way reads arrive, and
// collects the commands. Mirrors the server: unconsumed bytes stay at the front of the buffer.
Commands ParseInPieces(const std::string& stream, const std::vector<size_t>& splits,
                       std::string* error = nullptr) {
  RespParser parser;
  Commands out;
  std::string buffer;
  size_t fed = 0;
  std::vector<size_t> cuts = splits;
  cuts.push_back(stream.size());
  for (size_t cut : cuts) {
    buffer.append(stream, fed, cut - fed);
    fed = cut;
    while (!buffer.empty()) {
      size_t consumed = 0;
      auto result = parser.Parse(buffer, &consumed);
      if (result == RespParser::Result::kCommand) {
        out.emplace_back(parser.args().begin(), parser.args().end());
        buffer.erase(0, consumed);
      } else if (result == RespParser::Result::kNeedMore) {
        buffer.erase(0, consumed);
        if (consumed == 0) break;
      } else {
        if (error != nullptr) *error = parser.error();
        return out;
      }
    }
  }
  return out;
}

using namespace std::string_literals;

const std::string kPipeline =
    "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n"
    "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"
    "PING\r\n"
    "*1\r\n$0\r\n\r\n"
    "set \"a b\" 'c d'\n"
    "*0\r\n"
    "\r\n"
    "*2\r\n$4\r\nECHO\r\n$10\r\nbin\r\n\0\x01xyz\r\n"s;

const Commands kExpected = {{"SET", "key", "value"},
                            {"GET", "key"},
                            {"PING"},
                            {""},
                            {"set", "a b", "c d"},
                            {"ECHO", std::string("bin\r\n\0\x01xyz", 10)}};

std::string Pipeline() { return kPipeline; }

TEST(RespParserTest, WholeStream) { EXPECT_EQ(ParseInPieces(Pipeline(), {}), kExpected); }

TEST(RespParserTest, EverySplitPoint) {
  std::string stream = Pipeline();
  for (size_t i = 1; i < stream.size(); ++i) {
    EXPECT_EQ(ParseInPieces(stream, {i}), kExpected) << "split at " << i;
  }
}

TEST(RespParserTest, EveryPairOfSplitPoints) {
  std::string stream = Pipeline();
  for (size_t i = 1; i < stream.size(); i += 3) {
    for (size_t j = i + 1; j < stream.size(); j += 2) {
      ASSERT_EQ(ParseInPieces(stream, {i, j}), kExpected) << "splits " << i << "," << j;
    }
  }
}

TEST(RespParserTest, ByteByByte) {
  std::string stream = Pipeline();
  std::vector<size_t> cuts;
  for (size_t i = 1; i < stream.size(); ++i) cuts.push_back(i);
  EXPECT_EQ(ParseInPieces(stream, cuts), kExpected);
}

struct ErrorCase {
  std::string input;
  std::string error;
};

TEST(RespParserTest, ProtocolErrors) {
  const std::vector<ErrorCase> cases = {
      {"*abc\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*3000000000\r\n", "ERR Protocol error: invalid multibulk length"},
      {"*1\r\n$-5\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$abc\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$600000000\r\n", "ERR Protocol error: invalid bulk length"},
      // Lengths the digit fast path must leave to the general parser.
      {"*1\r\n$03\r\nabc\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$+3\r\nabc\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$3x\r\nabc\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$99999999999999999999\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\n$123456789012345678\r\n", "ERR Protocol error: invalid bulk length"},
      {"*1\r\nfoo\r\n", "ERR Protocol error: expected '$', got 'f'"},
      {"set \"abc\n", "ERR Protocol error: unbalanced quotes in request"},
      {"set 'abc\n", "ERR Protocol error: unbalanced quotes in request"},
      {"set \"a\"b\n", "ERR Protocol error: unbalanced quotes in request"},
      {std::string(70000, 'a'), "ERR Protocol error: too big inline request"},
      {"*" + std::string(70000, '1'), "ERR Protocol error: too big mbulk count string"},
      {"*1\r\n$" + std::string(70000, '1'), "ERR Protocol error: too big bulk count string"},
  };
  for (const auto& c : cases) {
    std::string error;
    ParseInPieces(c.input, {}, &error);
    EXPECT_EQ(error, c.error) << c.input.substr(0, 40);
  }
}

TEST(RespParserTest, BulkLimitIsConfigurable) {
  RespParser parser;
  ParserLimits limits;
  limits.max_bulk_len = 10;
  parser.set_limits(limits);
  size_t consumed;
  EXPECT_EQ(parser.Parse("*1\r\n$11\r\n", &consumed), RespParser::Result::kError);
  parser.Reset();
  EXPECT_EQ(parser.Parse("*1\r\n$10\r\n0123456789\r\n", &consumed), RespParser::Result::kCommand);
}

TEST(RespParserTest, UnauthenticatedLimits) {
  RespParser parser;
  parser.set_authenticated(false);
  size_t consumed;
  // Redis 7.2's own messages, so a client can tell "AUTH first" from a malformed frame.
  EXPECT_EQ(parser.Parse("*11\r\n", &consumed), RespParser::Result::kError);
  EXPECT_EQ(parser.error(), "ERR Protocol error: unauthenticated multibulk length");
  parser.Reset();
  EXPECT_EQ(parser.Parse("*1\r\n$16385\r\n", &consumed), RespParser::Result::kError);
  EXPECT_EQ(parser.error(), "ERR Protocol error: unauthenticated bulk length");
  // At the limits they are accepted; malformed lengths keep the generic messages.
  parser.Reset();
  EXPECT_EQ(parser.Parse("*10\r\n$16384\r\n", &consumed), RespParser::Result::kNeedMore);
  parser.Reset();
  EXPECT_EQ(parser.Parse("*1x\r\n", &consumed), RespParser::Result::kError);
  EXPECT_EQ(parser.error(), "ERR Protocol error: invalid multibulk length");
}

// Found by tests/fuzz/resp_parser_fuzz.cc: a long header whose '\r' had arrived but not its
// '\n' was refused as "too big" only when the read happened to stop between the two, so the
// same stream got different errors depending on how it was split. Redis applies the size
// limit only while no '\r' has arrived.
TEST(RespParserTest, HeaderLimitDoesNotDependOnReadSplits) {
  ParserLimits limits;
  limits.max_inline_len = 16;
  for (std::string stream :
       {"*4\n" + std::string(20, 'x') + "\r\n", "*1\r\n$4\n" + std::string(20, 'x') + "\r\n"}) {
    RespParser whole;
    whole.set_limits(limits);
    size_t consumed;
    ASSERT_EQ(whole.Parse(stream, &consumed), RespParser::Result::kError);
    RespParser split;
    split.set_limits(limits);
    RespParser::Result r =
        split.Parse(std::string_view(stream).substr(0, stream.size() - 1), &consumed);
    if (r != RespParser::Result::kError) r = split.Parse(stream, &consumed);
    ASSERT_EQ(r, RespParser::Result::kError);
    EXPECT_EQ(split.error(), whole.error()) << stream;
  }
}

TEST(RespParserTest, BytesWantedForLargeBulk) {
  RespParser parser;
  std::string head = "*2\r\n$3\r\nSET\r\n$1000000\r\n";
  size_t consumed;
  EXPECT_EQ(parser.Parse(head, &consumed), RespParser::Result::kNeedMore);
  EXPECT_EQ(parser.bytes_wanted(), head.size() + 1000000 + 2);
  std::string full = head + std::string(1000000, 'x') + "\r\n";
  EXPECT_EQ(parser.Parse(full, &consumed), RespParser::Result::kCommand);
  EXPECT_EQ(consumed, full.size());
  EXPECT_EQ(parser.args()[1].size(), 1000000u);
}

TEST(RespParserTest, InlineSkipsEmptyLinesAndStripsCr) {
  EXPECT_EQ(ParseInPieces("\r\n\n  \r\nPING\r\nECHO   x  \n", {}),
            (Commands{{"PING"}, {"ECHO", "x"}}));
}

TEST(RespParserTest, InlineEscapes) {
  EXPECT_EQ(ParseInPieces("set k \"\\x41\\n\\t\\\"\"\n", {}), (Commands{{"set", "k", "A\n\t\""}}));
}

}  // namespace
}  // namespace vireo

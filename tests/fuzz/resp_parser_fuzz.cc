// Protocol fuzzer for the RESP request parser (src/protocol/resp_parser.h).
//
// One input is a byte stream as a client would send it. FuzzOne feeds it to the parser the
// way the server does (the unconsumed tail of a buffer, dropping what each call consumed) and
// checks, besides "no crash, no sanitizer report":
//   - every call's `consumed` stays within the data it was given, and a command consumes bytes;
//   - parsing the stream split at every byte (or at random points, for long inputs) yields
//     the same commands and the same error as parsing it whole;
//   - re-encoding the parsed commands as multibulk frames parses back to the same commands.
// The one documented exception to the split check: a line or header longer than the inline
// limit is refused only while it is buffered without its terminator (as in Redis), so inputs
// holding such a run are checked for safety and for each parse's invariants only.
//
// Standalone (the normal toolchain):  resp_parser_fuzz --seed S --iterations N [--max-seconds T]
// Each iteration draws its input from (S, iteration number) alone, so a failure printed as
// "iteration I" reproduces with --seed S --start I --iterations 1. With VIREO_LIBFUZZER the
// same FuzzOne is LLVMFuzzerTestOneInput (see CMakeLists.txt).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/resp_parser.h"

namespace {

using vireo::ParserLimits;
using vireo::RespParser;

using Command = std::vector<std::string>;

// Small limits, so inputs reach them (and one past them) cheaply.
constexpr int64_t kMaxBulk = 96;
constexpr size_t kMaxInline = 200;

struct Outcome {
  std::vector<Command> commands;
  std::string error;  // "" when the stream ended without a protocol error
  bool operator==(const Outcome&) const = default;
};

// The standalone loop's current iteration, so a failure names its reproduction (this tool
// runs one input at a time; the server has no such state).
struct Reproduction {
  bool standalone = false;
  uint64_t seed = 0;
  uint64_t iteration = 0;
} reproduction;

[[noreturn]] void Fail(const char* what, std::string_view input) {
  std::fprintf(stderr, "resp_parser_fuzz: invariant broken: %s\ninput (%zu bytes):", what,
               input.size());
  for (unsigned char c : input) std::fprintf(stderr, " %02x", c);
  std::fprintf(stderr, "\n");
  if (reproduction.standalone) {
    std::fprintf(stderr, "reproduce: resp_parser_fuzz --seed %llu --start %llu --iterations 1\n",
                 static_cast<unsigned long long>(reproduction.seed),
                 static_cast<unsigned long long>(reproduction.iteration));
  }
  std::abort();
}

RespParser MakeParser(bool authenticated) {
  RespParser parser;
  ParserLimits limits;
  limits.max_bulk_len = kMaxBulk;
  limits.max_inline_len = kMaxInline;
  parser.set_limits(limits);
  parser.set_authenticated(authenticated);
  return parser;
}

// Feeds `input` in pieces ending at `cuts` (ascending, the last == input.size()), the way
// Server::ProcessInput does: the parser always sees the buffer from the first unconsumed byte.
Outcome Feed(std::string_view input, const std::vector<size_t>& cuts, bool authenticated) {
  RespParser parser = MakeParser(authenticated);
  Outcome out;
  size_t start = 0;
  for (size_t end : cuts) {
    while (start < end) {
      std::string_view data = input.substr(start, end - start);
      size_t consumed = 0;
      RespParser::Result r = parser.Parse(data, &consumed);
      if (consumed > data.size()) Fail("consumed past the data", input);
      if (r == RespParser::Result::kError) {
        if (parser.error().rfind("ERR Protocol error: ", 0) != 0) Fail("error shape", input);
        out.error = parser.error();
        return out;
      }
      if (r == RespParser::Result::kCommand) {
        if (consumed == 0) Fail("a command consumed nothing", input);
        if (parser.args().empty()) Fail("a command without arguments", input);
        out.commands.emplace_back(parser.args().begin(), parser.args().end());
      }
      start += consumed;
      if (r == RespParser::Result::kNeedMore && consumed == 0) break;
    }
  }
  return out;
}

std::string Encode(const std::vector<Command>& commands) {
  std::string out;
  for (const Command& c : commands) {
    out += "*" + std::to_string(c.size()) + "\r\n";
    for (const std::string& a : c) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  }
  return out;
}

// Inline lines end at '\n'; multibulk and bulk headers at '\r'. A run longer than the inline
// limit without either is refused only while buffered without its terminator.
bool HasOverlongLine(std::string_view input) {
  size_t since_lf = 0;
  size_t since_cr = 0;
  for (char c : input) {
    since_lf = c == '\n' ? 0 : since_lf + 1;
    since_cr = c == '\r' ? 0 : since_cr + 1;
    if (since_lf > kMaxInline || since_cr > kMaxInline) return true;
  }
  return false;
}

void FuzzOne(std::string_view input, uint64_t split_seed) {
  for (bool authenticated : {true, false}) {
    Outcome whole = Feed(input, {input.size()}, authenticated);
    if (!HasOverlongLine(input)) {
      std::vector<size_t> cuts;
      if (input.size() <= 512) {
        for (size_t i = 1; i <= input.size(); ++i) cuts.push_back(i);
      } else {
        std::mt19937_64 rng(split_seed);
        for (size_t i = 1; i < input.size(); i += 1 + rng() % 64) cuts.push_back(i);
        cuts.push_back(input.size());
      }
      if (!(Feed(input, cuts, authenticated) == whole)) {
        Fail("split parse differs from whole parse", input);
      }
    }
    // What the parser accepted, encoded canonically, is accepted again unchanged (inline
    // commands may carry arguments past the limits a multibulk would be held to; skip those).
    bool within_limits = whole.commands.size() < 64;
    for (const Command& c : whole.commands) {
      within_limits = within_limits && (authenticated ? c.size() <= 1000 : c.size() <= 10);
      for (const std::string& a : c) {
        within_limits = within_limits && static_cast<int64_t>(a.size()) <= kMaxBulk;
      }
    }
    if (within_limits) {
      std::string encoded = Encode(whole.commands);
      Outcome again = Feed(encoded, {encoded.size()}, authenticated);
      if (!again.error.empty() || !(again.commands == whole.commands)) {
        Fail("re-encoded commands parse differently", input);
      }
    }
  }
}

// ------------------------------------------------------------------------------------------
// Input generator for the standalone loop: frames built to sit at and beyond every limit,
// then mutated.

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  std::string Input() {
    std::string out;
    int frames = 1 + static_cast<int>(Below(4));
    for (int i = 0; i < frames; ++i) out += Frame();
    int mutations = static_cast<int>(Below(4));
    for (int i = 0; i < mutations; ++i) Mutate(&out);
    return out;
  }

 private:
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool Chance(int percent) { return Below(100) < static_cast<uint64_t>(percent); }

  std::string Number() {
    static const char* const kSpecial[] = {"0",
                                           "-0",
                                           "1",
                                           "-1",
                                           "-2",
                                           "10",
                                           "11",
                                           "16384",
                                           "16385",
                                           "95",
                                           "96",
                                           "97",
                                           "200",
                                           "201",
                                           "2147483647",
                                           "2147483648",
                                           "-2147483648",
                                           "9223372036854775807",
                                           "9223372036854775808",
                                           "-9223372036854775808",
                                           "99999999999999999999",
                                           "",
                                           " 1",
                                           "1 ",
                                           "+1",
                                           "01",
                                           "0x10",
                                           "1e3",
                                           "abc",
                                           "1\0",
                                           "\xff"};
    if (Chance(50)) return std::to_string(Below(Chance(80) ? 16 : 300));
    const char* s = kSpecial[Below(std::size(kSpecial))];
    return std::string(s, s == kSpecial[std::size(kSpecial) - 2] ? 2 : std::strlen(s));
  }

  std::string Bytes(size_t n) {
    std::string s(n, '\0');
    for (char& c : s) {
      c = Chance(70) ? static_cast<char>('a' + Below(26))
                     : static_cast<char>(Below(256));  // NUL, CR, LF, quotes, high bytes
    }
    return s;
  }

  std::string Arg() {
    uint64_t pick = Below(10);
    size_t len = pick < 6   ? Below(8)
                 : pick < 9 ? static_cast<size_t>(kMaxBulk) - 1 + Below(3)  // at the limit
                            : Below(400);
    return Bytes(len);
  }

  std::string Frame() {
    switch (Below(8)) {
      case 0:
      case 1:
      case 2: {  // a well-formed multibulk, sometimes with a lying header
        size_t argc = Chance(90) ? 1 + Below(12) : Below(40);
        std::string out = "*" + (Chance(85) ? std::to_string(argc) : Number()) + "\r\n";
        for (size_t i = 0; i < argc; ++i) {
          std::string a = Arg();
          std::string len = Chance(85) ? std::to_string(a.size()) : Number();
          out += (Chance(97) ? "$" : Bytes(1)) + len + "\r\n" + a + (Chance(95) ? "\r\n" : "");
        }
        return out;
      }
      case 3:  // a bare header
        return (Chance(50) ? "*" : "$") + Number() + (Chance(80) ? "\r\n" : "\n");
      case 4: {  // an inline command: words, quotes, escapes
        std::string line;
        size_t words = Below(6);
        static const char* const kPieces[] = {"PING",  "SET", " ",       "  ",    "\"", "'",
                                              "\\x41", "\\n", "\"a b\"", "'c d'", "\t", "\"\\\"\""};
        for (size_t i = 0; i < words; ++i) {
          line += Chance(70) ? kPieces[Below(std::size(kPieces))] : Bytes(Below(6));
          line += " ";
        }
        return line + (Chance(50) ? "\r\n" : "\n");
      }
      case 5:  // an inline line at or past the inline limit
        return std::string(kMaxInline - 2 + Below(5), 'x') + (Chance(50) ? "\r\n" : "");
      case 6: {  // RESP3 and other non-request shapes: a client must not be able to send them
        static const char* const kShapes[] = {
            "%1\r\n",     "~2\r\n",          "#t\r\n",       ",1.5\r\n", "_\r\n",
            "(12\r\n",    "=5\r\ntxt:a\r\n", ">1\r\n",       "|1\r\n",   "+OK\r\n",
            "-ERR x\r\n", ":1\r\n",          "!3\r\nerr\r\n"};
        return kShapes[Below(std::size(kShapes))];
      }
      default:  // noise
        return Bytes(Below(32));
    }
  }

  void Mutate(std::string* s) {
    if (s->empty()) return;
    size_t at = Below(s->size());
    switch (Below(5)) {
      case 0:
        (*s)[at] = static_cast<char>(Below(256));
        break;
      case 1:
        s->erase(at, 1 + Below(4));
        break;
      case 2:
        s->insert(at, Bytes(1 + Below(4)));
        break;
      case 3:
        s->resize(at);  // truncation
        break;
      default:
        s->insert(at, Frame());
    }
  }

  std::mt19937_64 rng_;
};

uint64_t IterationSeed(uint64_t seed, uint64_t iteration) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + iteration;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

#if defined(VIREO_LIBFUZZER)
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size), size);
  return 0;
}
#else
int main(int argc, char** argv) {
  uint64_t seed = 1;
  uint64_t start = 0;
  uint64_t iterations = 100000;
  double max_seconds = 0;  // 0 = no time cap
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view flag = argv[i];
    if (flag == "--seed") {
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--start") {
      start = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--iterations") {
      iterations = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--max-seconds") {
      max_seconds = std::strtod(argv[i + 1], nullptr);
    } else {
      std::fprintf(stderr, "usage: %s [--seed S] [--start I] [--iterations N] [--max-seconds T]\n",
                   argv[0]);
      return 2;
    }
  }
  auto began = std::chrono::steady_clock::now();
  uint64_t done = 0;
  for (uint64_t it = start; it < start + iterations; ++it) {
    if ((it - start) % 65536 == 0 && max_seconds > 0) {
      double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      if (elapsed > max_seconds) break;
    }
    Generator gen(IterationSeed(seed, it));
    std::string input = gen.Input();
    reproduction = {true, seed, it};
    FuzzOne(input, IterationSeed(seed ^ 0x5eed, it));
    ++done;
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::printf("resp_parser_fuzz: seed %llu, iterations %llu..%llu clean (%.1f s)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(start),
              static_cast<unsigned long long>(start + done), elapsed);
  return 0;
}
#endif

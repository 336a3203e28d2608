// One way to read a command's arguments: a cursor over argv with typed reads and keyword
// options. The first failure records Redis's exact error; later reads are no-ops, and the
// handler replies that one error with Check(). So a handler reads everything it needs, checks
// once, and never writes "value is not an integer" itself:
//
//   ArgParser args(ctx, 2);
//   int64_t start = args.Int();
//   int64_t stop = args.Int();
//   if (!args.Check()) return;
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "core/errors.h"
#include "protocol/reply_builder.h"

namespace vireo {

// Units of an expire-time argument (EX/PX/EXAT/PXAT, EXPIRE/PEXPIRE/...).
enum class TimeUnit : uint8_t { kSeconds, kMilliseconds };

class ArgParser {
 public:
  // Reads ctx.argv from index `first` on; Check() replies to ctx.reply. Any context with
  // those two members will do (a command handler's CommandContext), so the parser needs
  // nothing above core.
  template <typename Context>
  explicit ArgParser(Context& ctx, size_t first = 1) : ArgParser(ctx.argv, &ctx.reply, first) {}
  // `reply` may be null (parsing outside a command: tests, COMMAND GETKEYS helpers).
  ArgParser(std::span<const std::string_view> argv, ReplyBuilder* reply, size_t first = 1)
      : argv_(argv), reply_(reply), pos_(first) {}

  // --- cursor --------------------------------------------------------------------------
  // Whether an argument is left to read and nothing has failed (so option loops stop at the
  // first error).
  bool HasNext() const { return ok() && pos_ < argv_.size(); }
  size_t pos() const { return pos_; }
  size_t remaining() const { return pos_ < argv_.size() ? argv_.size() - pos_ : 0; }
  void Seek(size_t pos) { pos_ = pos; }
  // The next argument, consumed. Past the end: records a syntax error and returns "".
  std::string_view Next();
  // The next argument without consuming it ("" past the end).
  std::string_view Peek() const { return pos_ < argv_.size() ? argv_[pos_] : std::string_view(); }
  // The next `n` arguments, consumed; a syntax error (and an empty span) if fewer are left.
  std::span<const std::string_view> Take(size_t n);
  // Everything left, consumed.
  std::span<const std::string_view> Rest();

  // --- typed reads of the next argument (each consumes it) ---------------------------------
  // On failure each records its error and returns 0; nothing is read after a failure.
  // A strict integer (Redis's string2ll); `error` replaces "value is not an integer".
  int64_t Int(std::string_view error = errors::kNotInteger);
  // An integer in [min, max], as getRangeLongFromObjectOrReply: with `error` given it is the
  // reply for both failures, otherwise "value is out of range, value must between min and max".
  int64_t IntInRange(int64_t min, int64_t max, std::string_view error = {});
  // An integer >= 0 ("value is out of range, must be positive", as getPositiveLong...).
  int64_t NonNegative(std::string_view error = {});
  // An integer >= 1; `error` is the reply for both failures (e.g. "ERR count should be
  // greater than 0").
  int64_t Positive(std::string_view error);
  // An integer >= min: "value is not an integer" when it isn't one, `below` when it is smaller.
  int64_t IntAtLeast(int64_t min, std::string_view below);
  // A double by Redis's float rules (ParseDouble: no NaN, no trailing bytes).
  double Double(std::string_view error = errors::kNotFloat);
  // A double >= min: `not_number` when it isn't one, `below` when it is smaller (GEO's radius,
  // width and height).
  double DoubleAtLeast(double min, std::string_view not_number, std::string_view below);
  // A long double (INCRBYFLOAT's string2ld).
  long double LongDouble(std::string_view error = errors::kNotFloat);
  // A blocking command's timeout (BLPOP, BZPOPMIN, BLMOVE...): seconds in strtold's grammar
  // (hex too), 0 = forever. As Redis 7.2: milliseconds beyond int64 (inf included) are out of
  // range, the value is rounded up to a whole millisecond (so -0.0005 means 0, forever), and
  // the deadline now_ms + timeout must not overflow.
  int64_t BlockTimeoutMs(int64_t now_ms);
  // A timeout in integer milliseconds, >= 0, such that now_ms + timeout fits (WAIT, WAITAOF,
  // CLIENT PAUSE, XREAD BLOCK).
  int64_t TimeoutMs(int64_t now_ms);
  // An expire time in `unit`, as an absolute unix time in ms (`absolute`: the argument already
  // is one; otherwise now_ms is added). `positive_only` (SET, GETEX) also refuses <= 0.
  // Overflow or a refused value replies "ERR invalid expire time in '<command>' command".
  int64_t ExpireAtMs(TimeUnit unit, bool absolute, int64_t now_ms, std::string_view command,
                     bool positive_only);
  // A database index: an integer that fits 32 bits (`error` replaces both messages, SWAPDB).
  int DbIndex(std::string_view error = {});
  // A bit offset (SETBIT, GETBIT, BITFIELD): an integer >= 0 whose byte (offset / 8) is below
  // `max_bytes` (< 0: no limit). With `field_bits` > 0, "#n" means the n-th field of that width,
  // offset n * field_bits. Every failure replies `error` ("ERR bit offset is not an integer or
  // out of range").
  int64_t BitOffset(unsigned field_bits, int64_t max_bytes, std::string_view error);

  // "numkeys key [key ...]": an integer >= 1 (`below_one` is the error for 0 or less), then
  // that many arguments; a syntax error when fewer are left.
  std::span<const std::string_view> NumKeys(std::string_view below_one);

  // --- keywords ------------------------------------------------------------------------
  // Consumes the next argument if it is `keyword` (case-insensitive).
  bool Flag(std::string_view keyword);
  // Consumes the next argument if it is one of `keywords`; its index, or -1 (nothing consumed).
  int OneOf(std::initializer_list<std::string_view> keywords);
  // Consumes `keyword` if `values` arguments follow it; the caller then reads them with typed
  // reads (for options whose values have their own rules: RANK, COUNT, FROMLONLAT lon lat...).
  bool OptionName(std::string_view keyword, size_t values = 1);
  // The next argument, consumed, which must be one of `keywords`: its index. Otherwise records
  // `error` (a syntax error past the end) and returns -1 (LEFT | RIGHT, ON | OFF, a GEO unit...).
  int Keyword(std::initializer_list<std::string_view> keywords,
              std::string_view error = errors::kSyntax);
  // `keyword value`: consumes both if the next argument is `keyword` and a value follows,
  // reading the value as Int() (with `error`) or as a string.
  bool Option(std::string_view keyword, int64_t* out, std::string_view error = errors::kNotInteger);
  bool Option(std::string_view keyword, std::string_view* out);
  // Records `error` if more than one of `set` is true (NX|XX, GT|LT...); returns ok().
  bool Exclusive(std::initializer_list<bool> set, std::string_view error = errors::kSyntax);

  // --- the one error path --------------------------------------------------------------
  // Records `error` unless an earlier failure already did (the first error wins). Returns false
  // so a caller can `return args.Fail(...)`.
  bool Fail(std::string_view error);
  // Records a syntax error: an unknown option, a word out of place, a missing part.
  bool SyntaxError() { return Fail(errors::kSyntax); }
  // Fails with a syntax error if arguments are left unread (then Check() replies it).
  void ExpectEnd();
  // Fails with a syntax error unless between `min` and `max` arguments are left (nothing is
  // consumed): for commands whose optional tail has a fixed shape (BITCOUNT, GEODIST...).
  bool ExpectRemaining(size_t min, size_t max);
  // Fails with a syntax error unless what is left is a non-empty multiple of `width` arguments
  // (GEOADD's lon/lat/member triples, ZADD's score/member pairs); nothing is consumed.
  bool ExpectGroupsOf(size_t width);
  bool ok() const { return !failed_; }
  const std::string& error() const { return error_; }
  // Replies the recorded error (once) and returns false, or returns true if all went well.
  bool Check();

  // --- reads for the data-type families (strings, lists, hashes, scans...) ----------------
  // An integer in [min, max]: "value is not an integer" when it isn't one, `outside` when it
  // is out of the range (LSET's index, BITPOS's bit).
  int64_t IntBetween(int64_t min, int64_t max, std::string_view outside);
  // A SCAN-family cursor as Redis reads it (strtoul): an optional sign and decimal digits, a
  // negative value wrapping around, "" meaning 0 and a NUL ending the text; anything else
  // (overflow included) replies `error`.
  uint64_t Cursor(std::string_view error = "ERR invalid cursor");
  // A stored value that Redis reads by an argument's rules (INCR's counter, HINCRBY's field):
  // `text` is not an argument and nothing is consumed, but a failure is recorded like a typed
  // read's, so it competes with the arguments' errors in the order the handler reads them.
  int64_t IntValue(std::string_view text, std::string_view error = errors::kNotInteger);
  long double LongDoubleValue(std::string_view text, std::string_view error = errors::kNotFloat);
  // --- values with their own grammar, counted lists ----------------------------------------
  // The next argument converted by `parse(arg, &value)`, which returns false when the text is
  // not a valid T; then `error` is recorded and T{} returned. For grammars that live above
  // core (a stream ID, a time spec...), so that they too fail through the one error path.
  template <typename T, typename Parse>
  T Parsed(Parse&& parse, std::string_view error) {
    const std::string_view* arg = NextValue();
    T value{};
    if (arg == nullptr) return T{};
    if (!parse(*arg, &value)) {
      Fail(error);
      return T{};
    }
    return value;
  }
  // "count item [item ...]": an integer >= 1 (`bad_count` when it isn't one or is smaller),
  // then that many arguments, consumed (`too_few` when fewer are left). XDELEX's IDS block.
  std::span<const std::string_view> CountedList(std::string_view bad_count,
                                                std::string_view too_few);

 private:
  // The next argument for a typed read, or nullptr (after recording a syntax error when
  // the arguments ran out, or after an earlier failure).
  const std::string_view* NextValue();

  std::span<const std::string_view> argv_;
  ReplyBuilder* reply_;
  size_t pos_;
  bool failed_ = false;
  bool replied_ = false;
  std::string error_;
};

}  // namespace vireo

#include "core/arg_parser.h"

#include <fmt/format.h>

#include <climits>
#include <cmath>
#include <limits>

#include "util/strings.h"

namespace vireo {

std::string_view ArgParser::Next() {
  const std::string_view* arg = NextValue();
  return arg == nullptr ? std::string_view() : *arg;
}

const std::string_view* ArgParser::NextValue() {
  if (failed_) return nullptr;
  if (pos_ >= argv_.size()) {
    Fail(errors::kSyntax);
    return nullptr;
  }
  return &argv_[pos_++];
}

std::span<const std::string_view> ArgParser::Take(size_t n) {
  if (failed_) return {};
  if (remaining() < n) {
    Fail(errors::kSyntax);
    return {};
  }
  auto out = argv_.subspan(pos_, n);
  pos_ += n;
  return out;
}

std::span<const std::string_view> ArgParser::Rest() { return Take(remaining()); }

int64_t ArgParser::Int(std::string_view error) {
  const std::string_view* arg = NextValue();
  return arg == nullptr ? 0 : IntValue(*arg, error);
}

int64_t ArgParser::IntInRange(int64_t min, int64_t max, std::string_view error) {
  int64_t value = Int(error.empty() ? errors::kNotInteger : error);
  if (failed_) return 0;
  if (value < min || value > max) {
    if (error.empty()) {
      Fail(fmt::format("ERR value is out of range, value must between {} and {}", min, max));
    } else {
      Fail(error);
    }
    return 0;
  }
  return value;
}

int64_t ArgParser::NonNegative(std::string_view error) {
  int64_t value = Int(error.empty() ? errors::kNotInteger : error);
  if (failed_) return 0;
  if (value < 0) {
    Fail(error.empty() ? "ERR value is out of range, must be positive" : error);
    return 0;
  }
  return value;
}

int64_t ArgParser::Positive(std::string_view error) {
  int64_t value = Int(error);
  if (failed_) return 0;
  if (value <= 0) {
    Fail(error);
    return 0;
  }
  return value;
}

int64_t ArgParser::IntAtLeast(int64_t min, std::string_view below) {
  int64_t value = Int();
  if (failed_) return 0;
  if (value < min) {
    Fail(below);
    return 0;
  }
  return value;
}

double ArgParser::Double(std::string_view error) {
  const std::string_view* arg = NextValue();
  double value;
  if (arg == nullptr) return 0;
  if (!ParseDouble(*arg, &value)) {
    Fail(error);
    return 0;
  }
  return value;
}

double ArgParser::DoubleAtLeast(double min, std::string_view not_number, std::string_view below) {
  double value = Double(not_number);
  if (failed_) return 0;
  if (value < min) {
    Fail(below);
    return 0;
  }
  return value;
}

long double ArgParser::LongDouble(std::string_view error) {
  const std::string_view* arg = NextValue();
  return arg == nullptr ? 0 : LongDoubleValue(*arg, error);
}

namespace {

constexpr int64_t kMaxMs = std::numeric_limits<int64_t>::max();
constexpr std::string_view kTimeoutNegative = "ERR timeout is negative";
constexpr std::string_view kTimeoutOutOfRange = "ERR timeout is out of range";

}  // namespace

int64_t ArgParser::BlockTimeoutMs(int64_t now_ms) {
  long double seconds = LongDouble("ERR timeout is not a float or out of range");
  if (failed_) return 0;
  long double ms = seconds * 1000.0L;
  if (ms > static_cast<long double>(kMaxMs)) {
    Fail(kTimeoutOutOfRange);
    return 0;
  }
  ms = std::ceil(ms);
  if (ms < 0) {  // -0.0 (from -0.0005 s) is not negative
    Fail(kTimeoutNegative);
    return 0;
  }
  auto timeout = static_cast<int64_t>(ms);
  if (timeout > 0 && timeout > kMaxMs - now_ms) {
    Fail(kTimeoutOutOfRange);
    return 0;
  }
  return timeout;
}

int64_t ArgParser::TimeoutMs(int64_t now_ms) {
  int64_t timeout = Int("ERR timeout is not an integer or out of range");
  if (failed_) return 0;
  if (timeout < 0) {
    Fail(kTimeoutNegative);
    return 0;
  }
  if (timeout > 0 && timeout > kMaxMs - now_ms) {
    Fail(kTimeoutOutOfRange);
    return 0;
  }
  return timeout;
}

int64_t ArgParser::ExpireAtMs(TimeUnit unit, bool absolute, int64_t now_ms,
                              std::string_view command, bool positive_only) {
  int64_t value = Int();
  if (failed_) return 0;
  auto invalid = [&] {
    Fail(fmt::format("ERR invalid expire time in '{}' command", command));
    return 0;
  };
  if (positive_only && value <= 0) return invalid();
  if (unit == TimeUnit::kSeconds) {
    if (value > kMaxMs / 1000 || value < std::numeric_limits<int64_t>::min() / 1000) {
      return invalid();
    }
    value *= 1000;
  }
  const int64_t base = absolute ? 0 : now_ms;
  if (value > kMaxMs - base) return invalid();
  return value + base;
}

int ArgParser::DbIndex(std::string_view error) {
  return static_cast<int>(IntInRange(INT_MIN, INT_MAX, error));
}

int64_t ArgParser::BitOffset(unsigned field_bits, int64_t max_bytes, std::string_view error) {
  const std::string_view* arg = NextValue();
  if (arg == nullptr) return 0;
  std::string_view digits = *arg;
  const bool by_index = field_bits > 0 && !digits.empty() && digits[0] == '#';
  if (by_index) digits.remove_prefix(1);
  int64_t offset;
  if (!ParseInt64(digits, &offset) ||
      (by_index && __builtin_mul_overflow(offset, static_cast<int64_t>(field_bits), &offset)) ||
      offset < 0 || (max_bytes >= 0 && (offset >> 3) >= max_bytes)) {
    Fail(error);
    return 0;
  }
  return offset;
}

std::span<const std::string_view> ArgParser::NumKeys(std::string_view below_one) {
  int64_t numkeys = Int();
  if (failed_) return {};
  if (numkeys < 1) {
    Fail(below_one);
    return {};
  }
  if (static_cast<uint64_t>(numkeys) > remaining()) {
    Fail(errors::kSyntax);
    return {};
  }
  return Take(static_cast<size_t>(numkeys));
}

bool ArgParser::Flag(std::string_view keyword) {
  if (!HasNext() || !EqualsIgnoreCase(argv_[pos_], keyword)) return false;
  ++pos_;
  return true;
}

int ArgParser::OneOf(std::initializer_list<std::string_view> keywords) {
  if (!HasNext()) return -1;
  int index = 0;
  for (std::string_view keyword : keywords) {
    if (EqualsIgnoreCase(argv_[pos_], keyword)) {
      ++pos_;
      return index;
    }
    ++index;
  }
  return -1;
}

bool ArgParser::OptionName(std::string_view keyword, size_t values) {
  return remaining() > values && Flag(keyword);
}

int ArgParser::Keyword(std::initializer_list<std::string_view> keywords, std::string_view error) {
  const std::string_view* arg = NextValue();
  if (arg == nullptr) return -1;
  int index = 0;
  for (std::string_view keyword : keywords) {
    if (EqualsIgnoreCase(*arg, keyword)) return index;
    ++index;
  }
  Fail(error);
  return -1;
}

bool ArgParser::Option(std::string_view keyword, int64_t* out, std::string_view error) {
  if (!OptionName(keyword)) return false;
  int64_t value = Int(error);
  if (failed_) return false;
  *out = value;
  return true;
}

bool ArgParser::Option(std::string_view keyword, std::string_view* out) {
  if (!OptionName(keyword)) return false;
  *out = argv_[pos_++];
  return true;
}

bool ArgParser::Exclusive(std::initializer_list<bool> set, std::string_view error) {
  int count = 0;
  for (bool b : set) count += b ? 1 : 0;
  if (count > 1) Fail(error);
  return ok();
}

bool ArgParser::Fail(std::string_view error) {
  if (!failed_) {
    failed_ = true;
    error_ = error;
  }
  return false;
}

void ArgParser::ExpectEnd() {
  if (ok() && pos_ < argv_.size()) Fail(errors::kSyntax);
}

bool ArgParser::ExpectRemaining(size_t min, size_t max) {
  if (ok() && (remaining() < min || remaining() > max)) Fail(errors::kSyntax);
  return ok();
}

bool ArgParser::ExpectGroupsOf(size_t width) {
  if (ok() && (remaining() == 0 || remaining() % width != 0)) Fail(errors::kSyntax);
  return ok();
}

bool ArgParser::Check() {
  if (!failed_) return true;
  if (!replied_ && reply_ != nullptr) {
    reply_->Error(error_);
    replied_ = true;
  }
  return false;
}

int64_t ArgParser::IntBetween(int64_t min, int64_t max, std::string_view outside) {
  int64_t value = Int();
  if (failed_) return 0;
  if (value < min || value > max) {
    Fail(outside);
    return 0;
  }
  return value;
}

uint64_t ArgParser::Cursor(std::string_view error) {
  const std::string_view* arg = NextValue();
  if (arg == nullptr) return 0;
  // C string semantics: the text ends at a NUL.
  std::string_view text = arg->substr(0, arg->find('\0'));
  if (text.empty()) return 0;
  const bool negative = text[0] == '-';
  const size_t first_digit = (text[0] == '+' || text[0] == '-') ? 1 : 0;
  if (first_digit == text.size()) {  // a sign alone
    Fail(error);
    return 0;
  }
  uint64_t value = 0;
  for (char c : text.substr(first_digit)) {
    const auto digit = static_cast<uint64_t>(c - '0');
    if (c < '0' || c > '9' || value > (UINT64_MAX - digit) / 10) {
      Fail(error);
      return 0;
    }
    value = value * 10 + digit;
  }
  return negative ? 0 - value : value;
}

int64_t ArgParser::IntValue(std::string_view text, std::string_view error) {
  int64_t value;
  if (failed_) return 0;
  if (!ParseInt64(text, &value)) {
    Fail(error);
    return 0;
  }
  return value;
}

long double ArgParser::LongDoubleValue(std::string_view text, std::string_view error) {
  long double value;
  if (failed_) return 0;
  if (!ParseLongDouble(text, &value)) {
    Fail(error);
    return 0;
  }
  return value;
}

std::span<const std::string_view> ArgParser::CountedList(std::string_view bad_count,
                                                         std::string_view too_few) {
  int64_t count = Positive(bad_count);
  if (failed_) return {};
  if (static_cast<uint64_t>(count) > remaining()) {
    Fail(too_few);
    return {};
  }
  return Take(static_cast<size_t>(count));
}

}  // namespace vireo

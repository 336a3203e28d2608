// The builders Config's option table is declared with (src/core/config.cc and
// config_process.cc): one per kind of value, each giving the option Redis's parsing, bounds and
// error texts. Internal to the config module.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/config.h"

namespace vireo::config_detail {

using Option = Config::Option;
using Type = Config::Type;

// Redis's own bounds are C type limits; on LP64 LONG_MAX == LLONG_MAX == INT64_MAX.
constexpr int64_t kIntMax = INT_MAX;
constexpr int64_t kIntMin = INT_MIN;
constexpr int64_t kUintMax = UINT_MAX;
constexpr int64_t kLongMax = INT64_MAX;
constexpr int64_t kLongMin = INT64_MIN;
constexpr bool kMutable = true, kImmutable = false;

// strtoll over the whole string, as Redis uses for octal values, save points and soft seconds:
// unlike ParseInt64 it tolerates leading blanks, '+', leading zeros and even "" (as 0).
bool StrtollFull(const std::string& s, int base, int64_t* out);

// Parses a numeric option value the way Redis's numericParseString does for each kind, and
// checks it against opt's bounds.
std::string ParseNumber(const Option& opt, const std::string& text, int64_t* out);

template <typename F>
Option Numeric(std::string name, std::string alias, F ServerConfig::*field, int64_t min,
               int64_t max, bool mut, Type type = Type::kInt) {
  Option o;
  o.name = std::move(name);
  o.alias = std::move(alias);
  o.type = type;
  o.mutable_at_runtime = mut;
  o.min = min;
  o.max = max;
  o.get = [field, type](const ServerConfig& c) {
    if (type == Type::kOctal) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%llo", static_cast<unsigned long long>(c.*field));
      return std::string(buf);
    }
    return std::to_string(c.*field);
  };
  // The option is captured by value: Config is moved into the Server, so nothing may point
  // back into it.
  Option self = o;
  o.set = [field, self](ServerConfig& c, const std::vector<std::string>& args) {
    int64_t v;
    if (std::string err = ParseNumber(self, args[0], &v); !err.empty()) return err;
    // maxclients accepts up to UINT_MAX like Redis but is held in an int: saturate.
    c.*field = static_cast<F>(std::min<int64_t>(v, std::numeric_limits<F>::max()));
    return std::string();
  };
  return o;
}

Option Bool(std::string name, bool ServerConfig::*field, bool mut);

// One of `values`, matched case-insensitively and stored in its canonical spelling.
Option Enum(std::string name, std::string ServerConfig::*field, std::vector<std::string> values,
            bool mut);

using Validator = std::function<std::string(const std::string&)>;

Option String(std::string name, std::string ServerConfig::*field, bool mut, bool empty_is_null,
              Validator validate = nullptr);

// An option whose get/set the caller writes.
Option Special(std::string name, Type type, bool mut);

}  // namespace vireo::config_detail

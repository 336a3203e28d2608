#include "core/config_builders.h"

#include <cerrno>
#include <cstdlib>

#include "util/strings.h"

namespace vireo::config_detail {
namespace {

std::string RangeError(int64_t min, int64_t max, bool octal) {
  char buf[128];
  if (octal) {
    std::snprintf(buf, sizeof(buf), "argument must be between %llo and %llo inclusive",
                  static_cast<unsigned long long>(min), static_cast<unsigned long long>(max));
  } else {
    std::snprintf(buf, sizeof(buf), "argument must be between %lld and %lld inclusive",
                  static_cast<long long>(min), static_cast<long long>(max));
  }
  return buf;
}

}  // namespace

bool StrtollFull(const std::string& s, int base, int64_t* out) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, base);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

std::string ParseNumber(const Option& opt, const std::string& text, int64_t* out) {
  switch (opt.type) {
    case Type::kMemory:
      if (!ParseMemory(text, out)) return "argument must be a memory value";
      break;
    case Type::kOctal:
      if (!StrtollFull(text, 8, out)) return "argument couldn't be parsed as an octal number";
      break;
    default:
      if (!ParseInt64(text, out)) return "argument couldn't be parsed into an integer";
  }
  // Redis checks unsigned fields after a cast, so a negative number is just out of range.
  if (*out < opt.min || *out > opt.max)
    return RangeError(opt.min, opt.max, opt.type == Type::kOctal);
  return "";
}

Option Bool(std::string name, bool ServerConfig::*field, bool mut) {
  Option o;
  o.name = std::move(name);
  o.type = Type::kBool;
  o.mutable_at_runtime = mut;
  o.get = [field](const ServerConfig& c) { return std::string(c.*field ? "yes" : "no"); };
  o.set = [field](ServerConfig& c, const std::vector<std::string>& args) {
    if (EqualsIgnoreCase(args[0], "yes")) {
      c.*field = true;
    } else if (EqualsIgnoreCase(args[0], "no")) {
      c.*field = false;
    } else {
      return std::string("argument must be 'yes' or 'no'");
    }
    return std::string();
  };
  return o;
}

Option Enum(std::string name, std::string ServerConfig::*field, std::vector<std::string> values,
            bool mut) {
  Option o;
  o.name = std::move(name);
  o.type = Type::kEnum;
  o.mutable_at_runtime = mut;
  o.enum_values = std::move(values);
  o.get = [field](const ServerConfig& c) { return c.*field; };
  o.set = [field, values = o.enum_values](ServerConfig& c, const std::vector<std::string>& args) {
    for (const std::string& v : values) {
      if (EqualsIgnoreCase(args[0], v)) {
        c.*field = v;  // stored in canonical (lower) case, as CONFIG GET shows it
        return std::string();
      }
    }
    std::string err = "argument(s) must be one of the following: ";
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) err += ", ";
      err += values[i];
    }
    return err;
  };
  return o;
}

Option String(std::string name, std::string ServerConfig::*field, bool mut, bool empty_is_null,
              Validator validate) {
  Option o;
  o.name = std::move(name);
  o.type = Type::kString;
  o.mutable_at_runtime = mut;
  o.empty_is_null = empty_is_null;
  o.get = [field](const ServerConfig& c) { return c.*field; };
  o.set = [field, validate](ServerConfig& c, const std::vector<std::string>& args) {
    if (validate) {
      if (std::string err = validate(args[0]); !err.empty()) return err;
    }
    c.*field = args[0];
    return std::string();
  };
  return o;
}

Option Special(std::string name, Type type, bool mut) {
  Option o;
  o.name = std::move(name);
  o.type = type;
  o.mutable_at_runtime = mut;
  return o;
}

}  // namespace vireo::config_detail

#include "server/redaction.h"

#include "util/strings.h"

namespace vireo {
namespace {

bool Is(std::string_view arg, std::string_view name) { return EqualsIgnoreCase(arg, name); }

}  // namespace

std::vector<std::string_view> RedactSecrets(std::span<const std::string_view> argv) {
  if (argv.empty()) return {};
  std::vector<bool> secret(argv.size(), false);
  std::string_view cmd = argv[0];
  if (Is(cmd, "auth")) {
    // AUTH pass / AUTH user pass; longer forms are a syntax error Redis leaves unredacted.
    if (argv.size() <= 3) {
      for (size_t i = 1; i < argv.size(); ++i) secret[i] = true;
    }
  } else if (Is(cmd, "hello")) {
    for (size_t i = 2; i < argv.size(); ++i) {
      if (Is(argv[i], "auth") && i + 2 < argv.size()) {
        secret[i + 1] = secret[i + 2] = true;
        i += 2;
      } else if (Is(argv[i], "setname") && i + 1 < argv.size()) {
        ++i;
      }
    }
  } else if (Is(cmd, "migrate")) {
    for (size_t i = 6; i < argv.size(); ++i) {
      if (Is(argv[i], "auth") && i + 1 < argv.size()) {
        secret[++i] = true;
      } else if (Is(argv[i], "auth2") && i + 2 < argv.size()) {
        secret[i + 1] = secret[i + 2] = true;
        i += 2;
      } else if (Is(argv[i], "keys")) {
        break;  // the rest are key names
      }
    }
  } else if (Is(cmd, "acl") && argv.size() >= 3 && Is(argv[1], "setuser")) {
    for (size_t i = 2; i < argv.size(); ++i) secret[i] = true;
  } else if (Is(cmd, "config") && argv.size() >= 4 && Is(argv[1], "set")) {
    for (size_t i = 2; i + 1 < argv.size(); i += 2) {
      if (Is(argv[i], "requirepass") || Is(argv[i], "masterauth") || Is(argv[i], "masteruser")) {
        secret[i + 1] = true;
      }
    }
  }
  bool any = false;
  for (bool s : secret) any = any || s;
  if (!any) return {};
  std::vector<std::string_view> out(argv.begin(), argv.end());
  for (size_t i = 0; i < out.size(); ++i) {
    if (secret[i]) out[i] = kRedactedArg;
  }
  return out;
}

}  // namespace vireo

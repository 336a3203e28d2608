// Which arguments of a command are secrets that MONITOR and SLOWLOG must not show.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vireo {

// What MONITOR and SLOWLOG print instead of a secret, as Redis does.
inline constexpr std::string_view kRedactedArg = "(redacted)";

// Returns `argv` with passwords (and the usernames paired with them) replaced by
// kRedactedArg, at the positions Redis 7.2 redacts: AUTH's arguments, HELLO ... AUTH user pass,
// MIGRATE ... AUTH pass / AUTH2 user pass, ACL SETUSER's rules, and CONFIG SET of requirepass,
// masterauth and masteruser. Returns an empty vector when nothing needs redacting (the
// common case costs no copy).
std::vector<std::string_view> RedactSecrets(std::span<const std::string_view> argv);

}  // namespace vireo

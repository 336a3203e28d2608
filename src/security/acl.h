// ACL users as Redis 7.2 has them: a user is a set of flags, password hashes and selectors; a
// selector says which commands (a bitmap indexed by CommandSpec::id), keys (globs with read /
// write permissions) and channels it allows. A command runs when any one selector of the
// user's allows it whole.
//
// The check is a pure function over (user, command, argv): it reads the key positions from
// the command table's key specs. The all-permissive user (the default one, unless restricted)
// takes a one-flag fast path.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vireo {

class CommandTable;
struct CommandSpec;
struct KeyRef;

// Redis's ACL_* codes, in its order: when no selector allows a command, the "highest" denial
// (channel over key over command) is reported.
enum class AclResult : int {
  kOk = 0,
  kDeniedCmd = 1,
  kDeniedKey = 2,
  kDeniedAuth = 3,
  kDeniedChannel = 4
};

// Why a rule was refused; AclRuleErrorText gives Redis's wording.
enum class AclRuleError {
  kNone,
  kUnknownCommand,   // ENOENT
  kSyntax,           // EINVAL
  kKeyAfterAll,      // EEXIST
  kChannelAfterAll,  // EISDIR
  kNoSuchPassword,   // ENODEV
  kBadHash,          // EBADMSG
  kDuplicateUser,    // EALREADY
  kSubcommandArg,    // ECHILD
};
std::string_view AclRuleErrorText(AclRuleError error);

// User names, key patterns and channels can't hold spaces or NUL bytes (the ACL file format).
bool AclHasSpaceOrNul(std::string_view s);

// SHA-256 of a password, as 64 lower-case hex digits (how passwords are kept and shown).
std::string AclHashPassword(std::string_view password);

// A glob compiled to the cheapest matcher that gives the same answer as GlobMatch: "*" and
// "prefix*" and literal patterns need no backtracking.
class AclGlob {
 public:
  explicit AclGlob(std::string text);
  bool Matches(std::string_view s) const;
  const std::string& text() const { return text_; }

 private:
  enum class Kind : uint8_t { kAnyNonEmpty, kExact, kPrefix, kGeneral };
  std::string text_;
  Kind kind_ = Kind::kGeneral;
};

inline constexpr uint8_t kAclPermRead = 1;
inline constexpr uint8_t kAclPermWrite = 2;
inline constexpr uint8_t kAclPermAll = kAclPermRead | kAclPermWrite;

class AclSelector {
 public:
  // `commands` (the server's table) outlives the selector.
  AclSelector(const CommandTable& commands, bool all_channels);

  // One selector rule (~pat, %R~pat, &chan, +cmd, -@cat, allkeys ...).
  AclRuleError Apply(std::string_view op);

  // "~* &* +@all"-style, as ACL LIST shows a selector.
  std::string Describe() const;
  std::string DescribeCommands() const;  // "+@all -get"
  std::string DescribeKeys() const;      // ACL GETUSER "keys"
  std::string DescribeChannels() const;  // ACL GETUSER "channels"

  // Whether this selector allows the call. On a key or channel denial `*pos` is the argv
  // position of the offending argument (0 for the command). `keys` holds the call's key
  // references (filled on first use, shared between selectors).
  AclResult Check(const CommandSpec& spec, std::span<const std::string_view> argv,
                  std::vector<KeyRef>* keys, bool* keys_ready, size_t* pos) const;
  bool ChannelAllowed(std::string_view channel, bool is_pattern) const;
  bool KeyAllowed(std::string_view key, uint32_t key_flags) const;

  bool all_keys() const { return all_keys_; }
  bool all_channels() const { return all_channels_; }
  bool all_commands() const { return all_commands_; }
  const std::vector<std::string>& channels() const { return channels_; }

 private:
  struct KeyPattern {
    uint8_t perms;
    AclGlob glob;
  };
  bool Allowed(uint32_t id) const {
    size_t word = id / 64;
    return word < allowed_.size() && (allowed_[word] >> (id % 64) & 1) != 0;
  }
  void SetBit(uint32_t id, bool allow);
  void ChangeCommand(const CommandSpec& spec, bool allow);
  void SetCategory(uint32_t mask, bool allow);
  void AddRule(std::string rule, bool allow);
  void ResetCommands(bool allow);
  AclRuleError ApplyCommandRule(std::string_view op);
  AclResult ChannelCheck(const CommandSpec& spec, std::span<const std::string_view> argv,
                         size_t* pos) const;

  const CommandTable* commands_;
  bool all_keys_ = false;
  bool all_channels_ = false;
  bool all_commands_ = false;     // every bit is set: the bitmap needn't be read
  bool future_commands_ = false;  // +@all was the base (Redis's reserved bit)
  std::vector<uint64_t> allowed_;
  // +cmd|arg for commands without subcommands (SELECT|0): allowed first arguments.
  std::unordered_map<uint32_t, std::vector<std::string>> first_args_;
  std::vector<KeyPattern> keys_;
  std::vector<std::string> channels_;
  std::vector<AclGlob> channel_globs_;
  std::string command_rules_;  // the +/- rules after the +@all / -@all base, in order
};

enum AclUserFlag : uint32_t {
  kAclUserOn = 1u << 0,
  kAclUserOff = 1u << 1,
  kAclUserNoPass = 1u << 2,
  kAclUserSkipSanitize = 1u << 3,
  kAclUserSanitize = 1u << 4,
};

class AclUser {
 public:
  // A new user: off, no passwords, no permissions (channels per acl-pubsub-default).
  AclUser(const CommandTable& commands, std::string name, bool all_channels_default);

  // One rule of ACL SETUSER / a user line (selectors included as "(...)").
  AclRuleError Apply(std::string_view op);
  // Applies rules in order, all or nothing: on error `*this` is unchanged and `*error` says
  // which rule failed and why, as ACL SETUSER words it. Rules spread over several arguments
  // inside parentheses are merged first.
  bool ApplyAll(std::span<const std::string> rules, std::string* error);

  bool CheckPassword(std::string_view password) const;
  // "on nopass sanitize-payload ~* &* +@all" (ACL LIST without "user <name> ").
  std::string Describe() const;

  AclResult Check(const CommandSpec& spec, std::span<const std::string_view> argv,
                  size_t* pos) const;
  bool ChannelAllowed(std::string_view channel, bool is_pattern) const;
  // Every selector allows everything: commands needn't be checked at all.
  bool unrestricted() const { return unrestricted_; }

  const std::string& name() const { return name_; }
  uint32_t flags() const { return flags_; }
  bool enabled() const { return (flags_ & kAclUserOn) != 0; }
  bool nopass() const { return (flags_ & kAclUserNoPass) != 0; }
  const std::vector<std::string>& passwords() const { return passwords_; }
  const std::vector<AclSelector>& selectors() const { return selectors_; }
  // Copies rules (not the name) from another user.
  void CopyRulesFrom(const AclUser& other);

  bool all_channels_default = false;  // acl-pubsub-default allchannels

 private:
  void Refresh();

  const CommandTable* commands_;
  std::string name_;
  uint32_t flags_ = kAclUserOff | kAclUserSanitize;
  std::vector<std::string> passwords_;  // hex SHA-256
  std::vector<AclSelector> selectors_;  // [0] is the root selector
  bool unrestricted_ = false;
};

// Redis's NOPERM texts. `verbose` (ACL DRYRUN) names the user and the key or channel.
std::string AclErrorMessage(AclResult result, const std::string& user, const CommandSpec& spec,
                            std::string_view object, bool verbose);

// The users, the default one, the ACL log. One per server.
class AclRegistry {
 public:
  explicit AclRegistry(const CommandTable& commands);
  AclUser* default_user() { return default_user_; }
  AclUser* Find(std::string_view name);
  const std::map<std::string, std::unique_ptr<AclUser>, std::less<>>& users() const {
    return users_;
  }
  // Creates a user (off, no permissions) or returns the existing one.
  AclUser* Create(std::string_view name);
  bool Remove(std::string_view name);

  // Parses an ACL file's text (or the `user` lines of the config file): all or nothing.
  // Returns "" or Redis's error text naming the lines; on success `*users` holds the users.
  std::string Parse(const std::string& text, const std::string& filename,
                    std::map<std::string, std::unique_ptr<AclUser>, std::less<>>* users) const;
  // Replaces the users with `users` (the default user object is kept and updated, so clients
  // pointing at it stay valid). Returns the users that were dropped (their clients must go).
  std::vector<std::unique_ptr<AclUser>> Replace(
      std::map<std::string, std::unique_ptr<AclUser>, std::less<>> users);
  // ACL LIST / the ACL file: "user <name> <rules>" lines.
  std::vector<std::string> ListLines() const;

  void set_pubsub_all_default(bool all) { pubsub_all_default_ = all; }
  bool pubsub_all_default() const { return pubsub_all_default_; }

  // The ACL log.
  struct LogEntry {
    uint64_t count = 1;
    AclResult reason;
    std::string context;  // toplevel, multi, lua
    std::string object;
    std::string username;
    int64_t ctime_ms;
    std::string client_info;
    uint64_t entry_id;
    int64_t created_ms;
  };
  void AddLog(LogEntry entry, size_t max_len);
  const std::vector<LogEntry>& log() const { return log_; }  // newest first
  void ResetLog() { log_.clear(); }
  void TrimLog(size_t max_len) {
    if (log_.size() > max_len) log_.resize(max_len);
  }

  // INFO stats acl_access_denied_*.
  uint64_t denied_auth = 0, denied_cmd = 0, denied_key = 0, denied_channel = 0;

 private:
  const CommandTable& commands_;
  std::map<std::string, std::unique_ptr<AclUser>, std::less<>> users_;
  AclUser* default_user_ = nullptr;
  bool pubsub_all_default_ = false;
  std::vector<LogEntry> log_;
  uint64_t next_entry_id_ = 0;
};

}  // namespace vireo

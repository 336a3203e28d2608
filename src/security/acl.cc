// ACL users, selectors, the rule parser and the permission check (see acl.h).
#include "security/acl.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>

#include "core/command_table.h"
#include "util/glob.h"
#include "util/strings.h"

namespace vireo {
namespace {

std::string_view TrimChars(std::string_view s, std::string_view chars) {
  size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(chars);
  return s.substr(b, e - b + 1);
}

std::vector<std::string> SplitKeepEmptyLines(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool IsHash(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if ((c < 'a' || c > 'f') && (c < '0' || c > '9')) return false;
  }
  return true;
}

// Constant-time comparison of two hashes of equal length, so a wrong password's timing says
// nothing about how much of it matched.
bool SameHash(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool IsSubcommand(const CommandSpec& spec) { return spec.name.find('|') != std::string::npos; }

// Key-spec flags to the permissions a key pattern must grant (Redis reads the access/insert/
// delete/update flags, not RO/RW/OW/RM).
uint8_t NeededPerms(uint32_t key_flags) {
  uint8_t need = 0;
  if (key_flags & kKeyAccess) need |= kAclPermRead;
  if (key_flags & (kKeyInsert | kKeyDelete | kKeyUpdate)) need |= kAclPermWrite;
  return need;
}

std::string PatternString(uint8_t perms, const std::string& text) {
  if (perms == kAclPermAll) return "~" + text;
  return (perms == kAclPermRead ? "%R~" : "%W~") + text;
}

// Redis's ACLMergeSelectorArguments: "(+get" "~key)" becomes "(+get ~key)". False on an
// unmatched parenthesis, with `*bad` the index where it opened.
bool MergeSelectorArgs(std::span<const std::string> args, std::vector<std::string>* out,
                       size_t* bad) {
  out->clear();
  std::string selector;
  bool open = false;
  size_t open_at = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& op = args[i];
    if (!open && !op.empty() && op[0] == '(' && op.back() != ')') {
      selector = op;
      open = true;
      open_at = i;
      continue;
    }
    if (open) {
      selector += " ";
      selector += op;
      if (!op.empty() && op.back() == ')') {
        open = false;
        out->push_back(std::move(selector));
      }
      continue;
    }
    out->push_back(op);
  }
  if (open) {
    *bad = open_at;
    return false;
  }
  return true;
}

}  // namespace

std::string_view AclRuleErrorText(AclRuleError error) {
  switch (error) {
    case AclRuleError::kUnknownCommand:
      return "Unknown command or category name in ACL";
    case AclRuleError::kSyntax:
      return "Syntax error";
    case AclRuleError::kKeyAfterAll:
      return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does "
             "not have any effect. Try 'resetkeys' to start with an empty list of patterns";
    case AclRuleError::kChannelAfterAll:
      return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and "
             "does not have any effect. Try 'resetchannels' to start with an empty list of "
             "channels";
    case AclRuleError::kNoSuchPassword:
      return "The password you are trying to remove from the user does not exist";
    case AclRuleError::kBadHash:
      return "The password hash must be exactly 64 characters and contain only lowercase "
             "hexadecimal characters";
    case AclRuleError::kDuplicateUser:
      return "Duplicate user found. A user can only be defined once in config files";
    case AclRuleError::kSubcommandArg:
      return "Allowing first-arg of a subcommand is not supported";
    case AclRuleError::kNone:
      break;
  }
  return "Wrong format";
}

bool AclHasSpaceOrNul(std::string_view s) {
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '\0') return true;
  }
  return false;
}

std::string AclHashPassword(std::string_view password) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(password.data(), password.size(), digest, &len, EVP_sha256(), nullptr);
  return HexEncode(digest, len);
}

// ---------------------------------------------------------------------------------------------
// AclGlob

AclGlob::AclGlob(std::string text) : text_(std::move(text)) {
  auto special = [](char c) { return c == '*' || c == '?' || c == '[' || c == '\\'; };
  if (text_ == "*") {
    kind_ = Kind::kAnyNonEmpty;
  } else if (std::none_of(text_.begin(), text_.end(), special)) {
    kind_ = Kind::kExact;
  } else if (text_.back() == '*' && std::none_of(text_.begin(), text_.end() - 1, special)) {
    kind_ = Kind::kPrefix;
  }
}

bool AclGlob::Matches(std::string_view s) const {
  switch (kind_) {
    case Kind::kAnyNonEmpty:
      return !s.empty();
    case Kind::kExact:
      return s == text_;
    case Kind::kPrefix: {
      std::string_view prefix(text_.data(), text_.size() - 1);
      if (!s.starts_with(prefix)) return false;
      // Past the prefix "*" takes anything; the prefix alone is GlobMatch's call.
      return s.size() > prefix.size() || GlobMatch(text_, s);
    }
    case Kind::kGeneral:
      break;
  }
  return GlobMatch(text_, s);
}

// ---------------------------------------------------------------------------------------------
// AclSelector

AclSelector::AclSelector(const CommandTable& commands, bool all_channels)
    : commands_(&commands),
      all_channels_(all_channels),
      allowed_((commands.spec_count() + 63) / 64, 0) {}

void AclSelector::SetBit(uint32_t id, bool allow) {
  size_t word = id / 64;
  if (word >= allowed_.size()) return;
  if (allow) {
    allowed_[word] |= uint64_t{1} << (id % 64);
  } else {
    allowed_[word] &= ~(uint64_t{1} << (id % 64));
    all_commands_ = false;
  }
}

void AclSelector::ChangeCommand(const CommandSpec& spec, bool allow) {
  SetBit(spec.id, allow);
  first_args_.erase(spec.id);
  for (const auto& [name, sub] : spec.subcommands) SetBit(sub->id, allow);
}

void AclSelector::SetCategory(uint32_t mask, bool allow) {
  for (const auto& [name, spec] : commands_->all()) {
    if (spec->acl_categories & mask) ChangeCommand(*spec, allow);
    for (const auto& [subname, sub] : spec->subcommands) {
      if (sub->acl_categories & mask) ChangeCommand(*sub, allow);
    }
  }
}

void AclSelector::ResetCommands(bool allow) {
  std::fill(allowed_.begin(), allowed_.end(), allow ? ~uint64_t{0} : 0);
  all_commands_ = allow;
  future_commands_ = allow;
  command_rules_.clear();
  first_args_.clear();
}

// Keeps the +/- rules in the order given, a later rule replacing an earlier one for the same
// command (and the subcommand rules of a whole command), so ACL LIST reproduces the bitmap.
void AclSelector::AddRule(std::string rule, bool allow) {
  rule = ToLower(rule);
  std::vector<std::string> kept;
  size_t start = 0;
  while (start < command_rules_.size()) {
    size_t end = command_rules_.find(' ', start);
    if (end == std::string::npos) end = command_rules_.size();
    std::string_view existing(command_rules_.data() + start + 1, end - start - 1);
    bool same = existing == rule || (existing.size() > rule.size() && existing.starts_with(rule) &&
                                     existing[rule.size()] == '|');
    if (!same) kept.emplace_back(command_rules_.substr(start, end - start));
    start = end + 1;
  }
  kept.push_back((allow ? "+" : "-") + rule);
  command_rules_.clear();
  for (const std::string& r : kept) {
    if (!command_rules_.empty()) command_rules_ += ' ';
    command_rules_ += r;
  }
}

AclRuleError AclSelector::ApplyCommandRule(std::string_view op) {
  const bool allow = op[0] == '+';
  std::string_view name = op.substr(1);
  if (!name.empty() && name[0] == '@') {
    uint32_t mask = AclCategoryByName(name.substr(1));
    if (mask == 0) return AclRuleError::kUnknownCommand;
    AddRule(std::string(name), allow);
    SetCategory(mask, allow);
    return AclRuleError::kNone;
  }
  if (!allow || name.rfind('|') == std::string_view::npos) {
    const CommandSpec* spec = commands_->FindByFullName(name);
    if (spec == nullptr) return AclRuleError::kUnknownCommand;
    ChangeCommand(*spec, allow);
    AddRule(spec->name, allow);
    return AclRuleError::kNone;
  }
  // +command|sub, or +command|first-arg for a command without subcommands (SELECT|0).
  size_t bar = name.rfind('|');
  std::string_view base = name.substr(0, bar);
  std::string_view sub = name.substr(bar + 1);
  const CommandSpec* spec = commands_->FindByFullName(base);
  if (spec == nullptr) return AclRuleError::kUnknownCommand;
  if (IsSubcommand(*spec)) return AclRuleError::kSubcommandArg;
  if (sub.empty()) return AclRuleError::kSyntax;
  if (!spec->subcommands.empty()) {
    const CommandSpec* subspec = commands_->FindByFullName(name);
    if (subspec == nullptr) return AclRuleError::kUnknownCommand;
    ChangeCommand(*subspec, true);
  } else {
    std::vector<std::string>& args = first_args_[spec->id];
    bool present = std::any_of(args.begin(), args.end(),
                               [&](const std::string& a) { return EqualsIgnoreCase(a, sub); });
    if (!present) args.emplace_back(sub);
  }
  AddRule(std::string(name), true);
  return AclRuleError::kNone;
}

AclRuleError AclSelector::Apply(std::string_view op) {
  if (EqualsIgnoreCase(op, "allkeys") || op == "~*") {
    all_keys_ = true;
    keys_.clear();
  } else if (EqualsIgnoreCase(op, "resetkeys")) {
    all_keys_ = false;
    keys_.clear();
  } else if (EqualsIgnoreCase(op, "allchannels") || op == "&*") {
    all_channels_ = true;
    channels_.clear();
    channel_globs_.clear();
  } else if (EqualsIgnoreCase(op, "resetchannels")) {
    all_channels_ = false;
    channels_.clear();
    channel_globs_.clear();
  } else if (EqualsIgnoreCase(op, "allcommands") || EqualsIgnoreCase(op, "+@all")) {
    ResetCommands(true);
  } else if (EqualsIgnoreCase(op, "nocommands") || EqualsIgnoreCase(op, "-@all")) {
    ResetCommands(false);
  } else if (op[0] == '~' || op[0] == '%') {
    if (all_keys_) return AclRuleError::kKeyAfterAll;
    uint8_t perms = 0;
    size_t offset = 1;
    if (op[0] == '%') {
      for (; offset < op.size(); ++offset) {
        char c = static_cast<char>(std::toupper(static_cast<unsigned char>(op[offset])));
        if (c == 'R' && !(perms & kAclPermRead)) {
          perms |= kAclPermRead;
        } else if (c == 'W' && !(perms & kAclPermWrite)) {
          perms |= kAclPermWrite;
        } else if (op[offset] == '~' && perms != 0) {
          ++offset;
          break;
        } else {
          return AclRuleError::kSyntax;
        }
      }
    } else {
      perms = kAclPermAll;
    }
    std::string_view pattern = op.substr(std::min(offset, op.size()));
    if (AclHasSpaceOrNul(pattern)) return AclRuleError::kSyntax;
    auto it = std::find_if(keys_.begin(), keys_.end(),
                           [&](const KeyPattern& k) { return k.glob.text() == pattern; });
    if (it == keys_.end()) {
      keys_.push_back({perms, AclGlob(std::string(pattern))});
    } else {
      it->perms |= perms;
    }
  } else if (op[0] == '&') {
    if (all_channels_) return AclRuleError::kChannelAfterAll;
    std::string_view channel = op.substr(1);
    if (AclHasSpaceOrNul(channel)) return AclRuleError::kSyntax;
    if (std::find(channels_.begin(), channels_.end(), channel) == channels_.end()) {
      channels_.emplace_back(channel);
      channel_globs_.emplace_back(std::string(channel));
    }
  } else if (op[0] == '+' || op[0] == '-') {
    return ApplyCommandRule(op);
  } else {
    return AclRuleError::kSyntax;
  }
  return AclRuleError::kNone;
}

std::string AclSelector::DescribeCommands() const {
  std::string out = future_commands_ ? "+@all" : "-@all";
  if (!command_rules_.empty()) out += " " + command_rules_;
  return out;
}

std::string AclSelector::DescribeKeys() const {
  if (all_keys_) return "~*";
  std::string out;
  for (const KeyPattern& k : keys_) {
    if (!out.empty()) out += ' ';
    out += PatternString(k.perms, k.glob.text());
  }
  return out;
}

std::string AclSelector::DescribeChannels() const {
  if (all_channels_) return "&*";
  std::string out;
  for (const std::string& c : channels_) {
    if (!out.empty()) out += ' ';
    out += "&" + c;
  }
  return out;
}

std::string AclSelector::Describe() const {
  std::string out;
  if (all_keys_) {
    out += "~* ";
  } else {
    for (const KeyPattern& k : keys_) out += PatternString(k.perms, k.glob.text()) + " ";
  }
  if (all_channels_) {
    out += "&* ";
  } else {
    out += "resetchannels ";
    for (const std::string& c : channels_) out += "&" + c + " ";
  }
  return out + DescribeCommands();
}

bool AclSelector::KeyAllowed(std::string_view key, uint32_t key_flags) const {
  if (all_keys_) return true;
  const uint8_t need = NeededPerms(key_flags);
  for (const KeyPattern& k : keys_) {
    if ((k.perms & need) == need && k.glob.Matches(key)) return true;
  }
  return false;
}

// A pattern subscription (PSUBSCRIBE) is allowed only by the same pattern, literally; a
// channel by any matching glob.
bool AclSelector::ChannelAllowed(std::string_view channel, bool is_pattern) const {
  if (all_channels_) return true;
  for (size_t i = 0; i < channels_.size(); ++i) {
    if (is_pattern ? channels_[i] == channel : channel_globs_[i].Matches(channel)) return true;
  }
  return false;
}

AclResult AclSelector::Check(const CommandSpec& spec, std::span<const std::string_view> argv,
                             std::vector<KeyRef>* keys, bool* keys_ready, size_t* pos) const {
  if (!all_commands_ && !spec.has(kCmdNoAuth) && !Allowed(spec.id)) {
    auto it = first_args_.find(spec.id);
    if (argv.size() < 2 || it == first_args_.end()) return AclResult::kDeniedCmd;
    bool match = std::any_of(it->second.begin(), it->second.end(),
                             [&](const std::string& a) { return EqualsIgnoreCase(a, argv[1]); });
    if (!match) return AclResult::kDeniedCmd;
  }
  if (!all_keys_ && spec.HasKeys()) {
    // One key at a fixed position (GET, SET, INCR...): no key list to build (with variable
    // key flags, SET's, the flags come from the command's function, as GetKeys would have).
    if (spec.key_specs.size() == 1 && spec.key_finder == nullptr) {
      const KeySpec& ks = spec.key_specs[0];
      if (ks.begin == KeySpec::Begin::kIndex && ks.find == KeySpec::Find::kRange && ks.a == 0 &&
          !(ks.flags & kKeyNotKey) && ks.index > 0 && static_cast<size_t>(ks.index) < argv.size()) {
        const size_t at = static_cast<size_t>(ks.index);
        const uint32_t flags =
            spec.key_flags != nullptr ? spec.key_flags(argv, KeyRef{at, ks.flags}) : ks.flags;
        if (KeyAllowed(argv[at], flags)) return ChannelCheck(spec, argv, pos);
        *pos = static_cast<size_t>(ks.index);
        return AclResult::kDeniedKey;
      }
    }
    if (!*keys_ready) {
      spec.GetKeys(argv, keys);
      *keys_ready = true;
    }
    for (const KeyRef& ref : *keys) {
      if (!KeyAllowed(argv[ref.pos], ref.flags)) {
        *pos = ref.pos;
        return AclResult::kDeniedKey;
      }
    }
  }
  return ChannelCheck(spec, argv, pos);
}

// The commands that publish to or subscribe to channels (not UNSUBSCRIBE, not PUBSUB).
AclResult AclSelector::ChannelCheck(const CommandSpec& spec, std::span<const std::string_view> argv,
                                    size_t* pos) const {
  if (!all_channels_ && spec.has(kCmdPubsub)) {
    const std::string& n = spec.name;
    size_t first = 1, last = 0;
    bool is_pattern = false;
    if (n == "publish" || n == "spublish") {
      last = 2;
    } else if (n == "subscribe" || n == "ssubscribe") {
      last = argv.size();
    } else if (n == "psubscribe") {
      last = argv.size();
      is_pattern = true;
    }
    for (size_t i = first; i < last && i < argv.size(); ++i) {
      if (!ChannelAllowed(argv[i], is_pattern)) {
        *pos = i;
        return AclResult::kDeniedChannel;
      }
    }
  }
  return AclResult::kOk;
}

// ---------------------------------------------------------------------------------------------
// AclUser

AclUser::AclUser(const CommandTable& commands, std::string name, bool all_channels_default_value)
    : all_channels_default(all_channels_default_value),
      commands_(&commands),
      name_(std::move(name)) {
  selectors_.emplace_back(commands, all_channels_default);
  Refresh();
}

void AclUser::Refresh() {
  unrestricted_ = std::any_of(selectors_.begin(), selectors_.end(), [](const AclSelector& s) {
    return s.all_commands() && s.all_keys() && s.all_channels();
  });
}

void AclUser::CopyRulesFrom(const AclUser& other) {
  flags_ = other.flags_;
  passwords_ = other.passwords_;
  selectors_ = other.selectors_;
  unrestricted_ = other.unrestricted_;
}

AclRuleError AclUser::Apply(std::string_view op) {
  AclRuleError err = AclRuleError::kNone;
  if (op.empty()) return err;
  if (EqualsIgnoreCase(op, "on")) {
    flags_ = (flags_ | kAclUserOn) & ~kAclUserOff;
  } else if (EqualsIgnoreCase(op, "off")) {
    flags_ = (flags_ | kAclUserOff) & ~kAclUserOn;
  } else if (EqualsIgnoreCase(op, "skip-sanitize-payload")) {
    flags_ = (flags_ | kAclUserSkipSanitize) & ~kAclUserSanitize;
  } else if (EqualsIgnoreCase(op, "sanitize-payload")) {
    flags_ = (flags_ | kAclUserSanitize) & ~kAclUserSkipSanitize;
  } else if (EqualsIgnoreCase(op, "nopass")) {
    flags_ |= kAclUserNoPass;
    passwords_.clear();
  } else if (EqualsIgnoreCase(op, "resetpass")) {
    flags_ &= ~kAclUserNoPass;
    passwords_.clear();
  } else if (op[0] == '>' || op[0] == '#') {
    std::string hash;
    if (op[0] == '>') {
      hash = AclHashPassword(op.substr(1));
    } else {
      if (!IsHash(op.substr(1))) return AclRuleError::kBadHash;
      hash = op.substr(1);
    }
    if (std::find(passwords_.begin(), passwords_.end(), hash) == passwords_.end()) {
      passwords_.push_back(std::move(hash));
    }
    flags_ &= ~kAclUserNoPass;
  } else if (op[0] == '<' || op[0] == '!') {
    std::string hash;
    if (op[0] == '<') {
      hash = AclHashPassword(op.substr(1));
    } else {
      if (!IsHash(op.substr(1))) return AclRuleError::kBadHash;
      hash = op.substr(1);
    }
    auto it = std::find(passwords_.begin(), passwords_.end(), hash);
    if (it == passwords_.end()) return AclRuleError::kNoSuchPassword;
    passwords_.erase(it);
  } else if (op[0] == '(' && op.back() == ')') {
    AclSelector selector(*commands_, all_channels_default);
    bool ok = true;
    std::vector<std::string> parts = SplitArgs(op.substr(1, op.size() - 2), &ok);
    for (const std::string& part : parts) {
      if (err = selector.Apply(part); err != AclRuleError::kNone) return err;
    }
    selectors_.push_back(std::move(selector));
  } else if (EqualsIgnoreCase(op, "clearselectors")) {
    selectors_.erase(selectors_.begin() + 1, selectors_.end());
  } else if (EqualsIgnoreCase(op, "reset")) {
    Apply("resetpass");
    Apply("resetkeys");
    Apply("resetchannels");
    if (all_channels_default) Apply("allchannels");
    Apply("off");
    Apply("sanitize-payload");
    Apply("clearselectors");
    Apply("-@all");
  } else {
    err = selectors_[0].Apply(op);
  }
  Refresh();
  return err;
}

bool AclUser::ApplyAll(std::span<const std::string> rules, std::string* error) {
  std::vector<std::string> merged;
  size_t bad = 0;
  if (!MergeSelectorArgs(rules, &merged, &bad)) {
    *error = fmt::format("Unmatched parenthesis in acl selector starting at '{}'.", rules[bad]);
    return false;
  }
  AclUser staged(*commands_, name_, all_channels_default);
  staged.CopyRulesFrom(*this);
  for (const std::string& rule : merged) {
    if (AclRuleError err = staged.Apply(rule); err != AclRuleError::kNone) {
      *error = fmt::format("Error in ACL SETUSER modifier '{}': {}", rule, AclRuleErrorText(err));
      return false;
    }
  }
  CopyRulesFrom(staged);
  return true;
}

bool AclUser::CheckPassword(std::string_view password) const {
  if (!enabled()) return false;
  if (nopass()) return true;
  std::string hash = AclHashPassword(password);
  bool match = false;
  for (const std::string& p : passwords_) match |= SameHash(p, hash);
  return match;
}

std::string AclUser::Describe() const {
  static constexpr std::pair<uint32_t, std::string_view> kFlags[] = {
      {kAclUserOn, "on"},
      {kAclUserOff, "off"},
      {kAclUserNoPass, "nopass"},
      {kAclUserSkipSanitize, "skip-sanitize-payload"},
      {kAclUserSanitize, "sanitize-payload"}};
  std::string out;
  for (const auto& [flag, name] : kFlags) {
    if (flags_ & flag) {
      out += name;
      out += ' ';
    }
  }
  for (const std::string& p : passwords_) out += "#" + p + " ";
  for (size_t i = 0; i < selectors_.size(); ++i) {
    out += i == 0 ? selectors_[i].Describe() : " (" + selectors_[i].Describe() + ")";
  }
  return out;
}

AclResult AclUser::Check(const CommandSpec& spec, std::span<const std::string_view> argv,
                         size_t* pos) const {
  if (unrestricted_) return AclResult::kOk;
  AclResult relevant = AclResult::kDeniedCmd;
  size_t last_pos = 0;
  std::vector<KeyRef> keys;
  bool keys_ready = false;
  for (const AclSelector& s : selectors_) {
    size_t p = 0;
    AclResult r = s.Check(spec, argv, &keys, &keys_ready, &p);
    if (r == AclResult::kOk) return r;
    if (r > relevant || (r == relevant && p > last_pos)) {
      relevant = r;
      last_pos = p;
    }
  }
  *pos = last_pos;
  return relevant;
}

bool AclUser::ChannelAllowed(std::string_view channel, bool is_pattern) const {
  return std::any_of(selectors_.begin(), selectors_.end(),
                     [&](const AclSelector& s) { return s.ChannelAllowed(channel, is_pattern); });
}

std::string AclErrorMessage(AclResult result, const std::string& user, const CommandSpec& spec,
                            std::string_view object, bool verbose) {
  switch (result) {
    case AclResult::kDeniedCmd:
      return fmt::format("User {} has no permissions to run the '{}' command", user, spec.name);
    case AclResult::kDeniedKey:
      return verbose
                 ? fmt::format("User {} has no permissions to access the '{}' key", user, object)
                 : "No permissions to access a key";
    case AclResult::kDeniedChannel:
      return verbose ? fmt::format("User {} has no permissions to access the '{}' channel", user,
                                   object)
                     : "No permissions to access a channel";
    default:
      return "";
  }
}

// ---------------------------------------------------------------------------------------------
// AclRegistry

AclRegistry::AclRegistry(const CommandTable& commands) : commands_(commands) {
  auto user = std::make_unique<AclUser>(commands_, "default", false);
  for (std::string_view op : {"+@all", "~*", "&*", "on", "nopass"}) user->Apply(op);
  default_user_ = user.get();
  users_.emplace("default", std::move(user));
}

AclUser* AclRegistry::Find(std::string_view name) {
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second.get();
}

AclUser* AclRegistry::Create(std::string_view name) {
  if (AclUser* u = Find(name)) return u;
  auto user = std::make_unique<AclUser>(commands_, std::string(name), pubsub_all_default_);
  AclUser* raw = user.get();
  users_.emplace(std::string(name), std::move(user));
  return raw;
}

bool AclRegistry::Remove(std::string_view name) {
  auto it = users_.find(name);
  if (it == users_.end() || it->second.get() == default_user_) return false;
  users_.erase(it);
  return true;
}

std::string AclRegistry::Parse(
    const std::string& text, const std::string& filename,
    std::map<std::string, std::unique_ptr<AclUser>, std::less<>>* users) const {
  users->clear();
  std::string errors;
  std::vector<std::string> lines = SplitKeepEmptyLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t linenum = i + 1;
    std::string_view line = TrimChars(lines[i], " \t\r\n");
    if (line.empty()) continue;
    std::vector<std::string> argv;
    size_t start = 0;
    while (start <= line.size()) {
      size_t end = line.find(' ', start);
      if (end == std::string_view::npos) end = line.size();
      argv.emplace_back(line.substr(start, end - start));
      start = end + 1;
    }
    if (argv[0] != "user" || argv.size() < 2) {
      errors += fmt::format("{}:{} should start with user keyword followed by the username. ",
                            filename, linenum);
      continue;
    }
    if (AclHasSpaceOrNul(argv[1])) {
      errors += fmt::format("'{}:{}: username '{}' contains invalid characters. ", filename,
                            linenum, argv[1]);
      continue;
    }
    if (users->count(argv[1]) != 0) {
      errors += fmt::format("WARNING: Duplicate user '{}' found on line {}. ", argv[1], linenum);
      continue;
    }
    auto user = std::make_unique<AclUser>(commands_, argv[1], pubsub_all_default_);
    std::vector<std::string> merged;
    size_t bad = 0;
    if (!MergeSelectorArgs(std::span(argv).subspan(2), &merged, &bad)) {
      errors +=
          fmt::format("{}:{}: Unmatched parenthesis in selector definition.", filename, linenum);
    }
    bool syntax_error = false;
    for (std::string& rule : merged) {
      rule = std::string(TrimChars(rule, "\t\r\n"));
      AclRuleError err = user->Apply(rule);
      if (err == AclRuleError::kUnknownCommand) {
        errors += fmt::format("{}:{}: Error in applying operation '{}': {}. ", filename, linenum,
                              rule, AclRuleErrorText(err));
      } else if (err != AclRuleError::kNone && !syntax_error) {
        errors += fmt::format("{}:{}: {}. ", filename, linenum, AclRuleErrorText(err));
        syntax_error = true;
      }
    }
    users->emplace(argv[1], std::move(user));
  }
  if (!errors.empty()) {
    errors +=
        "WARNING: ACL errors detected, no change to the previously active ACL rules was "
        "performed";
  }
  return errors;
}

std::vector<std::unique_ptr<AclUser>> AclRegistry::Replace(
    std::map<std::string, std::unique_ptr<AclUser>, std::less<>> users) {
  auto it = users.find("default");
  if (it != users.end()) {
    default_user_->CopyRulesFrom(*it->second);
  } else {
    AclUser fresh(commands_, "default", false);
    for (std::string_view op : {"+@all", "~*", "&*", "on", "nopass"}) fresh.Apply(op);
    default_user_->CopyRulesFrom(fresh);
  }
  std::vector<std::unique_ptr<AclUser>> dropped;
  for (auto& [name, user] : users_) {
    if (user.get() != default_user_) dropped.push_back(std::move(user));
  }
  std::unique_ptr<AclUser> keep = std::move(users_["default"]);
  users_ = std::move(users);
  users_["default"] = std::move(keep);
  return dropped;
}

std::vector<std::string> AclRegistry::ListLines() const {
  std::vector<std::string> out;
  out.reserve(users_.size());
  for (const auto& [name, user] : users_) out.push_back("user " + name + " " + user->Describe());
  return out;
}

void AclRegistry::AddLog(LogEntry entry, size_t max_len) {
  switch (entry.reason) {
    case AclResult::kDeniedAuth:
      ++denied_auth;
      break;
    case AclResult::kDeniedCmd:
      ++denied_cmd;
      break;
    case AclResult::kDeniedKey:
      ++denied_key;
      break;
    case AclResult::kDeniedChannel:
      ++denied_channel;
      break;
    default:
      break;
  }
  // Similar recent entries (same reason, context, object and user within a minute) are
  // counted in one entry, as Redis does, looking at the 10 newest only.
  for (size_t i = 0; i < log_.size() && i < 10; ++i) {
    LogEntry& e = log_[i];
    int64_t delta = e.ctime_ms - entry.ctime_ms;
    if (e.reason == entry.reason && e.context == entry.context && std::abs(delta) <= 60000 &&
        e.object == entry.object && e.username == entry.username) {
      LogEntry updated = std::move(e);
      updated.client_info = std::move(entry.client_info);
      updated.ctime_ms = entry.ctime_ms;
      ++updated.count;
      log_.erase(log_.begin() + static_cast<ptrdiff_t>(i));
      log_.insert(log_.begin(), std::move(updated));
      return;
    }
  }
  entry.entry_id = next_entry_id_++;
  entry.created_ms = entry.ctime_ms;
  log_.insert(log_.begin(), std::move(entry));
  TrimLog(max_len);
}

}  // namespace vireo

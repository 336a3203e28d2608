#include "core/command_table.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "util/strings.h"

namespace vireo {
namespace {

// Argument names whose COMMAND DOCS type is not "string".
std::string InferArgType(std::string_view name) {
  static const StringMap<const char*> kTypes = [] {
    StringMap<const char*> m;
    for (const char* n : {"key", "destination", "source", "newkey", "srckey", "dstkey", "key1",
                          "key2", "destkey", "sourcekey"}) {
      m.emplace(n, "key");
    }
    for (const char* n : {"pattern", "channel-pattern"}) m.emplace(n, "pattern");
    for (const char* n : {"unix-time-seconds", "unix-time-milliseconds"}) m.emplace(n, "unix-time");
    for (const char* n : {
             "seconds",   "milliseconds",  "count",       "index",     "start",
             "end",       "stop",          "offset",      "decrement", "numkeys",
             "db",        "cursor",        "len",         "rank",      "maxlen",
             "client-id", "min-match-len", "numreplicas", "numlocal",  "protover",
             "port",      "bit",           "pivot",       "numsub",    "microseconds",
             "version",
         }) {
      m.emplace(n, "integer");
    }
    for (const char* n : {"destination-db", "index1", "index2"}) m.emplace(n, "integer");
    for (const char* n :
         {"timeout", "score", "longitude", "latitude", "radius", "width", "height", "weight"}) {
      m.emplace(n, "double");
    }
    return m;
  }();
  auto it = kTypes.find(name);
  return it == kTypes.end() ? "string" : it->second;
}

// Redis's names for a few common oneofs, keyed by their members' names; others are named after
// their members.
std::string WellKnownGroupName(const std::string& joined) {
  if (joined == "nx-xx" || joined == "nx-xx-gt-lt") return "condition";
  if (joined.rfind("nx-xx-ifeq-value", 0) == 0) return "condition";  // SET's, Redis 8.4
  if (joined == "async-sync") return "flush-type";
  if (joined == "gt-lt") return "comparison";
  if (joined.rfind("seconds-milliseconds", 0) == 0) return "expiration";
  return joined;
}

bool IsTokenWord(std::string_view word) {
  if (word.empty()) return false;
  for (char c : word) {
    if (c >= 'a' && c <= 'z') return false;
  }
  return true;
}

// Strips whitespace so "[GET pattern ...]" and "GET  pattern" compare by content.
std::string Squeeze(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c != ' ' && c != '\t') out.push_back(c);
  }
  return out;
}

// The syntax mini-language is Redis's documentation syntax:
//   word         an argument ("key"); an all-caps word is a token ("NX")
//   TOKEN value  the token introduces the value ("EX seconds")
//   [ ... ]      optional;  < ... > or ( ... )  a required group
//   a | b        one of the alternatives
//   x ...        x repeats; "a b [a b ...]" is read as one repeating "a b"
// plus annotations for what the documentation syntax leaves implicit, so that COMMAND DOCS
// gives Redis's argument tree:
//   word:type    the value's type (integer, double, key, pattern, unix-time, string), where
//                the name does not imply it ("increment:integer"); also marks an all-caps
//                word as a value ("ID:string")
//   name=item    names an argument or group ("wherefrom=<LEFT | RIGHT>", "change=CH"); on a
//                value word the word becomes the display text ("storekey=key"); a named token
//                stays a pure token, bound to no value ("<byscore=BYSCORE min max>")
//   'text'       a token spelled as given: lower case, symbols or empty ('m', '=', '')
//   word#n       the value's key spec index (a pattern naming keys, as SORT's BY)
//   <TOKEN a>    a token bound to its first value; a group led by a token with several values
//                ("[LIMIT offset count]") is a block carrying that token
class SyntaxParser {
 public:
  explicit SyntaxParser(std::string_view text) : text_(text) {}

  std::vector<CommandArg> ParseTop() {
    Group group = ParseGroup('\0');
    std::vector<CommandArg> out;
    if (group.alternatives.size() == 1) return Finish(std::move(group.alternatives[0]), false);
    out.push_back(MakeOneof(std::move(group.alternatives)));
    return out;
  }

 private:
  struct Item {
    CommandArg arg;
    bool bare_token = false;   // a token not (yet) attached to a value
    bool named_token = false;  // "name=TOKEN": stays a pure token (ZMOVE's BYSCORE in a block)
    bool optional_group = false;
    bool repeat_group = false;  // "[... ...]": the group's content repeats
    std::string text;           // squeezed source text
    std::string repeat_text;    // squeezed content of a repeat group, without the "..."
  };
  struct Group {
    std::vector<std::vector<Item>> alternatives;
    bool repeats = false;
    std::string repeat_text;  // squeezed content before the "..."
  };

  void SkipSpaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool AtEllipsis() const { return text_.compare(pos_, 3, "...") == 0; }
  static bool IsCloser(char c) { return c == ']' || c == '>' || c == ')'; }

  Group ParseGroup(char closer) {
    Group group;
    group.alternatives.emplace_back();
    size_t content_start = pos_;
    while (true) {
      SkipSpaces();
      if (pos_ >= text_.size()) break;
      char c = text_[pos_];
      if (IsCloser(c)) {
        if (c == closer) ++pos_;
        break;
      }
      if (c == '|') {
        ++pos_;
        group.alternatives.emplace_back();
        continue;
      }
      if (AtEllipsis()) {
        size_t before = pos_;
        pos_ += 3;
        SkipSpaces();
        auto& items = group.alternatives.back();
        bool group_level = closer != '\0' && pos_ < text_.size() && IsCloser(text_[pos_]) &&
                           group.alternatives.size() == 1;
        if (group_level) {
          group.repeats = true;
          group.repeat_text = Squeeze(text_.substr(content_start, before - content_start));
        } else if (!items.empty()) {
          items.back().arg.multiple = true;
          items.back().text += "...";
        }
        continue;
      }
      group.alternatives.back().push_back(ParseItem());
    }
    return group;
  }

  static bool IsNameChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  }

  // "name=" in front of an item.
  std::string ParseLabel() {
    size_t end = pos_;
    while (end < text_.size() && IsNameChar(text_[end])) ++end;
    bool labelled = end > pos_ && end + 1 < text_.size() && text_[end] == '=' &&
                    text_[end + 1] != ' ' && text_[end + 1] != '|' && !IsCloser(text_[end + 1]);
    if (!labelled) return "";
    std::string label(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return label;
  }

  static bool IsWordEnd(std::string_view text, size_t pos) {
    char c = text[pos];
    return c == ' ' || c == '\t' || c == '|' || c == '[' || c == '<' || c == '(' || IsCloser(c) ||
           text.compare(pos, 3, "...") == 0;
  }

  // A value or token word, with its ":type" and "#n" annotations.
  void ParseWord(Item& item) {
    size_t start = pos_;
    if (text_[pos_] == '\'') {
      size_t close = text_.find('\'', pos_ + 1);
      if (close == std::string_view::npos) close = text_.size() - 1;
      item.bare_token = true;
      item.arg.token = std::string(text_.substr(pos_ + 1, close - pos_ - 1));
      item.arg.name = ToLower(item.arg.token);
      item.arg.type = "pure-token";
      pos_ = close + 1;
      return;
    }
    while (pos_ < text_.size() && !IsWordEnd(text_, pos_)) ++pos_;
    std::string word(text_.substr(start, pos_ - start));
    if (size_t hash = word.rfind('#'); hash != std::string::npos && hash + 1 < word.size()) {
      item.arg.key_spec_index = std::atoi(word.c_str() + hash + 1);
      word.resize(hash);
    }
    std::string type;
    if (size_t colon = word.rfind(':'); colon != std::string::npos) {
      static constexpr std::string_view kTypes[] = {"integer", "double",    "key",
                                                    "pattern", "unix-time", "string"};
      std::string_view suffix = std::string_view(word).substr(colon + 1);
      if (std::find(std::begin(kTypes), std::end(kTypes), suffix) != std::end(kTypes)) {
        type = suffix;
        word.resize(colon);
      }
    }
    if (type.empty() && IsTokenWord(word)) {
      item.bare_token = true;
      item.arg.name = ToLower(word);
      item.arg.type = "pure-token";
      item.arg.token = word;
      return;
    }
    item.arg.name = word;
    item.arg.type = type.empty() ? InferArgType(word) : type;
  }

  Item ParseItem() {
    Item item;
    size_t start = pos_;
    std::string label = ParseLabel();
    char c = text_[pos_];
    if (c == '[' || c == '<' || c == '(') {
      ++pos_;
      char closer = c == '[' ? ']' : (c == '<' ? '>' : ')');
      Group group = ParseGroup(closer);
      item.repeat_group = group.repeats;
      item.repeat_text = group.repeat_text;
      if (group.alternatives.size() == 1) {
        std::vector<CommandArg> args = Finish(std::move(group.alternatives[0]), true);
        item.arg = Collapse(std::move(args));
      } else {
        item.arg = MakeOneof(std::move(group.alternatives));
      }
      if (group.repeats) item.arg.multiple = true;
      if (c == '[') {
        item.arg.optional = true;
        item.optional_group = true;
      }
    } else {
      ParseWord(item);
    }
    if (!label.empty()) {
      // On a value, the word written is what hints show; the label is its name.
      bool value = !item.bare_token && item.arg.type != "block" && item.arg.type != "oneof";
      if (value && item.arg.name != label) item.arg.display_text = item.arg.name;
      item.arg.name = label;
      item.named_token = item.bare_token;
    }
    item.text = Squeeze(text_.substr(start, pos_ - start));
    return item;
  }

  static std::string JoinNames(const std::vector<CommandArg>& args) {
    std::string name;
    for (const auto& sub : args) {
      if (!name.empty()) name += "-";
      name += sub.name;
    }
    return ToLower(name.empty() ? "arg" : name);
  }

  static CommandArg Collapse(std::vector<CommandArg> seq) {
    if (seq.size() == 1) return std::move(seq[0]);
    CommandArg block;
    block.type = "block";
    block.name = JoinNames(seq);
    block.subargs = std::move(seq);
    return block;
  }

  CommandArg MakeOneof(std::vector<std::vector<Item>> alternatives) {
    CommandArg oneof;
    oneof.type = "oneof";
    for (auto& alt : alternatives) oneof.subargs.push_back(Collapse(Finish(std::move(alt), true)));
    oneof.name = WellKnownGroupName(JoinNames(oneof.subargs));
    return oneof;
  }

  // Folds "a b [a b ...]" into one repeating "a b", then attaches each token to the value that
  // follows it. `in_group`: a group led by a token and several values becomes a block with that
  // token, as Redis declares "[LIMIT offset count]".
  static std::vector<CommandArg> Finish(std::vector<Item> items, bool in_group) {
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].repeat_group) continue;
      std::string preceding;
      for (size_t k = 1; k <= i; ++k) {
        preceding = items[i - k].text + preceding;
        if (preceding != items[i].repeat_text) continue;
        Item merged = std::move(items[i]);
        merged.arg.optional = false;
        merged.optional_group = false;
        merged.repeat_group = false;
        // A token inside the repeating part is repeated too ("[GET pattern [GET pattern ...]]").
        merged.arg.multiple_token = !merged.arg.token.empty();
        merged.text = preceding + "[" + merged.repeat_text + "...]";
        items.erase(items.begin() + static_cast<long>(i - k), items.begin() + static_cast<long>(i));
        items[i - k] = std::move(merged);
        i -= k;
        break;
      }
    }
    std::vector<CommandArg> out;
    if (in_group && items.size() >= 3 && items[0].bare_token && !items[0].named_token) {
      bool rest_plain = true;
      for (size_t i = 1; i < items.size(); ++i) rest_plain = rest_plain && !items[i].bare_token;
      if (rest_plain) {
        CommandArg block;
        block.type = "block";
        block.token = items[0].arg.token;
        block.name = items[0].arg.name;
        for (size_t i = 1; i < items.size(); ++i) block.subargs.push_back(std::move(items[i].arg));
        out.push_back(std::move(block));
        return out;
      }
    }
    for (size_t i = 0; i < items.size(); ++i) {
      Item& item = items[i];
      bool attaches = item.bare_token && !item.named_token && i + 1 < items.size() &&
                      !items[i + 1].bare_token && !items[i + 1].optional_group &&
                      items[i + 1].arg.token.empty();
      if (attaches) {
        items[i + 1].arg.token = item.arg.token;
        continue;
      }
      out.push_back(std::move(item.arg));
    }
    return out;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<CommandArg> ParseCommandSyntax(std::string_view syntax) {
  return SyntaxParser(syntax).ParseTop();
}

std::span<const std::pair<CommandFlag, std::string_view>> CommandFlagNames() {
  static constexpr std::pair<CommandFlag, std::string_view> kNames[] = {
      {kCmdWrite, "write"},
      {kCmdReadonly, "readonly"},
      {kCmdDenyOom, "denyoom"},
      {kCmdAdmin, "admin"},
      {kCmdPubsub, "pubsub"},
      {kCmdNoScript, "noscript"},
      {kCmdBlocking, "blocking"},
      {kCmdLoading, "loading"},
      {kCmdStale, "stale"},
      {kCmdSkipMonitor, "skip_monitor"},
      {kCmdSkipSlowlog, "skip_slowlog"},
      {kCmdAsking, "asking"},
      {kCmdFast, "fast"},
      {kCmdNoAuth, "no_auth"},
      {kCmdNoMandatoryKeys, "no_mandatory_keys"},
      {kCmdNoAsyncLoading, "no_async_loading"},
      {kCmdNoMulti, "no_multi"},
      {kCmdMovableKeys, "movablekeys"},
      {kCmdAllowBusy, "allow_busy"},
  };
  return kNames;
}

std::span<const std::pair<KeyFlag, std::string_view>> KeyFlagNames() {
  static constexpr std::pair<KeyFlag, std::string_view> kNames[] = {
      {kKeyRO, "RO"},
      {kKeyRW, "RW"},
      {kKeyOW, "OW"},
      {kKeyRM, "RM"},
      {kKeyAccess, "access"},
      {kKeyUpdate, "update"},
      {kKeyInsert, "insert"},
      {kKeyDelete, "delete"},
      {kKeyNotKey, "not_key"},
      {kKeyIncomplete, "incomplete"},
      {kKeyVariableFlags, "variable_flags"},
  };
  return kNames;
}

uint32_t AclCategoryByName(std::string_view name) {
  for (size_t i = 0; i < kAclCategoryCount; ++i) {
    if (EqualsIgnoreCase(name, kAclCategoryNames[i])) return 1u << i;
  }
  return 0;
}

uint32_t ImplicitAclCategories(uint64_t flags, uint32_t declared) {
  uint32_t cats = declared;
  if (flags & kCmdWrite) cats |= kAclWrite;
  // Scripts are not @read even when read-only (EVAL_RO): they run arbitrary commands.
  if ((flags & kCmdReadonly) && !(declared & kAclScripting)) cats |= kAclRead;
  if (flags & kCmdAdmin) cats |= kAclAdmin | kAclDangerous;
  if (flags & kCmdPubsub) cats |= kAclPubsub;
  if (flags & kCmdFast) cats |= kAclFast;
  if (flags & kCmdBlocking) cats |= kAclBlocking;
  if (!(cats & kAclFast)) cats |= kAclSlow;
  return cats;
}

namespace {

bool IsPlainRange(const KeySpec& ks) {
  return ks.begin == KeySpec::Begin::kIndex && ks.find == KeySpec::Find::kRange;
}

// Redis's legacy (first, last, step) triple: the union of the consecutive step-1 ranges; any
// spec it cannot cover makes the keys "movable" (found only by looking at the arguments).
void DeriveLegacyRange(CommandSpec& spec) {
  spec.first_key = spec.last_key = spec.key_step = 0;
  const std::vector<KeySpec>& specs = spec.key_specs;
  if (specs.empty()) return;
  auto absolute_last = [](const KeySpec& ks) { return ks.a >= 0 ? ks.index + ks.a : ks.a; };
  if (specs.size() == 1 && IsPlainRange(specs[0])) {
    spec.first_key = specs[0].index;
    spec.last_key = absolute_last(specs[0]);
    spec.key_step = specs[0].b;
    if (specs[0].flags & kKeyIncomplete) spec.flags |= kCmdMovableKeys;
    return;
  }
  int first = INT_MAX;
  int last = 0;
  int prev_last = 0;
  for (const KeySpec& ks : specs) {
    bool usable = IsPlainRange(ks) && ks.b == 1 && (prev_last == 0 || prev_last == ks.index - 1);
    if (!usable) {
      spec.flags |= kCmdMovableKeys;
      continue;
    }
    if (ks.flags & kKeyIncomplete) spec.flags |= kCmdMovableKeys;
    first = std::min(first, ks.index);
    // A negative last (counted from the end) wins over any positive one.
    int ks_last = absolute_last(ks);
    if (static_cast<unsigned>(ks_last) > static_cast<unsigned>(last)) last = ks_last;
    prev_last = last;
  }
  if (first == INT_MAX) {
    spec.flags |= kCmdMovableKeys;
    return;
  }
  spec.first_key = first;
  spec.last_key = last;
  spec.key_step = 1;
}

// Where a spec's keys start, or -1 when its keyword is absent (or it cannot say).
int BeginOf(const KeySpec& ks, std::span<const std::string_view> argv) {
  const int argc = static_cast<int>(argv.size());
  switch (ks.begin) {
    case KeySpec::Begin::kIndex:
      return ks.index;
    case KeySpec::Begin::kKeyword: {
      // A negative start searches backwards from the end (MIGRATE's KEYS comes last).
      bool backwards = ks.index < 0;
      int from = backwards ? argc + ks.index : ks.index;
      int to = backwards ? 0 : argc - 1;
      for (int i = from; backwards ? i > to : i <= to; i += backwards ? -1 : 1) {
        if (i >= 0 && i < argc && EqualsIgnoreCase(argv[static_cast<size_t>(i)], ks.keyword)) {
          return i + 1;
        }
      }
      return -1;
    }
    case KeySpec::Begin::kUnknown:
      return -1;
  }
  return -1;
}

enum class SpecResult { kOk, kAbsent, kInvalid };

// Appends one spec's keys.
SpecResult KeysOfSpec(const KeySpec& ks, std::span<const std::string_view> argv,
                      std::vector<KeyRef>* out) {
  const int argc = static_cast<int>(argv.size());
  int first = BeginOf(ks, argv);
  if (first < 0) return SpecResult::kAbsent;
  int last;
  int step;
  if (ks.find == KeySpec::Find::kRange) {
    if (ks.a >= 0) {
      last = first + ks.a;
    } else if (ks.c == 0) {
      last = argc + ks.a;
    } else {
      // lastkey -1 with a limit: the keys are the first 1/limit of what remains (XREAD's
      // "STREAMS k1 k2 id1 id2").
      last = first + (argc - first) / ks.c + ks.a;
    }
    step = ks.b;
  } else {
    int at = first + ks.a;
    int64_t numkeys;
    if (at >= argc || !ParseInt64(argv[static_cast<size_t>(at)], &numkeys) || numkeys < 0 ||
        numkeys > argc) {
      return SpecResult::kInvalid;
    }
    first += ks.b;
    step = ks.c;
    // numkeys keys `step` apart (MSETEX's key value pairs: step 2).
    last = first + (static_cast<int>(numkeys) - 1) * step;
    if (numkeys == 0) return SpecResult::kOk;
  }
  if (step <= 0 || last >= argc || last < first || first >= argc) return SpecResult::kInvalid;
  for (int i = first; i <= last; i += step) out->push_back({static_cast<size_t>(i), ks.flags});
  return SpecResult::kOk;
}

}  // namespace

bool CommandSpec::GetKeys(std::span<const std::string_view> argv, std::vector<KeyRef>* out,
                          bool include_not_keys) const {
  out->clear();
  std::vector<KeyRef> found;
  bool partial = false;  // a spec the table cannot follow (unknown, incomplete)
  bool invalid = false;  // the arguments do not fit a spec
  for (const KeySpec& ks : key_specs) {
    if ((ks.flags & kKeyNotKey) && !include_not_keys) continue;
    if (ks.begin == KeySpec::Begin::kUnknown || ks.find == KeySpec::Find::kUnknown) {
      partial = true;
      continue;
    }
    partial |= (ks.flags & kKeyIncomplete) != 0;
    if (KeysOfSpec(ks, argv, &found) == SpecResult::kInvalid) invalid = true;
  }
  if (invalid) return false;
  if (key_finder != nullptr && partial) {
    // The finder knows the positions; the flags come from the spec that yields the position,
    // else from the last spec (the one the table could not follow: SORT's STORE).
    for (size_t pos : key_finder(argv)) {
      uint32_t flags = key_specs.back().flags;
      for (const KeyRef& ref : found) {
        if (ref.pos == pos) {
          flags = ref.flags;
          break;
        }
      }
      out->push_back({pos, flags});
    }
  } else {
    *out = std::move(found);
  }
  if (key_flags != nullptr) {
    for (KeyRef& ref : *out) ref.flags = key_flags(argv, ref);
  }
  return true;
}

std::vector<size_t> CommandSpec::KeyPositions(std::span<const std::string_view> argv) const {
  std::vector<KeyRef> keys;
  std::vector<size_t> out;
  if (!GetKeys(argv, &keys)) return out;
  out.reserve(keys.size());
  for (const KeyRef& ref : keys) out.push_back(ref.pos);
  return out;
}

static std::unique_ptr<CommandSpec> MakeSpec(const CommandDef& def, std::string name) {
  auto spec = std::make_unique<CommandSpec>();
  spec->name = std::move(name);
  spec->arity = def.arity;
  spec->flags = def.flags;
  spec->key_specs = def.keys;
  DeriveLegacyRange(*spec);
  spec->acl_categories = ImplicitAclCategories(spec->flags, def.acl);
  spec->group = def.group;
  spec->since = def.since;
  spec->summary = def.summary;
  spec->syntax = def.syntax;
  spec->complexity = def.complexity;
  spec->handler = def.handler;
  spec->key_finder = def.key_finder;
  spec->key_flags = def.key_flags;
  spec->args = ParseCommandSyntax(def.syntax);
  return spec;
}

namespace {

// Command names are ASCII; std::tolower is a locale-aware call per character, and this runs for
// every command.
inline char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

}  // namespace

CommandSpec* CommandTable::Add(const CommandDef& def) {
  std::string name = ToLower(def.name);
  auto spec = MakeSpec(def, name);
  spec->id = next_id_++;
  CommandSpec* raw = spec.get();
  commands_[name] = std::move(spec);
  return raw;
}

CommandSpec* CommandTable::AddSubcommand(const char* parent, const CommandDef& def) {
  CommandSpec* p = commands_.at(ToLower(parent)).get();
  std::string sub = ToLower(def.name);
  auto spec = MakeSpec(def, p->name + "|" + sub);
  spec->id = next_id_++;
  if (spec->group.empty()) spec->group = p->group;
  CommandSpec* raw = spec.get();
  p->subcommands[sub] = std::move(spec);
  return raw;
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  char buf[64];
  if (name.size() >= sizeof(buf)) return nullptr;
  for (size_t i = 0; i < name.size(); ++i) buf[i] = LowerAscii(name[i]);
  auto it = commands_.find(std::string_view(buf, name.size()));
  return it == commands_.end() ? nullptr : it->second.get();
}

std::string CommandTable::Rename(std::string_view from, std::string_view to) {
  auto it = commands_.find(ToLower(from));
  if (it == commands_.end()) return "No such command in rename-command";
  std::unique_ptr<CommandSpec> spec = std::move(it->second);
  commands_.erase(it);
  if (to.empty()) {
    removed_.push_back(std::move(spec));  // ids and pointers stay valid
    return "";
  }
  if (!commands_.emplace(ToLower(to), std::move(spec)).second) {
    return "Target command name already exists";
  }
  return "";
}

const CommandSpec* CommandTable::FindByFullName(std::string_view name) const {
  const size_t bar = name.find('|');
  const CommandSpec* spec = Find(name.substr(0, bar));
  if (spec == nullptr || bar == std::string_view::npos) return spec;
  return FindSubcommand(*spec, name.substr(bar + 1));
}

const CommandSpec* CommandLookupCache::Find(const CommandTable& table, std::string_view name) {
  char buf[sizeof(Slot::name)];
  if (name.size() > sizeof(buf)) return table.Find(name);
  uint32_t hash = 2166136261u;  // FNV-1a of the lowered name
  for (size_t i = 0; i < name.size(); ++i) {
    buf[i] = LowerAscii(name[i]);
    hash = (hash ^ static_cast<uint8_t>(buf[i])) * 16777619u;
  }
  Slot& slot = slots_[hash % kSlots];
  if (slot.spec != nullptr && slot.len == name.size() &&
      std::memcmp(slot.name, buf, name.size()) == 0) {
    return slot.spec;
  }
  const CommandSpec* spec = table.Find(std::string_view(buf, name.size()));
  if (spec != nullptr) {
    slot.len = static_cast<uint8_t>(name.size());
    std::memcpy(slot.name, buf, name.size());
    slot.spec = spec;
  }
  return spec;
}

const CommandSpec* CommandTable::FindSubcommand(const CommandSpec& parent, std::string_view sub) {
  char buf[64];
  if (sub.size() >= sizeof(buf)) return nullptr;
  for (size_t i = 0; i < sub.size(); ++i) {
    buf[i] = LowerAscii(sub[i]);
  }
  auto it = parent.subcommands.find(std::string_view(buf, sub.size()));
  return it == parent.subcommands.end() ? nullptr : it->second.get();
}

}  // namespace vireo

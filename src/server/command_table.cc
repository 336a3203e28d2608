#include "server/command_table.h"

#include <cctype>
#include <cstring>

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
// Parsing first collects raw items (a token is its own item), then folds repeats and attaches
// tokens to the values they introduce, giving the tree COMMAND DOCS reports.
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
    bool bare_token = false;  // a token not (yet) attached to a value
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

  Item ParseItem() {
    Item item;
    size_t start = pos_;
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
      while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != '\t' &&
             text_[pos_] != '|' && text_[pos_] != '[' && text_[pos_] != '<' && text_[pos_] != '(' &&
             !IsCloser(text_[pos_]) && !AtEllipsis()) {
        ++pos_;
      }
      std::string word(text_.substr(start, pos_ - start));
      if (IsTokenWord(word)) {
        item.bare_token = true;
        item.arg.name = ToLower(word);
        item.arg.type = "pure-token";
        item.arg.token = word;
      } else {
        item.arg.name = word;
        item.arg.type = InferArgType(word);
      }
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
    if (in_group && items.size() >= 3 && items[0].bare_token) {
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
      bool attaches = item.bare_token && i + 1 < items.size() && !items[i + 1].bare_token &&
                      !items[i + 1].optional_group && items[i + 1].arg.token.empty();
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

std::vector<size_t> CommandSpec::KeyPositions(std::span<const std::string_view> argv) const {
  if (key_finder != nullptr) return key_finder(argv);
  std::vector<size_t> out;
  if (first_key <= 0) return out;
  int last = last_key;
  if (last < 0) last = static_cast<int>(argv.size()) + last;
  int step = key_step > 0 ? key_step : 1;
  for (int i = first_key; i <= last && i < static_cast<int>(argv.size()); i += step) {
    out.push_back(static_cast<size_t>(i));
  }
  return out;
}

CommandTable& CommandTable::Instance() {
  static CommandTable* table = [] {
    auto* t = new CommandTable;
    RegisterAllCommands(*t);
    return t;
  }();
  return *table;
}

static std::unique_ptr<CommandSpec> MakeSpec(const CommandDef& def, std::string name) {
  auto spec = std::make_unique<CommandSpec>();
  spec->name = std::move(name);
  spec->arity = def.arity;
  spec->flags = def.flags;
  spec->first_key = def.first_key;
  spec->last_key = def.last_key;
  spec->key_step = def.key_step;
  spec->acl_categories = def.acl;
  spec->group = def.group;
  spec->since = def.since;
  spec->summary = def.summary;
  spec->syntax = def.syntax;
  spec->complexity = def.complexity;
  spec->handler = def.handler;
  spec->key_finder = def.key_finder;
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

const CommandSpec* CommandLookupCache::Find(const CommandTable& table, std::string_view name) {
  if (filled_for_ != table.spec_count()) {
    for (Slot& slot : slots_) slot = Slot{};
    filled_for_ = table.spec_count();
  }
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

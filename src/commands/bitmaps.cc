// Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO.
//
// Bitmaps are string values; the bit arithmetic lives in types/bitmap. Writes edit the string in
// place (so the key keeps its TTL), growing it with zero bytes to reach the highest bit touched.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "server/client.h"
#include "server/command_context.h"
#include "types/bitmap.h"

namespace vireo {
namespace {

constexpr std::string_view kBadOffset = "ERR bit offset is not an integer or out of range";
constexpr std::string_view kBadBit = "ERR bit is not an integer or out of range";
constexpr std::string_view kBadFieldType =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "
    "i64 is.";

// The next argument as a bit offset: its byte must lie below proto-max-bulk-len; with
// `field_bits` (BITFIELD), "#n" means the n-th field of that width. Our master's commands (and
// the AOF's) are applied whatever our own limit says, as Redis does.
uint64_t ReadBitOffset(CommandContext& ctx, ArgParser& args, unsigned field_bits = 0) {
  const int64_t max_bytes =
      ctx.client.has(kClientMaster) ? -1 : static_cast<int64_t>(ctx.cfg().proto_max_bulk_len);
  return static_cast<uint64_t>(args.BitOffset(field_bits, max_bytes, kBadOffset));
}

// The string at key for a command that writes bits up to `max_bit`: created or zero-extended to
// reach it. *grown tells whether that changed the key. Replies WRONGTYPE and returns nullptr for
// a key of another type.
std::string* BitStringForWrite(CommandContext& ctx, std::string_view key, uint64_t max_bit,
                               bool* grown) {
  auto [entry, wrong_type] = LookupTyped(ctx, key, ValueType::kString);
  if (wrong_type) return nullptr;
  const size_t needed = static_cast<size_t>(max_bit >> 3) + 1;
  if (entry == nullptr) {
    entry = ctx.db.Add(key, Value::RawString(std::string(needed, '\0')));
    *grown = true;
    return entry->value.MutableString();
  }
  std::string* s = entry->value.MutableString();
  *grown = s->size() < needed;
  if (*grown) s->resize(needed, '\0');
  return s;
}

// The bytes of the string at key for reading, or nullopt after replying WRONGTYPE. A missing key
// reads as empty; *exists tells the two apart.
std::optional<std::string_view> ReadBits(CommandContext& ctx, std::string_view key,
                                         char (&scratch)[24], bool* exists) {
  DbEntry* entry = LookupRead(ctx, key);
  *exists = entry != nullptr;
  if (entry == nullptr) return std::string_view();
  if (!entry->value.is_string()) {
    ctx.reply.Error(errors::kWrongType);
    return std::nullopt;
  }
  return entry->value.StringView(scratch);
}

void SetbitCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const uint64_t offset = ReadBitOffset(ctx, args);
  const int64_t on = args.IntInRange(0, 1, kBadBit);
  if (!args.Check()) return;
  bool grown;
  std::string* s = BitStringForWrite(ctx, ctx.arg(1), offset, &grown);
  if (s == nullptr) return;
  const bool old = bitmap::GetBit(*s, offset);
  // Setting a bit to what it already is changes nothing: no event, nothing to propagate.
  if (grown || old != (on == 1)) {
    bitmap::SetBit(s->data(), offset, on == 1);
    KeyWritten(ctx, ctx.arg(1));
    Notify(ctx, kNotifyString, "setbit", ctx.arg(1));
  }
  ctx.reply.Integer(old ? 1 : 0);
}

void GetbitCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const uint64_t offset = ReadBitOffset(ctx, args);
  if (!args.Check()) return;
  char scratch[24];
  bool exists;
  auto bits = ReadBits(ctx, ctx.arg(1), scratch, &exists);
  if (bits) ctx.reply.Integer(bitmap::GetBit(*bits, offset) ? 1 : 0);
}

// ---------------------------------------------------------------------------------------------
// BITCOUNT and BITPOS ranges

// A [start, end] range as BITCOUNT and BITPOS take it: byte or bit indexes, negative ones
// counting from the end, clamped to the string. Resolved to bit positions.
struct BitRange {
  bool empty = false;
  uint64_t first = 0;
  uint64_t last = 0;
};

BitRange ResolveRange(int64_t start, int64_t end, bool in_bits, size_t length) {
  const int64_t total = static_cast<int64_t>(length) * (in_bits ? 8 : 1);
  if (start < 0) start = std::max<int64_t>(total + start, 0);
  if (end < 0) end = std::max<int64_t>(total + end, 0);
  if (end >= total) end = total - 1;
  BitRange range;
  if (start > end) {
    range.empty = true;
    return range;
  }
  range.first = static_cast<uint64_t>(start) * (in_bits ? 1 : 8);
  range.last = in_bits ? static_cast<uint64_t>(end) : static_cast<uint64_t>(end) * 8 + 7;
  return range;
}

// Reads the BYTE | BIT unit: whether it is BIT.
bool ReadInBits(ArgParser& args) { return args.Keyword({"BYTE", "BIT"}) == 1; }

void BitcountCommand(CommandContext& ctx) {
  // The key comes first, as in Redis 7.2: a missing key counts 0 whatever the other arguments.
  char scratch[24];
  bool exists;
  auto bits = ReadBits(ctx, ctx.arg(1), scratch, &exists);
  if (!bits) return;
  if (!exists) {
    ctx.reply.Integer(0);
    return;
  }
  if (ctx.argc() == 2) {
    ctx.reply.Integer(static_cast<int64_t>(bitmap::Popcount(*bits)));
    return;
  }
  ArgParser args(ctx, 2);
  args.ExpectRemaining(2, 3);
  const int64_t start = args.Int();
  const int64_t end = args.Int();
  if (!args.Check()) return;
  // Both negative and crossed is empty before the unit is even looked at.
  if (start < 0 && end < 0 && start > end) {
    ctx.reply.Integer(0);
    return;
  }
  const bool in_bits = args.HasNext() && ReadInBits(args);
  if (!args.Check()) return;
  const BitRange range = ResolveRange(start, end, in_bits, bits->size());
  ctx.reply.Integer(
      range.empty ? 0 : static_cast<int64_t>(bitmap::CountRange(*bits, range.first, range.last)));
}

void BitposCommand(CommandContext& ctx) {
  ArgParser bit_arg(ctx, 2);
  const int64_t bit = bit_arg.IntBetween(0, 1, "ERR The bit argument must be 1 or 0.");
  if (!bit_arg.Check()) return;
  char scratch[24];
  bool exists;
  auto bits = ReadBits(ctx, ctx.arg(1), scratch, &exists);
  if (!bits) return;
  // A missing key is an endless run of zeros.
  if (!exists) {
    ctx.reply.Integer(bit == 1 ? -1 : 0);
    return;
  }
  ArgParser args(ctx, 3);
  args.ExpectRemaining(0, 3);
  int64_t start = 0;
  int64_t end = -1;
  bool in_bits = false;
  const bool end_given = ctx.argc() >= 5;
  // The start, then the unit, then the end: the order Redis reports their errors in.
  if (args.HasNext()) start = args.Int();
  if (ctx.argc() == 6 && args.ok()) {
    args.Seek(5);
    in_bits = ReadInBits(args);
    args.Seek(4);
  }
  if (end_given) end = args.Int();
  if (!args.Check()) return;
  const BitRange range = ResolveRange(start, end, in_bits, bits->size());
  if (range.empty) {
    ctx.reply.Integer(-1);
    return;
  }
  const int64_t pos = bitmap::FindFirst(*bits, bit == 1, range.first, range.last);
  // Without an explicit end the string counts as zero-padded on the right: the first clear bit
  // is then just past the range.
  if (pos < 0 && bit == 0 && !end_given) {
    ctx.reply.Integer(static_cast<int64_t>(range.last + 1));
    return;
  }
  ctx.reply.Integer(pos);
}

// BITRANGEINTARRAY key start end [BYTE | BIT] [LIMIT count] [ZEROS] (Redis 8.12): the offsets of
// the set (or, with ZEROS, clear) bits in the range, ascending, at most `count` of them.
void BitrangeintarrayCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const int64_t start = args.Int();
  const int64_t end = args.Int();
  bool in_bits = false;
  bool zeros = false;
  uint64_t limit = 0;  // 0: every match
  while (args.HasNext()) {
    if (int unit = args.OneOf({"BYTE", "BIT"}); unit >= 0) {
      in_bits = unit == 1;
    } else if (args.OptionName("LIMIT")) {
      limit = static_cast<uint64_t>(args.NonNegative("ERR LIMIT can't be negative"));
    } else if (args.Flag("ZEROS")) {
      zeros = true;
    } else {
      args.SyntaxError();
    }
  }
  if (!args.Check()) return;
  char scratch[24];
  bool exists;
  auto bits = ReadBits(ctx, ctx.arg(1), scratch, &exists);
  if (!bits) return;
  const BitRange range = ResolveRange(start, end, in_bits, exists ? bits->size() : 0);
  if (!exists || range.empty || (start < 0 && end < 0 && start > end)) {
    ctx.reply.EmptyArray();
    return;
  }
  std::vector<int64_t> found;
  for (uint64_t from = range.first; from <= range.last;) {
    const int64_t pos = bitmap::FindFirst(*bits, !zeros, from, range.last);
    if (pos < 0) break;
    found.push_back(pos);
    if (limit != 0 && found.size() >= limit) break;
    from = static_cast<uint64_t>(pos) + 1;
  }
  ctx.reply.Array(found.size());
  for (int64_t pos : found) ctx.reply.Integer(pos);
}

// ---------------------------------------------------------------------------------------------
// BITOP

struct BitopName {
  std::string_view name;
  bitmap::Op op;
};

constexpr std::array<BitopName, 8> kBitops = {{{"AND", bitmap::Op::kAnd},
                                               {"OR", bitmap::Op::kOr},
                                               {"XOR", bitmap::Op::kXor},
                                               {"NOT", bitmap::Op::kNot},
                                               {"DIFF", bitmap::Op::kDiff},
                                               {"DIFF1", bitmap::Op::kDiff1},
                                               {"ANDOR", bitmap::Op::kAndOr},
                                               {"ONE", bitmap::Op::kOne}}};

void BitopCommand(CommandContext& ctx) {
  ArgParser args(ctx, 1);
  const BitopName* found = nullptr;
  for (const BitopName& candidate : kBitops) {
    if (args.Flag(candidate.name)) found = &candidate;
  }
  if (found == nullptr) args.SyntaxError();
  if (!args.Check()) return;
  const bitmap::Op op = found->op;
  const size_t num_sources = ctx.argc() - 3;
  if (op == bitmap::Op::kNot && num_sources != 1) {
    ctx.reply.Error("ERR BITOP NOT must be called with a single source key.");
    return;
  }
  if ((op == bitmap::Op::kDiff || op == bitmap::Op::kDiff1 || op == bitmap::Op::kAndOr) &&
      num_sources < 2) {
    ctx.reply.Error("ERR BITOP " + std::string(found->name) +
                    " must be called with at least two source keys.");
    return;
  }
  // Integer-encoded sources are formatted into their own scratch buffers.
  struct Scratch {
    char bytes[24];
  };
  std::vector<Scratch> scratch(num_sources);
  std::vector<std::string_view> sources(num_sources);
  for (size_t i = 0; i < num_sources; ++i) {
    bool exists;
    auto bits = ReadBits(ctx, ctx.arg(3 + i), scratch[i].bytes, &exists);
    if (!bits) return;
    sources[i] = *bits;
  }
  std::string result;
  bitmap::Combine(op, sources, &result);
  const std::string_view dest = ctx.arg(2);
  const auto length = static_cast<int64_t>(result.size());
  if (!result.empty()) {
    // The result replaces the destination whatever it held, TTL included.
    ctx.db.Set(dest, Value::RawString(std::move(result)));
    KeyWritten(ctx, dest);
    Notify(ctx, kNotifyString, "set", dest);
  } else if (ctx.db.Delete(dest)) {
    // All sources empty or missing: the destination is removed rather than set to "".
    KeyWritten(ctx, dest);
    Notify(ctx, kNotifyGeneric, "del", dest);
  }
  ctx.reply.Integer(length);
}

// ---------------------------------------------------------------------------------------------
// BITFIELD

enum class FieldOpKind : uint8_t { kGet, kSet, kIncrBy };

struct FieldOp {
  FieldOpKind kind;
  bitmap::FieldType type;
  bitmap::Overflow overflow;
  uint64_t offset;
  int64_t value;  // SET's value or INCRBY's increment
};

// Parses every subcommand before anything runs, so a bad one leaves the key untouched. Returns
// false after replying. *max_write_bit is the highest bit a SET or INCRBY touches; *writes tells
// whether there is any.
bool ParseFieldOps(CommandContext& ctx, std::vector<FieldOp>* ops, uint64_t* max_write_bit,
                   bool* writes) {
  static constexpr bitmap::Overflow kOverflows[] = {bitmap::Overflow::kWrap, bitmap::Overflow::kSat,
                                                    bitmap::Overflow::kFail};
  bitmap::Overflow overflow = bitmap::Overflow::kWrap;
  *writes = false;
  *max_write_bit = 0;
  ArgParser args(ctx, 2);
  while (args.HasNext()) {
    FieldOp op{};
    if (args.OptionName("GET", 2)) {
      op.kind = FieldOpKind::kGet;
    } else if (args.OptionName("SET", 3)) {
      op.kind = FieldOpKind::kSet;
    } else if (args.OptionName("INCRBY", 3)) {
      op.kind = FieldOpKind::kIncrBy;
    } else if (args.OptionName("OVERFLOW")) {
      int mode = args.Keyword({"WRAP", "SAT", "FAIL"}, "ERR Invalid OVERFLOW type specified");
      if (mode >= 0) overflow = kOverflows[mode];
      continue;
    } else {
      args.SyntaxError();
      break;
    }
    if (!bitmap::ParseFieldType(args.Next(), &op.type)) {
      args.Fail(kBadFieldType);
      break;
    }
    op.offset = ReadBitOffset(ctx, args, op.type.bits);
    op.overflow = overflow;
    if (op.kind != FieldOpKind::kGet) {
      op.value = args.Int();
      *writes = true;
      *max_write_bit = std::max(*max_write_bit, op.offset + op.type.bits - 1);
    }
    if (args.ok()) ops->push_back(op);
  }
  return args.Check();
}

// Runs one SET or INCRBY on the string; replies with its result, or null when OVERFLOW FAIL
// refused it (then returns false). *changed tells whether the field's bits changed.
bool RunFieldWrite(CommandContext& ctx, const FieldOp& op, std::string* s, bool* changed) {
  const unsigned bits = op.type.bits;
  const bool is_set = op.kind == FieldOpKind::kSet;
  uint64_t old_bits;
  uint64_t new_bits;
  int64_t reply;
  if (op.type.is_signed) {
    const int64_t old = bitmap::GetSigned(*s, op.offset, bits);
    int64_t stored;
    if (!bitmap::AddSigned(is_set ? op.value : old, is_set ? 0 : op.value, bits, op.overflow,
                           &stored)) {
      ctx.reply.Null();
      return false;
    }
    reply = is_set ? old : stored;
    old_bits = static_cast<uint64_t>(old);
    new_bits = static_cast<uint64_t>(stored);
  } else {
    const uint64_t old = bitmap::GetUnsigned(*s, op.offset, bits);
    uint64_t stored;
    if (!bitmap::AddUnsigned(is_set ? static_cast<uint64_t>(op.value) : old, is_set ? 0 : op.value,
                             bits, op.overflow, &stored)) {
      ctx.reply.Null();
      return false;
    }
    reply = static_cast<int64_t>(is_set ? old : stored);
    old_bits = old;
    new_bits = stored;
  }
  ctx.reply.Integer(reply);
  bitmap::SetField(s->data(), op.offset, bits, new_bits);
  *changed = old_bits != new_bits;
  return true;
}

void ReplyFieldGet(CommandContext& ctx, const FieldOp& op, std::string_view bits) {
  if (op.type.is_signed) {
    ctx.reply.Integer(bitmap::GetSigned(bits, op.offset, op.type.bits));
  } else {
    ctx.reply.Integer(static_cast<int64_t>(bitmap::GetUnsigned(bits, op.offset, op.type.bits)));
  }
}

void BitfieldGeneric(CommandContext& ctx, bool read_only_command) {
  std::vector<FieldOp> ops;
  uint64_t max_write_bit;
  bool writes;
  if (!ParseFieldOps(ctx, &ops, &max_write_bit, &writes)) return;
  const std::string_view key = ctx.arg(1);
  if (!writes) {
    // Only GETs: a read that never creates the key.
    char scratch[24];
    bool exists;
    auto bits = ReadBits(ctx, key, scratch, &exists);
    if (!bits) return;
    ctx.reply.Array(ops.size());
    for (const FieldOp& op : ops) ReplyFieldGet(ctx, op, *bits);
    return;
  }
  if (read_only_command) {
    ctx.reply.Error("ERR BITFIELD_RO only supports the GET subcommand");
    return;
  }
  bool grown;
  std::string* s = BitStringForWrite(ctx, key, max_write_bit, &grown);
  if (s == nullptr) return;
  ctx.reply.Array(ops.size());
  uint64_t changes = 0;
  for (const FieldOp& op : ops) {
    if (op.kind == FieldOpKind::kGet) {
      ReplyFieldGet(ctx, op, *s);
    } else {
      // Like Redis, a write that only grew the string counts as a change too.
      bool changed;
      if (RunFieldWrite(ctx, op, s, &changed) && (grown || changed)) ++changes;
    }
  }
  if (changes > 0) {
    KeyWritten(ctx, key, changes);
    Notify(ctx, kNotifyString, "setbit", key);
  }
}

// BITFIELD with only GET (and OVERFLOW) operations reads its key, as Redis's key-flags
// procedure says (ACL: a read-only user may run it); anything else, a malformed call included,
// may write it.
uint32_t BitfieldKeyFlags(std::span<const std::string_view> argv, const KeyRef&) {
  ArgParser args(argv, nullptr, 2);
  while (args.HasNext()) {
    if (args.OptionName("GET", 2)) {
      args.Take(2);
    } else if (args.OptionName("OVERFLOW")) {
      args.Next();
    } else {
      return kKeyRW | kKeyAccess | kKeyUpdate;
    }
  }
  return kKeyRO | kKeyAccess;
}

void BitfieldCommand(CommandContext& ctx) { BitfieldGeneric(ctx, false); }
void BitfieldRoCommand(CommandContext& ctx) { BitfieldGeneric(ctx, true); }

}  // namespace

void RegisterBitmapCommands(CommandTable& table) {
  constexpr uint64_t kWriteOom = kCmdWrite | kCmdDenyOom;
  const auto read_key = Keys(KeyAt(1, kKeyRO | kKeyAccess));
  table.Add({"setbit", 4, kWriteOom, Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)), kAclBitmap,
             "bitmap", "2.2.0",
             "Sets or clears the bit at offset of the string value. Creates the key if it "
             "doesn't exist.",
             "key offset value:integer", SetbitCommand, "O(1)"});
  table.Add({"getbit", 3, kCmdReadonly | kCmdFast, read_key, kAclBitmap, "bitmap", "2.2.0",
             "Returns a bit value by offset.", "key offset", GetbitCommand, "O(1)"});
  table.Add({"bitcount", -2, kCmdReadonly, read_key, kAclBitmap, "bitmap", "2.6.0",
             "Counts the number of set bits (population counting) in a string.",
             "key [range=<start end [unit=<BYTE | BIT>]>]", BitcountCommand, "O(N)"});
  table.Add({"bitpos", -3, kCmdReadonly, read_key, kAclBitmap, "bitmap", "2.8.7",
             "Finds the first set (1) or clear (0) bit in a string.",
             "key bit [range=<start [end-unit-block=<end [unit=<BYTE | BIT>]>]>]", BitposCommand,
             "O(N)"});
  table.Add({"bitrangeintarray", -4, kCmdReadonly, read_key, kAclBitmap, "bitmap", "8.12.0",
             "Returns the offsets of the set or clear bits in a range of a bitmap.",
             "key start end [unit=<BYTE | BIT>] [LIMIT count:integer] [ZEROS]",
             BitrangeintarrayCommand,
             "O(N + M) where N is the number of bytes in the range for a string, or the number of "
             "bitmap containers in the range (and of runs of set bits in it, with ZEROS), and M is "
             "the number of returned integers. With LIMIT, the scan stops after count matches, or "
             "after completing their last byte in BYTE units."});
  table.Add({"bitop", -4, kWriteOom,
             Keys(KeyAt(2, kKeyOW | kKeyUpdate), KeysAt(3, -1, 1, kKeyRO | kKeyAccess)), kAclBitmap,
             "bitmap", "2.6.0",
             "Performs bitwise operations on multiple strings, and stores the result.",
             "operation=<AND | OR | XOR | NOT | DIFF | DIFF1 | ANDOR | ONE> destkey "
             "key ...",
             BitopCommand, "O(N)"});
  table.Add({"bitfield", -2, kWriteOom,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate | kKeyVariableFlags,
                        "This command allows both access and modification of the key")),
             kAclBitmap, "bitmap", "3.2.0",
             "Performs arbitrary bitfield integer operations on strings.",
             "key [operation=<get-block=<GET encoding offset> | write=<[OVERFLOW "
             "overflow-block=<WRAP | SAT | FAIL>] write-operation=<set-block=<SET "
             "encoding offset value:integer> | incrby-block=<INCRBY encoding offset "
             "increment:integer>>>> ...]",
             BitfieldCommand, "O(1) for each subcommand specified", nullptr, BitfieldKeyFlags});
  table.Add({"bitfield_ro", -2, kCmdReadonly | kCmdFast, read_key, kAclBitmap, "bitmap", "6.0.0",
             "Performs arbitrary read-only bitfield integer operations on strings.",
             "key [get-block=<GET encoding offset> [get-block=<GET encoding offset> "
             "...]]",
             BitfieldRoCommand, "O(1) for each subcommand specified"});
}

}  // namespace vireo

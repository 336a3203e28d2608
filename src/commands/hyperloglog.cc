// HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST. The values are strings
// in Redis's HLL format (src/types/hyperloglog.h), so they travel through DUMP/RESTORE, RDB,
// AOF and replication like any string.
#include "types/hyperloglog.h"

#include <random>
#include <string>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/process_info.h"

namespace vireo {
namespace {

size_t SparseMaxBytes(CommandContext& ctx) {
  return static_cast<size_t>(ctx.cfg().hll_sparse_max_bytes);
}

// The HLL bytes of `value`, or nullopt after replying Redis's error: WRONGTYPE for a non-string,
// the HyperLogLog-flavoured WRONGTYPE for a string that is not an HLL.
std::optional<std::string_view> HllBytes(CommandContext& ctx, const Value& value,
                                         char (&scratch)[24]) {
  if (!value.is_string()) {
    ctx.reply.Error(errors::kWrongType);
    return std::nullopt;
  }
  // An integer-encoded string is too short for a header anyway.
  std::string_view bytes = value.is_int() ? std::string_view() : value.StringView(scratch);
  if (!hll::HasValidHeader(bytes)) {
    ctx.reply.Error(hll::kNotHllError);
    return std::nullopt;
  }
  return bytes;
}

bool CheckHll(CommandContext& ctx, const Value& value) {
  char scratch[24];
  return HllBytes(ctx, value, scratch).has_value();
}

// Max-merges the registers of every key in argv[from..] into `max` (kRegisters bytes). Missing
// keys count as empty HLLs. Returns whether any input was dense; nullopt after an error reply.
std::optional<bool> MergeKeys(CommandContext& ctx, size_t from, uint8_t* max) {
  bool any_dense = false;
  for (size_t j = from; j < ctx.argc(); ++j) {
    DbEntry* entry = LookupRead(ctx, ctx.arg(j));
    if (entry == nullptr) continue;
    char scratch[24];
    std::optional<std::string_view> bytes = HllBytes(ctx, entry->value, scratch);
    if (!bytes) return std::nullopt;
    if (hll::Encoding(*bytes) == hll::kDense) any_dense = true;
    if (!hll::MergeInto(*bytes, max)) {
      ctx.reply.Error(hll::kCorruptError);
      return std::nullopt;
    }
  }
  return any_dense;
}

void PfaddCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  DbEntry* entry = ctx.db.Find(key);
  uint64_t updated = 0;
  if (entry == nullptr) {
    entry = ctx.db.Add(key, Value::RawString(hll::NewSparse()));
    updated = 1;  // creating the key is a change even with no elements
  } else if (!CheckHll(ctx, entry->value)) {
    return;
  }
  std::string* hll = entry->value.MutableString();
  const size_t sparse_max = SparseMaxBytes(ctx);
  for (size_t j = 2; j < ctx.argc(); ++j) {
    const int changed = hll::Add(hll, ctx.arg(j), sparse_max);
    if (changed < 0) {
      ctx.reply.Error(hll::kCorruptError);
      return;
    }
    updated += static_cast<uint64_t>(changed);
  }
  if (updated != 0) {
    hll::InvalidateCache(hll);
    KeyWritten(ctx, key, updated);
    Notify(ctx, kNotifyString, "pfadd", key);
  }
  ctx.reply.Integer(updated != 0 ? 1 : 0);
}

void PfcountCommand(CommandContext& ctx) {
  if (ctx.argc() > 2) {
    // The union of several HLLs, computed without writing anything.
    uint8_t max[hll::kRegisters] = {};
    if (!MergeKeys(ctx, 1, max)) return;
    ctx.reply.Integer(static_cast<int64_t>(hll::EstimateRegisters(max)));
    return;
  }
  std::string_view key = ctx.arg(1);
  DbEntry* entry = LookupRead(ctx, key);
  if (entry == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  char scratch[24];
  std::optional<std::string_view> bytes = HllBytes(ctx, entry->value, scratch);
  if (!bytes) return;
  if (std::optional<uint64_t> cached = hll::CachedCount(*bytes)) {
    ctx.reply.Integer(static_cast<int64_t>(*cached));
    return;
  }
  std::optional<uint64_t> count = hll::Estimate(*bytes);
  if (!count) {
    ctx.reply.Error(hll::kCorruptError);
    return;
  }
  // Caching the estimate changes the value, so like Redis it counts as a write: WATCH sees it
  // and the command propagates (replicas and the AOF cache the same number).
  hll::StoreCachedCount(entry->value.MutableString(), *count);
  KeyWritten(ctx, key);
  ctx.reply.Integer(static_cast<int64_t>(*count));
}

void PfmergeCommand(CommandContext& ctx) {
  uint8_t max[hll::kRegisters] = {};
  std::optional<bool> any_dense = MergeKeys(ctx, 1, max);
  if (!any_dense) return;

  std::string_view dest = ctx.arg(1);
  DbEntry* entry = ctx.db.Find(dest);  // already checked as an HLL by MergeKeys if it exists
  if (entry == nullptr) entry = ctx.db.Add(dest, Value::RawString(hll::NewSparse()));
  std::string* hll = entry->value.MutableString();
  // As Redis 7.2: the target turns dense when any input was; otherwise the registers go in one
  // by one and the sparse form promotes itself if it grows too large.
  if (*any_dense && !hll::ToDense(hll)) {
    ctx.reply.Error(hll::kCorruptError);
    return;
  }
  const size_t sparse_max = SparseMaxBytes(ctx);
  for (uint32_t j = 0; j < hll::kRegisters; ++j) {
    if (max[j] != 0) hll::SetRegister(hll, j, max[j], sparse_max);
  }
  hll::InvalidateCache(hll);
  KeyWritten(ctx, dest);
  // A merge is a mass add: Redis notifies it as "pfadd".
  Notify(ctx, kNotifyString, "pfadd", dest);
  ctx.reply.Ok();
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key
void PfdebugCommand(CommandContext& ctx) {
  enum Sub { kGetreg, kDecode, kEncoding, kTodense };
  ArgParser args(ctx, 1);
  // An unknown name is reported only after the key checks, as Redis does.
  const int sub = args.OneOf({"GETREG", "DECODE", "ENCODING", "TODENSE"});
  DbEntry* entry = ctx.db.Find(ctx.arg(2));
  if (entry == nullptr) {
    ctx.reply.Error("ERR The specified key does not exist");
    return;
  }
  char scratch[24];
  std::optional<std::string_view> bytes = HllBytes(ctx, entry->value, scratch);
  if (!bytes) return;
  const bool sparse = hll::Encoding(*bytes) == hll::kSparse;

  // Converts to dense in place; the changed encoding is propagated so replicas convert too.
  auto to_dense = [&]() {
    if (!hll::ToDense(entry->value.MutableString())) {
      ctx.reply.Error(hll::kCorruptError);
      return false;
    }
    ctx.process().AddDirty(1);
    return true;
  };

  if (sub == kGetreg) {
    if (sparse && !to_dense()) return;
    uint8_t registers[hll::kRegisters];
    hll::Unpack(entry->value.StringView(scratch), registers);
    ctx.reply.Array(hll::kRegisters);
    for (uint8_t r : registers) ctx.reply.Integer(r);
  } else if (sub == kDecode) {
    if (!sparse) {
      ctx.reply.Error("ERR HLL encoding is not sparse");
      return;
    }
    ctx.reply.Bulk(hll::DecodeSparse(*bytes));
  } else if (sub == kEncoding) {
    ctx.reply.SimpleString(sparse ? "sparse" : "dense");
  } else if (sub == kTodense) {
    if (sparse && !to_dense()) return;
    ctx.reply.Integer(sparse ? 1 : 0);
  } else {
    ctx.reply.Error("ERR Unknown PFDEBUG subcommand '" + std::string(ctx.arg(1)) + "'");
  }
}

void PfselftestCommand(CommandContext& ctx) {
  std::random_device entropy;
  const uint64_t seed = (uint64_t{entropy()} << 32) | entropy();
  std::string failure = hll::SelfTest(seed, SparseMaxBytes(ctx));
  if (failure.empty()) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Error(failure);
  }
}

}  // namespace

void RegisterHyperLogLogCommands(CommandTable& table) {
  table.Add({"pfadd", -2, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyInsert)),
             kAclHyperLogLog, "hyperloglog", "2.8.9",
             "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.",
             "key [element ...]", PfaddCommand, "O(1) to add every element."});
  table.Add({"pfcount", -2, kCmdReadonly | kCmdMayReplicate,
             Keys(KeysAt(1, -1, 1, kKeyRW | kKeyAccess, 0,
                         "RW because it may change the internal representation of the key, and "
                         "propagate to replicas")),
             kAclHyperLogLog, "hyperloglog", "2.8.9",
             "Returns the approximated cardinality of the set(s) observed by the HyperLogLog "
             "key(s).",
             "key ...", PfcountCommand,
             "O(1) with a very small average constant time when called with a single key. O(N) "
             "with N being the number of keys, and much bigger constant times, when called with "
             "multiple keys."});
  table.Add(
      {"pfmerge", -2, kCmdWrite | kCmdDenyOom,
       Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyInsert), KeysAt(2, -1, 1, kKeyRO | kKeyAccess)),
       kAclHyperLogLog, "hyperloglog", "2.8.9",
       "Merges one or more HyperLogLog values into a single key.", "destkey [sourcekey ...]",
       PfmergeCommand, "O(N) to merge N HyperLogLogs, but with high constant times."});
  table.Add({"pfdebug", 3, kCmdWrite | kCmdDenyOom | kCmdAdmin, Keys(KeyAt(2, kKeyRW | kKeyAccess)),
             kAclHyperLogLog, "hyperloglog", "2.8.9",
             "Internal commands for debugging HyperLogLog values.", "subcommand key",
             PfdebugCommand, "N/A"});
  table.Add({"pfselftest", 1, kCmdAdmin, Keys(), kAclHyperLogLog, "hyperloglog", "2.8.9",
             "An internal command for testing HyperLogLog values.", "", PfselftestCommand, "N/A"});
}

}  // namespace vireo

// DEBUG: the test-suite tools Redis exposes behind enable-debug-command (the dispatcher does
// the gating: DEBUG is a protected command).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cluster/bus.h"
#include "cluster/cluster_state.h"
#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "core/propagator.h"
#include "persistence/aof.h"
#include "persistence/rdb.h"
#include "persistence/snapshot.h"
#include "replication/replication.h"
#include "scripting/sha1.h"
#include "server/client.h"
#include "server/client_eviction.h"
#include "server/client_registry.h"
#include "server/command_context.h"
#include "server/debug_settings.h"
#include "server/pubsub.h"
#include "server/tracking.h"
#include "types/hash_object.h"
#include "types/packed_list.h"
#include "types/set_object.h"
#include "types/zset.h"
#include "util/allocator.h"
#include "util/clock.h"
#include "util/proc_title.h"
#include "util/strings.h"

namespace vireo {
namespace {

// ---------------------------------------------------------------------------------------------
// DIGEST: a 160-bit summary of the dataset that depends only on its logical content (not on
// encodings, hash-table layouts or insertion order of unordered types), so two servers holding
// the same data agree, and so does one server before and after DEBUG RELOAD.

using Digest = std::array<uint8_t, 20>;

// Chains `data` into `d`: order-dependent (d = SHA1(d || len || data)). The length prefix keeps
// ("ab","c") and ("a","bc") apart.
void Mix(Digest& d, std::string_view data) {
  std::string buf(reinterpret_cast<const char*>(d.data()), d.size());
  buf += std::to_string(data.size());
  buf.push_back(':');
  buf.append(data);
  d = Sha1(buf);
}

// Folds `data`'s own digest into `d`: order-independent (XOR), for set members and hash fields.
void Fold(Digest& d, const Digest& item) {
  for (size_t i = 0; i < d.size(); ++i) d[i] ^= item[i];
}

Digest PairDigest(std::string_view a, std::string_view b) {
  Digest d{};
  Mix(d, a);
  Mix(d, b);
  return d;
}

std::string Hex(const Digest& d) {
  std::string out;
  out.reserve(40);
  for (uint8_t b : d) out += fmt::format("{:02x}", b);
  return out;
}

// The digest of one value with its expire time (-1: none); the key's name is not part of it, so
// DEBUG DIGEST-VALUE of a copy equals that of the original.
Digest ValueDigest(const Value& v, int64_t expire_ms) {
  Digest d{};
  Mix(d, ValueTypeName(v.type()));
  switch (v.type()) {
    case ValueType::kString: {
      char scratch[24];
      Mix(d, v.StringView(scratch));
      break;
    }
    case ValueType::kList: {
      const PackedList& list = *v.As<PackedList>();
      list.ForRange(0, static_cast<int64_t>(list.size()) - 1, [&](std::string_view e) {
        Mix(d, e);
        return true;
      });
      break;
    }
    case ValueType::kSet: {
      Digest acc{};
      v.As<SetObject>()->ForEach([&](std::string_view m) { Fold(acc, Sha1(m)); });
      Mix(d, std::string_view(reinterpret_cast<const char*>(acc.data()), acc.size()));
      break;
    }
    case ValueType::kHash: {
      Digest acc{};
      v.As<HashObject>()->ForEach(
          [&](std::string_view f, std::string_view val) { Fold(acc, PairDigest(f, val)); });
      Mix(d, std::string_view(reinterpret_cast<const char*>(acc.data()), acc.size()));
      break;
    }
    case ValueType::kZSet:
      // Members come in score order, so chaining is already layout-independent.
      v.As<ZSet>()->ForEach([&](std::string_view m, double score) {
        Mix(d, m);
        Mix(d, fmt::format("{:.17g}", score));
      });
      break;
    case ValueType::kStream:
      // A stream's serialization has one form (entries by ID, groups and consumers by name).
      Mix(d, RdbDumpValue(v, false));
      break;
  }
  if (expire_ms >= 0) Mix(d, "expire:" + std::to_string(expire_ms));
  return d;
}

Digest DatasetDigest(const CommandContext& ctx) {
  Digest total{};
  for (int i = 0; i < ctx.db_count(); ++i) {
    Database& db = ctx.database(i);
    if (db.size() == 0) continue;
    Digest keys{};
    db.ForEach([&](DbEntry* e) {
      Digest kd = ValueDigest(e->value, db.GetExpire(e));
      Mix(kd, e->key.view());
      Fold(keys, kd);
    });
    Digest dbd{};
    Mix(dbd, std::to_string(i));
    Mix(dbd, std::string_view(reinterpret_cast<const char*>(keys.data()), keys.size()));
    Fold(total, dbd);
  }
  return total;
}

void DebugDigest(CommandContext& ctx) {
  // An empty dataset digests to zeros, as in Redis.
  ctx.reply.SimpleString(Hex(DatasetDigest(ctx)));
}

void DebugDigestValue(CommandContext& ctx) {
  ctx.reply.Array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    // Peek: logically expired keys still have a value to digest.
    DbEntry* e = ctx.db.Peek(ctx.arg(i));
    ctx.reply.SimpleString(
        Hex(e == nullptr ? Digest{} : ValueDigest(e->value, ctx.db.GetExpire(e))));
  }
}

// ---------------------------------------------------------------------------------------------
// SLEEP, PROTOCOL, OBJECT

void DebugSleep(CommandContext& ctx) {
  // Like Redis: strtod's reading of the argument, so "abc" sleeps 0 seconds; the whole server
  // stops meanwhile, which is the point (tests use it to simulate a busy server).
  std::string text(ctx.arg(2));
  double seconds = std::strtod(text.c_str(), nullptr);
  auto micros = static_cast<int64_t>(seconds * 1000000);
  if (micros > 0) {
    timespec ts{static_cast<time_t>(micros / 1000000), static_cast<long>(micros % 1000000) * 1000};
    nanosleep(&ts, nullptr);
  }
  ctx.reply.Ok();
}

void DebugProtocol(CommandContext& ctx) {
  ReplyBuilder& r = ctx.reply;
  std::string_view type = ctx.arg(2);
  if (IsArg(type, "STRING")) {
    r.Bulk("Hello World");
  } else if (IsArg(type, "INTEGER")) {
    r.Integer(12345);
  } else if (IsArg(type, "DOUBLE")) {
    r.Double(3.141);
  } else if (IsArg(type, "BIGNUM")) {
    r.BigNumber("1234567999999999999999999999999999999");
  } else if (IsArg(type, "NULL")) {
    r.Null();
  } else if (IsArg(type, "ARRAY") || IsArg(type, "SET")) {
    if (IsArg(type, "ARRAY")) {
      r.Array(3);
    } else {
      r.Set(3);
    }
    for (int i = 0; i < 3; ++i) r.Integer(i);
  } else if (IsArg(type, "MAP")) {
    r.Map(3);
    for (int i = 0; i < 3; ++i) {
      r.Integer(i);
      r.Bool(i == 1);
    }
  } else if (IsArg(type, "ATTRIB")) {
    if (ctx.client.resp() >= 3) {
      r.Raw("|1\r\n");
      r.Bulk("key-popularity");
      r.Array(2);
      r.Bulk("key:123");
      r.Integer(90);
    }
    // An attribute only decorates a reply, so a real one follows.
    r.Bulk("Some real reply following the attribute");
  } else if (IsArg(type, "PUSH")) {
    if (ctx.client.resp() < 3) {
      r.Error("ERR RESP2 is not supported by this command");
      return;
    }
    r.Push(2);
    r.Bulk("server-cpu-usage");
    r.Integer(42);
    // Push data is out of band; a normal reply lets a client waiting for one carry on.
    r.Bulk("Some real reply following the push reply");
  } else if (IsArg(type, "TRUE") || IsArg(type, "FALSE")) {
    r.Bool(IsArg(type, "TRUE"));
  } else if (IsArg(type, "VERBATIM")) {
    r.Verbatim("This is a verbatim\nstring");
  } else {
    r.Error(
        "ERR Wrong protocol type name. Please use one of the following: "
        "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
  }
}

// The entry of the key argv[2], looked up without expiring or touching it; nullptr after
// replying "no such key".
DbEntry* PeekOrReply(CommandContext& ctx) {
  DbEntry* entry = ctx.db.Peek(ctx.arg(2));
  if (entry == nullptr) ctx.reply.Error(errors::kNoSuchKey);
  return entry;
}

// DEBUG OBJECT <key>: Redis's one-line status of low-level details. The key is looked up
// without expiring or touching it. lru is the raw 24-bit access clock (an LFU clock under an
// LFU policy, as in Redis); lru_seconds_idle always reads it as an LRU clock.
void DebugObject(CommandContext& ctx) {
  DbEntry* entry = PeekOrReply(ctx);
  if (entry == nullptr) return;
  const Value& v = entry->value;
  std::string extra;
  if (v.type() == ValueType::kList && v.EncodingName() == std::string_view("quicklist")) {
    const PackedList& ql = *v.As<PackedList>();
    const size_t nodes = ql.node_count();
    extra = fmt::format(
        " ql_nodes:{} ql_avg_node:{:.2f} ql_listpack_max:{} ql_compressed:{} "
        "ql_uncompressed_size:{}",
        nodes, static_cast<double>(ql.size()) / static_cast<double>(nodes), ql.max_listpack_size(),
        ql.compress_depth() != 0 ? 1 : 0, ql.ListpackBytes());
  }
  const int refcount = IsSharedInteger(ctx.cfg(), v) ? INT_MAX : 1;
  const uint32_t clock = v.access_clock();
  ctx.reply.SimpleString(fmt::format(
      "Value at:{} refcount:{} encoding:{} serializedlength:{} lru:{} lru_seconds_idle:{}{}",
      static_cast<const void*>(&v), refcount, v.EncodingName(),
      RdbSerializedLength(v, ctx.cfg().rdbcompression), clock,
      LruIdleMs(clock, ctx.db.now_ms()) / 1000, extra));
}

// DEBUG LISTPACK / QUICKLIST <key>: Redis dumps the structure to stdout; vireo logs a summary.
void DebugStructure(CommandContext& ctx, bool quicklist) {
  DbEntry* entry = LookupRead(ctx, ctx.db, ctx.arg(2), false);
  if (entry == nullptr) {
    ctx.reply.Error(errors::kNoSuchKey);
    return;
  }
  std::string_view encoding = entry->value.EncodingName();
  if (quicklist ? encoding != "quicklist" : encoding != "listpack") {
    ctx.reply.Error(quicklist ? "ERR Not a quicklist encoded object."
                              : "ERR Not a listpack encoded object.");
    return;
  }
  spdlog::info("DEBUG {}: key '{}' encoding {}", quicklist ? "QUICKLIST" : "LISTPACK", ctx.arg(2),
               encoding);
  ctx.reply.SimpleString(quicklist ? "Quicklist structure printed on stdout"
                                   : "Listpack structure printed on stdout");
}

// ---------------------------------------------------------------------------------------------
// RELOAD, LOADAOF, POPULATE

void DebugReload(CommandContext& ctx) {
  RdbReloadOptions opts;
  ArgParser args(ctx, 2);
  while (args.HasNext()) {
    switch (args.Keyword({"MERGE", "NOFLUSH", "NOSAVE"},
                         "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")) {
      case 0:
        opts.merge = true;
        break;
      case 1:
        opts.flush = false;
        break;
      case 2:
        opts.save = false;
        break;
    }
  }
  if (!args.Check()) return;
  // Save, empty every database, load the dump again (src/persistence/snapshot.h).
  if (std::string err = RdbDebugReload(ctx.persistence(), opts); !err.empty()) {
    ctx.reply.Error(err);
    return;
  }
  spdlog::info("DB reloaded by DEBUG RELOAD");
  ctx.reply.Ok();
}

void DebugLoadAof(CommandContext& ctx) {
  if (std::string err = ctx.aof().DebugReload(); !err.empty()) {
    spdlog::warn("DEBUG LOADAOF: {}", err);
    ctx.reply.Error("ERR Error trying to load the AOF files, check server logs.");
    return;
  }
  spdlog::info("Append Only File loaded by DEBUG LOADAOF");
  ctx.reply.Ok();
}

// DEBUG POPULATE <count> [prefix] [size]: keys prefix:0..count-1 holding "value:<i>" (cut or
// zero-padded to `size` bytes when given); existing keys are left alone.
void DebugPopulate(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  int64_t count = args.NonNegative();
  std::string prefix = ctx.argc() >= 4 ? std::string(ctx.arg(3)) : "key";
  int64_t size = 0;
  if (ctx.argc() == 5) {
    args.Seek(4);
    size = args.NonNegative();
  }
  if (!args.Check()) return;
  for (int64_t i = 0; i < count; ++i) {
    std::string key = fmt::format("{}:{}", prefix, i);
    if (ctx.db.Peek(key) != nullptr) continue;
    std::string value = fmt::format("value:{}", i);
    if (size > 0) value.resize(static_cast<size_t>(size), '\0');
    ctx.db.Add(key, size > 0 ? Value::RawString(std::move(value)) : Value::String(value));
    // Not a change to replicate, log or save for (Redis leaves the dirty counter alone): a
    // test's replicas and restarted servers must not get these keys.
    KeyWritten(ctx, key, 0);
  }
  ctx.reply.Ok();
}

// ---------------------------------------------------------------------------------------------
// Settings the test suite flips

// atoi, as Redis: anything that doesn't read as a number is 0.
int AtoiArg(std::string_view arg) { return std::atoi(std::string(arg).c_str()); }

void DebugQuicklistPackedThreshold(CommandContext& ctx) {
  // Redis's limit for a "plain" (single huge element) node. vireo has no plain nodes, so the
  // value is only validated.
  constexpr std::string_view kBad =
      "ERR argument must be a memory value bigger than 1 and smaller than 4gb";
  ArgParser args(ctx, 2);
  const int64_t bytes = args.Parsed<int64_t>(ParseMemory, kBad);
  // Redis takes 0 (its default) up to 4 GB less 1 MB, whatever the error text says.
  if (args.ok() && bytes > (int64_t{1} << 32) - (int64_t{1} << 20)) args.Fail(kBad);
  if (!args.Check()) return;
  ctx.reply.Ok();
}

void DebugReplyBuffer(CommandContext& ctx) {
  DebugSettings& s = ctx.debug_settings();
  std::string_view what = ctx.arg(2);
  std::string_view value = ctx.arg(3);
  if (IsArg(what, "PEAK-RESET-TIME")) {
    if (IsArg(value, "NEVER")) {
      s.reply_buffer_peak_reset_ms = -1;
    } else if (IsArg(value, "RESET")) {
      s.reply_buffer_peak_reset_ms = DebugSettings{}.reply_buffer_peak_reset_ms;
    } else {
      ArgParser args(ctx, 3);
      int64_t ms = args.Int();
      if (!args.Check()) return;
      s.reply_buffer_peak_reset_ms = ms;
    }
  } else if (IsArg(what, "RESIZING")) {
    s.reply_buffer_resizing = AtoiArg(value) != 0;
  } else {
    ctx.reply.Error(
        fmt::format("ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
                    ctx.arg(1).substr(0, 128)));
    return;
  }
  ctx.reply.Ok();
}

// Redis's dictGetStats text for one bucket array: its size and element count, and with `full`
// the chain figures and the distribution of chain lengths.
std::string FormatTableStats(int index, const HashTableStats& st, bool full) {
  std::string out = fmt::format("Hash table {} stats ({}):\n", index,
                                index == 0 ? "main hash table" : "rehashing target");
  if (st.elements == 0) return out + "No stats available for empty dictionaries\n";
  out += fmt::format(" table size: {}\n number of elements: {}\n", st.table_size, st.elements);
  if (!full) return out;
  const auto slots = static_cast<float>(st.slots);
  out += fmt::format(
      " different slots: {}\n max chain length: {}\n avg chain length (counted): {:.2f}\n avg "
      "chain length (computed): {:.2f}\n Chain length distribution:\n",
      st.slots, st.max_chain, static_cast<float>(st.total_chain) / slots,
      static_cast<float>(st.elements) / slots);
  // The last counter gathers every longer chain; Redis leaves it out of the listing.
  for (size_t len = 0; len + 1 < HashTableStats::kChainBuckets; ++len) {
    if (st.chains[len] == 0) continue;
    out += fmt::format(
        "   {}: {} ({:.2f}%)\n", len, st.chains[len],
        static_cast<float>(st.chains[len]) / static_cast<float>(st.table_size) * 100.0f);
  }
  return out;
}

// Table 0, and table 1 while a resize is running, as Redis's dictGetStats lists a dict.
template <typename StatsOf>
std::string FormatTable(StatsOf&& stats_of, bool rehashing, bool full) {
  std::string out = FormatTableStats(0, stats_of(0), full);
  if (rehashing) out += FormatTableStats(1, stats_of(1), full);
  return out;
}

bool FullArg(CommandContext& ctx) { return ctx.argc() >= 4 && IsArg(ctx.arg(3), "FULL"); }

// HTSTATS <dbid> [full]: the keyspace's and the expires' tables of a database.
void DebugHtstats(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const int64_t dbid = args.IntBetween(0, ctx.db_count() - 1, "ERR Out of range database");
  if (!args.Check()) return;
  const Database& db = ctx.database(static_cast<int>(dbid));
  const bool full = FullArg(ctx);
  ctx.reply.Verbatim(
      "[Dictionary HT]\n" +
      FormatTable([&](int i) { return db.KeyspaceStats(i, full); }, db.keyspace_rehashing(), full) +
      "[Expires HT]\n" +
      FormatTable([&](int i) { return db.ExpiresStats(i, full); }, db.expires_rehashing(), full));
}

// HTSTATS-KEY <key> [full]: the hash table behind a hash or set in the hashtable encoding, or a
// sorted set's member index.
void DebugHtstatsKey(CommandContext& ctx) {
  DbEntry* entry = PeekOrReply(ctx);
  if (entry == nullptr) return;
  const Value& v = entry->value;
  const bool full = FullArg(ctx);
  const StringTable* table = nullptr;
  if (v.type() == ValueType::kHash) {
    table = v.As<HashObject>()->table();
  } else if (v.type() == ValueType::kSet) {
    table = v.As<SetObject>()->table();
  } else if (v.type() == ValueType::kZSet && v.EncodingName() == std::string_view("skiplist")) {
    // The member index is open addressing: no chains to report, so the short form only.
    HashTableStats st;
    st.elements = v.As<ZSet>()->size();
    st.table_size = v.As<ZSet>()->index_capacity();
    ctx.reply.Verbatim(FormatTableStats(0, st, false));
    return;
  }
  if (table == nullptr) {
    ctx.reply.Error(
        "ERR The value stored at the specified key is not represented using an hash table");
    return;
  }
  ctx.reply.Verbatim(
      FormatTable([&](int i) { return table->Stats(i, full); }, table->rehashing(), full));
}

// SDSLEN <key>: Redis's view of a string's sds buffers. vireo's strings are exact-size byte
// buffers, so nothing is ever spare ("avail" 0) and the allocation is the length.
void DebugSdslen(CommandContext& ctx) {
  DbEntry* entry = PeekOrReply(ctx);
  if (entry == nullptr) return;
  const Value& v = entry->value;
  if (v.type() != ValueType::kString || v.EncodingName() == std::string_view("int")) {
    ctx.reply.Error("ERR Not an sds encoded string.");
    return;
  }
  char scratch[24];
  const size_t key_len = entry->key.view().size();
  const size_t val_len = v.StringView(scratch).size();
  ctx.reply.SimpleString(fmt::format(
      "key_sds_len:{}, key_sds_avail:0, key_zmalloc: {}, val_sds_len:{}, val_sds_avail:0, "
      "val_zmalloc: {}",
      key_len, key_len, val_len, val_len));
}

// CLIENT-EVICTION: the clients maxmemory-clients may evict, by memory size in the power-of-two
// buckets Redis uses (32 KB and below share the first).
void DebugClientEviction(CommandContext& ctx) {
  if (!ctx.client_eviction().enabled()) {
    ctx.reply.Error("ERR maxmemory-clients is disabled.");
    return;
  }
  constexpr int kMinLog = 15, kMaxLog = 33;
  std::array<size_t, kMaxLog - kMinLog + 1> mem{}, count{};
  for (const auto& [id, client] : ctx.clients().All()) {
    if (client->closed || client->has(kClientNoEvict)) continue;
    const size_t bytes = MeasureClient(ctx.pubsub(), ctx.tracking(), *client).total();
    size_t b = 0;
    while (b + 1 < mem.size() && bytes >= (size_t{1} << (b + kMinLog))) ++b;
    mem[b] += bytes;
    ++count[b];
  }
  std::string out;
  for (size_t b = 0; b < mem.size(); ++b) {
    if (b == 0) {
      out += "bucket          0";
    } else {
      out += fmt::format("bucket {:>10}", size_t{1} << (b - 1 + kMinLog));
    }
    if (b + 1 == mem.size()) {
      out += "+            : ";
    } else {
      out += fmt::format(" - {:>10}: ", (size_t{1} << (b + kMinLog)) - 1);
    }
    out += fmt::format("tot-mem: {:>10}, clients: {}\n", mem[b], count[b]);
  }
  ctx.reply.Verbatim(out);
}

// SEGFAULT, PANIC, ASSERT, OOM: Redis crashes on purpose here (tests use them to check crash
// handling and restarts), and so does vireo: the command exists only behind
// enable-debug-command. The reason goes to the log first. PANIC, ASSERT and OOM end with
// abort() (a core dump where enabled), or exit(1) under the hidden use-exit-on-panic, as in
// Redis; SEGFAULT dies of SIGSEGV.
[[noreturn]] void CrashOnPurpose(const ServerConfig& cfg, std::string_view what) {
  spdlog::critical("------------------------------------------------");
  spdlog::critical("{}", what);
  spdlog::critical("------------------------------------------------");
  spdlog::default_logger()->flush();
  if (cfg.use_exit_on_panic) std::exit(1);
  std::abort();
}

void DebugSegfault(CommandContext& ctx) {
  spdlog::critical("DEBUG SEGFAULT: crashing by SIGSEGV on request");
  spdlog::default_logger()->flush();
  (void)ctx;
  // A real fault (a write to a read-only page), as Redis does, so the crash report shows what
  // a genuine invalid access looks like, address included.
  void* page = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page != MAP_FAILED) *static_cast<volatile int*>(page) = 1;
  std::raise(SIGSEGV);
  std::abort();  // SIGSEGV blocked or ignored
}

// RESTART [ms] / CRASH-AND-RECOVER [ms]: replace the process with a fresh copy of itself
// (the same executable and arguments, read back from /proc), after an optional delay.
// RESTART first saves the dataset as SHUTDOWN would and rewrites the config file;
// CRASH-AND-RECOVER does neither, so what the new process finds is what a crash would leave.
void DebugRestart(CommandContext& ctx, bool graceful) {
  int64_t delay_ms = 0;
  if (ctx.argc() >= 3) {
    ArgParser args(ctx, 2);
    delay_ms = args.Int();
    if (!args.Check()) return;
    delay_ms = std::max<int64_t>(delay_ms, 0);
  }
  int e = 0;
  // The command line as started; /proc/self/cmdline shows the process title once one is set,
  // so it is only the fallback (an embedded server has no title).
  std::vector<std::string> argv_text = ProcTitleOriginalArgs();
  if (argv_text.empty()) {
    std::string cmdline;
    FILE* f = std::fopen("/proc/self/cmdline", "r");
    if (f != nullptr) {
      char buf[4096];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) cmdline.append(buf, n);
      std::fclose(f);
    } else {
      e = errno;
    }
    for (size_t start = 0; start < cmdline.size();) {
      size_t end = cmdline.find('\0', start);
      if (end == std::string::npos) end = cmdline.size();
      argv_text.emplace_back(cmdline.substr(start, end - start));
      start = end + 1;
    }
  }
  char exe[PATH_MAX];
  ssize_t exe_len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  bool ok = e == 0 && !argv_text.empty() && exe_len > 0;
  if (ok && graceful) {
    ok = RdbSaveOnShutdown(ctx.persistence(), false, false).empty();
    if (ok && !ctx.cfg().config_file.empty()) {
      ok = ctx.config().Rewrite().empty();
    }
  }
  if (!ok) {
    ctx.reply.Error("ERR failed to restart the server. Check server logs.");
    return;
  }
  exe[exe_len] = '\0';
  spdlog::warn("DEBUG {}: restarting as {}", graceful ? "RESTART" : "CRASH-AND-RECOVER", exe);
  spdlog::default_logger()->flush();
  // Listeners, clients and files must not leak into the new process (ports stay bound).
  for (int fd = 3; fd < 65536; ++fd) close(fd);
  if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  execve(exe, argv.data(), environ);
  _exit(1);
}

// DROP-CLUSTER-PACKET-FILTER <type>: Redis accepts it outside cluster mode too, where there is
// no bus to filter.
void DebugDropClusterPacketFilter(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const int64_t type = args.Int();
  if (!args.Check()) return;
  if (cluster::ClusterBus* bus = ctx.cluster_bus()) bus->set_drop_packet_filter(type);
  ctx.reply.Ok();
}

// CLUSTERLINK KILL <to|from|all> <node-id>: the node is looked up before the direction, as
// Redis does, so an unknown node wins over an unknown direction.
void DebugClusterLinkKill(CommandContext& ctx) {
  cluster::ClusterBus* bus = ctx.cluster_bus();
  if (bus == nullptr) {
    ctx.reply.Error("ERR Debug option only available for cluster mode enabled setup!");
    return;
  }
  cluster::ClusterNode* node = ctx.cluster()->Lookup(ctx.arg(4));
  if (node == nullptr) {
    ctx.reply.Error(fmt::format("ERR Unknown node {}", ctx.arg(4)));
    return;
  }
  ArgParser args(ctx, 3);
  const int direction =
      args.Keyword({"TO", "FROM", "ALL"}, fmt::format("ERR Unknown direction {}", ctx.arg(3)));
  if (!args.Check()) return;
  bus->KillLinks(node, direction != 1, direction != 0);
  ctx.reply.Ok();
}

void DebugHelp(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "AOF-FLUSH-SLEEP <microsec>",
      "    Server will sleep before flushing the AOF, this is used for testing.",
      "ASSERT",
      "    Crash by a failed assertion (the process aborts).",
      "CHANGE-REPL-ID",
      "    Change the replication IDs of the instance.",
      "    Dangerous: should be used only for testing the replication subsystem.",
      "CONFIG-REWRITE-FORCE-ALL",
      "    Like CONFIG REWRITE but writes all configuration options, including",
      "    keywords not listed in original configuration file or default values.",
      "CRASH-AND-RECOVER [<milliseconds>]",
      "    Restart without saving anything, after a <milliseconds> delay (default 0).",
      "DIGEST",
      "    Output a hex signature representing the current DB content.",
      "DIGEST-VALUE <key> [<key> ...]",
      "    Output a hex signature of the values of all the specified keys.",
      "ERROR <string>",
      "    Return a Redis protocol error with <string> as message. Useful for clients",
      "    unit tests to simulate Redis errors.",
      "LEAK <string>",
      "    Accepted for compatibility; vireo does not leak the string.",
      "LOG <message>",
      "    Write <message> to the server log.",
      "HTSTATS <dbid> [full]",
      "    Return hash table statistics of the specified Redis database.",
      "HTSTATS-KEY <key> [full]",
      "    Like HTSTATS but for the hash table stored at <key>'s value.",
      "LOADAOF",
      "    Flush the AOF buffers on disk and reload the AOF in memory.",
      "REPLICATE <string>",
      "    Send the given command to the replicas only, letting their data diverge.",
      "LISTPACK <key>",
      "    Show low level info about the listpack encoding of <key>.",
      "QUICKLIST <key> [<0|1>]",
      "    Show low level info about the quicklist encoding of <key>.",
      "    The 2nd optional argument specifies if to print the listpack contents.",
      "OBJECT <key>",
      "    Show low level info about `key` and associated value.",
      "DROP-CLUSTER-PACKET-FILTER <packet-type>",
      "    Drop all packets that match the filtered type. Set to -1 allow all packets.",
      "CLOSE-CLUSTER-LINK-ON-PACKET-DROP <0|1>",
      "    Also close the cluster link a packet matching the drop filter came on.",
      "OOM",
      "    Crash the server as an out-of-memory error would.",
      "PANIC",
      "    Crash the server as a panic would.",
      "CLIENT-EVICTION",
      "    Show the clients maxmemory-clients may evict, by memory size.",
      "PAUSE-CRON <0|1>",
      "    Stop periodic cron job processing.",
      "POPULATE <count> [<prefix>] [<size>]",
      "    Create <count> string keys named key:<num>. If <prefix> is specified then",
      "    it is used instead of the 'key' prefix. These are not propagated to",
      "    replicas. Cluster slots are not respected so keys not belonging to the",
      "    current node can be created in cluster mode.",
      "PROTOCOL <type>",
      "    Reply with a test value of the specified type. <type> can be: string,",
      "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
      "    true, false.",
      "RELOAD [option ...]",
      "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
      "    * MERGE: conflicting keys will be loaded from RDB.",
      "    * NOFLUSH: the existing database will not be removed before load, but",
      "      conflicting keys will generate an exception and kill the server.",
      "    * NOSAVE: the database will be loaded from an existing RDB file.",
      "    Examples:",
      "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
      "      the database.",
      "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
      "      existing RDB file.",
      "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
      "      file to the database.",
      "RESTART [<milliseconds>]",
      "    Save the dataset and config, then restart after a <milliseconds> delay (default 0).",
      "SDSLEN <key>",
      "    Show the string lengths of `key` and its value.",
      "SEGFAULT",
      "    Crash the server with SIGSEGV.",
      "SET-ACTIVE-EXPIRE <0|1>",
      "    Setting it to 0 disables expiring keys in background when they are not",
      "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
      "    default.",
      "QUICKLIST-PACKED-THRESHOLD <size>",
      "    Sets the threshold for elements to be inserted as plain vs packed nodes",
      "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
      "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
      "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
      "SET-DISABLE-DENY-SCRIPTS <0|1>",
      "    Enables or disables the ability to call commands flagged as no-script from scripts.",
      "SLEEP <seconds>",
      "    Stop the server for <seconds>. Decimals allowed.",
      "STRINGMATCH-TEST",
      "    Run a fuzz tester against the stringmatchlen() function.",
      "STRUCTSIZE",
      "    Return the size of different Redis core C structures.",
      "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
      "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
      "    In case NEVER is provided the last observed peak will never be reset",
      "    In case RESET is provided the peak reset time will be restored to the default value",
      "REPLYBUFFER RESIZING <0|1>",
      "    Enable or disable the reply buffer resize cron job",
      "CLUSTERLINK KILL <to|from|all> <node-id>",
      "    Kills the link based on the direction to/from (both) with the provided node."};
  std::vector<std::string_view> lines(std::begin(kLines), std::end(kLines));
  if (allocator::IsJemalloc()) {
    // Where Redis lists them, after REPLICATE's two lines; only where jemalloc is linked.
    auto at = std::find(lines.begin(), lines.end(), "REPLICATE <string>") + 2;
    lines.insert(at, {"MALLCTL <key> [<val>]", "    Get or set a malloc tuning integer.",
                      "MALLCTL-STR <key> [<val>]", "    Get or set a malloc tuning string."});
  }
  ReplyHelp(ctx, "DEBUG", lines);
}

// MALLCTL <name> [value] and MALLCTL-STR <name> [value]: jemalloc's mallctl, read and
// optionally written (util/allocator.h). Only in the jemalloc build, as in Redis.
void DebugMallctl(CommandContext& ctx, bool string) {
  const std::string name(ctx.arg(2));
  allocator::CtlReply out;
  if (string) {
    std::optional<std::string> value;
    if (ctx.argc() > 3) value = std::string(ctx.arg(3));
    out = allocator::CtlString(name, value);
  } else {
    std::optional<int64_t> value;
    if (ctx.argc() > 3) {
      ArgParser args(ctx, 3);
      value = args.Int();
      if (!args.Check()) return;
    }
    out = allocator::CtlNumber(name, value);
  }
  if (out.number) {
    ctx.reply.Integer(*out.number);
  } else if (out.text) {
    ctx.reply.Bulk(*out.text);
  } else if (out.ok) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Error("ERR " + out.error);
  }
}

void DebugCommand(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  const size_t argc = ctx.argc();
  DebugSettings& settings = ctx.debug_settings();
  if (IsArg(sub, "HELP") && argc == 2) {
    DebugHelp(ctx);
  } else if (IsArg(sub, "SLEEP") && argc == 3) {
    DebugSleep(ctx);
  } else if (IsArg(sub, "SET-ACTIVE-EXPIRE") && argc == 3) {
    ctx.debug_settings().active_expire = AtoiArg(ctx.arg(2)) != 0;
    ctx.reply.Ok();
  } else if (IsArg(sub, "ERROR") && argc == 3) {
    // Written raw, as Redis does: no "ERR " prefix added, and not counted in errorstats.
    std::string line = "-";
    for (char c : ctx.arg(2)) line.push_back(c == '\r' || c == '\n' ? ' ' : c);
    line += "\r\n";
    ctx.reply.Raw(line);
  } else if (IsArg(sub, "LOG") && argc == 3) {
    spdlog::warn("DEBUG LOG: {}", ctx.arg(2));
    ctx.reply.Ok();
  } else if (IsArg(sub, "RELOAD")) {
    DebugReload(ctx);
  } else if (IsArg(sub, "LOADAOF")) {
    DebugLoadAof(ctx);
  } else if (IsArg(sub, "OBJECT") && argc == 3) {
    DebugObject(ctx);
  } else if (IsArg(sub, "LISTPACK") && argc == 3) {
    DebugStructure(ctx, false);
  } else if (IsArg(sub, "QUICKLIST") && (argc == 3 || argc == 4)) {
    DebugStructure(ctx, true);
  } else if (IsArg(sub, "POPULATE") && argc >= 3 && argc <= 5) {
    DebugPopulate(ctx);
  } else if (IsArg(sub, "DIGEST") && argc == 2) {
    DebugDigest(ctx);
  } else if (IsArg(sub, "DIGEST-VALUE")) {
    DebugDigestValue(ctx);
  } else if (IsArg(sub, "PROTOCOL") && argc == 3) {
    DebugProtocol(ctx);
  } else if (IsArg(sub, "QUICKLIST-PACKED-THRESHOLD") && argc == 3) {
    DebugQuicklistPackedThreshold(ctx);
  } else if (IsArg(sub, "SET-SKIP-CHECKSUM-VALIDATION") && argc == 3) {
    settings.skip_checksum_validation = AtoiArg(ctx.arg(2)) != 0;
    ctx.reply.Ok();
  } else if (IsArg(sub, "AOF-FLUSH-SLEEP") && argc == 3) {
    settings.aof_flush_sleep_us = AtoiArg(ctx.arg(2));
    ctx.reply.Ok();
  } else if (IsArg(sub, "SET-DISABLE-DENY-SCRIPTS") && argc == 3) {
    settings.disable_deny_scripts = AtoiArg(ctx.arg(2)) != 0;
    ctx.reply.Ok();
  } else if (IsArg(sub, "PAUSE-CRON") && argc == 3) {
    settings.pause_cron = AtoiArg(ctx.arg(2)) != 0;
    ctx.reply.Ok();
  } else if (IsArg(sub, "REPLYBUFFER") && argc == 4) {
    DebugReplyBuffer(ctx);
  } else if (IsArg(sub, "DROP-CLUSTER-PACKET-FILTER") && argc == 3) {
    DebugDropClusterPacketFilter(ctx);
  } else if (IsArg(sub, "CLOSE-CLUSTER-LINK-ON-PACKET-DROP") && argc == 3) {
    if (cluster::ClusterBus* bus = ctx.cluster_bus()) {
      bus->set_close_link_on_packet_drop(AtoiArg(ctx.arg(2)) != 0);
    }
    ctx.reply.Ok();
  } else if (IsArg(sub, "CLUSTERLINK") && argc == 5 && IsArg(ctx.arg(2), "KILL")) {
    DebugClusterLinkKill(ctx);
  } else if (IsArg(sub, "CHANGE-REPL-ID") && argc == 2) {
    spdlog::info("Changing replication IDs after receiving DEBUG change-repl-id");
    ctx.replication().ChangeReplicationId();
    ctx.reply.Ok();
  } else if (IsArg(sub, "STRINGMATCH-TEST") && argc == 2) {
    // Redis fuzzes its glob matcher here; vireo's is covered by its unit tests.
    ctx.reply.SimpleString("Apparently Redis did not crash: test passed");
  } else if (IsArg(sub, "STRUCTSIZE") && argc == 2) {
    ctx.reply.Bulk(fmt::format("bits:{} value:{} ", sizeof(void*) * 8, sizeof(Value)));
  } else if (IsArg(sub, "HTSTATS") && argc >= 3) {
    DebugHtstats(ctx);
  } else if (IsArg(sub, "HTSTATS-KEY") && argc >= 3) {
    DebugHtstatsKey(ctx);
  } else if (IsArg(sub, "SDSLEN") && argc == 3) {
    DebugSdslen(ctx);
  } else if (IsArg(sub, "CLIENT-EVICTION") && argc == 2) {
    DebugClientEviction(ctx);
  } else if (IsArg(sub, "REPLICATE") && argc >= 3) {
    // The arguments go to the replicas as a command of their own (not to the AOF), so tests
    // can make a replica's data diverge on purpose.
    std::vector<std::string_view> cmd;
    for (size_t i = 2; i < argc; ++i) cmd.push_back(ctx.arg(i));
    ctx.propagator().Feed(ctx.client.db_index(), cmd, kEffectToReplicas);
    ctx.reply.Ok();
  } else if (IsArg(sub, "LEAK") && argc == 3) {
    // Redis leaks a copy of the string for its leak checker to find; vireo has no such checker
    // run, so there is nothing to leak for.
    ctx.reply.Ok();
  } else if (IsArg(sub, "SEGFAULT")) {
    DebugSegfault(ctx);
  } else if (IsArg(sub, "PANIC")) {
    CrashOnPurpose(ctx.cfg(), fmt::format("Guru Meditation: DEBUG PANIC called at Unix time {}",
                                          NowMs() / 1000));
  } else if (IsArg(sub, "ASSERT")) {
    CrashOnPurpose(ctx.cfg(), "=== ASSERTION FAILED ===\n==> debug.cc: '1 == 2' is not true");
  } else if (IsArg(sub, "OOM")) {
    CrashOnPurpose(ctx.cfg(), fmt::format("Out Of Memory allocating {} bytes!", SIZE_MAX / 2));
  } else if (IsArg(sub, "RESTART") || IsArg(sub, "CRASH-AND-RECOVER")) {
    DebugRestart(ctx, IsArg(sub, "RESTART"));
  } else if (allocator::IsJemalloc() && IsArg(sub, "MALLCTL") && argc >= 3) {
    DebugMallctl(ctx, false);
  } else if (allocator::IsJemalloc() && IsArg(sub, "MALLCTL-STR") && argc >= 3) {
    DebugMallctl(ctx, true);
  } else if (IsArg(sub, "CONFIG-REWRITE-FORCE-ALL") && argc == 2) {
    if (std::string err = ctx.config().Rewrite(true); !err.empty()) {
      ctx.reply.Error(fmt::format("ERR CONFIG-REWRITE-FORCE-ALL failed: {}", err));
      return;
    }
    ctx.reply.Ok();
  } else {
    ctx.reply.Error(
        fmt::format("ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
                    sub.substr(0, 128)));
  }
}

}  // namespace

void RegisterDebugCommands(CommandTable& table) {
  table.Add(
      {"debug", -2,
       kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdProtected | kCmdDebugProtected,
       Keys(), 0, "server", "1.0.0", "A container for debugging commands.", "", DebugCommand,
       "Depends on subcommand."});
}

}  // namespace vireo

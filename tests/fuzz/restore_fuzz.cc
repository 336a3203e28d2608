// RESTORE / RDB fuzzer: builds valid DUMP payloads of every type and encoding vireo writes and
// Redis writes, mutates them (length fields, type bytes, blob headers, stream IDs, LZF
// sections), fixes the CRC up so the body is reached, and feeds them to the RESTORE decoder,
// to the RESTORE command and, wrapped in a dump.rdb image, to the RDB loader; and damaged AOF
// command streams (cut at any byte, impossible `*`/`$` counts, flipped bytes, RESTOREs of the
// mutated payloads) to the AOF loader.
//
// Properties checked: nothing crashes (run it under ASan/UBSan), a rejected payload gets one
// of Redis's two RESTORE errors and leaves neither a value nor a key behind, and a value that
// was accepted re-dumps into a payload that passes deep validation and restores again.
//
//   restore_fuzz --seed S --iterations N [--start I] [--rdb-every K] [--aof-every K]
//                [--command-every K]
//   restore_fuzz --seed S --emit-rdb DIR COUNT   (mutated dump.rdb files for test_rdb.py)
//
// Iteration i draws everything from a generator seeded with (S, i), so a failure reported
// as "seed S iteration I" replays alone with --seed S --start I --iterations 1.
// docs/robustness.md describes the targets; a long run is --iterations 1000000.
//
// Built with -DVIREO_LIBFUZZER (clang -fsanitize=fuzzer), the same checks run on libFuzzer's
// inputs instead (LLVMFuzzerTestOneInput below): the input is taken as a payload body.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../unit/test_commands.h"
#include "persistence/aof_loader.h"
#include "persistence/rdb.h"
#include "persistence/rdb_encoding.h"
#include "scripting/scripting.h"
#include "server/client.h"
#include "server/server.h"

namespace vireo {
namespace {

using namespace rdb;  // NOLINT: the format's constants and encoders

using Rng = std::mt19937_64;

// ---- crash reporting ------------------------------------------------------------------------

// The iteration under test, for the crash handlers. A signal handler can only reach static
// storage; this is the test binary's own, not the server's.
volatile uint64_t g_current_seed = 0;
volatile uint64_t g_current_iteration = 0;

void WriteIterationLine() {
  char buf[96];
  int n = snprintf(
      buf, sizeof(buf),
      "\nrestore_fuzz: failing input is --seed %" PRIu64 " --start %" PRIu64 " --iterations 1\n",
      static_cast<uint64_t>(g_current_seed), static_cast<uint64_t>(g_current_iteration));
  if (n > 0) (void)!write(2, buf, static_cast<size_t>(n));
}

// ASan and UBSan (with -fno-sanitize-recover) end the process without a signal: they call
// this hook, when the runtime is linked in, after their report.
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

void OnFatalSignal(int sig) {
  WriteIterationLine();
  signal(sig, SIG_DFL);
  raise(sig);
}

[[noreturn]] void Fail(const std::string& what) {
  fprintf(stderr, "restore_fuzz: %s\n", what.c_str());
  WriteIterationLine();
  abort();
}

// ---- payload building -------------------------------------------------------------------------

std::string Footer(std::string body, int version) {
  body.push_back(static_cast<char>(version & 0xff));
  body.push_back(static_cast<char>(version >> 8));
  AppendMillis(&body, static_cast<int64_t>(Crc64(0, body.data(), body.size())));
  return body;
}

// A ziplist (Redis <= 6 lists, hashes and sorted sets) holding `elems`, integers encoded as
// Redis would encode them.
std::string ZiplistBlob(const std::vector<std::string>& elems) {
  std::string body;
  size_t prev = 0, last = 10;
  for (const std::string& s : elems) {
    std::string entry;
    if (prev < 254) {
      entry.push_back(static_cast<char>(prev));
    } else {
      entry.push_back(static_cast<char>(254));
      for (int i = 0; i < 4; ++i) entry.push_back(static_cast<char>((prev >> (8 * i)) & 0xff));
    }
    int64_t v;
    if (StringToInt64Strict(s, &v) && s.size() < 20) {
      auto le = [&](uint64_t x, int n) {
        for (int i = 0; i < n; ++i) entry.push_back(static_cast<char>((x >> (8 * i)) & 0xff));
      };
      if (v >= 0 && v <= 12) {
        entry.push_back(static_cast<char>(0xF1 + v));
      } else if (v >= INT16_MIN && v <= INT16_MAX) {
        entry.push_back(static_cast<char>(0xC0));
        le(static_cast<uint64_t>(v), 2);
      } else if (v >= INT32_MIN && v <= INT32_MAX) {
        entry.push_back(static_cast<char>(0xD0));
        le(static_cast<uint64_t>(v), 4);
      } else {
        entry.push_back(static_cast<char>(0xE0));
        le(static_cast<uint64_t>(v), 8);
      }
    } else if (s.size() < 64) {
      entry.push_back(static_cast<char>(s.size()));
      entry.append(s);
    } else {
      entry.push_back(static_cast<char>(0x40 | (s.size() >> 8)));
      entry.push_back(static_cast<char>(s.size() & 0xff));
      entry.append(s);
    }
    last = 10 + body.size();
    prev = entry.size();
    body += entry;
  }
  std::string blob(10, '\0');
  blob += body;
  blob.push_back(static_cast<char>(0xFF));
  auto put = [&](size_t at, uint64_t x, int n) {
    for (int i = 0; i < n; ++i) blob[at + i] = static_cast<char>((x >> (8 * i)) & 0xff);
  };
  put(0, blob.size(), 4);
  put(4, last, 4);
  put(8, elems.size() < 65535 ? elems.size() : 65535, 2);
  return blob;
}

std::string ListpackBlob(const std::vector<std::string>& elems) {
  ListpackWriter lp;
  for (const std::string& s : elems) lp.Add(s);
  return lp.Finish();
}

std::string ZipmapBlob(const std::vector<std::string>& pairs) {
  std::string blob(1, static_cast<char>(pairs.size() / 2 < 254 ? pairs.size() / 2 : 254));
  for (size_t i = 0; i < pairs.size(); i += 2) {
    blob.push_back(static_cast<char>(pairs[i].size()));
    blob += pairs[i];
    blob.push_back(static_cast<char>(pairs[i + 1].size()));
    blob.push_back('\0');  // free bytes
    blob += pairs[i + 1];
  }
  blob.push_back(static_cast<char>(0xFF));
  return blob;
}

std::string RandomToken(Rng& rng) {
  switch (rng() % 6) {
    case 0:
      return std::to_string(static_cast<int64_t>(rng() % 100000) - 50000);
    case 1:
      return std::to_string(static_cast<int64_t>(rng()));
    case 2:
      return std::string(rng() % 300 + 64, static_cast<char>('a' + rng() % 26));
    default: {
      std::string s(rng() % 12 + 1, '\0');
      for (char& c : s) c = static_cast<char>('a' + rng() % 26);
      return s;
    }
  }
}

std::vector<std::string> Distinct(Rng& rng, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(RandomToken(rng) + ":" + std::to_string(i));
  return out;
}

// A stream in Redis's own layout (types 15, 19 and 21): one or two nodes, a group with PEL
// entries owned by two consumers. Written by hand, as Redis writes it, for the types vireo
// never writes (15, 21) and as another shape of 19.
std::string RedisStreamBody(Rng& rng, uint8_t type) {
  std::string out(1, static_cast<char>(type));
  uint64_t base_ms = 1000 + rng() % 1000;
  int nodes = 1 + static_cast<int>(rng() % 2);
  AppendLength(&out, nodes);
  uint64_t ms = base_ms;
  std::vector<uint64_t> ids;
  for (int n = 0; n < nodes; ++n) {
    std::string key;
    for (int i = 7; i >= 0; --i) key.push_back(static_cast<char>((ms >> (8 * i)) & 0xff));
    key.append(8, '\0');
    AppendString(&out, key, false);
    ListpackWriter lp;
    int entries = 1 + static_cast<int>(rng() % 4);
    lp.AddInt(entries);
    lp.AddInt(0);
    lp.AddInt(1);
    lp.Add("field");
    lp.AddInt(0);
    for (int e = 0; e < entries; ++e) {
      bool same = rng() % 2 == 0;
      lp.AddInt(same ? 2 : 0);
      lp.AddInt(e);  // ms delta from the node's master ID
      lp.AddInt(0);
      ids.push_back(ms + e);
      if (same) {
        lp.Add(RandomToken(rng));
        lp.AddInt(4);
      } else {
        lp.AddInt(1);
        lp.Add("other");
        lp.Add(RandomToken(rng));
        lp.AddInt(6);
      }
    }
    AppendString(&out, lp.Finish(), rng() % 2 == 0);
    ms += 100;
  }
  AppendLength(&out, ids.size());
  AppendLength(&out, ids.back());  // last ID
  AppendLength(&out, 0);
  if (type >= kTypeStreamListpacks2) {
    AppendLength(&out, ids.front());  // first ID
    AppendLength(&out, 0);
    AppendLength(&out, 0);  // max deleted ID
    AppendLength(&out, 0);
    AppendLength(&out, ids.size());  // entries added
  }
  AppendLength(&out, 1);  // groups
  AppendString(&out, "g", false);
  AppendLength(&out, ids.back());
  AppendLength(&out, 0);
  if (type >= kTypeStreamListpacks2) AppendLength(&out, ids.size());
  size_t npel = std::min<size_t>(ids.size(), 3);
  AppendLength(&out, npel);
  auto raw = [&](uint64_t id_ms) {
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((id_ms >> (8 * i)) & 0xff));
    out.append(8, '\0');
  };
  for (size_t i = 0; i < npel; ++i) {
    raw(ids[i]);
    AppendMillis(&out, 1700000000000 + static_cast<int64_t>(i));
    AppendLength(&out, 1 + i);
  }
  AppendLength(&out, 2);  // consumers: c1 owns the first PEL entry, c2 the rest
  for (int c = 0; c < 2; ++c) {
    AppendString(&out, c == 0 ? "c1" : "c2", false);
    AppendMillis(&out, 1700000000000);
    if (type >= kTypeStreamListpacks3) AppendMillis(&out, 1700000000001);
    size_t from = c == 0 ? 0 : 1, to = c == 0 ? std::min<size_t>(1, npel) : npel;
    AppendLength(&out, to - from);
    for (size_t i = from; i < to; ++i) raw(ids[i]);
  }
  return out;
}

// The encodings only Redis writes (or wrote), built by hand.
void AddRedisSeeds(Rng& rng, std::vector<std::string>* seeds) {
  auto add = [&](std::string body) { seeds->push_back(Footer(std::move(body), 11)); };
  auto typed = [](uint8_t type) { return std::string(1, static_cast<char>(type)); };
  for (int round = 0; round < 3; ++round) {
    std::vector<std::string> elems = Distinct(rng, 2 + rng() % 12);
    std::vector<std::string> pairs;
    for (const std::string& e : elems) {
      pairs.push_back(e);
      pairs.push_back(RandomToken(rng));
    }
    std::vector<std::string> zpairs;
    for (const std::string& e : elems) {
      zpairs.push_back(e);
      zpairs.push_back(std::to_string(static_cast<int64_t>(rng() % 2000) - 1000) +
                       (rng() % 2 ? ".5" : ""));
    }
    std::string b;
    // Lists: plain (1), ziplist (10), quicklist of ziplists (14).
    b = typed(kTypeList);
    AppendLength(&b, elems.size());
    for (const std::string& e : elems) AppendString(&b, e, rng() % 2 == 0);
    add(b);
    b = typed(kTypeListZiplist);
    AppendString(&b, ZiplistBlob(elems), rng() % 2 == 0);
    add(b);
    b = typed(kTypeListQuicklist);
    AppendLength(&b, 2);
    AppendString(&b, ZiplistBlob(elems), false);
    AppendString(&b, ZiplistBlob(pairs), rng() % 2 == 0);
    add(b);
    // Quicklist 2 with a plain node.
    b = typed(kTypeListQuicklist2);
    AppendLength(&b, 2);
    AppendLength(&b, kQuicklistNodePlain);
    AppendString(&b, std::string(9000, 'p'), rng() % 2 == 0);
    AppendLength(&b, kQuicklistNodePacked);
    AppendString(&b, ListpackBlob(elems), false);
    add(b);
    // Sets: plain (2), listpack (20).
    b = typed(kTypeSet);
    AppendLength(&b, elems.size());
    for (const std::string& e : elems) AppendString(&b, e, false);
    add(b);
    b = typed(kTypeSetListpack);
    AppendString(&b, ListpackBlob(elems), false);
    add(b);
    // Sorted sets: text scores (3), binary (5), ziplist (12).
    b = typed(kTypeZset);
    AppendLength(&b, elems.size());
    for (size_t i = 0; i < elems.size(); ++i) {
      AppendString(&b, elems[i], false);
      std::string score = zpairs[2 * i + 1];
      b.push_back(static_cast<char>(score.size()));
      b += score;
    }
    add(b);
    b = typed(kTypeZset2);
    AppendLength(&b, elems.size());
    for (size_t i = 0; i < elems.size(); ++i) {
      AppendString(&b, elems[i], false);
      AppendDoubleBinary(&b, i == 0 ? INFINITY : std::stod(zpairs[2 * i + 1]));
    }
    add(b);
    b = typed(kTypeZsetZiplist);
    AppendString(&b, ZiplistBlob(zpairs), false);
    add(b);
    // Hashes: plain (4), zipmap (9), ziplist (13), listpack (16).
    b = typed(kTypeHash);
    AppendLength(&b, elems.size());
    for (const std::string& p : pairs) AppendString(&b, p, false);
    add(b);
    std::vector<std::string> short_pairs;
    for (size_t i = 0; i < pairs.size(); ++i) short_pairs.push_back(pairs[i].substr(0, 40));
    b = typed(kTypeHashZipmap);
    AppendString(&b, ZipmapBlob(short_pairs), false);
    add(b);
    b = typed(kTypeHashZiplist);
    AppendString(&b, ZiplistBlob(pairs), false);
    add(b);
    b = typed(kTypeHashListpack);
    AppendString(&b, ListpackBlob(pairs), false);
    add(b);
    // Streams in all three Redis layouts.
    add(RedisStreamBody(rng, kTypeStreamListpacks));
    add(RedisStreamBody(rng, kTypeStreamListpacks2));
    add(RedisStreamBody(rng, kTypeStreamListpacks3));
  }
}

// ---- the harness ----------------------------------------------------------------------------

class Harness {
 public:
  Harness()
      : server_(Config(), TestCommands()),
        client_(&server_, 1, -1),
        rdb_server_(Config(), TestCommands()),
        memfd_(memfd_create("restore_fuzz_rdb", MFD_CLOEXEC)) {
    if (memfd_ < 0) Fail("memfd_create failed");
    char dir[] = "/tmp/restore_fuzz_aof.XXXXXX";
    if (mkdtemp(dir) == nullptr) Fail("mkdtemp failed");
    aof_dir_ = dir;
  }
  ~Harness() {
    close(memfd_);
    unlink((aof_dir_ + "/" + kAofName).c_str());
    rmdir(aof_dir_.c_str());
  }

  std::string Command(std::vector<std::string> argv) {
    std::vector<std::string_view> views(argv.begin(), argv.end());
    client_.output().clear();
    server_.ExecuteCommand(client_, views);
    return client_.output();
  }

  // Valid payloads of every type and encoding vireo writes, made with commands, and of the
  // encodings only Redis writes.
  void BuildCorpus(uint64_t seed) {
    Rng rng(seed ^ 0x5eed5eedULL);
    auto dump = [&](const std::string& key) {
      DbEntry* e = server_.db(0).Find(key);
      if (e == nullptr) Fail("corpus key missing: " + key);
      seeds_.push_back(RdbDumpValue(e->value, false));
      seeds_.push_back(RdbDumpValue(e->value, true));
    };
    for (int round = 0; round < 3; ++round) {
      Command({"FLUSHALL"});
      Command({"SET", "s1", "hello"});
      Command({"SET", "s2", std::to_string(static_cast<int64_t>(rng()))});
      Command({"SET", "s3", std::string(200, 'x') + RandomToken(rng)});
      for (const char* k : {"s1", "s2", "s3"}) dump(k);
      size_t small = 2 + rng() % 10, large = 150 + rng() % 200;
      for (const std::string& e : Distinct(rng, small)) Command({"RPUSH", "l1", e});
      for (const std::string& e : Distinct(rng, large)) Command({"RPUSH", "l2", e});
      for (const std::string& e : Distinct(rng, small)) {
        Command({"HSET", "h1", e, RandomToken(rng)});
      }
      for (const std::string& e : Distinct(rng, large)) {
        Command({"HSET", "h2", e, RandomToken(rng)});
      }
      for (size_t i = 0; i < small; ++i) Command({"SADD", "i1", std::to_string(rng() % 100000)});
      Command({"SADD", "i1", "-5000000000"});
      for (const std::string& e : Distinct(rng, small)) Command({"SADD", "p1", e});
      for (const std::string& e : Distinct(rng, large)) Command({"SADD", "t1", e});
      for (const std::string& e : Distinct(rng, small)) {
        Command({"ZADD", "z1", std::to_string(static_cast<int>(rng() % 100)) + ".25", e});
      }
      Command({"ZADD", "z1", "-inf", "minus"});
      for (const std::string& e : Distinct(rng, large)) {
        Command({"ZADD", "z2", std::to_string(static_cast<int>(rng() % 1000)), e});
      }
      for (const char* k : {"l1", "l2", "h1", "h2", "i1", "p1", "t1", "z1", "z2"}) dump(k);
      // Streams: entries across nodes, deletions, groups, PEL, consumers (type 19), then
      // NACKed entries and IDMP history (vireo's type 120).
      int entries = 5 + static_cast<int>(rng() % 150);
      for (int i = 0; i < entries; ++i) {
        std::vector<std::string> argv = {"XADD", "x1", "*", "f", RandomToken(rng)};
        if (rng() % 3 == 0) {
          argv.push_back("g" + std::to_string(i % 3));
          argv.push_back(RandomToken(rng));
        }
        Command(argv);
      }
      Command({"XDEL", "x1", "0-1"});
      Command({"XGROUP", "CREATE", "x1", "g1", "0"});
      Command({"XGROUP", "CREATE", "x1", "g2", "$"});
      Command({"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "x1", ">"});
      Command({"XREADGROUP", "GROUP", "g1", "bob", "COUNT", "4", "STREAMS", "x1", ">"});
      Command({"XGROUP", "CREATECONSUMER", "x1", "g2", "carol"});
      dump("x1");
      std::string first = Command({"XRANGE", "x1", "-", "+", "COUNT", "1"});
      Command({"XADD", "x2", "IDMP", "p1", "iid1", "*", "f", "v"});
      Command({"XADD", "x2", "IDMP", "p2", "iid2", "*", "f", "v2"});
      Command({"XGROUP", "CREATE", "x2", "g", "0"});
      Command({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "x2", ">"});
      std::string pending = Command({"XPENDING", "x2", "g", "-", "+", "10"});
      // XNACK the first pending entry: its ID is the first bulk in the XPENDING reply.
      size_t dollar = pending.find('$');
      if (dollar != std::string::npos) {
        size_t start = pending.find("\r\n", dollar) + 2;
        std::string id = pending.substr(start, pending.find("\r\n", start) - start);
        Command({"XNACK", "x2", "g", "FAIL", "IDS", "1", id});
      }
      dump("x2");
    }
    Command({"FLUSHALL"});
    size_t vireo_seeds = seeds_.size();
    AddRedisSeeds(rng, &seeds_);
    // Every seed is valid and passes deep validation: the corpus is what we claim it is.
    for (const std::string& s : seeds_) {
      Value v;
      std::string err;
      if (!RdbRestoreValue(server_.cfg(), s, &v, &err, true)) {
        Fail("corpus payload " + std::to_string(&s - seeds_.data()) + " (type " +
             std::to_string(static_cast<uint8_t>(s[0])) + ") rejected: " + err);
      }
    }
    fprintf(stderr, "restore_fuzz: %zu seed payloads (%zu written by vireo, %zu Redis-only)\n",
            seeds_.size(), vireo_seeds, seeds_.size() - vireo_seeds);
  }

  // One iteration: pick a seed, mutate it, feed it everywhere.
  void Iterate(Rng& rng, bool through_command, bool through_rdb, bool through_aof) {
    const std::string& seed = seeds_[rng() % seeds_.size()];
    std::string body = seed.substr(0, seed.size() - 10);
    int rounds = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < rounds; ++i) Mutate(rng, &body);
    int version = rng() % 16 == 0 ? static_cast<int>(rng() % 13) : 11;
    std::string payload = Footer(body, version);
    ++stats_.payloads;
    CheckDecoder(payload, rng() % 2 == 0);
    if (through_command) CheckCommand(payload, rng);
    if (through_rdb) CheckRdbLoad(body, rng);
    if (through_aof) CheckAofLoad(payload, rng);
  }

  // A mutated dump.rdb for the integration test that starts the real server on it.
  std::string MutatedRdbFile(Rng& rng) {
    const std::string& seed = seeds_[rng() % seeds_.size()];
    std::string body = seed.substr(0, seed.size() - 10);
    // A third keep a valid value (the file may still be damaged): the loader's success path
    // is exercised through the process too.
    int rounds = static_cast<int>(rng() % 3);
    for (int i = 0; i < rounds; ++i) Mutate(rng, &body);
    return RdbFile(body, rng);
  }

  // libFuzzer: the input is a payload body (the footer is added).
  void FeedBody(std::string_view body) {
    std::string payload = Footer(std::string(body), 11);
    CheckDecoder(payload, false);
    CheckDecoder(payload, true);
  }

  void Report(double seconds) const {
    fprintf(stderr,
            "restore_fuzz: %" PRIu64 " payloads (%" PRIu64 " accepted, %" PRIu64
            " rejected), %" PRIu64 " RESTORE commands, %" PRIu64 " RDB files (%" PRIu64
            " loaded), %" PRIu64 " AOF files (%" PRIu64 " loaded), %.1f s\n",
            stats_.payloads, stats_.accepted, stats_.rejected, stats_.commands, stats_.rdb_files,
            stats_.rdb_loaded, stats_.aof_files, stats_.aof_loaded, seconds);
  }

 private:
  static constexpr uint64_t kInteresting64[] = {0,
                                                1,
                                                63,
                                                64,
                                                16383,
                                                16384,
                                                0xFFFFFFFFULL,
                                                uint64_t{1} << 32,
                                                uint64_t{1} << 36,
                                                uint64_t{1} << 62,
                                                UINT64_MAX};
  static constexpr uint8_t kInterestingBytes[] = {0x00, 0x01, 0x3F, 0x40, 0x7F, 0x80, 0x81,
                                                  0xC0, 0xC3, 0xE0, 0xF0, 0xF4, 0xFE, 0xFF};

  static size_t Pos(Rng& rng, const std::string& s) {
    if (s.empty()) return 0;
    // Lengths and headers cluster at the front: favour it.
    if (rng() % 3 == 0) return rng() % std::min<size_t>(s.size(), 24);
    return rng() % s.size();
  }

  void Mutate(Rng& rng, std::string* b) {
    if (b->empty()) b->push_back(static_cast<char>(rng() % 22));
    switch (rng() % 13) {
      case 0:  // bit flip
        (*b)[Pos(rng, *b)] ^= static_cast<char>(1 << (rng() % 8));
        break;
      case 1:  // interesting byte
        (*b)[Pos(rng, *b)] =
            static_cast<char>(kInterestingBytes[rng() % sizeof(kInterestingBytes)]);
        break;
      case 2: {  // a small nudge (off-by-one lengths and counts)
        size_t p = Pos(rng, *b);
        (*b)[p] = static_cast<char>((*b)[p] + static_cast<int>(rng() % 5) - 2);
        break;
      }
      case 3: {  // a 16/32-bit little-endian header field (listpack, ziplist, intset)
        size_t p = Pos(rng, *b);
        uint64_t v = rng() % 2 ? kInteresting64[rng() % std::size(kInteresting64)]
                               : b->size() + rng() % 5 - 2;
        int n = rng() % 2 ? 2 : 4;
        for (int i = 0; i < n && p + i < b->size(); ++i) {
          (*b)[p + i] = static_cast<char>((v >> (8 * i)) & 0xff);
        }
        break;
      }
      case 4: {  // a huge RDB length where a length was (2^62 elements, 4 GB strings...)
        size_t p = Pos(rng, *b);
        std::string len;
        uint64_t v = kInteresting64[rng() % std::size(kInteresting64)];
        if (rng() % 2) {
          len.push_back(static_cast<char>(0x81));
          for (int i = 7; i >= 0; --i) len.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
        } else {
          AppendLength(&len, v);
        }
        if (rng() % 2) {
          b->replace(p, std::min(len.size(), b->size() - p), len);
        } else {
          b->insert(p, len);
        }
        break;
      }
      case 5: {  // an LZF section claiming a huge or wrong size
        size_t p = Pos(rng, *b);
        std::string lzf(1, static_cast<char>(0xC3));
        uint64_t clen = rng() % 2 ? rng() % 64 : kInteresting64[rng() % std::size(kInteresting64)];
        uint64_t ulen = rng() % 2 ? uint64_t{1} << 36 : clen * (rng() % 100);
        AppendLength(&lzf, clen);
        AppendLength(&lzf, ulen);
        for (uint64_t i = 0; i < std::min<uint64_t>(clen, 64); ++i) {
          lzf.push_back(static_cast<char>(rng()));
        }
        b->insert(p, lzf);
        break;
      }
      case 6:  // truncate
        b->resize(rng() % (b->size() + 1));
        break;
      case 7: {  // append garbage
        size_t n = rng() % 16 + 1;
        for (size_t i = 0; i < n; ++i) b->push_back(static_cast<char>(rng()));
        break;
      }
      case 8:  // another type byte
        (*b)[0] = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : rng() % 22);
        break;
      case 9: {  // delete a range
        size_t p = Pos(rng, *b);
        b->erase(p, rng() % 16 + 1);
        break;
      }
      case 10: {  // repeat a range (duplicate members, fields, PEL entries, consumers)
        size_t p = Pos(rng, *b), n = std::min<size_t>(rng() % 32 + 1, b->size() - p);
        b->insert(Pos(rng, *b), b->substr(p, n));
        break;
      }
      case 11: {  // splice in part of another seed
        const std::string& other = seeds_[rng() % seeds_.size()];
        size_t from = rng() % other.size(),
               n = std::min<size_t>(rng() % 64 + 1, other.size() - from);
        b->insert(Pos(rng, *b), other.substr(from, n));
        break;
      }
      default: {  // a 64-bit field (stream IDs, millisecond times, doubles)
        size_t p = Pos(rng, *b);
        uint64_t v = rng() % 2 ? kInteresting64[rng() % std::size(kInteresting64)] : rng();
        if (rng() % 4 == 0) {
          double d = rng() % 2 ? NAN : -0.0;
          memcpy(&v, &d, 8);
        }
        for (int i = 0; i < 8 && p + i < b->size(); ++i) {
          (*b)[p + i] = static_cast<char>((v >> (8 * (rng() % 2 ? i : 7 - i))) & 0xff);
        }
      }
    }
  }

  void CheckDecoder(const std::string& payload, bool deep) {
    Value v;
    std::string err;
    if (!RdbRestoreValue(server_.cfg(), payload, &v, &err, deep)) {
      ++stats_.rejected;
      if (err != "ERR Bad data format" && err != "ERR DUMP payload version or checksum are wrong") {
        Fail("unexpected RESTORE error: " + err);
      }
      char scratch[24];
      if (!v.is_string() || !v.StringView(scratch).empty()) Fail("rejected payload left a value");
      return;
    }
    ++stats_.accepted;
    // What vireo accepted, vireo writes back well-formed: deep validation passes.
    for (bool compress : {false, true}) {
      std::string again = RdbDumpValue(v, compress);
      Value back;
      if (!RdbRestoreValue(server_.cfg(), again, &back, &err, true)) {
        Fail("re-dump of an accepted value rejected: " + err);
      }
      if (back.type() != v.type()) Fail("re-dump changed the type");
    }
  }

  // RESTORE through the command, then the type's read commands on the result (a value that
  // loads but breaks a later command is the crash Redis 7.2 has with sanitization off).
  void CheckCommand(const std::string& payload, Rng& rng) {
    ++stats_.commands;
    bool replace = rng() % 2 == 0;
    if (replace) Command({"SET", "k", "old"});
    Command({"CONFIG", "SET", "sanitize-dump-payload", rng() % 2 ? "yes" : "no"});
    std::vector<std::string> argv = {"RESTORE", "k", "0", payload};
    if (replace) argv.push_back("REPLACE");
    std::string reply = Command(argv);
    DbEntry* e = server_.db(0).Find("k");
    if (reply.rfind("-", 0) == 0) {
      if (reply != "-ERR Bad data format\r\n" &&
          reply != "-ERR DUMP payload version or checksum are wrong\r\n") {
        Fail("unexpected RESTORE reply: " + reply);
      }
      // A rejected payload changes nothing: the old value stays, no new key appears.
      char scratch[24];
      if (replace ? (e == nullptr || !e->value.is_string() || e->value.StringView(scratch) != "old")
                  : e != nullptr) {
        Fail("rejected RESTORE changed the keyspace");
      }
    } else if (reply != "+OK\r\n" || e == nullptr) {
      Fail("RESTORE reply " + reply);
    } else {
      for (const auto& cmd : ReadCommands(e->value.type())) Command(cmd);
    }
    Command({"DEL", "k"});
  }

  static std::vector<std::vector<std::string>> ReadCommands(ValueType type) {
    switch (type) {
      case ValueType::kString:
        return {{"GET", "k"}, {"STRLEN", "k"}, {"GETRANGE", "k", "-5", "-1"}};
      case ValueType::kList:
        return {{"LRANGE", "k", "0", "-1"}, {"LINDEX", "k", "-1"}, {"LPOP", "k"}, {"RPOP", "k"}};
      case ValueType::kSet:
        return {{"SMEMBERS", "k"}, {"SRANDMEMBER", "k", "-3"}, {"SPOP", "k"}, {"SCARD", "k"}};
      case ValueType::kZSet:
        return {{"ZRANGE", "k", "0", "-1", "WITHSCORES"},
                {"ZRANGEBYSCORE", "k", "-inf", "+inf"},
                {"ZPOPMIN", "k"},
                {"ZRANK", "k", "a"}};
      case ValueType::kHash:
        return {{"HGETALL", "k"}, {"HRANDFIELD", "k", "-3", "WITHVALUES"}, {"HDEL", "k", "f"}};
      case ValueType::kStream:
        return {{"XINFO", "STREAM", "k", "FULL"},
                {"XINFO", "GROUPS", "k"},
                {"XRANGE", "k", "-", "+"},
                {"XREVRANGE", "k", "+", "-", "COUNT", "2"},
                {"XPENDING", "k", "g", "-", "+", "10"},
                {"XPENDING", "k", "g1", "-", "+", "10"},
                {"XAUTOCLAIM", "k", "g", "z", "0", "0-0"},
                {"XADD", "k", "*", "f", "v"},
                {"XTRIM", "k", "MAXLEN", "1"},
                {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", "0"}};
    }
    return {};
  }

  // The payload as the only key of a dump.rdb, sometimes with the file itself damaged
  // (header, opcodes, the key's length, a cut).
  static std::string RdbFile(const std::string& body, Rng& rng) {
    std::string f = "REDIS0011";
    f.push_back(static_cast<char>(kOpAux));
    AppendString(&f, "redis-ver", false);
    AppendString(&f, "7.2.6", false);
    f.push_back(static_cast<char>(kOpSelectDb));
    AppendLength(&f, 0);
    f.push_back(static_cast<char>(kOpResizeDb));
    AppendLength(&f, 1);
    AppendLength(&f, 0);
    if (rng() % 4 == 0) {
      f.push_back(static_cast<char>(kOpExpireTimeMs));
      AppendMillis(&f, 4102444800000);
    }
    f.push_back(body.empty() ? '\0' : body[0]);
    AppendString(&f, "key", false);
    f.append(body.empty() ? std::string() : body.substr(1));
    f.push_back(static_cast<char>(kOpEof));
    if (rng() % 4 == 0) {
      int n = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < n; ++i) {
        size_t p = rng() % std::min<size_t>(f.size(), 40);
        f[p] = static_cast<char>(rng() % 2 ? kInterestingBytes[rng() % sizeof(kInterestingBytes)]
                                           : rng());
      }
    }
    AppendMillis(&f, static_cast<int64_t>(Crc64(0, f.data(), f.size())));
    if (rng() % 8 == 0) f.resize(rng() % f.size());
    return f;
  }

  // The start-up loader on RdbFile(body).
  void CheckRdbLoad(const std::string& body, Rng& rng) {
    ++stats_.rdb_files;
    std::string f = RdbFile(body, rng);
    if (ftruncate(memfd_, 0) != 0 ||
        pwrite(memfd_, f.data(), f.size(), 0) != static_cast<ssize_t>(f.size()) ||
        lseek(memfd_, 0, SEEK_SET) != 0) {
      Fail("memfd write failed");
    }
    RdbLoadOptions options;
    options.deep_sanitize = rng() % 2 == 0;
    RdbLoadStats st;
    std::string err = RdbLoad(rdb_server_, memfd_, options, &st);
    if (err.empty()) ++stats_.rdb_loaded;
    for (int i = 0; i < rdb_server_.db_count(); ++i) rdb_server_.db(i).Clear();
    rdb_server_.scripting().FlushLibraries();
  }

  // The AOF loader on a command stream that RESTOREs `payload` among ordinary commands (MULTI
  // blocks included), damaged the ways a crash or a hostile file damages one: cut at any byte,
  // a command header claiming 2^31-1 arguments or a bulk claiming 10^10 bytes (issue 20's
  // `*2147483647` abort), flipped bytes. Any outcome but a crash is fine: a truncated tail
  // loads its prefix, anything else is refused.
  void CheckAofLoad(const std::string& payload, Rng& rng) {
    ++stats_.aof_files;
    std::string f;
    auto put = [&f](std::initializer_list<std::string_view> argv) {
      f += "*" + std::to_string(argv.size()) + "\r\n";
      for (std::string_view a : argv) {
        f += "$" + std::to_string(a.size()) + "\r\n";
        f += a;
        f += "\r\n";
      }
    };
    put({"SELECT", "0"});
    put({"SET", "a", RandomToken(rng)});
    put({"MULTI"});
    put({"RPUSH", "l", "x", RandomToken(rng)});
    put({"INCR", "n"});
    put({"EXEC"});
    put({"RESTORE", "r", "0", payload, "REPLACE"});
    put({"XADD", "x", "1-1", "f", "v"});
    static constexpr std::string_view kImpossible[] = {
        "*2147483647\r\n", "*-5\r\n", "$9999999999\r\n", "*99999999999999999999\r\n"};
    switch (rng() % 4) {
      case 0:
        f.resize(rng() % f.size());
        break;
      case 1:
        f.insert(rng() % 2 == 0 ? f.size() : rng() % f.size(), kImpossible[rng() % 4]);
        break;
      case 2:
        for (int i = 1 + static_cast<int>(rng() % 4); i > 0; --i) {
          f[rng() % f.size()] ^= static_cast<char>(1 + rng() % 255);
        }
        break;
      default:
        break;  // undamaged
    }
    std::string path = aof_dir_ + "/" + kAofName;
    FILE* out = fopen(path.c_str(), "wb");
    if (out == nullptr || fwrite(f.data(), 1, f.size(), out) != f.size() || fclose(out) != 0) {
      Fail("cannot write " + path);
    }
    AofLoadOptions options;
    options.load_truncated = rng() % 2 == 0;
    if (LoadAofFile(rdb_server_, aof_dir_, kAofName, options) == AofLoadStatus::kOk) {
      ++stats_.aof_loaded;
    }
    for (int i = 0; i < rdb_server_.db_count(); ++i) rdb_server_.db(i).Clear();
  }

  struct Stats {
    uint64_t payloads = 0, accepted = 0, rejected = 0, commands = 0, rdb_files = 0, rdb_loaded = 0;
    uint64_t aof_files = 0, aof_loaded = 0;
  };
  static constexpr const char* kAofName = "fuzz.aof";

  Server server_;
  Client client_;
  Server rdb_server_;
  int memfd_;
  std::string aof_dir_;
  std::vector<std::string> seeds_;
  Stats stats_;
};

uint64_t IterationSeed(uint64_t seed, uint64_t i) {
  // splitmix64 of the pair: independent streams per iteration.
  uint64_t z = seed * 0x9e3779b97f4a7c15ULL + i + 0x632be59bd9b4e019ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace
}  // namespace vireo

#ifdef VIREO_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static vireo::Harness harness;  // one server for the whole libFuzzer run
  harness.FeedBody(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
#else
int main(int argc, char** argv) {
  uint64_t seed = 1, iterations = 100000, start = 0, rdb_every = 50, aof_every = 50;
  uint64_t command_every = 4;
  uint64_t emit_count = 0;
  std::string emit_dir;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> uint64_t {
      if (i + 1 >= argc) {
        fprintf(stderr, "%s needs a value\n", a.c_str());
        exit(2);
      }
      return strtoull(argv[++i], nullptr, 10);
    };
    if (a == "--seed") {
      seed = value();
    } else if (a == "--iterations") {
      iterations = value();
    } else if (a == "--start") {
      start = value();
    } else if (a == "--rdb-every") {
      rdb_every = std::max<uint64_t>(1, value());
    } else if (a == "--aof-every") {
      aof_every = std::max<uint64_t>(1, value());
    } else if (a == "--command-every") {
      command_every = std::max<uint64_t>(1, value());
    } else if (a == "--emit-rdb" && i + 2 < argc) {
      emit_dir = argv[++i];
      emit_count = value();
    } else if (a == "--verbose") {
      verbose = true;
    } else {
      fprintf(stderr,
              "usage: restore_fuzz [--seed S] [--iterations N] [--start I] [--rdb-every K] "
              "[--aof-every K] [--command-every K] [--emit-rdb DIR COUNT] [--verbose]\n");
      return 2;
    }
  }
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) signal(sig, vireo::OnFatalSignal);
  if (vireo::__sanitizer_set_death_callback != nullptr) {
    vireo::__sanitizer_set_death_callback(vireo::WriteIterationLine);
  }
  spdlog::set_level(spdlog::level::off);  // the loader's warnings about bad files are expected
  auto t0 = std::chrono::steady_clock::now();
  vireo::Harness harness;
  harness.BuildCorpus(seed);
  vireo::g_current_seed = seed;
  if (!emit_dir.empty()) {
    // DIR/fuzz-<i>.rdb for i in [start, start + COUNT): mutated start-up files.
    for (uint64_t i = start; i < start + emit_count; ++i) {
      vireo::Rng rng(vireo::IterationSeed(seed, i));
      std::string f = harness.MutatedRdbFile(rng);
      std::string path = emit_dir + "/fuzz-" + std::to_string(i) + ".rdb";
      FILE* out = fopen(path.c_str(), "wb");
      if (out == nullptr || fwrite(f.data(), 1, f.size(), out) != f.size() || fclose(out) != 0) {
        fprintf(stderr, "cannot write %s\n", path.c_str());
        return 1;
      }
    }
    return 0;
  }
  for (uint64_t i = start; i < start + iterations; ++i) {
    vireo::g_current_iteration = i;
    if (verbose) fprintf(stderr, "iteration %" PRIu64 "\n", i);
    if (i > start && (i - start) % 100000 == 0) {
      fprintf(stderr, "restore_fuzz: %" PRIu64 " iterations\n", i - start);
    }
    vireo::Rng rng(vireo::IterationSeed(seed, i));
    // AOF files on other iterations than RDB files: each costs a file write and a load.
    harness.Iterate(rng, i % command_every == 0, i % rdb_every == 0,
                    (i + aof_every / 2) % aof_every == 0);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  harness.Report(secs);
  return 0;
}
#endif

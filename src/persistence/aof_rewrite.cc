// A rewrite base without the RDB preamble (aof-use-rdb-preamble no): the dataset as the
// shortest commands that rebuild it. Strings and lists are written as SET / RPUSH (64 elements
// a command, like Redis); other types as RESTORE of their DUMP payload, which Redis loads too.
// Runs in the rewrite child: it only reads the dataset and writes to a descriptor.
#include "persistence/aof_rewrite.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/child_processes.h"
#include "db/database.h"
#include "persistence/persistence_host.h"
#include "persistence/rdb.h"
#include "scripting/scripting.h"
#include "types/hash_object.h"
#include "types/packed_list.h"

namespace vireo {
namespace {

constexpr size_t kItemsPerCommand = 64;
constexpr size_t kFlushAt = 1 << 20;

class CommandWriter {
 public:
  explicit CommandWriter(int fd) : fd_(fd) {}

  void Begin(size_t argc) {
    buf_.push_back('*');
    buf_ += std::to_string(argc);
    buf_ += "\r\n";
  }
  void Raw(std::string_view text) { buf_.append(text); }
  void Arg(std::string_view a) {
    buf_.push_back('$');
    buf_ += std::to_string(a.size());
    buf_ += "\r\n";
    buf_.append(a);
    buf_ += "\r\n";
  }
  bool MaybeFlush() { return buf_.size() < kFlushAt || Flush(); }
  bool Flush() {
    size_t done = 0;
    while (done < buf_.size()) {
      ssize_t n = write(fd_, buf_.data() + done, buf_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error_ = strerror(errno);
        return false;
      }
      done += static_cast<size_t>(n);
    }
    buf_.clear();
    return true;
  }
  const std::string& error() const { return error_; }

 private:
  int fd_;
  std::string buf_;
  std::string error_;
};

void WriteList(CommandWriter& w, std::string_view key, const PackedList& list) {
  size_t total = list.size();
  size_t index = 0;
  while (index < total) {
    size_t batch = std::min(kItemsPerCommand, total - index);
    w.Begin(2 + batch);
    w.Arg("RPUSH");
    w.Arg(key);
    list.ForRange(static_cast<int64_t>(index), static_cast<int64_t>(index + batch - 1),
                  [&](std::string_view v) {
                    w.Arg(v);
                    return true;
                  });
    index += batch;
  }
}

// A hash with field TTLs: HSET batches, then one HPEXPIREAT per field with a TTL (absolute
// times, so replaying later expires them when they would have expired anyway).
void WriteHashWithTtls(CommandWriter& w, std::string_view key, const HashObject& hash) {
  std::vector<std::pair<std::string_view, std::string_view>> batch;
  auto flush = [&] {
    w.Begin(2 + 2 * batch.size());
    w.Arg("HSET");
    w.Arg(key);
    for (auto [f, v] : batch) {
      w.Arg(f);
      w.Arg(v);
    }
    batch.clear();
  };
  hash.ForEach([&](std::string_view f, std::string_view v) {
    batch.emplace_back(f, v);
    if (batch.size() == kItemsPerCommand) flush();
  });
  if (!batch.empty()) flush();
  hash.ForEachFieldTtl([&](std::string_view f, int64_t when) {
    w.Begin(6);
    w.Arg("HPEXPIREAT");
    w.Arg(key);
    w.Arg(std::to_string(when));
    w.Arg("FIELDS");
    w.Arg("1");
    w.Arg(f);
  });
}

}  // namespace

std::string WriteDatasetAsCommands(PersistenceHost& host, int fd, std::string_view annotation) {
  CommandWriter w(fd);
  w.Raw(annotation);
  // Function libraries first, as Redis's rewrite does, so that a base without an RDB preamble
  // still brings them back on load.
  for (const auto& [name, code] : host.FunctionLibraries().EnumerateLibraries()) {
    w.Begin(3);
    w.Arg("FUNCTION");
    w.Arg("LOAD");
    w.Arg(code);
  }
  bool ok = true;
  for (int i = 0; i < host.PersistedDbCount() && ok; ++i) {
    Database& db = host.PersistedDb(i);
    if (db.size() == 0) continue;
    std::string index = std::to_string(i);
    w.Begin(2);
    w.Arg("SELECT");
    w.Arg(index);
    db.ForEach([&](DbEntry* entry) {
      if (!ok) return;
      std::string_view key = entry->key.view();
      const Value& value = entry->value;
      switch (value.type()) {
        case ValueType::kString: {
          char scratch[24];
          w.Begin(3);
          w.Arg("SET");
          w.Arg(key);
          w.Arg(value.StringView(scratch));
          break;
        }
        case ValueType::kList:
          WriteList(w, key, *value.As<PackedList>());
          break;
        case ValueType::kHash:
          if (value.As<HashObject>()->has_field_ttls()) {
            WriteHashWithTtls(w, key, *value.As<HashObject>());
            break;
          }
          [[fallthrough]];
        default: {
          w.Begin(4);
          w.Arg("RESTORE");
          w.Arg(key);
          w.Arg("0");
          w.Arg(RdbDumpValue(value, false));
          break;
        }
      }
      int64_t when = db.GetExpire(entry);
      if (when >= 0) {
        w.Begin(3);
        w.Arg("PEXPIREAT");
        w.Arg(key);
        w.Arg(std::to_string(when));
      }
      ok = w.MaybeFlush();
      host.PersistenceChildren().ChildKeyProcessed();
    });
  }
  if (ok) ok = w.Flush();
  return ok ? "" : w.error();
}

}  // namespace vireo

#include "core/propagator.h"

#include "protocol/resp_command.h"
#include "util/strings.h"

namespace vireo {
namespace {

constexpr std::string_view kMulti = "*1\r\n$5\r\nMULTI\r\n";
constexpr std::string_view kExec = "*1\r\n$4\r\nEXEC\r\n";

bool IsTransactionMarker(const std::vector<std::string>& command) {
  return command.size() == 1 &&
         (EqualsIgnoreCase(command[0], "multi") || EqualsIgnoreCase(command[0], "exec"));
}

}  // namespace

bool Propagator::Active() const {
  for (const EffectSink* sink : sinks_) {
    if (sink->Accepting()) return true;
  }
  return false;
}

template <typename Seq>
void Propagator::Record(int db, const Seq& argv, uint8_t targets) {
  const size_t begin = pending_.size();
  AppendRespCommand(&pending_, argv);
  ops_.push_back({db, begin, pending_.size(), targets});
}

void Propagator::EndCall(const CallRecord& call, uint64_t token, uint64_t dirty_delta,
                         bool blocked, bool in_script) {
  // SCAN and RANDOMKEY may lazily expire any number of keys: like Redis, their DELs go out
  // one by one rather than as a transaction.
  if (depth_ == 1) {
    unit_untransacted_ = call.touches_arbitrary_keys;
  }
  // A command that blocks is logged when it is served, but what it did before blocking and
  // said explicitly (XREADGROUP creating its consumer) goes out now, as in Redis.
  if (!in_script && Active()) {
    const int db = call.db;
    if (call.effects != nullptr && call.effects->overridden) {
      for (size_t i = 0; i < call.effects->commands.size(); ++i) {
        const std::vector<std::string>& command = call.effects->commands[i];
        if (!IsTransactionMarker(command)) Record(db, command, call.effects->targets[i]);
      }
    } else if (!blocked && dirty_delta > 0 && calls_started_ == token) {
      // calls_started_ moved: the command ran others (EXEC, a script), which recorded
      // themselves.
      Record(db, call.argv);
    }
  }
  Leave();
}

void Propagator::Feed(int db, std::span<const std::string_view> argv, uint8_t targets) {
  if (!Active()) return;
  Record(db, argv, targets);
  if (depth_ == 0) FlushUnit();
}

void Propagator::FlushUnit() {
  if (ops_.empty()) return;
  for (EffectSink* sink : sinks_) {
    if (!sink->Accepting()) continue;
    // Each sink gets the ops meant for it (redis.set_repl), in a transaction when they are
    // more than one.
    const uint8_t bit = sink->target();
    size_t count = 0;
    for (const Op& op : ops_) {
      if ((op.targets & bit) == 0) continue;
      ++count;
    }
    if (count == 0) continue;
    // MULTI and EXEC carry no database: the SELECT (if any) comes inside, as Redis 7 writes.
    const bool transaction = count > 1 && !unit_untransacted_;
    if (transaction) sink->AppendEffect(EffectSink::kNoDb, kMulti);
    for (const Op& op : ops_) {
      if ((op.targets & bit) == 0) continue;
      sink->AppendEffect(op.db, std::string_view(pending_).substr(op.begin, op.end - op.begin));
    }
    if (transaction) sink->AppendEffect(EffectSink::kNoDb, kExec);
  }
  ops_.clear();
  unit_untransacted_ = false;
  // A unit that grew large (a big MSET) doesn't keep its buffer.
  if (pending_.capacity() > (1u << 20)) {
    std::string().swap(pending_);
  } else {
    pending_.clear();
  }
}

}  // namespace vireo

// The effect stream: every change to the dataset, as commands that replay it, in the order
// they happened, framed once and handed to each consumer (the AOF, the replication stream).
//
// Server::Call brackets every command with BeginCall/EndCall. A write command that changed
// data (the dirty counter moved) is recorded as received, unless it asked for something else
// (CallEffects, filled by CommandContext::PropagateInstead/PropagateNothing); a command that ran other commands
// (EXEC, scripts) is represented by what those recorded. Work outside commands (expiry,
// eviction) is fed with Feed. What one top-level call records is one unit: when the call ends
// it goes out, wrapped in MULTI/EXEC when it holds more than one command (as Redis 7 does),
// with the first command's database for the MULTI. Each sink puts its own SELECTs in front of
// commands whose database differs from the last one it wrote, since each has its own idea of
// the selected database (a new AOF file, a new replica, start from none).
//
// Commands are encoded as RESP once, into one buffer, whatever the number of sinks.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vireo {

// Where an effect goes: a script's redis.set_repl() may keep its next writes out of the AOF or
// away from replicas (Redis's REPL_AOF = 1, REPL_REPLICA = 2).
enum EffectTarget : uint8_t { kEffectToNone = 0, kEffectToAof = 1, kEffectToReplicas = 2,
                              kEffectToAll = 3 };

// What one command asked to be propagated instead of itself (CommandContext::PropagateInstead):
// `overridden` with no commands means nothing.
struct CallEffects {
  bool overridden = false;
  std::vector<std::vector<std::string>> commands;
  std::vector<uint8_t> targets;  // EffectTarget bits, one per command
  void Replace(std::vector<std::string> command, uint8_t target) {
    overridden = true;
    commands.push_back(std::move(command));
    targets.push_back(target);
  }
};

// A finished call as the effect stream sees it: plain data, so the stream needs nothing of the
// server or its command context.
struct CallRecord {
  int db = 0;
  std::span<const std::string_view> argv;  // as received
  const CallEffects* effects = nullptr;    // what it asked for instead, if anything
  // SCAN and RANDOMKEY (kCmdTouchesArbitraryKeys): their lazy expiries are never wrapped.
  bool touches_arbitrary_keys = false;
};

// The effects a running script produced (propagated instead of the script), each with the
// targets redis.set_repl() allowed when it ran.
struct ScriptEffects {
  std::vector<std::vector<std::string>> commands;
  std::vector<uint8_t> targets;
  uint8_t current = kEffectToAll;
  void Add(std::vector<std::string> command) {
    commands.push_back(std::move(command));
    targets.push_back(current);
  }
};

class EffectSink {
 public:
  virtual ~EffectSink() = default;
  // Which EffectTarget this sink is (the AOF, or the replication stream).
  virtual uint8_t target() const = 0;
  // Whether the sink wants effects now (the AOF: logging is on and not loading).
  virtual bool Accepting() const = 0;
  // One command, as a RESP multibulk, for database `db` (kNoDb: MULTI / EXEC, which need no
  // SELECT before them).
  virtual void AppendEffect(int db, std::string_view resp) = 0;
  static constexpr int kNoDb = -1;
};

class Propagator {
 public:
  void AddSink(EffectSink* sink) { sinks_.push_back(sink); }
  // Whether anything consumes effects now (callers skip building effects when not).
  bool Active() const;

  uint64_t BeginCall() {
    ++depth_;
    return ++calls_started_;
  }
  // `dirty_delta`: how much the dirty counter moved during the command. A command that blocked
  // records nothing (it runs again when served); one run by a script records nothing either
  // (the script records its effects; MULTI/EXEC in its PropagateInstead list are dropped,
  // since the unit is wrapped here anyway).
  void EndCall(const CallRecord& call, uint64_t token, uint64_t dirty_delta, bool blocked,
               bool in_script);
  // The end of a call that recorded nothing itself: when it was the top-level one, its unit
  // goes out.
  void Leave() {
    if (--depth_ == 0) FlushUnit();
  }
  // One command for database `db`, from work done outside a command's own logic (expiry,
  // eviction). Inside a call it joins that call's unit; outside, it is a unit of its own.
  void Feed(int db, std::span<const std::string_view> argv, uint8_t targets = kEffectToAll);
  // How deeply calls are nested now (0: between commands; 2+: inside EXEC or a script).
  int depth() const { return depth_; }

 private:
  struct Op {
    int db;
    size_t begin;
    size_t end;
    uint8_t targets;
  };
  template <typename Seq>
  void Record(int db, const Seq& argv, uint8_t targets = kEffectToAll);
  void FlushUnit();

  std::vector<EffectSink*> sinks_;
  std::string pending_;  // the RESP of the unit's commands, back to back
  std::vector<Op> ops_;
  int depth_ = 0;
  // The unit's top-level command touches arbitrary keys (SCAN, RANDOMKEY): never wrapped.
  bool unit_untransacted_ = false;
  uint64_t calls_started_ = 0;
};

}  // namespace vireo

// What a command handler sees: the client, its database, the reply builder and the arguments.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/database.h"
#include "protocol/reply_builder.h"
#include "replication/propagator.h"

namespace vireo {

class Server;
class Client;
struct CommandSpec;

// Redis's shared error texts, so every family words them identically.
namespace errors {
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kOutOfRange = "ERR index out of range";
inline constexpr std::string_view kDbIndexOutOfRange = "ERR DB index is out of range";
inline constexpr std::string_view kInvalidExpire = "ERR invalid expire time in '%s' command";
}  // namespace errors

class CommandContext {
 public:
  CommandContext(Server& server, Client& client, Database& db, ReplyBuilder& reply,
                 std::span<const std::string_view> argv, const CommandSpec* spec)
      : server(server), client(client), db(db), reply(reply), argv(argv), spec(spec) {}

  size_t argc() const { return argv.size(); }
  std::string_view arg(size_t i) const { return argv[i]; }

  // True while running inside EXEC or a script: blocking commands must not block there.
  bool in_exec = false;
  // Blocking commands call this to decide: false inside MULTI/EXEC and scripts, where they
  // behave as their non-blocking forms.
  bool may_block() const { return !in_exec; }

  // Replication/AOF: by default a write command that changed data (dirty > 0) is logged as
  // received. Commands whose effect is not deterministic from their arguments (SPOP, EXPIRE's
  // relative times, XADD *, INCRBYFLOAT, blocking pops...) log what they did instead: each
  // PropagateInstead call adds one command to the replacement, in order. PropagateNothing logs
  // nothing for this call.
  void PropagateInstead(std::vector<std::string> command, uint8_t targets = kEffectToAll) {
    propagation_overridden = true;
    propagation.push_back(std::move(command));
    propagation_targets.push_back(targets);
  }
  void PropagateNothing() { propagation_overridden = true; }
  bool propagation_overridden = false;
  std::vector<std::vector<std::string>> propagation;
  std::vector<uint8_t> propagation_targets;  // EffectTarget bits, one per propagation entry

  Server& server;
  Client& client;
  Database& db;
  ReplyBuilder& reply;
  std::span<const std::string_view> argv;
  const CommandSpec* spec;
};

}  // namespace vireo

// What a command handler sees: the client, its database, the reply builder and the arguments.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"
#include "core/propagator.h"
#include "db/database.h"
#include "protocol/reply_builder.h"

namespace vireo {

class Server;
class Client;
class BlockingService;
class ClientRegistry;
class ClientPause;
struct CommandSpec;

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
    effects.Replace(std::move(command), targets);
  }
  void PropagateNothing() { effects.overridden = true; }
  CallEffects effects;

  // The services a handler may need beyond its client and database (src/server/
  // command_context.cc): blocking and waking clients, the other clients, CLIENT PAUSE.
  BlockingService& blocking() const;
  ClientRegistry& clients() const;
  ClientPause& client_pause() const;

  Server& server;
  Client& client;
  Database& db;
  ReplyBuilder& reply;
  std::span<const std::string_view> argv;
  const CommandSpec* spec;
};

}  // namespace vireo

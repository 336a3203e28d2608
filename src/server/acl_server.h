// Where ACL meets the server: the permission hook every command path calls (direct, EXEC,
// scripts), authentication, the ACL log, dropping clients whose user went away, and loading
// users at start-up.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "security/acl.h"

namespace vireo {

class Client;
class Server;
struct CommandSpec;

// Where the command runs: a request (kQueued: being queued in MULTI, logged as "multi"),
// a command EXEC runs, a script's redis.call.
enum class AclContext { kToplevel, kQueued, kExec, kLua };

// ACL's operations on the server, a handle made where needed (AclService(server), or
// CommandContext::acl_service() in a command handler).
class AclService {
 public:
  explicit AclService(Server& server) : server_(server) {}

  // Whether `client`'s user may run the call. On a denial the ACL log gets an entry and
  // `*error` the NOPERM reply (without the leading '-') in the wording of `context`'s path.
  // Clients without a user (internal ones) run anything. Inline fast path: the unrestricted
  // user costs a pointer test and a flag.
  bool CheckCommand(Client& client, const CommandSpec& spec, std::span<const std::string_view> argv,
                    AclContext context, std::string* error, const AclUser* user) {
    if (user == nullptr || user->unrestricted()) return true;
    return CheckCommandSlow(client, *user, spec, argv, context, error);
  }

  // SORT's BY and GET read keys no key spec names. As Redis (ACLUserCheckCmdWithUnrestricted-
  // KeyAccess), they are allowed only when one selector both allows the call and may read
  // every key (allkeys, ~* or %R~*). The user is the running client's (a script's caller).
  bool MayReadAnyKey(Client& client, const CommandSpec& spec,
                     std::span<const std::string_view> argv);

  // AUTH / HELLO AUTH: logs a failure (reason auth). On success the client is authenticated
  // as the user.
  bool Authenticate(Client& client, std::string_view username, std::string_view password);

  // Appends an ACL log entry for `client` (the running client's info, as Redis).
  void Log(Client& client, AclResult reason, AclContext context, std::string_view object,
           std::string_view username);

  // A user was deleted (or replaced by ACL LOAD): its clients become unauthenticated default
  // clients and are closed (after the reply, for the one running this command).
  void DisconnectUser(const AclUser* user);
  // A user was switched off (ACL SETUSER off, ACL LOAD turning the default user off): its
  // authenticated clients are closed, except the one running the command (which chose this,
  // and which Redis's own test suite keeps using after `ACL SETUSER default off`).
  void DisconnectDisabledUser(const AclUser* user);
  // After a user's channel permissions changed: closes its subscribers holding a subscription
  // the user may no longer make.
  void DisconnectRevokedSubscribers(const AclUser* user);

  // The users from the config file's `user` lines or the aclfile (not both), at start-up.
  // Returns "" or the error to exit with.
  std::string LoadAtStartup();
  // ACL LOAD: "" or the error reply text.
  std::string LoadFile();
  // ACL SAVE: false on an I/O error (logged).
  bool SaveFile();
  // acl-pubsub-default (start-up and CONFIG SET). Redis reads it whenever a rule needs it (a
  // new user or selector, `reset`), so every existing user follows the current value too.
  void ApplyPubsubDefault();
  // requirepass: the default user's only password, or nopass when empty.
  void ApplyRequirepass();
  // New connections are authenticated at once when the default user needs no password.
  bool DefaultUserNoAuth();

 private:
  bool CheckCommandSlow(Client& client, const AclUser& user, const CommandSpec& spec,
                        std::span<const std::string_view> argv, AclContext context,
                        std::string* error);

  Server& server_;
};

}  // namespace vireo

// The server side of ACL (see acl_server.h).
#include "server/acl_server.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/command_table.h"
#include "server/info.h"
#include "server/server.h"
#include "util/clock.h"

namespace vireo {
namespace {

std::string_view ContextName(AclContext context) {
  switch (context) {
    case AclContext::kQueued:
    case AclContext::kExec:
      return "multi";
    case AclContext::kLua:
      return "lua";
    case AclContext::kToplevel:
      break;
  }
  return "toplevel";
}

bool ReadFile(const std::string& path, std::string* out, int* err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = errno;
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

void DisconnectDropped(Server& server, std::vector<std::unique_ptr<AclUser>>& dropped) {
  for (const auto& user : dropped) AclService(server).DisconnectUser(user.get());
}

}  // namespace

void AclService::Log(Client& client, AclResult reason, AclContext context, std::string_view object,
                     std::string_view username) {
  Server& server = server_;
  AclRegistry::LogEntry entry;
  entry.reason = reason;
  entry.context = std::string(ContextName(context));
  entry.object = std::string(object);
  entry.username = std::string(username);
  entry.ctime_ms = NowMs();
  // A script's commands run on the script's own client: the log names the caller.
  Client* current = server.clients().current_client();
  Client* real = current != nullptr ? current : &client;
  entry.client_info = ServerReports(server).ClientLine(*real);
  server.acl().AddLog(std::move(entry), static_cast<size_t>(server.cfg().acllog_max_len));
}

bool AclService::CheckCommandSlow(Client& client, const AclUser& user, const CommandSpec& spec,
                                  std::span<const std::string_view> argv, AclContext context,
                                  std::string* error) {
  size_t pos = 0;
  AclResult result = user.Check(spec, argv, &pos);
  if (result == AclResult::kOk) return true;
  std::string_view object =
      result == AclResult::kDeniedCmd ? std::string_view(spec.name) : argv[pos];
  Log(client, result, context, object, user.name());
  std::string msg = AclErrorMessage(result, user.name(), spec, argv[pos], false);
  switch (context) {
    case AclContext::kToplevel:
    case AclContext::kQueued:
      *error = "NOPERM " + msg;
      break;
    case AclContext::kLua:
      *error = "ACL failure in script: " + msg;
      break;
    case AclContext::kExec: {
      std::string_view reason =
          result == AclResult::kDeniedCmd   ? "no permission to execute the command or subcommand"
          : result == AclResult::kDeniedKey ? "no permission to touch the specified keys"
                                            : "no permission to access one of the channels used "
                                              "as arguments";
      *error =
          "NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
          "EXEC call. This command is no longer allowed for the following reason: " +
          std::string(reason);
      break;
    }
  }
  return false;
}

bool AclService::MayReadAnyKey(Client& client, const CommandSpec& spec,
                               std::span<const std::string_view> argv) {
  Server& server = server_;
  Client* current = server.clients().current_client();
  const Client* caller = current != nullptr ? current : &client;
  const AclUser* user = caller->acl_user();
  if (user == nullptr || user->unrestricted()) return true;
  std::vector<KeyRef> keys;
  bool keys_ready = false;
  for (const AclSelector& s : user->selectors()) {
    size_t pos = 0;
    if (s.Check(spec, argv, &keys, &keys_ready, &pos) != AclResult::kOk) continue;
    if (s.all_keys()) return true;
    // Only the literal pattern "*" with read permission covers every key name.
    const std::string described = " " + s.DescribeKeys() + " ";
    for (std::string_view pattern : {" ~* ", " %R~* ", " %RW~* "}) {
      if (described.find(pattern) != std::string::npos) return true;
    }
  }
  return false;
}

bool AclService::Authenticate(Client& client, std::string_view username,
                              std::string_view password) {
  Server& server = server_;
  AclUser* user = server.acl().Find(username);
  if (user != nullptr && user->CheckPassword(password)) {
    client.set_acl_user(user);
    client.set_authenticated(true);
    return true;
  }
  Log(client, AclResult::kDeniedAuth,
      client.has(kClientMulti) ? AclContext::kQueued : AclContext::kToplevel, "AUTH", username);
  return false;
}

void AclService::DisconnectUser(const AclUser* user) {
  Server& server = server_;
  for (const auto& [id, client] : server.clients().All()) {
    if (client->acl_user() != user || client->closed) continue;
    client->set_acl_user(server.acl().default_user());
    client->set_authenticated(false);
    if (client.get() == server.clients().current_client()) {
      server.clients().CloseAfterReply(*client);
    } else {
      server.clients().CloseClient(*client);
    }
  }
}

void AclService::DisconnectDisabledUser(const AclUser* user) {
  Server& server = server_;
  for (const auto& [id, client] : server.clients().All()) {
    if (client->acl_user() != user || client->closed || !client->authenticated() ||
        client.get() == server.clients().current_client()) {
      continue;
    }
    server.clients().CloseClient(*client);
  }
}

void AclService::DisconnectRevokedSubscribers(const AclUser* user) {
  Server& server = server_;
  PubsubEngine& pubsub = server.pubsub();
  for (const auto& [id, client] : server.clients().All()) {
    if (client->acl_user() != user || client->closed || !client->has(kClientPubsub)) continue;
    bool revoked = false;
    for (PubsubKind kind : {PubsubKind::kPattern, PubsubKind::kChannel, PubsubKind::kShard}) {
      for (const std::string& name : pubsub.SubscriptionsOf(*client, kind)) {
        if (!user->ChannelAllowed(name, kind == PubsubKind::kPattern)) {
          revoked = true;
          break;
        }
      }
      if (revoked) break;
    }
    if (!revoked) continue;
    if (client.get() == server.clients().current_client()) {
      server.clients().CloseAfterReply(*client);
    } else {
      server.clients().CloseClient(*client);
    }
  }
}

void AclService::ApplyPubsubDefault() {
  Server& server = server_;
  const bool all = server.cfg().acl_pubsub_default == "allchannels";
  server.acl().set_pubsub_all_default(all);
  for (const auto& [name, user] : server.acl().users()) user->all_channels_default = all;
}

void AclService::ApplyRequirepass() {
  Server& server = server_;
  AclUser* user = server.acl().default_user();
  user->Apply("resetpass");
  const std::string& pass = server.cfg().requirepass;
  if (pass.empty()) {
    user->Apply("nopass");
  } else {
    user->Apply(">" + pass);
  }
}

bool AclService::DefaultUserNoAuth() {
  Server& server = server_;
  const AclUser* user = server.acl().default_user();
  return user->nopass() && user->enabled();
}

std::string AclService::LoadAtStartup() {
  Server& server = server_;
  const ServerConfig& c = server.cfg();
  ApplyPubsubDefault();
  ApplyRequirepass();
  if (!c.aclfile.empty() && !c.acl_users.empty()) {
    return "Configuring Redis with users defined in redis.conf and at the same setting an ACL "
           "file path is invalid. This setup is very likely to lead to configuration errors and "
           "security holes, please define either an ACL file or declare users directly in your "
           "redis.conf, but not both.";
  }
  AclRegistry& acl = server.acl();
  for (const std::vector<std::string>& line : c.acl_users) {
    if (line.empty()) continue;
    const std::string& name = line[0];
    AclUser* user = acl.Find(name);
    if (user == nullptr) {
      user = acl.Create(name);
    } else {
      user->Apply("reset");  // only "default" can already exist
    }
    std::vector<std::string> rules(line.begin() + 1, line.end());
    std::string error;
    if (!user->ApplyAll(rules, &error)) {
      return fmt::format("Error in user declaration '{}': {}", name, error);
    }
  }
  if (!c.aclfile.empty()) {
    std::string text;
    int err = 0;
    if (!ReadFile(c.aclfile, &text, &err)) {
      return fmt::format(
          "Aborting Redis startup because of ACL errors: Error loading ACLs, opening file "
          "'{}': {}",
          c.aclfile, strerror(err));
    }
    std::map<std::string, std::unique_ptr<AclUser>, std::less<>> users;
    std::string errors = acl.Parse(text, c.aclfile, &users);
    if (!errors.empty()) return "Aborting Redis startup because of ACL errors: " + errors;
    acl.Replace(std::move(users));
  }
  return "";
}

std::string AclService::LoadFile() {
  Server& server = server_;
  const std::string& path = server.cfg().aclfile;
  std::string text;
  int err = 0;
  if (!ReadFile(path, &text, &err)) {
    return fmt::format("Error loading ACLs, opening file '{}': {}", path, strerror(err));
  }
  std::map<std::string, std::unique_ptr<AclUser>, std::less<>> users;
  std::string errors = server.acl().Parse(text, path, &users);
  if (!errors.empty()) return errors;
  // As Redis 7.2: every other user is replaced, so all their clients go (even where the user's
  // rules didn't change); the default user is updated in place and its clients stay, unless
  // the file switches it off.
  const bool default_was_enabled = server.acl().default_user()->enabled();
  std::vector<std::unique_ptr<AclUser>> dropped = server.acl().Replace(std::move(users));
  DisconnectDropped(server, dropped);
  if (default_was_enabled && !server.acl().default_user()->enabled()) {
    DisconnectDisabledUser(server.acl().default_user());
  }
  return "";
}

bool AclService::SaveFile() {
  Server& server = server_;
  const std::string& path = server.cfg().aclfile;
  std::string content;
  for (const std::string& line : server.acl().ListLines()) content += line + "\n";
  std::string tmp = fmt::format("{}.tmp-{}-{}", path, getpid(), NowMs());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    spdlog::warn("Opening temp ACL file for ACL SAVE: {}", strerror(errno));
    return false;
  }
  size_t off = 0;
  bool ok = true;
  while (off < content.size()) {
    ssize_t n = write(fd, content.data() + off, content.size() - off);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      spdlog::warn("Writing ACL file for ACL SAVE: {}", strerror(errno));
      ok = false;
      break;
    }
    off += static_cast<size_t>(n);
  }
  if (ok && fsync(fd) != 0) {
    spdlog::warn("Syncing ACL file for ACL SAVE: {}", strerror(errno));
    ok = false;
  }
  close(fd);
  if (ok && rename(tmp.c_str(), path.c_str()) != 0) {
    spdlog::warn("Renaming ACL file for ACL SAVE: {}", strerror(errno));
    ok = false;
  }
  if (!ok) unlink(tmp.c_str());
  return ok;
}

}  // namespace vireo

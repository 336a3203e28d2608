#include "server/monitors.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "server/client.h"
#include "server/redaction.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {

void Monitors::Add(Client& client) {
  if (client.has(kClientMonitor)) return;
  client.set(kClientMonitor);
  monitors_.push_back(&client);
}

void Monitors::Remove(Client& client) { std::erase(monitors_, &client); }

void Monitors::FeedAll(const Client& client, std::span<const std::string_view> argv) {
  // Passwords never reach a monitor (AUTH, HELLO ... AUTH, MIGRATE ... AUTH).
  std::vector<std::string_view> redacted = RedactSecrets(argv);
  if (!redacted.empty()) argv = redacted;
  int64_t now_us = NowUs();
  std::string line =
      fmt::format("+{}.{:06d} [{} {}]", now_us / 1000000, now_us % 1000000, client.db_index(),
                  client.has(kClientUnixSocket) ? "unix:" + client.addr : client.addr);
  for (std::string_view arg : argv) {
    line += ' ';
    line += QuoteRepr(arg);
  }
  line += "\r\n";
  for (Client* monitor : monitors_) {
    if (monitor == &client || monitor->closed) continue;
    monitor->output().append(line);
    schedule_write_(*monitor);
  }
}

}  // namespace vireo

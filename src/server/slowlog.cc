#include "server/slowlog.h"

#include <fmt/format.h>

#include <algorithm>

#include "server/client.h"
#include "server/redaction.h"
#include "util/clock.h"

namespace vireo {

void Slowlog::Add(const Client& client, std::span<const std::string_view> argv, int64_t duration_us,
                  int64_t slower_than_us, int64_t max_len) {
  if (slower_than_us < 0 || duration_us < slower_than_us) return;
  std::vector<std::string_view> redacted = RedactSecrets(argv);
  if (!redacted.empty()) argv = redacted;
  SlowlogEntry entry;
  entry.id = next_id_++;
  entry.timestamp = NowMs() / 1000;
  entry.duration_us = duration_us;
  // Like Redis: at most 32 arguments, each at most 128 bytes, so the log stays small.
  size_t argc = std::min<size_t>(argv.size(), 32);
  for (size_t i = 0; i < argc; ++i) {
    if (argc == 32 && i == 31 && argv.size() > 32) {
      entry.argv.push_back(fmt::format("... ({} more arguments)", argv.size() - 31));
      break;
    }
    std::string_view a = argv[i];
    if (a.size() > 128) {
      entry.argv.push_back(fmt::format("{}... ({} more bytes)", a.substr(0, 128), a.size() - 128));
    } else {
      entry.argv.emplace_back(a);
    }
  }
  entry.peer = client.addr;
  entry.client_name = client.name;
  entries_.push_front(std::move(entry));
  while (entries_.size() > static_cast<size_t>(std::max<int64_t>(0, max_len))) {
    entries_.pop_back();
  }
}

}  // namespace vireo

#include "server/notify.h"

#include <string>

#include "server/pubsub.h"
#include "server/server.h"
#include "util/strings.h"

namespace vireo {

void NotifyKeyspaceEvent(Server& server, uint32_t event_class, std::string_view event,
                         std::string_view key, int db) {
  NotifyKeyspaceEvent(server.pubsub(), server.cfg().notify_keyspace_flags, event_class, event, key,
                      db);
}

void NotifyKeyspaceEvent(PubsubEngine& pubsub, uint32_t flags, uint32_t event_class,
                         std::string_view event, std::string_view key, int db) {
  if ((flags & event_class) == 0) return;
  // With nobody subscribed to anything the messages would reach no one: skip building them.
  if (pubsub.channel_count() == 0 && pubsub.pattern_count() == 0) return;
  char db_buf[24];
  std::string_view db_text(db_buf, FormatInt64(db, db_buf));
  std::string channel;
  channel.reserve(16 + db_text.size() + std::max(key.size(), event.size()));
  if (flags & kNotifyKeyspace) {
    channel.append("__keyspace@").append(db_text).append("__:").append(key);
    pubsub.Publish(channel, event);
  }
  if (flags & kNotifyKeyevent) {
    channel.clear();
    channel.append("__keyevent@").append(db_text).append("__:").append(event);
    pubsub.Publish(channel, key);
  }
}

}  // namespace vireo

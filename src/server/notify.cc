#include "server/notify.h"

#include "server/server.h"

namespace vireo {

void NotifyKeyspaceEvent(Server& server, uint32_t event_class, std::string_view event,
                         std::string_view key, int db) {
  if ((server.cfg().notify_keyspace_flags & event_class) == 0) return;
  // Delivery arrives with the pub/sub engine.
  (void)event;
  (void)key;
  (void)db;
}

}  // namespace vireo

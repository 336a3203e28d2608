// Keyspace notifications (notify-keyspace-events): every family calls NotifyKeyspaceEvent after
// a write, with Redis's event name, so subscribers of __keyspace@<db>__:<key> and
// __keyevent@<db>__:<event> hear about it.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/config.h"

namespace vireo {

class Server;
class PubsubEngine;

// Publishes the event if its class (a KeyspaceEventFlag such as kNotifyHash) is among the
// `enabled` ones (notify-keyspace-events as flags). Cheap when notifications are off: one flag
// test.
void NotifyKeyspaceEvent(PubsubEngine& pubsub, uint32_t enabled, uint32_t event_class,
                         std::string_view event, std::string_view key, int db);
// The same with the server's pub/sub and configuration.
void NotifyKeyspaceEvent(Server& server, uint32_t event_class, std::string_view event,
                         std::string_view key, int db);

}  // namespace vireo

// The cluster redirection decision: may this node run a request, or which error sends the
// client elsewhere (-MOVED, -ASK, -CROSSSLOT, -TRYAGAIN, -CLUSTERDOWN)? Redis 7.2 rules
// (getNodeByQuery): every key of the request (all queued commands for EXEC) must hash to one
// slot; that slot's owner, migration state, the client's ASKING / READONLY flags and the
// cluster's health decide. Pure: it reads a SlotRouting and asks a callback whether keys exist,
// so the rules are unit-tested without a bus or a server.
#ifndef VIREO_CLUSTER_REDIRECT_H_
#define VIREO_CLUSTER_REDIRECT_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "cluster/routing.h"

namespace vireo {
struct CommandSpec;
}

namespace vireo::cluster {

enum class Redirect : uint8_t {
  kNone,          // serve it here
  kMoved,         // -MOVED slot endpoint
  kAsk,           // -ASK slot endpoint (the slot is migrating and a key is already gone)
  kCrossSlot,     // keys in different slots
  kTryAgain,      // several keys of a slot being migrated, some here and some not
  kDownState,     // cluster down
  kDownReadOnly,  // cluster down, reads allowed, this is a write
  kDownUnbound,   // the slot has no owner
};

struct RedirectDecision {
  Redirect kind = Redirect::kNone;
  int slot = -1;         // the request's slot; -1 when it names no key
  std::string endpoint;  // "host:port" for kMoved / kAsk
};

// One command of a request: the command itself, or each command queued for EXEC.
struct RoutedCommand {
  const CommandSpec* spec;
  std::span<const std::string_view> argv;
};

struct RedirectRequest {
  std::span<const RoutedCommand> commands;
  // The top-level command's own write flag (EXEC, EVAL: not what they run): what the
  // cluster-down check looks at, as in Redis.
  bool command_is_write = false;
  // Also true when EXEC's queue holds a write: a READONLY client's request is then not a read.
  bool any_write = false;
  bool pubsub_shard = false;  // SPUBLISH / SSUBSCRIBE / SUNSUBSCRIBE: channels, not keys
  bool migrate = false;       // MIGRATE runs on an open (migrating/importing) slot
  bool asking = false;        // the client sent ASKING, or the command is flagged asking
  bool readonly = false;      // the client sent READONLY
};

struct RedirectOptions {
  bool allow_reads_when_down = false;       // cluster-allow-reads-when-down
  bool allow_pubsubshard_when_down = true;  // cluster-allow-pubsubshard-when-down
};

// Whether `key` is in db 0 (not expired; no side effects: no touch, no lazy deletion).
using KeyExistsFn = std::function<bool(std::string_view key)>;

// The fast path's key scan: the slot of a call's keys when its key specs put every key at a
// fixed position (SET, GET, MSET, DEL, LMOVE... but not EVAL's numkeys or SORT's STORE) and
// they all hash to one slot, found without allocating. kNoKeys when the command has none;
// kSlowPath when only the full rules can tell (other specs, malformed arguments, keys in
// several slots). Shard channels count as keys, as in DecideRedirect.
inline constexpr int kNoKeys = -1;
inline constexpr int kSlowPath = -2;
int FixedKeysSlot(const CommandSpec& spec, std::span<const std::string_view> argv);
// The same for a command queued by MULTI (it owns its arguments).
int FixedKeysSlot(const CommandSpec& spec, std::span<const std::string> argv);

// The decision for a request. Requests without keys are always served here.
RedirectDecision DecideRedirect(const RedirectRequest& request, const SlotRouting& routing,
                                const RedirectOptions& options, const KeyExistsFn& key_exists);

// For a client blocked on `key` (lists, sorted sets, streams) after slot ownership or the
// cluster state changed: kNone to keep waiting, else kMoved (the slot is served elsewhere and
// not being imported here), kDownUnbound (no owner) or kDownState (cluster down: a write that
// would serve it may never come, even if reads are allowed). `readonly_read`: a READONLY client
// blocked by a read command, which a replica of the slot's master may keep serving.
RedirectDecision DecideBlockedRedirect(std::string_view key, bool readonly_read,
                                       const SlotRouting& routing);

// The error reply text for a decision other than kNone, without the leading '-' (e.g.
// "MOVED 3999 127.0.0.1:6381", "CROSSSLOT Keys in request don't hash to the same slot").
std::string RedirectError(const RedirectDecision& decision);

// The text a script's redis.call fails with when the decision isn't kNone (Redis 7.2's
// scriptVerifyClusterState; the caller adds "ERR ").
std::string_view ScriptRedirectError(Redirect kind);
// ... and when a script reaches a key outside the slot of the keys it used first.
inline constexpr std::string_view kScriptCrossSlotError =
    "Script attempted to access keys that do not hash to the same slot";

}  // namespace vireo::cluster

#endif  // VIREO_CLUSTER_REDIRECT_H_

#include "cluster/redirect.h"

#include <fmt/format.h>

#include <vector>

#include "core/command_table.h"

namespace vireo::cluster {

namespace {

template <typename Arg>
int FixedKeysSlotOf(const CommandSpec& spec, std::span<const Arg> argv) {
  if (spec.key_specs.empty()) return kNoKeys;
  const int argc = static_cast<int>(argv.size());
  int slot = kNoKeys;
  for (const KeySpec& ks : spec.key_specs) {
    // Only what CommandSpec::GetKeys reads off the spec alone: an index, then a range whose
    // end is fixed or counted from the end (no "1/limit of the rest", no key finder).
    if (ks.begin != KeySpec::Begin::kIndex || ks.find != KeySpec::Find::kRange ||
        (ks.flags & kKeyIncomplete) != 0 || (ks.a < 0 && ks.c != 0)) {
      return kSlowPath;
    }
    const int first = ks.index;
    const int last = ks.a >= 0 ? first + ks.a : argc + ks.a;
    const int step = ks.b;
    if (step <= 0 || first < 0 || last >= argc || last < first) return kSlowPath;
    for (int i = first; i <= last; i += step) {
      const int key_slot = KeySlot(argv[static_cast<size_t>(i)]);
      if (slot == kNoKeys) {
        slot = key_slot;
      } else if (key_slot != slot) {
        return kSlowPath;
      }
    }
  }
  return slot;
}

}  // namespace

int FixedKeysSlot(const CommandSpec& spec, std::span<const std::string_view> argv) {
  return FixedKeysSlotOf(spec, argv);
}

int FixedKeysSlot(const CommandSpec& spec, std::span<const std::string> argv) {
  return FixedKeysSlotOf(spec, argv);
}

RedirectDecision DecideRedirect(const RedirectRequest& request, const SlotRouting& routing,
                                const RedirectOptions& options, const KeyExistsFn& key_exists) {
  RedirectDecision decision;
  std::string_view first_key;
  bool have_key = false;
  SlotOwner owner = SlotOwner::kUnassigned;
  bool migrating = false, importing = false;
  // Different keys (not just one key named twice, as RPOPLPUSH l l) in an importing slot.
  bool several_keys = false;
  int missing = 0, existing = 0;
  std::vector<KeyRef> keys;
  for (const RoutedCommand& cmd : request.commands) {
    keys.clear();
    // Shard channels are routed like keys.
    cmd.spec->GetKeys(cmd.argv, &keys, /*include_not_keys=*/true);
    for (const KeyRef& ref : keys) {
      std::string_view key = cmd.argv[ref.pos];
      const int slot = KeySlot(key);
      if (!have_key) {
        have_key = true;
        first_key = key;
        decision.slot = slot;
        owner = routing.Owner(slot);
        // Checked here, not only through ClusterUp: the cluster state may not have noticed the
        // unassigned slot yet.
        if (owner == SlotOwner::kUnassigned) {
          decision.kind = Redirect::kDownUnbound;
          return decision;
        }
        if (owner == SlotOwner::kMyself && !routing.MigratingEndpoint(slot).empty()) {
          migrating = true;
        } else if (routing.Importing(slot)) {
          importing = true;
        }
      } else {
        if (slot != decision.slot) {
          decision.kind = Redirect::kCrossSlot;
          return decision;
        }
        if (importing && key != first_key) several_keys = true;
      }
      // An open slot is served only if the keys are all here (or all gone, for -ASK). A shard
      // channel stays with the source node until the migration ends, so it isn't counted.
      if ((migrating || importing) && !request.pubsub_shard) {
        if (key_exists(key)) {
          ++existing;
        } else {
          ++missing;
        }
      }
    }
  }
  if (!have_key) return decision;

  if (!routing.ClusterUp()) {
    if (request.pubsub_shard) {
      if (!options.allow_pubsubshard_when_down) {
        decision.kind = Redirect::kDownState;
        return decision;
      }
    } else if (!options.allow_reads_when_down) {
      decision.kind = Redirect::kDownState;
      return decision;
    } else if (request.command_is_write) {
      decision.kind = Redirect::kDownReadOnly;
      return decision;
    }
  }

  // MIGRATE moves keys of an open slot freely.
  if ((migrating || importing) && request.migrate) return decision;

  if (migrating && missing > 0) {
    if (existing > 0) {
      decision.kind = Redirect::kTryAgain;
    } else if (!routing.MigratingToMyself(decision.slot)) {
      decision.kind = Redirect::kAsk;
      decision.endpoint = routing.MigratingEndpoint(decision.slot);
    }
    return decision;
  }

  if (importing && request.asking) {
    if (several_keys && missing > 0) decision.kind = Redirect::kTryAgain;
    return decision;
  }

  // A replica answers reads of its master's slots to READONLY clients (shard channels always).
  if ((request.readonly || request.pubsub_shard) && !request.any_write &&
      owner == SlotOwner::kMyMaster) {
    return decision;
  }

  if (owner != SlotOwner::kMyself) {
    decision.kind = Redirect::kMoved;
    decision.endpoint = routing.MovedEndpoint(decision.slot);
  }
  return decision;
}

RedirectDecision DecideBlockedRedirect(std::string_view key, bool readonly_read,
                                       const SlotRouting& routing) {
  RedirectDecision decision;
  if (!routing.ClusterUp()) {
    decision.kind = Redirect::kDownState;
    return decision;
  }
  decision.slot = KeySlot(key);
  const SlotOwner owner = routing.Owner(decision.slot);
  if (owner == SlotOwner::kMyself || routing.Importing(decision.slot)) return decision;
  if (owner == SlotOwner::kMyMaster && readonly_read) return decision;
  if (owner == SlotOwner::kUnassigned) {
    decision.kind = Redirect::kDownUnbound;
  } else {
    decision.kind = Redirect::kMoved;
    decision.endpoint = routing.MovedEndpoint(decision.slot);
  }
  return decision;
}

std::string RedirectError(const RedirectDecision& decision) {
  switch (decision.kind) {
    case Redirect::kNone:
      return {};
    case Redirect::kMoved:
      return fmt::format("MOVED {} {}", decision.slot, decision.endpoint);
    case Redirect::kAsk:
      return fmt::format("ASK {} {}", decision.slot, decision.endpoint);
    case Redirect::kCrossSlot:
      return "CROSSSLOT Keys in request don't hash to the same slot";
    case Redirect::kTryAgain:
      return "TRYAGAIN Multiple keys request during rehashing of slot";
    case Redirect::kDownState:
      return "CLUSTERDOWN The cluster is down";
    case Redirect::kDownReadOnly:
      return "CLUSTERDOWN The cluster is down and only accepts read commands";
    case Redirect::kDownUnbound:
      return "CLUSTERDOWN Hash slot not served";
  }
  return {};
}

std::string_view ScriptRedirectError(Redirect kind) {
  switch (kind) {
    case Redirect::kDownReadOnly:
      return "Script attempted to execute a write command while the cluster is down and "
             "readonly";
    case Redirect::kDownState:
      return "Script attempted to execute a command while the cluster is down";
    default:
      return "Script attempted to access a non local key in a cluster node";
  }
}

}  // namespace vireo::cluster

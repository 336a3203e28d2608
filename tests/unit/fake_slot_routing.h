// A routing table for tests of the cluster redirection rules: every slot has `default_owner`
// unless listed in `owners`; MOVED goes to 127.0.0.1:7001, ASK to 127.0.0.1:7002.
#pragma once

#include <map>
#include <set>
#include <string>

#include "cluster/routing.h"

namespace vireo::cluster {

class FakeSlotRouting : public SlotRouting {
 public:
  bool ClusterUp() const override { return up; }
  SlotOwner Owner(int slot) const override {
    auto it = owners.find(slot);
    return it == owners.end() ? default_owner : it->second;
  }
  std::string MovedEndpoint(int slot) const override { return "127.0.0.1:7001"; }
  std::string MigratingEndpoint(int slot) const override {
    return migrating.count(slot) != 0 ? "127.0.0.1:7002" : "";
  }
  bool Importing(int slot) const override { return importing.count(slot) != 0; }
  // Counts the fast path's questions; with fast_path off every request takes the full rules
  // (tests compare the two).
  bool ServesStableSlot(int slot) const override {
    ++stable_slot_calls;
    return fast_path && SlotRouting::ServesStableSlot(slot);
  }
  bool MigratingToMyself(int slot) const override { return migrating_to_myself.count(slot) != 0; }

  bool up = true;
  SlotOwner default_owner = SlotOwner::kMyself;
  std::map<int, SlotOwner> owners;
  std::set<int> migrating, importing, migrating_to_myself;  // the last also in `migrating`
  bool fast_path = true;
  mutable int stable_slot_calls = 0;
};

}  // namespace vireo::cluster

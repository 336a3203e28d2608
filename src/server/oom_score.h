// oom-score-adj / oom-score-adj-values: the Linux OOM killer's preference for this process,
// written to /proc/self/oom_score_adj as Redis does. One value per role: master, replica, and
// a background child (BGSAVE, AOF rewrite, full sync), which should die first.
#pragma once

#include <cstdint>
#include <string>

#include "core/config.h"

namespace vireo {

enum class OomRole { kMaster = 0, kReplica = 1, kChild = 2 };

class OomScore {
 public:
  // Writes the score the configuration asks for this role, if it differs from the last one
  // written. With oom-score-adj "no" after a change, puts back the score the process had
  // before vireo touched it. Returns "" or Redis's CONFIG SET error text.
  std::string Apply(const ServerConfig& c, OomRole role);

 private:
  bool adjusted_ = false;  // we wrote the file at least once; base_ holds the original score
  int base_ = 0;
  int last_written_ = INT32_MIN;
};

}  // namespace vireo

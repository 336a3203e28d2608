// INFO commandstats: calls, time, rejected and failed calls per command and subcommand, kept
// per server (several servers may share one command table) and indexed by CommandSpec::id.
#pragma once

#include <vector>

#include "core/command_table.h"

namespace vireo {

class CommandStatsTable {
 public:
  CommandStats& For(const CommandSpec& spec) {
    if (spec.id >= stats_.size()) stats_.resize(spec.id + 1);
    return stats_[spec.id];
  }
  // CONFIG RESETSTAT.
  void Reset() { stats_.assign(stats_.size(), CommandStats{}); }

 private:
  std::vector<CommandStats> stats_;
};

}  // namespace vireo

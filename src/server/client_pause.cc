#include "server/client_pause.h"

#include <algorithm>

namespace vireo {

void ClientPause::Pause(PausePurpose purpose, int64_t end_ms, uint32_t actions) {
  const int i = static_cast<int>(purpose);
  actions_[i] = actions;
  end_ms_[i] = std::max(end_ms_[i], end_ms);
  Changed();
}

void ClientPause::Unpause(PausePurpose purpose) {
  Clear(static_cast<int>(purpose));
  Changed();
}

void ClientPause::Clear(int purpose) {
  actions_[purpose] = 0;
  end_ms_[purpose] = 0;
}

uint32_t ClientPause::Actions(int64_t now_ms) {
  uint32_t actions = 0;
  for (int i = 0; i < kPurposes; ++i) {
    if (actions_[i] != 0 && end_ms_[i] <= now_ms) Clear(i);
    actions |= actions_[i];
  }
  return actions;
}

int64_t ClientPause::NextEnd() const {
  int64_t next = 0;
  for (int i = 0; i < kPurposes; ++i) {
    if (actions_[i] != 0 && (next == 0 || end_ms_[i] < next)) next = end_ms_[i];
  }
  return next;
}

}  // namespace vireo

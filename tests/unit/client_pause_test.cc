// ClientPause without a server: the union of the purposes' pauses, an end that only moves
// later, pauses running out by time, and the change callback (run after Pause and Unpause, not
// when a pause merely runs out, which the owner notices on its timer).
#include "server/client_pause.h"

#include <gtest/gtest.h>

namespace vireo {
namespace {

TEST(ClientPauseTest, PurposesCombineAndRunOut) {
  ClientPause pause;
  EXPECT_EQ(pause.Actions(0), 0u);
  EXPECT_EQ(pause.NextEnd(), 0);
  pause.Pause(PausePurpose::kClient, 100, kPauseWrite);
  pause.Pause(PausePurpose::kFailover, 50, kPauseAll);
  EXPECT_EQ(pause.Actions(10), kPauseAll);
  EXPECT_TRUE(pause.Paused(kPauseClientAll, 10));
  EXPECT_EQ(pause.NextEnd(), 50);
  // Failover's pause is over at its end; the client's write pause is left.
  EXPECT_EQ(pause.Actions(50), kPauseWrite);
  EXPECT_FALSE(pause.Paused(kPauseClientAll, 50));
  EXPECT_EQ(pause.NextEnd(), 100);
  EXPECT_EQ(pause.Actions(100), 0u);
  EXPECT_EQ(pause.NextEnd(), 0);
}

TEST(ClientPauseTest, EndOnlyMovesLater) {
  ClientPause pause;
  pause.Pause(PausePurpose::kClient, 100, kPauseAll);
  pause.Pause(PausePurpose::kClient, 40, kPauseWrite);  // actions replaced, end kept
  EXPECT_EQ(pause.NextEnd(), 100);
  EXPECT_EQ(pause.Actions(60), kPauseWrite);
  pause.Unpause(PausePurpose::kClient);
  EXPECT_EQ(pause.Actions(60), 0u);
  EXPECT_EQ(pause.NextEnd(), 0);
}

TEST(ClientPauseTest, ChangeCallbackAfterPauseAndUnpauseOnly) {
  int changes = 0;
  uint32_t seen = 0;
  ClientPause* self = nullptr;
  ClientPause pause([&] {
    ++changes;
    seen = self->Actions(0);  // the callback sees the new state
  });
  self = &pause;
  pause.Pause(PausePurpose::kClient, 10, kPauseWrite);
  EXPECT_EQ(changes, 1);
  EXPECT_EQ(seen, kPauseWrite);
  pause.Unpause(PausePurpose::kClient);
  EXPECT_EQ(changes, 2);
  EXPECT_EQ(seen, 0u);
  pause.Pause(PausePurpose::kFailover, 10, kPauseWrite);
  EXPECT_EQ(changes, 3);
  EXPECT_EQ(pause.Actions(20), 0u);  // ran out: no callback
  EXPECT_EQ(changes, 3);
}

}  // namespace
}  // namespace vireo

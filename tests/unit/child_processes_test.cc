#include "core/child_processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

namespace vireo {
namespace {

class ChildProcessesTest : public ::testing::Test {
 protected:
  // Polls Reap until the running child has been reaped (a few ms per try, 10 s at most).
  void ReapUntilDone() {
    for (int i = 0; i < 5000 && children_.active(); ++i) {
      children_.Reap();
      if (children_.active()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_FALSE(children_.active());
  }

  ChildProcesses::OnExit Record() {
    return [this](const ChildExit& exit) { exits_.push_back(exit); };
  }

  ChildProcesses children_;
  std::vector<ChildExit> exits_;
};

TEST_F(ChildProcessesTest, ExitCodeReachesTheCallback) {
  pid_t pid = children_.Start(
      ChildKind::kRdb, [] { return 0; }, Record());
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(children_.active());
  EXPECT_TRUE(children_.active(ChildKind::kRdb));
  EXPECT_FALSE(children_.active(ChildKind::kAof));
  EXPECT_EQ(children_.kind(), ChildKind::kRdb);
  EXPECT_EQ(children_.pid(), pid);
  EXPECT_EQ(children_.total_forks(), 1u);
  ReapUntilDone();
  ASSERT_EQ(exits_.size(), 1u);
  EXPECT_EQ(exits_[0].pid, pid);
  EXPECT_EQ(exits_[0].kind, ChildKind::kRdb);
  EXPECT_TRUE(exits_[0].exited);
  EXPECT_EQ(exits_[0].exit_code, 0);
  EXPECT_EQ(exits_[0].signal, 0);
  EXPECT_TRUE(exits_[0].ok());
  EXPECT_EQ(children_.kind(), ChildKind::kNone);
  EXPECT_EQ(children_.pid(), -1);

  ASSERT_GT(children_.Start(
                ChildKind::kAof, [] { return 3; }, Record()),
            0);
  ReapUntilDone();
  ASSERT_EQ(exits_.size(), 2u);
  EXPECT_EQ(exits_[1].kind, ChildKind::kAof);
  EXPECT_TRUE(exits_[1].exited);
  EXPECT_EQ(exits_[1].exit_code, 3);
  EXPECT_FALSE(exits_[1].ok());
  EXPECT_EQ(children_.total_forks(), 2u);
}

TEST_F(ChildProcessesTest, ReapLeavesARunningChildAlone) {
  ASSERT_GT(children_.Start(
                ChildKind::kRdb, [] { return pause(); }, Record()),
            0);
  children_.Reap();
  EXPECT_TRUE(children_.active());
  EXPECT_TRUE(exits_.empty());
  children_.Kill(SIGKILL);
  EXPECT_FALSE(children_.active());
}

TEST_F(ChildProcessesTest, KillReportsTheSignal) {
  ASSERT_GT(children_.Start(
                ChildKind::kRdb, [] { return pause(); }, Record()),
            0);
  children_.Kill(SIGUSR1);
  EXPECT_FALSE(children_.active());
  ASSERT_EQ(exits_.size(), 1u);
  EXPECT_FALSE(exits_[0].exited);
  EXPECT_EQ(exits_[0].signal, SIGUSR1);
  EXPECT_FALSE(exits_[0].ok());
}

TEST_F(ChildProcessesTest, OneChildAtATime) {
  ASSERT_GT(children_.Start(
                ChildKind::kRdb, [] { return pause(); }, Record()),
            0);
  errno = 0;
  bool second_ran = false;
  EXPECT_EQ(children_.Start(
                ChildKind::kAof, [] { return 0; },
                [&second_ran](const ChildExit&) { second_ran = true; }),
            -1);
  EXPECT_EQ(errno, EBUSY);
  EXPECT_TRUE(children_.active(ChildKind::kRdb));
  EXPECT_EQ(children_.total_forks(), 1u);
  children_.Kill(SIGKILL);
  EXPECT_FALSE(second_ran);
  ASSERT_EQ(exits_.size(), 1u);
  EXPECT_EQ(exits_[0].signal, SIGKILL);
}

TEST_F(ChildProcessesTest, CallbackMayStartTheNextChild) {
  std::optional<pid_t> next;
  ASSERT_GT(children_.Start(
                ChildKind::kAof, [] { return 0; },
                [this, &next](const ChildExit& exit) {
                  exits_.push_back(exit);
                  next = children_.Start(
                      ChildKind::kRdb, [] { return 7; }, Record());
                }),
            0);
  ReapUntilDone();  // reaps the first; its callback started the second
  ASSERT_TRUE(next.has_value());
  ASSERT_GT(*next, 0);
  ReapUntilDone();
  ASSERT_EQ(exits_.size(), 2u);
  EXPECT_EQ(exits_[0].kind, ChildKind::kAof);
  EXPECT_EQ(exits_[1].kind, ChildKind::kRdb);
  EXPECT_EQ(exits_[1].pid, *next);
  EXPECT_EQ(exits_[1].exit_code, 7);
}

TEST_F(ChildProcessesTest, ChildReportsProgressAndCopyOnWrite) {
  constexpr size_t kDirty = 4 << 20;
  children_.set_key_count([] { return uint64_t{5000}; });
  int gate[2];
  ASSERT_EQ(pipe(gate), 0);
  ASSERT_GT(children_.Start(
                ChildKind::kRdb,
                [&] {
                  close(gate[1]);  // so the server's close is the gate's end of file
                  // Memory the child writes is private dirty memory, as pages the parent
                  // writes after the fork are. It stays until the final report (_exit frees).
                  auto* dirty = static_cast<char*>(malloc(kDirty));
                  memset(dirty, 'x', kDirty);
                  for (int k = 1; k <= 2048; ++k) {
                    children_.ChildKeyProcessed();
                    // The second clock check (at 2048 keys) finds a second has passed.
                    if (k == 1024) std::this_thread::sleep_for(std::chrono::milliseconds(1100));
                  }
                  char c;
                  return read(gate[0], &c, 1) == 0 && dirty[kDirty - 1] == 'x' ? 0 : 1;
                },
                Record()),
            0);
  close(gate[0]);
  EXPECT_EQ(children_.progress().keys_total, 5000u);
  for (int i = 0; i < 5000 && children_.progress().keys_processed == 0; ++i) {
    children_.Reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ChildProgress p = children_.progress();
  EXPECT_EQ(p.keys_processed, 2048u);
  EXPECT_GE(p.cow_bytes, static_cast<int64_t>(kDirty));
  EXPECT_GE(p.cow_peak, p.cow_bytes);
  EXPECT_GT(p.cow_updated_ms, 0);
  close(gate[1]);  // the child finishes and reports its final size
  ReapUntilDone();
  ASSERT_EQ(exits_.size(), 1u);
  EXPECT_TRUE(exits_[0].ok());
  EXPECT_GE(exits_[0].cow_bytes, static_cast<int64_t>(kDirty));
  EXPECT_EQ(children_.last_cow_bytes(ChildKind::kRdb), exits_[0].cow_bytes);
  EXPECT_EQ(children_.last_cow_bytes(ChildKind::kAof), 0);
  EXPECT_EQ(children_.progress().keys_total, 0u);
  EXPECT_EQ(children_.progress().cow_bytes, 0);
}

TEST_F(ChildProcessesTest, AFailedOrKilledChildReportsNoFinalSize) {
  ASSERT_GT(children_.Start(
                ChildKind::kAof, [] { return 1; }, Record()),
            0);
  ReapUntilDone();
  ASSERT_EQ(exits_.size(), 1u);
  EXPECT_EQ(exits_[0].cow_bytes, -1);
  EXPECT_EQ(children_.last_cow_bytes(ChildKind::kAof), 0);
}

TEST(ChildProcessesDestructorTest, KillsWithoutRunningTheCallback) {
  bool ran = false;
  pid_t pid;
  {
    ChildProcesses children;
    pid = children.Start(
        ChildKind::kRdb, [] { return pause(); }, [&ran](const ChildExit&) { ran = true; });
    ASSERT_GT(pid, 0);
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(kill(pid, 0), -1);  // reaped: no such process any more
}

}  // namespace
}  // namespace vireo

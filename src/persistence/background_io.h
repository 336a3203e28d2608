// One background thread for the file work that may block for milliseconds and touches no live
// data: fsync of the AOF (appendfsync everysec), closing a file whose pages are still being
// flushed, and unlinking large old files. Jobs run in the order they were queued, so an fsync
// queued before a close of the same descriptor always runs first.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace vireo {

class BackgroundIo {
 public:
  BackgroundIo();
  ~BackgroundIo();  // runs every queued job, then joins
  BackgroundIo(const BackgroundIo&) = delete;
  BackgroundIo& operator=(const BackgroundIo&) = delete;

  // fdatasync(fd); on success the fsynced offset becomes `offset` (see fsynced_offset()).
  void Fsync(int fd, int64_t offset);
  // fdatasync (when `sync`) then close.
  void Close(int fd, bool sync);
  void Unlink(std::string path);

  // fsync jobs queued or running (INFO aof_pending_bio_fsync).
  int pending_fsyncs() const { return pending_fsyncs_.load(std::memory_order_acquire); }
  // The highest offset a finished background fsync covered.
  int64_t fsynced_offset() const { return fsynced_offset_.load(std::memory_order_acquire); }
  void reset_fsynced_offset(int64_t offset) {
    fsynced_offset_.store(offset, std::memory_order_release);
  }
  // errno of the last failed background fsync, or 0 (cleared by the next success).
  int last_fsync_errno() const { return last_fsync_errno_.load(std::memory_order_acquire); }
  // Blocks until every job queued so far has run.
  void Drain();

 private:
  enum class Kind { kFsync, kClose, kUnlink };
  struct Job {
    Kind kind;
    int fd = -1;
    int64_t offset = 0;
    bool sync = false;
    std::string path;
  };
  void Push(Job job);
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::deque<Job> jobs_;
  bool running_job_ = false;
  bool stop_ = false;
  std::atomic<int> pending_fsyncs_{0};
  std::atomic<int64_t> fsynced_offset_{0};
  std::atomic<int> last_fsync_errno_{0};
  std::thread thread_;
};

}  // namespace vireo

#include "persistence/background_io.h"

#include <unistd.h>

#include <cerrno>

namespace vireo {

BackgroundIo::BackgroundIo() : thread_([this] { Loop(); }) {}

BackgroundIo::~BackgroundIo() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BackgroundIo::Push(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void BackgroundIo::Fsync(int fd, int64_t offset) {
  pending_fsyncs_.fetch_add(1, std::memory_order_acq_rel);
  Push({Kind::kFsync, fd, offset, true, {}});
}

void BackgroundIo::Close(int fd, bool sync) { Push({Kind::kClose, fd, 0, sync, {}}); }

void BackgroundIo::Unlink(std::string path) {
  Push({Kind::kUnlink, -1, 0, false, std::move(path)});
}

void BackgroundIo::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return jobs_.empty() && !running_job_; });
}

void BackgroundIo::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) {
      if (stop_) return;
      continue;
    }
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    running_job_ = true;
    lock.unlock();
    switch (job.kind) {
      case Kind::kFsync:
        if (fdatasync(job.fd) == 0) {
          last_fsync_errno_.store(0, std::memory_order_release);
          int64_t prev = fsynced_offset_.load(std::memory_order_acquire);
          if (job.offset > prev) fsynced_offset_.store(job.offset, std::memory_order_release);
        } else if (errno != EBADF && errno != EINVAL) {
          last_fsync_errno_.store(errno, std::memory_order_release);
        }
        pending_fsyncs_.fetch_sub(1, std::memory_order_acq_rel);
        break;
      case Kind::kClose:
        if (job.sync) fdatasync(job.fd);
        close(job.fd);
        break;
      case Kind::kUnlink:
        unlink(job.path.c_str());
        break;
    }
    lock.lock();
    running_job_ = false;
    if (jobs_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace vireo

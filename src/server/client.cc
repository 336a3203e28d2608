#include "server/client.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "security/acl.h"
#include "security/tls.h"

namespace vireo {

const std::string& Client::user() const {
  static const std::string kDefault = "default";
  return acl_user_ != nullptr ? acl_user_->name() : kDefault;
}

Client::Client(Server* server, uint64_t id, int fd) : server_(server), id_(id), fd_(fd) {
  KeepReplyBuffer();
}

void Client::KeepReplyBuffer() {
  if (!output_.empty() || output_.capacity() == reply_buffer_size) return;
  std::string fresh;
  fresh.reserve(reply_buffer_size);
  output_.swap(fresh);
}

Client::~Client() {
  tls.reset();  // its close_notify goes out before the socket closes
  if (fd_ >= 0) close(fd_);
}

ssize_t Client::ReadTls(void* buf, size_t n) { return tls->Read(buf, n); }
ssize_t Client::WriteTls(const void* buf, size_t n) { return tls->Write(buf, n); }

void Client::ReadBuffer::EnsureWritable(size_t n, size_t known_total) {
  if (capacity - end >= n) return;
  size_t used = end - start;
  if (start > 0 && capacity - used >= n) {
    memmove(data.get(), data.get() + start, used);
    start = 0;
    end = used;
    return;
  }
  size_t new_capacity = capacity == 0 ? std::max<size_t>(n, 1024) : capacity;
  while (new_capacity - used < n) new_capacity *= 2;
  // A request whose size is known gets exactly that much, not the next power of two: a 300 KB
  // argument holds 300 KB, as in Redis, which sizes a big argument's buffer exactly.
  if (known_total >= used + n && new_capacity > known_total) new_capacity = known_total;
  Reallocate(new_capacity);
}

void Client::ReadBuffer::Reallocate(size_t new_capacity) {
  const size_t used = end - start;
  if (new_capacity == 0) {
    data.reset();
  } else {
    // Not value-initialised: zeroing a 100 MB buffer we are about to fill would be waste.
    std::unique_ptr<char[]> fresh(new char[new_capacity]);
    if (used > 0) memcpy(fresh.get(), data.get() + start, used);
    data = std::move(fresh);
  }
  capacity = new_capacity;
  start = 0;
  end = used;
}

void Client::ReadBuffer::ShrinkIfIdle() {
  // Redis keeps an emptied buffer until its cron; past 1 MB we don't wait for that.
  constexpr size_t kKeptAfterCommand = 1024 * 1024;
  if (start != end) return;
  start = end = 0;
  if (capacity > kKeptAfterCommand) Reallocate(0);
}

void Client::CronResizeReplyBuffer(int64_t now_ms, int64_t peak_reset_ms) {
  size_t resized = 0;
  if (reply_buffer_size / 2 >= kReplyBufferMin && reply_buffer_peak < reply_buffer_size / 2) {
    resized = std::max(kReplyBufferMin, reply_buffer_peak + 1);
  } else if (reply_buffer_size * 2 < kReplyBufferMax * 2 &&
             reply_buffer_peak == reply_buffer_size) {
    resized = std::min(kReplyBufferMax, reply_buffer_size * 2);
  }
  if (peak_reset_ms >= 0 && now_ms - reply_buffer_peak_reset_ms >= peak_reset_ms) {
    reply_buffer_peak = std::min(output_.size() - output_written, reply_buffer_size);
    reply_buffer_peak_reset_ms = now_ms;
  }
  if (resized == 0) return;
  reply_buffer_size = resized;
  // An idle buffer takes the new size now rather than after the next write.
  KeepReplyBuffer();
}

void Client::ReadBuffer::CronResize(bool idle, size_t pending_bulk) {
  // Redis's PROTO_RESIZE_THRESHOLD, and the least free room worth giving back.
  constexpr size_t kResizeThreshold = 32 * 1024;
  constexpr size_t kMinWaste = 4 * 1024;
  const size_t used = size();
  if (capacity - used > kMinWaste) {
    if (idle) {
      Reallocate(used);
    } else if (capacity > kResizeThreshold && capacity / 2 > peak) {
      Reallocate(std::max({used, peak, pending_bulk}));
    }
  }
  peak = std::max(used, pending_bulk);
}

}  // namespace vireo

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

Client::Client(Server* server, uint64_t id, int fd) : server_(server), id_(id), fd_(fd) {}

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
  // Not value-initialised: zeroing a 100 MB buffer we are about to fill would be waste.
  std::unique_ptr<char[]> fresh(new char[new_capacity]);
  if (used > 0) memcpy(fresh.get(), data.get() + start, used);
  data = std::move(fresh);
  capacity = new_capacity;
  start = 0;
  end = used;
}

void Client::ReadBuffer::ShrinkIfIdle() {
  if (start == end) {
    start = end = 0;
    if (capacity > 64 * 1024) {
      data.reset();
      capacity = 0;
    }
  }
}

}  // namespace vireo

// How freely the hash tables may resize right now: Redis's dict_can_resize.
//
// While a fork child (BGSAVE, BGREWRITEAOF, a diskless sync) shares the parent's pages, every
// bucket array a resize allocates and every bucket a rehash step rewrites is a page the kernel
// must copy. So tables then avoid resizing unless it is badly needed, and the child itself
// never resizes (it only reads the data it inherited).
//
// Per thread, not per process: a server runs on one thread of its own (several servers in one
// process each keep their own mode), the tables it owns are only touched there, and a fork
// child continues on the forking thread. ChildProcesses sets it when a child starts and ends.
#pragma once

#include <cstdint>

namespace vireo {

enum class TableResize : uint8_t {
  kEnable,  // no child: grow at load 1, shrink below 10 % fill, rehash freely
  kAvoid,   // a child exists: grow only past load 5, no shrink, rehash only lopsided resizes
  kForbid,  // inside the child: no resize, no rehash step
};

namespace table_resize_internal {
inline constinit thread_local TableResize mode = TableResize::kEnable;
}  // namespace table_resize_internal

inline TableResize CurrentTableResize() { return table_resize_internal::mode; }
inline void SetTableResize(TableResize mode) { table_resize_internal::mode = mode; }

}  // namespace vireo

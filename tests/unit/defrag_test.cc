// Active defragmentation's "move yourself" operations (src/util/allocator.h, each type's
// Defrag), and the keyspace walk (src/db/defrag.h). Each test leaves the allocations it checks
// in slabs emptied by frees around them, so jemalloc's hint says to move them; the moved data
// must read the same and every pointer to it be updated. Without jemalloc nothing moves
// (checked too).
#include "db/defrag.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/value.h"
#include "types/compact_string.h"
#include "types/hash_table.h"
#include "types/packed_list.h"
#include "util/alloc_counter.h"
#include "util/allocator.h"

namespace vireo {
namespace {

// Allocations of `size` bytes interleaved with what a test creates, then freed: what the test
// made sits in slabs mostly empty, while a dense block allocated before the frees (so it can't
// refill the holes) keeps other slabs full, and the bin's average well above the sparse ones.
class Fragmenter {
 public:
  explicit Fragmenter(size_t size) : size_(size) {}
  ~Fragmenter() {
    for (void* p : kept_) free(p);
  }
  // Fills around: call before and after each allocation to fragment.
  void Pad(int n = 7) {
    for (int i = 0; i < n; ++i) padding_.push_back(malloc(size_));
  }
  // The dense block, then the padding freed and the thread cache flushed, so the holes are
  // free regions of their slabs.
  void Fragment() {
    for (int i = 0; i < 4096; ++i) kept_.push_back(malloc(size_));
    for (void* p : padding_) free(p);
    padding_.clear();
    allocator::CtlString("thread.tcache.flush", std::string("VOID"));
  }

 private:
  size_t size_;
  std::vector<void*> padding_;
  std::vector<void*> kept_;
};

bool Jemalloc() { return allocator::IsJemalloc(); }

TEST(DefragAllocator, MoveKeepsBytesAndCount) {
  char* p = static_cast<char*>(malloc(100));
  memset(p, 'x', 100);
  const size_t before = AllocatedBytes();
  char* q = static_cast<char*>(MoveAllocation(p));
  if (!Jemalloc()) {
    EXPECT_EQ(q, nullptr);
    free(p);
    return;
  }
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(std::string(q, 100), std::string(100, 'x'));
  EXPECT_EQ(AllocatedBytes(), before);
  free(q);
}

TEST(DefragAllocator, HintMovesOnlyFromEmptierSlabs) {
  if (!Jemalloc()) GTEST_SKIP() << "no jemalloc";
  Fragmenter f(640);
  std::vector<void*> sparse;
  for (int i = 0; i < 200; ++i) {
    f.Pad();
    sparse.push_back(malloc(640));
  }
  f.Fragment();
  allocator::DefragCounters c;
  int moved = 0;
  for (void*& p : sparse) {
    if (void* q = allocator::Defrag(p, c)) {
      p = q;
      ++moved;
    }
  }
  EXPECT_GT(moved, 100);
  EXPECT_EQ(c.hits, static_cast<uint64_t>(moved));
  EXPECT_EQ(c.hits + c.misses, sparse.size());
  for (void* p : sparse) free(p);
  // A large allocation is never moved.
  void* big = malloc(1 << 20);
  EXPECT_FALSE(allocator::ShouldMove(big));
  free(big);
}

struct Node {
  Node* next = nullptr;
  char key[24];
};
struct NodeKey {
  std::string_view operator()(const Node& n) const { return n.key; }
};

TEST(DefragHashTable, ScanReplaceRelinksMovedNodes) {
  HashTable<Node, NodeKey> table(1);
  std::vector<Node*> nodes;
  for (int i = 0; i < 1000; ++i) {
    auto* n = static_cast<Node*>(malloc(sizeof(Node)));
    n->next = nullptr;
    snprintf(n->key, sizeof(n->key), "k%d", i);
    table.Insert(n);
  }
  uint64_t cursor = 0;
  size_t replaced = 0;
  do {
    cursor = table.ScanReplace(cursor, [&](Node* n) {
      auto* copy = static_cast<Node*>(malloc(sizeof(Node)));
      memcpy(copy, n, sizeof(Node));
      memset(static_cast<void*>(n), 0, sizeof(Node));  // gone: nothing may read it any more
      free(n);
      ++replaced;
      return copy;
    });
  } while (cursor != 0);
  EXPECT_EQ(replaced, 1000u);
  EXPECT_EQ(table.size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    const std::string key = "k" + std::to_string(i);
    Node* n = table.Find(key);
    ASSERT_NE(n, nullptr) << key;
    EXPECT_EQ(std::string_view(n->key), key);
  }
  table.Clear([](Node* n) { free(n); });
}

TEST(DefragCompactString, HeapBytesMove) {
  Fragmenter f(48);
  std::vector<CompactString> keys;
  keys.reserve(300);
  for (int i = 0; i < 300; ++i) {
    f.Pad();
    keys.emplace_back("a key longer than the inline 23 bytes " + std::to_string(i));
  }
  keys.emplace_back("short");
  f.Fragment();
  allocator::DefragCounters c;
  int moved = 0;
  for (CompactString& k : keys) moved += k.Defrag(c) ? 1 : 0;
  if (Jemalloc()) {
    EXPECT_GT(moved, 150);
  }
  EXPECT_EQ(c.hits + c.misses, 300u);  // the inline key owns no allocation
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(keys[i].view(), "a key longer than the inline 23 bytes " + std::to_string(i));
  }
  EXPECT_EQ(keys.back().view(), "short");
}

TEST(DefragValue, StringsMoveAndKeepTheirEncoding) {
  Fragmenter f(160);
  std::vector<Value> blocks, edited;
  for (int i = 0; i < 200; ++i) {
    f.Pad();
    blocks.push_back(Value::String(std::string(150, 'b') + std::to_string(i)));
    f.Pad();
    edited.push_back(Value::RawString(std::string(150, 'e') + std::to_string(i)));
  }
  Value small = Value::String("tiny");
  Value number = Value::Integer(42);
  f.Fragment();
  allocator::DefragCounters c;
  for (Value& v : blocks) v.DefragString(c);
  for (Value& v : edited) v.DefragString(c);
  small.DefragString(c);
  number.DefragString(c);
  EXPECT_EQ(c.hits + c.misses, 400u);  // inline and integer strings own nothing
  if (Jemalloc()) {
    EXPECT_GT(c.hits, 100u);
  }
  char scratch[24];
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(blocks[i].StringView(scratch), std::string(150, 'b') + std::to_string(i));
    EXPECT_EQ(edited[i].StringView(scratch), std::string(150, 'e') + std::to_string(i));
    EXPECT_STREQ(edited[i].EncodingName(), "raw");
  }
  // A rebuilt edited string can be edited again.
  edited[0].MutableString()->append("!");
  EXPECT_EQ(edited[0].StringLength(), 152u);
  EXPECT_EQ(small.StringView(scratch), "tiny");
  EXPECT_EQ(number.StringView(scratch), "42");
}

TEST(DefragPackedList, NodesMoveInBudgetedSteps) {
  Fragmenter f(640);
  PackedList list(5);  // 5 entries per node: 600 nodes of about 640 bytes
  const std::string value(100, 'v');
  for (int i = 0; i < 3000; ++i) {
    if (i % 5 == 0) f.Pad(3);
    list.PushBack(value + std::to_string(i));
  }
  f.Fragment();
  allocator::DefragCounters c;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    cursor = list.Defrag(c, cursor, 100);
    ++calls;
  } while (cursor != 0);
  EXPECT_EQ(calls, 6);
  EXPECT_EQ(c.hits + c.misses, 600u);
  if (Jemalloc()) {
    EXPECT_GT(c.hits, 100u);
  }
  int i = 0;
  list.ForRange(0, 2999, [&](std::string_view v) {
    EXPECT_EQ(v, value + std::to_string(i++));
    return true;
  });
  EXPECT_EQ(i, 3000);
  int back = 2999;
  list.ForRangeReverse(0, 2999, [&](std::string_view v) {
    EXPECT_EQ(v, value + std::to_string(back--));
    return true;
  });
  EXPECT_EQ(back, -1);
  list.PushFront("front");
  list.PushBack("back");
  EXPECT_EQ(list.size(), 3002u);
}

TEST(DefragDatabase, EntriesMoveWithTheirTtlAndSlot) {
  for (bool slotted : {false, true}) {
    Database db(0, nullptr, 7);
    if (slotted) db.EnableSlotIndex();
    Fragmenter f(slotted ? 80 : 64);
    for (int i = 0; i < 2000; ++i) {
      f.Pad(3);
      DbEntry* e = db.Add("key:" + std::to_string(i), Value::String("v" + std::to_string(i)));
      if (i % 3 == 0) db.SetExpire(e, int64_t{1} << 50);
    }
    f.Fragment();
    allocator::DefragCounters c;
    uint64_t cursor = 0;
    do {
      cursor = db.DefragKeys(cursor, c, [](DbEntry*, bool) {});
    } while (cursor != 0);
    do {
      cursor = db.DefragExpires(cursor, c);
    } while (cursor != 0);
    if (Jemalloc()) {
      EXPECT_GT(c.hits, 500u) << slotted;
    }
    ASSERT_EQ(db.size(), 2000u);
    char scratch[24];
    for (int i = 0; i < 2000; ++i) {
      const std::string key = "key:" + std::to_string(i);
      DbEntry* e = db.Peek(key);
      ASSERT_NE(e, nullptr) << key;
      EXPECT_EQ(e->value.StringView(scratch), "v" + std::to_string(i));
      EXPECT_EQ(db.GetExpire(e), i % 3 == 0 ? int64_t{1} << 50 : -1) << key;
    }
    if (slotted) {
      size_t listed = 0;
      for (int slot = 0; slot < 16384; ++slot) listed += db.KeysInSlot(slot, 100000).size();
      EXPECT_EQ(listed, 2000u);
    }
    // Deleting walks the (relinked) expires and slot lists.
    for (int i = 0; i < 2000; i += 2) EXPECT_TRUE(db.Delete("key:" + std::to_string(i)));
    EXPECT_EQ(db.size(), 1000u);
  }
}

}  // namespace
}  // namespace vireo

// SetObject: the value of a set key (SADD, SMEMBERS...).
//
// Three encodings, chosen and converted with Redis 7.2's rules so OBJECT ENCODING answers as
// Redis does:
//  - "intset": an IntSet while every member is an integer and there are at most
//    set-max-intset-entries of them;
//  - "listpack": a PackedStrings in insertion order, at most set-max-listpack-entries members
//    of at most set-max-listpack-value bytes;
//  - "hashtable": a StringTable with one allocation per member.
// Adds only ever move "up" (intset -> listpack -> hashtable, or intset -> hashtable); only
// commands that build a new set (SPOP's rebuild, SINTERSTORE) produce smaller encodings.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "types/intset.h"
#include "types/object.h"
#include "types/packed_strings.h"
#include "types/string_table.h"

namespace vireo {

struct SetLimits {
  size_t max_intset_entries = 512;    // set-max-intset-entries
  size_t max_listpack_entries = 128;  // set-max-listpack-entries
  size_t max_listpack_value = 64;     // set-max-listpack-value
};

class SetObject : public HeapObject {
 public:
  enum class Encoding : uint8_t { kIntSet, kListpack, kHashtable };

  explicit SetObject(Encoding encoding = Encoding::kIntSet);
  // Redis's setTypeCreate: the encoding for a new set whose first member is `first` and that
  // is about to receive about size_hint members.
  static std::unique_ptr<SetObject> Create(std::string_view first, size_t size_hint,
                                           const SetLimits& limits);
  // A listpack set holding `members` in that order, repeats included: what Redis keeps of a
  // listpack payload loaded without deep sanitization (sanitize-dump-payload no). Every
  // operation copes with a repeated member: SCARD and SMEMBERS count and list it as stored,
  // SREM removes one copy, and a conversion to another encoding keeps one of each.
  static std::unique_ptr<SetObject> ListpackAsGiven(const std::vector<std::string>& members);

  Encoding encoding() const { return encoding_; }
  size_t size() const;
  bool empty() const { return size() == 0; }

  bool Contains(std::string_view member) const;
  // False if already a member.
  bool Add(std::string_view member, const SetLimits& limits);
  // False if not a member.
  bool Remove(std::string_view member);
  // Redis's setTypeMaybeConvert before adding about size_hint members to an existing set.
  void MaybeConvert(size_t size_hint, const SetLimits& limits);
  // Converts to an intset when every member is an integer and the intset limit allows.
  void MaybeConvertToIntSet(const SetLimits& limits);
  void ConvertTo(Encoding encoding);

  // fn(std::string_view member) for every member (intset members formatted as decimal).
  template <typename F>
  void ForEach(F&& fn) const {
    switch (encoding_) {
      case Encoding::kIntSet: {
        char buf[24];
        for (size_t i = 0; i < ints_->size(); ++i) fn(FormatInt(ints_->Get(i), buf));
        break;
      }
      case Encoding::kListpack:
        packed_->ForEach([&](std::string_view s) {
          fn(s);
          return true;
        });
        break;
      case Encoding::kHashtable:
        table_->ForEach([&](const StringNode* n) { fn(n->key()); });
        break;
    }
  }
  // A uniformly random member (close to uniform for the hashtable). Non-empty set only.
  std::string Random(uint64_t rand) const;
  // Removes and returns a random member. Non-empty set only.
  std::string PopRandom(uint64_t rand);
  // The i-th member of an intset or listpack (i < size()).
  std::string At(size_t i) const;
  // Removes the members at the given ascending indexes of an intset or listpack.
  void EraseIndexes(const std::vector<size_t>& sorted_indexes);

  // SSCAN over the hashtable encoding; fn(std::string_view) per member of visited buckets.
  template <typename F>
  uint64_t ScanTable(uint64_t cursor, F&& fn) const {
    return table_->Scan(cursor, [&](const StringNode* n) { fn(n->key()); });
  }

  // A listpack from ListpackAsGiven: it may repeat a member.
  bool may_repeat() const { return may_repeat_; }
  // The hashtable encoding's table (nullptr for the others), for DEBUG HTSTATS-KEY.
  const StringTable* table() const { return table_.get(); }

  size_t MemoryUsage() const override;
  std::unique_ptr<HeapObject> Clone() const override;
  const char* EncodingName() const override;
  size_t FreeEffort() const override;

  // Decimal text of v in buf (>= 21 bytes).
  static std::string_view FormatInt(int64_t v, char* buf);
  // Redis's string2ll: canonical decimal within int64.
  static bool ParseInt(std::string_view s, int64_t* out);

 private:
  bool AddToIntSet(std::string_view member, const SetLimits& limits);

  Encoding encoding_;
  // The listpack came from ListpackAsGiven and may repeat a member.
  bool may_repeat_ = false;
  std::unique_ptr<IntSet> ints_;
  std::unique_ptr<PackedStrings> packed_;
  std::unique_ptr<StringTable> table_;
};

}  // namespace vireo

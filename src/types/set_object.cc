#include "types/set_object.h"

#include <algorithm>

#include "util/strings.h"

namespace vireo {
namespace {

// The intset limit, capped as Redis caps it (intsets hold at most 2^30 entries).
size_t IntSetMax(const SetLimits& limits) {
  return std::min<size_t>(limits.max_intset_entries, size_t{1} << 30);
}

// Characters in the decimal form of v, sign included (Redis's sdigits10).
size_t DecimalLength(int64_t v) {
  char buf[24];
  return FormatInt64(v, buf);
}

}  // namespace

std::string_view SetObject::FormatInt(int64_t v, char* buf) { return {buf, FormatInt64(v, buf)}; }

bool SetObject::ParseInt(std::string_view s, int64_t* out) {
  return s.size() <= 20 && ParseInt64(s, out);
}

SetObject::SetObject(Encoding encoding) : encoding_(encoding) {
  switch (encoding) {
    case Encoding::kIntSet:
      ints_ = std::make_unique<IntSet>();
      break;
    case Encoding::kListpack:
      packed_ = std::make_unique<PackedStrings>();
      break;
    case Encoding::kHashtable:
      table_ = std::make_unique<StringTable>(false);
      break;
  }
}

std::unique_ptr<SetObject> SetObject::Create(std::string_view first, size_t size_hint,
                                             const SetLimits& limits) {
  int64_t v;
  if (ParseInt(first, &v) && size_hint <= limits.max_intset_entries) {
    return std::make_unique<SetObject>(Encoding::kIntSet);
  }
  if (size_hint <= limits.max_listpack_entries) {
    return std::make_unique<SetObject>(Encoding::kListpack);
  }
  return std::make_unique<SetObject>(Encoding::kHashtable);
}

std::unique_ptr<SetObject> SetObject::ListpackAsGiven(const std::vector<std::string>& members) {
  auto set = std::make_unique<SetObject>(Encoding::kListpack);
  for (const std::string& m : members) set->packed_->Append(m);
  set->may_repeat_ = true;
  return set;
}

size_t SetObject::size() const {
  switch (encoding_) {
    case Encoding::kIntSet:
      return ints_->size();
    case Encoding::kListpack:
      return packed_->count();
    case Encoding::kHashtable:
      return table_->size();
  }
  return 0;
}

bool SetObject::Contains(std::string_view member) const {
  switch (encoding_) {
    case Encoding::kIntSet: {
      int64_t v;
      return ParseInt(member, &v) && ints_->Contains(v);
    }
    case Encoding::kListpack:
      return packed_->Find(member) != PackedStrings::kNpos;
    case Encoding::kHashtable:
      return table_->Peek(member) != nullptr;
  }
  return false;
}

bool SetObject::Add(std::string_view member, const SetLimits& limits) {
  switch (encoding_) {
    case Encoding::kHashtable:
      return table_->Add(member);
    case Encoding::kListpack:
      if (packed_->Find(member) != PackedStrings::kNpos) return false;
      if (packed_->count() < limits.max_listpack_entries &&
          member.size() <= limits.max_listpack_value) {
        packed_->Append(member);
      } else {
        ConvertTo(Encoding::kHashtable);
        table_->AddNew(member);
      }
      return true;
    case Encoding::kIntSet:
      return AddToIntSet(member, limits);
  }
  return false;
}

bool SetObject::AddToIntSet(std::string_view member, const SetLimits& limits) {
  int64_t v;
  if (ParseInt(member, &v)) {
    if (!ints_->Add(v)) return false;
    if (ints_->size() > IntSetMax(limits)) ConvertTo(Encoding::kHashtable);
    return true;
  }
  // A non-integer member: a listpack if the integers already held would fit one too.
  size_t longest = 0;
  if (!ints_->empty()) longest = std::max(DecimalLength(ints_->min()), DecimalLength(ints_->max()));
  if (ints_->size() < limits.max_listpack_entries && member.size() <= limits.max_listpack_value &&
      longest <= limits.max_listpack_value) {
    ConvertTo(Encoding::kListpack);
    packed_->Append(member);
  } else {
    ConvertTo(Encoding::kHashtable);
    table_->AddNew(member);
  }
  return true;
}

bool SetObject::Remove(std::string_view member) {
  switch (encoding_) {
    case Encoding::kIntSet: {
      int64_t v;
      return ParseInt(member, &v) && ints_->Remove(v);
    }
    case Encoding::kListpack: {
      size_t off = packed_->Find(member);
      if (off == PackedStrings::kNpos) return false;
      packed_->Erase(off, 1);
      return true;
    }
    case Encoding::kHashtable:
      return table_->Remove(member);
  }
  return false;
}

void SetObject::MaybeConvert(size_t size_hint, const SetLimits& limits) {
  if ((encoding_ == Encoding::kListpack && size_hint > limits.max_listpack_entries) ||
      (encoding_ == Encoding::kIntSet && size_hint > limits.max_intset_entries)) {
    ConvertTo(Encoding::kHashtable);
  }
}

void SetObject::MaybeConvertToIntSet(const SetLimits& limits) {
  if (encoding_ == Encoding::kIntSet || size() > IntSetMax(limits)) return;
  bool all_ints = true;
  ForEach([&](std::string_view s) {
    int64_t v;
    if (!ParseInt(s, &v)) all_ints = false;
  });
  if (all_ints) ConvertTo(Encoding::kIntSet);
}

void SetObject::ConvertTo(Encoding encoding) {
  if (encoding == encoding_) return;
  SetObject converted(encoding);
  ForEach([&](std::string_view s) {
    switch (encoding) {
      case Encoding::kIntSet: {
        int64_t v = 0;
        ParseInt(s, &v);
        converted.ints_->Add(v);
        break;
      }
      case Encoding::kListpack:
        converted.packed_->Append(s);
        break;
      case Encoding::kHashtable:
        if (may_repeat_) {
          converted.table_->Add(s);
        } else {
          converted.table_->AddNew(s);
        }
        break;
    }
  });
  encoding_ = encoding;
  may_repeat_ = may_repeat_ && encoding == Encoding::kListpack;
  ints_ = std::move(converted.ints_);
  packed_ = std::move(converted.packed_);
  table_ = std::move(converted.table_);
}

std::string SetObject::At(size_t i) const {
  if (encoding_ == Encoding::kIntSet) return Int64ToString(ints_->Get(i));
  return std::string(packed_->At(packed_->OffsetOf(i)));
}

std::string SetObject::Random(uint64_t rand) const {
  if (encoding_ == Encoding::kHashtable) return std::string(table_->RandomNode(rand)->key());
  return At(rand % size());
}

std::string SetObject::PopRandom(uint64_t rand) {
  switch (encoding_) {
    case Encoding::kIntSet: {
      size_t i = rand % ints_->size();
      int64_t v = ints_->Get(i);
      ints_->RemoveAt(i);
      return Int64ToString(v);
    }
    case Encoding::kListpack: {
      size_t off = packed_->OffsetOf(rand % packed_->count());
      std::string member(packed_->At(off));
      packed_->Erase(off, 1);
      return member;
    }
    case Encoding::kHashtable: {
      StringNode* n = table_->RandomNode(rand);
      std::string member(n->key());
      table_->RemoveNode(n);
      return member;
    }
  }
  return {};
}

void SetObject::EraseIndexes(const std::vector<size_t>& sorted_indexes) {
  if (encoding_ == Encoding::kIntSet) {
    for (size_t k = sorted_indexes.size(); k-- > 0;) ints_->RemoveAt(sorted_indexes[k]);
    return;
  }
  auto kept = std::make_unique<PackedStrings>();
  size_t index = 0;
  size_t next = 0;
  packed_->ForEach([&](std::string_view s) {
    if (next < sorted_indexes.size() && sorted_indexes[next] == index) {
      ++next;
    } else {
      kept->Append(s);
    }
    ++index;
    return true;
  });
  packed_ = std::move(kept);
}

size_t SetObject::MemoryUsage() const {
  size_t n = sizeof(*this);
  if (ints_) n += ints_->MemoryUsage();
  if (packed_) n += packed_->MemoryUsage();
  if (table_) n += table_->MemoryUsage();
  return n;
}

std::unique_ptr<HeapObject> SetObject::Clone() const {
  auto copy = std::make_unique<SetObject>(encoding_);
  switch (encoding_) {
    case Encoding::kIntSet:
      *copy->ints_ = *ints_;
      break;
    case Encoding::kListpack:
      *copy->packed_ = *packed_;
      copy->may_repeat_ = may_repeat_;
      break;
    case Encoding::kHashtable:
      ForEach([&](std::string_view s) { copy->table_->AddNew(s); });
      break;
  }
  return copy;
}

const char* SetObject::EncodingName() const {
  switch (encoding_) {
    case Encoding::kIntSet:
      return "intset";
    case Encoding::kListpack:
      return "listpack";
    case Encoding::kHashtable:
      return "hashtable";
  }
  return "unknown";
}

size_t SetObject::FreeEffort() const { return encoding_ == Encoding::kHashtable ? size() : 1; }

}  // namespace vireo

#include "types/hash_object.h"

namespace vireo {

std::optional<std::string_view> HashObject::Find(std::string_view field) const {
  if (table_) {
    const StringNode* n = table_->Peek(field);
    if (n == nullptr) return std::nullopt;
    return n->value();
  }
  size_t off = packed_.Find(field, 2);
  if (off == PackedStrings::kNpos) return std::nullopt;
  return packed_.At(packed_.Next(off));
}

void HashObject::PrepareForArgs(std::span<const std::string_view> fields_and_values,
                                const HashLimits& limits) {
  if (table_) return;
  if (fields_and_values.size() / 2 > limits.max_listpack_entries) {
    ConvertToTable();
    return;
  }
  for (std::string_view s : fields_and_values) {
    if (s.size() > limits.max_listpack_value) {
      ConvertToTable();
      return;
    }
  }
}

bool HashObject::Set(std::string_view field, std::string_view value, const HashLimits& limits,
                     bool keep_ttl) {
  if (ttls_ && !keep_ttl) PersistField(field);
  if (!table_ &&
      (field.size() > limits.max_listpack_value || value.size() > limits.max_listpack_value)) {
    ConvertToTable();
  }
  if (table_) return table_->Put(field, value);
  size_t off = packed_.Find(field, 2);
  if (off != PackedStrings::kNpos) {
    packed_.Replace(packed_.Next(off), value);
    return false;
  }
  packed_.Append(field);
  packed_.Append(value);
  if (size() > limits.max_listpack_entries) ConvertToTable();
  return true;
}

bool HashObject::Delete(std::string_view field) {
  if (ttls_) PersistField(field);
  if (table_) return table_->Remove(field);
  size_t off = packed_.Find(field, 2);
  if (off == PackedStrings::kNpos) return false;
  packed_.Erase(off, 2);
  return true;
}

void HashObject::SetFieldExpire(std::string_view field, int64_t when_ms) {
  if (!ttls_) ttls_ = std::make_unique<FieldTtls>();
  ttls_->Set(field, when_ms);
}

bool HashObject::PersistField(std::string_view field) {
  if (!ttls_ || !ttls_->Remove(field)) return false;
  // A hash whose last TTL went away costs nothing again.
  if (ttls_->empty()) ttls_.reset();
  return true;
}

std::pair<std::string_view, std::string_view> HashObject::PackedAt(size_t i) const {
  size_t off = packed_.OffsetOf(2 * i);
  return {packed_.At(off), packed_.At(packed_.Next(off))};
}

std::pair<std::string_view, std::string_view> HashObject::Random(uint64_t rand) const {
  if (table_) {
    const StringNode* n = table_->RandomNode(rand);
    return {n->key(), n->value()};
  }
  return PackedAt(rand % size());
}

void HashObject::ConvertToTable() {
  if (table_) return;
  auto table = std::make_unique<StringTable>(true);
  ForEach([&](std::string_view f, std::string_view v) { table->PutNew(f, v); });
  table_ = std::move(table);
  packed_.Clear();
  packed_.ShrinkToFit();
}

size_t HashObject::MemoryUsage() const {
  return sizeof(*this) + (table_ ? table_->MemoryUsage() : packed_.MemoryUsage()) +
         (ttls_ ? ttls_->MemoryUsage() : 0);
}

std::unique_ptr<HeapObject> HashObject::Clone() const {
  auto copy = std::make_unique<HashObject>();
  if (table_) {
    copy->table_ = std::make_unique<StringTable>(true);
    ForEach([&](std::string_view f, std::string_view v) { copy->table_->PutNew(f, v); });
  } else {
    copy->packed_ = packed_;
  }
  if (ttls_) copy->ttls_ = std::make_unique<FieldTtls>(*ttls_);
  return copy;
}

}  // namespace vireo

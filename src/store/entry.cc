#include "store/entry.h"

#include <malloc.h>

#include <cstdlib>
#include <new>

namespace kv::store {

Entry* Entry::Create(std::string_view key, Value value) {
  void* mem = malloc(sizeof(Entry) + key.size());
  if (!mem) throw std::bad_alloc();
  Entry* e = new (mem) Entry();
  e->value = std::move(value);
  e->key_len = static_cast<uint32_t>(key.size());
  if (!key.empty()) memcpy(reinterpret_cast<char*>(e) + sizeof(Entry), key.data(), key.size());
  return e;
}

void Entry::Destroy(Entry* e) {
  e->~Entry();
  free(e);
}

size_t Entry::MemoryUsage() const {
  return malloc_usable_size(const_cast<Entry*>(this)) + value.MemoryUsage() - sizeof(Value);
}

}  // namespace kv::store

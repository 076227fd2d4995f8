// The keyspace's table: an IntrusiveTable of Entry (see intrusive_table.h).
#pragma once

#include "store/entry.h"
#include "store/intrusive_table.h"

namespace kv::store {

using KeyTable = IntrusiveTable<Entry>;

}  // namespace kv::store

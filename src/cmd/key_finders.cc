#include "cmd/key_finders.h"

#include <cstdlib>
#include <string>

#include "common/strutil.h"

namespace kv::cmd {
namespace {

using Args = std::span<const std::string_view>;

// Where a numkeys command keeps its arguments; store_index 0 means no destination key.
struct NumkeysLayout {
  int store_index;
  int numkeys_index;  // the keys start right after it
};

// Redis' key-spec pass (getKeysUsingKeySpecs): the destination (a range spec), then numkeys
// keys read with string2ll. False when the spec does not fit, as Redis' invalid_spec.
bool KeysFromSpecs(Args args, NumkeysLayout l, std::vector<int>* keys) {
  const int argc = static_cast<int>(args.size());
  if (l.store_index > 0) keys->push_back(l.store_index);
  if (l.numkeys_index >= argc) return false;
  std::optional<int64_t> numkeys = ParseInt64(args[l.numkeys_index]);
  if (!numkeys || *numkeys < 0) return false;
  // Redis narrows numkeys to int here, so 4294967297 counts as 1.
  int64_t first = l.numkeys_index + 1;
  int64_t last = first + static_cast<int>(*numkeys) - 1;
  if (last >= argc || last < first || first >= argc) return false;
  for (int64_t i = first; i <= last; i++) keys->push_back(static_cast<int>(i));
  return true;
}

// C atoi as glibc has it, (int)strtol: leading space, a sign, digits up to the first non-digit
// (or NUL), clamped to long and then truncated to int. Redis' legacy getkeys functions use it.
int CAtoi(std::string_view s) {
  std::string z(s);
  return static_cast<int>(std::strtol(z.c_str(), nullptr, 10));
}

// Redis' genericGetKeys, the fallback when the key specs fail: the source keys, then the
// destination; nothing when numkeys is below 1 or more than the arguments left.
std::vector<int> LegacyNumkeysKeys(Args args, NumkeysLayout l) {
  const int argc = static_cast<int>(args.size());
  const int first = l.numkeys_index + 1;
  int num = CAtoi(args[l.numkeys_index]);
  if (num < 1 || num > argc - first) return {};
  std::vector<int> keys;
  for (int i = 0; i < num; i++) keys.push_back(first + i);
  if (l.store_index > 0) keys.push_back(l.store_index);
  return keys;
}

std::vector<int> NumkeysKeys(Args args, NumkeysLayout l) {
  std::vector<int> keys;
  if (KeysFromSpecs(args, l, &keys)) return keys;
  return LegacyNumkeysKeys(args, l);
}

}  // namespace

std::vector<int> NumkeysAt1Keys(Args args) { return NumkeysKeys(args, {0, 1}); }
std::vector<int> NumkeysAt2Keys(Args args) { return NumkeysKeys(args, {0, 2}); }
std::vector<int> StoreNumkeysKeys(Args args) { return NumkeysKeys(args, {1, 2}); }

// Redis' sortGetKeys (SORT's key specs are "unknown", so this is what answers). Options are
// skipped with their arguments (LIMIT 2, GET 1, BY 1) so that "GET store" is not mistaken for
// STORE; the last STORE with an argument wins.
std::vector<int> SortKeys(Args args) {
  std::vector<int> keys = {1};
  int store = 0;
  const int argc = static_cast<int>(args.size());
  for (int i = 2; i < argc; i++) {
    std::string_view a = args[i];
    if (EqualsIgnoreCase(a, "limit")) {
      i += 2;
    } else if (EqualsIgnoreCase(a, "get") || EqualsIgnoreCase(a, "by")) {
      i += 1;
    } else if (EqualsIgnoreCase(a, "store") && i + 1 < argc) {
      store = i + 1;
    }
  }
  if (store > 0) keys.push_back(store);
  return keys;
}

std::vector<int> SortRoKeys(Args) { return {1}; }

// Redis' xreadGetKeys: options skipped up to the first STREAMS (a group, a consumer or a key
// may be called "streams"); no keys when what follows it is empty or odd.
std::vector<int> XreadKeys(Args args) {
  const int argc = static_cast<int>(args.size());
  int streams_pos = -1;
  for (int i = 1; i < argc; i++) {
    std::string_view a = args[i];
    if (EqualsIgnoreCase(a, "block") || EqualsIgnoreCase(a, "count")) {
      i++;
    } else if (EqualsIgnoreCase(a, "group")) {
      i += 2;
    } else if (EqualsIgnoreCase(a, "noack")) {
    } else if (EqualsIgnoreCase(a, "streams")) {
      streams_pos = i;
      break;
    } else {
      break;
    }
  }
  int num = argc - streams_pos - 1;
  if (streams_pos == -1 || num == 0 || num % 2 != 0) return {};
  std::vector<int> keys;
  for (int i = streams_pos + 1; i < argc - num / 2; i++) keys.push_back(i);
  return keys;
}

// Redis' georadiusGetKeys: from the fifth argument on, each STORE or STOREDIST with an argument
// names the destination, the last one winning (as georadiusGeneric reads them).
std::vector<int> GeoradiusKeys(Args args) {
  std::vector<int> keys = {1};
  int store = 0;
  const int argc = static_cast<int>(args.size());
  for (int i = 5; i < argc; i++) {
    std::string_view a = args[i];
    if ((EqualsIgnoreCase(a, "store") || EqualsIgnoreCase(a, "storedist")) && i + 1 < argc) {
      store = ++i;
    }
  }
  if (store > 0) keys.push_back(store);
  return keys;
}

}  // namespace kv::cmd

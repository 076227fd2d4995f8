// Key specifications, Redis 7.0's description of where a command's keys are and what it does
// with them: where to begin searching (an argument index, or after a keyword) and how to find
// the keys from there (a range, or a count read from an argument), with flags saying how each
// key is accessed (RO/RW/OW/RM, access/update/insert/delete). COMMAND INFO reports them and
// COMMAND GETKEYSANDFLAGS evaluates them.
//
// The specs describe commands; dispatch does not read them. The legacy key range and the key
// finders beside each handler stay the authority on which arguments are keys (they also answer
// COMMAND GETKEYS), and a spec evaluation that succeeds finds the same keys.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace kv::cmd {

// Key-spec flags, in Redis' order (the order COMMAND INFO lists them in).
enum KeyFlag : uint32_t {
  kKeyRO = 1u << 0,             // read only
  kKeyRW = 1u << 1,             // read and modified
  kKeyOW = 1u << 2,             // overwritten without being read
  kKeyRM = 1u << 3,             // removed
  kKeyAccess = 1u << 4,         // the value is returned or used for the reply
  kKeyUpdate = 1u << 5,         // the value is updated or overwritten
  kKeyInsert = 1u << 6,         // data is added to the value
  kKeyDelete = 1u << 7,         // data is deleted from the value
  kKeyNotKey = 1u << 8,         // not a key (cluster routing only)
  kKeyIncomplete = 1u << 9,     // the spec may miss keys; the key finder is the authority
  kKeyVariableFlags = 1u << 10, // the flags depend on the arguments
};

// Names of the flags set in `flags`, in Redis' order.
std::vector<std::string_view> KeyFlagNames(uint32_t flags);

struct BeginSearch {
  enum class Type : uint8_t { kUnknown, kIndex, kKeyword };
  Type type = Type::kUnknown;
  int index = 0;                  // kIndex: the argument index of the first key
  const char* keyword = nullptr;  // kKeyword: the keys begin after this argument
  int startfrom = 0;              // kKeyword: where to search from (<0: backwards from the end)
};

struct FindKeys {
  enum class Type : uint8_t { kUnknown, kRange, kKeyNum };
  Type type = Type::kUnknown;
  // kRange: lastkey (relative to the begin; <0 from the end), keystep, limit.
  // kKeyNum: keynumidx (of the count, relative to the begin), firstkey (relative), keystep.
  int a = 0, b = 0, c = 0;
};

struct KeySpec {
  uint32_t flags = 0;  // KeyFlag bits
  BeginSearch begin;
  FindKeys find;
  const char* notes = nullptr;
};

constexpr BeginSearch BeginIndex(int index) {
  return {BeginSearch::Type::kIndex, index, nullptr, 0};
}
constexpr BeginSearch BeginKeyword(const char* keyword, int startfrom) {
  return {BeginSearch::Type::kKeyword, 0, keyword, startfrom};
}
constexpr BeginSearch BeginUnknown() { return {}; }
constexpr FindKeys Range(int lastkey, int keystep, int limit) {
  return {FindKeys::Type::kRange, lastkey, keystep, limit};
}
constexpr FindKeys KeyNum(int keynumidx, int firstkey, int keystep) {
  return {FindKeys::Type::kKeyNum, keynumidx, firstkey, keystep};
}
constexpr FindKeys FindUnknown() { return {}; }

// One key of an invocation and how it is accessed.
struct KeyRef {
  int index;       // argument index (args[0] is the command name)
  uint32_t flags;  // KeyFlag bits; 0 when the finder that found it records none
  bool operator==(const KeyRef&) const = default;
};

// Redis' getKeysUsingKeySpecs over a whole invocation (args[0] is the name, arity checked):
// the keys of every spec that is not kKeyNotKey, in spec order, each with its spec's flags.
// Nullopt when a spec does not fit the arguments or is incomplete (Redis then asks the
// command's getkeys function).
std::optional<std::vector<KeyRef>> KeysFromSpecs(std::span<const KeySpec> specs,
                                                 std::span<const std::string_view> args);
// The same appended to `out`; false where KeysFromSpecs gives nullopt (`out` then holds part).
bool KeysFromSpecsInto(std::span<const KeySpec> specs, std::span<const std::string_view> args,
                       std::vector<KeyRef>* out);

// The flags of one key of an invocation when the key specs do not answer (incomplete or
// variable-flag specs): what Redis' getkeys function for the command records.
using KeyFlagsFn = uint32_t (*)(std::span<const std::string_view> args, int key_index);

// The flags of SET's key, which depend on its GET option (Redis' setGetKeys).
uint32_t SetKeyFlags(std::span<const std::string_view> args, int key_index);
uint32_t BitfieldKeyFlags(std::span<const std::string_view> args, int key_index);
// The flags of SORT's keys: the sorted key is read, a STORE destination overwritten (Redis'
// sortGetKeys).
uint32_t SortKeyFlags(std::span<const std::string_view> args, int key_index);

}  // namespace kv::cmd

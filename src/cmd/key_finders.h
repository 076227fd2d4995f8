// Key finders for the commands whose key positions depend on their arguments (Redis calls them
// "movable keys"): a numkeys argument (ZUNION, LMPOP, SINTERCARD, ...) or an option anywhere in
// the arguments (SORT ... STORE dst). Each one reproduces what Redis 7.0's COMMAND GETKEYS
// answers: the key specs are tried first and, when they do not fit the arguments, the command's
// legacy getkeys function (which reads numkeys with atoi) is the fallback.
//
// Contract of every finder: args[0] is the command name and args has passed the arity check;
// the result lists key argument indexes in Redis' order, and is empty when Redis finds no keys
// (the command would answer a syntax or numkeys error).
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace kv::cmd {

// numkeys at 1, then the keys: ZUNION ZINTER ZDIFF ZINTERCARD SINTERCARD LMPOP ZMPOP.
std::vector<int> NumkeysAt1Keys(std::span<const std::string_view> args);
// timeout at 1, numkeys at 2, then the keys: BLMPOP BZMPOP.
std::vector<int> NumkeysAt2Keys(std::span<const std::string_view> args);
// destination at 1, numkeys at 2, then the keys: ZUNIONSTORE ZINTERSTORE ZDIFFSTORE.
std::vector<int> StoreNumkeysKeys(std::span<const std::string_view> args);
// SORT: the sorted key, then the last STORE destination.
std::vector<int> SortKeys(std::span<const std::string_view> args);
// GEORADIUS and GEORADIUSBYMEMBER: the source key, then the last STORE or STOREDIST key.
std::vector<int> GeoradiusKeys(std::span<const std::string_view> args);
// XREAD and XREADGROUP: the keys after STREAMS, half of what follows it.
std::vector<int> XreadKeys(std::span<const std::string_view> args);
// SORT_RO: the sorted key only.
std::vector<int> SortRoKeys(std::span<const std::string_view> args);

}  // namespace kv::cmd

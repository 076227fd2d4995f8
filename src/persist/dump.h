// DUMP/RESTORE payloads in Redis' format: the RDB type byte and serialized value, then the RDB
// version (2 bytes, little-endian) and the CRC-64 of everything before it (8 bytes, LE), so
// payloads move between kvstore and Redis 7.0 in both directions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/keyspace.h"
#include "store/value.h"

namespace kv::persist {

std::string DumpValue(const store::Value& v, const store::EncodingLimits& limits,
                      bool compression);

// Checks the footer: a version this loader handles and a matching checksum
// (InvalidArgument "version or checksum are wrong" otherwise). Without `verify_checksum` (DEBUG
// SET-SKIP-CHECKSUM-VALIDATION) only the length and the version are checked, as in Redis.
Status VerifyDumpPayload(std::string_view payload, bool verify_checksum = true);

// Builds the value of a verified payload; Corruption on malformed data. A payload holding a
// module value (which kvstore cannot represent) is Corruption too.
Result<store::Value> RestoreValue(std::string_view payload, const store::EncodingLimits& limits);

// FUNCTION DUMP's payload: one FUNCTION2 record (the library's code as an RDB string) per
// library, then the same footer.
std::string DumpFunctions(const std::vector<std::string>& codes);

// The library codes of a verified FUNCTION DUMP payload; Corruption with Redis' message
// (functionRestoreCommand's) when it holds anything else.
Result<std::vector<std::string>> FunctionCodes(std::string_view payload);

}  // namespace kv::persist

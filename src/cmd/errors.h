// Every error a command can answer, and its exact Redis 7.0 text. Handlers return or pass an
// OpStatus; the text is produced here and nowhere else.
#pragma once

#include <cstdint>
#include <string>
#include <span>
#include <string_view>

#include "resp/writer.h"

namespace kv::cmd {

enum class OpStatus {
  kOk,
  kWrongType,       // WRONGTYPE Operation against a key holding the wrong kind of value
  kSyntax,          // syntax error
  kNotInteger,      // value is not an integer or out of range
  kNotFloat,        // value is not a valid float
  kOverflow,        // increment or decrement would overflow
  kNoSuchKey,       // no such key
  kOutOfRange,      // index out of range
  kDbIndex,         // DB index is out of range
  kNanOrInf,        // increment would produce NaN or Infinity
  kStringTooLong,   // string exceeds maximum allowed size (proto-max-bulk-len)
  kNoAuth,          // NOAUTH Authentication required.
  kInvalidCursor,   // invalid cursor
  kTimeoutNotInt,   // timeout is not an integer or out of range
  kNegativeTimeout, // timeout is negative
  kBusyKey,         // BUSYKEY Target key name already exists.
  kPositive,        // value is out of range, must be positive
  // kvstore's own, where Redis 7.0 has no answer (it aborts): a string grown past the most a
  // value holds (store::Value::kMaxStrLen), and memory the allocator refused.
  kStringOverMax,   // string exceeds maximum allowed size (4294967295 bytes)
  kNoMemory,        // OOM out of memory for this command
};

// The text after the leading '-' ("ERR ..." is implied for plain messages).
std::string_view ErrorText(OpStatus s);
void ReplyError(resp::ReplyWriter& out, OpStatus s);

std::string WrongArity(std::string_view cmd_fullname);
std::string UnknownCommand(std::string_view name, std::span<const std::string_view> args);
std::string UnknownSubcommand(std::string_view sub, std::string_view parent);
// Redis' addReplySubcommandSyntaxError: for a command that checks its own subcommands' counts.
std::string SubcommandSyntax(std::string_view sub, std::string_view parent);
std::string InvalidExpireTime(std::string_view cmd);
// Redis' getRangeLongFromObjectOrReply: "value is out of range, value must between MIN and MAX"
// (sic).
std::string CountOutOfRange(int64_t min, int64_t max);

}  // namespace kv::cmd

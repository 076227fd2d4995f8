#include "cmd/errors.h"

#include <algorithm>

#include "common/strutil.h"
#include "store/value.h"

namespace kv::cmd {

static_assert(store::Value::kMaxStrLen == 4294967295, "kStringOverMax's text names it");

std::string_view ErrorText(OpStatus s) {
  switch (s) {
    case OpStatus::kOk: return "";
    case OpStatus::kWrongType:
      return "-WRONGTYPE Operation against a key holding the wrong kind of value";
    case OpStatus::kSyntax: return "syntax error";
    case OpStatus::kNotInteger: return "value is not an integer or out of range";
    case OpStatus::kNotFloat: return "value is not a valid float";
    case OpStatus::kOverflow: return "increment or decrement would overflow";
    case OpStatus::kNoSuchKey: return "no such key";
    case OpStatus::kOutOfRange: return "index out of range";
    case OpStatus::kDbIndex: return "DB index is out of range";
    case OpStatus::kNanOrInf: return "increment would produce NaN or Infinity";
    case OpStatus::kStringTooLong: return "string exceeds maximum allowed size (proto-max-bulk-len)";
    case OpStatus::kNoAuth: return "-NOAUTH Authentication required.";
    case OpStatus::kInvalidCursor: return "invalid cursor";
    case OpStatus::kTimeoutNotInt: return "timeout is not an integer or out of range";
    case OpStatus::kNegativeTimeout: return "timeout is negative";
    case OpStatus::kBusyKey: return "-BUSYKEY Target key name already exists.";
    case OpStatus::kPositive: return "value is out of range, must be positive";
    case OpStatus::kStringOverMax: return "string exceeds maximum allowed size (4294967295 bytes)";
    case OpStatus::kNoMemory: return "-OOM out of memory for this command";
  }
  return "internal error";
}

void ReplyError(resp::ReplyWriter& out, OpStatus s) { out.Error(ErrorText(s)); }

std::string WrongArity(std::string_view cmd_fullname) {
  return "wrong number of arguments for '" + std::string(cmd_fullname) + "' command";
}

namespace {
// Redis formats these with "%.*s", which stops at a NUL byte.
std::string_view CText(std::string_view s, size_t max) {
  s = s.substr(0, max);
  return s.substr(0, s.find('\0'));
}
}  // namespace

std::string UnknownCommand(std::string_view name, std::span<const std::string_view> args) {
  std::string list;
  for (size_t i = 1; i < args.size() && list.size() < 128; i++) {
    list += "'" + std::string(CText(args[i], 128 - list.size())) + "' ";
  }
  return "unknown command '" + std::string(CText(name, 128)) + "', with args beginning with: " +
         list;
}

std::string UnknownSubcommand(std::string_view sub, std::string_view parent) {
  return "unknown subcommand '" + std::string(sub.substr(0, 128)) + "'. Try " +
         ToUpper(parent) + " HELP.";
}

std::string SubcommandSyntax(std::string_view sub, std::string_view parent) {
  return "unknown subcommand or wrong number of arguments for '" +
         std::string(sub.substr(0, 128)) + "'. Try " + ToUpper(parent) + " HELP.";
}

std::string CountOutOfRange(int64_t min, int64_t max) {
  return "value is out of range, value must between " + std::to_string(min) + " and " +
         std::to_string(max);
}

std::string InvalidExpireTime(std::string_view cmd) {
  return "invalid expire time in '" + std::string(cmd) + "' command";
}

}  // namespace kv::cmd

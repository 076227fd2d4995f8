// kvstore's version, and the Redis version it is compatible with (INFO redis_version, HELLO,
// the RDB's redis-ver, the function libraries' engine version).
#pragma once

namespace kv {

inline constexpr const char* kRedisCompatVersion = "7.0.15";
inline constexpr const char* kKvstoreVersion = "0.1.0";

}  // namespace kv

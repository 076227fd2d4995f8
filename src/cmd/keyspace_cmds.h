// Internal to the keyspace command files (keys.cc, expire.cc): the lookup they share and the
// registration of the EXPIRE family, which keys.cc calls. Nothing outside cmd/ includes it.
#pragma once

#include <string_view>

#include "cmd/command.h"
#include "cmd/context.h"

namespace kv::cmd::keyspace {

// Redis' lookupKeyReadWithFlags(LOOKUP_NOTOUCH[|LOOKUP_NONOTIFY]): a read lookup that honours
// TTLs and counts hits/misses but leaves the access clock alone (TYPE, TTL and OBJECT must not
// disturb OBJECT IDLETIME/FREQ). A miss fires "keymiss" unless notify_miss is false. keys.cc.
store::Entry* LookupNoTouch(Context& c, std::string_view key, bool notify_miss = true);

// EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL EXPIRETIME PEXPIRETIME PERSIST. expire.cc.
void RegisterExpireCommands(CommandTable& t);

}  // namespace kv::cmd::keyspace

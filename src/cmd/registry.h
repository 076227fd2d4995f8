// Registration of the data command families. Each family file defines its Register function.
#pragma once

#include "cmd/command.h"

namespace kv::cmd {

void RegisterConnectionCommands(CommandTable& table);  // connection.cc: PING ECHO SELECT
void RegisterKeyCommands(CommandTable& table);         // keys.cc, expire.cc
void RegisterStringCommands(CommandTable& table);      // strings.cc, string_lcs.cc
void RegisterBitmapCommands(CommandTable& table);      // bitmaps.cc, bitfield.cc: SETBIT ...
void RegisterHyperLogLogCommands(CommandTable& table);  // hyperloglog.cc, hll_encoding.cc: PF*
void RegisterGeoCommands(CommandTable& table);  // geo.cc, geo_search.cc: GEOADD ... GEOSEARCH
void RegisterStreamCommands(CommandTable& table);      // streams.cc, stream_*.cc: XADD ... XINFO
void RegisterHashCommands(CommandTable& table);        // hashes.cc
void RegisterListCommands(CommandTable& table);        // lists.cc
void RegisterSetCommands(CommandTable& table);         // sets.cc
void RegisterZsetCommands(CommandTable& table);        // zsets.cc
void RegisterBlockingCommands(CommandTable& table);    // blocking.cc: BLPOP ... BZMPOP
void RegisterSortCommands(CommandTable& table);        // sort.cc: SORT SORT_RO

// All of the above.
void RegisterDataCommands(CommandTable& table);

}  // namespace kv::cmd

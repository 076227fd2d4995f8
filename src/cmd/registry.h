// Registration of the data command families. Each family file defines its Register function.
#pragma once

#include "cmd/command.h"

namespace kv::cmd {

void RegisterConnectionCommands(CommandTable& table);  // connection.cc: PING ECHO SELECT
void RegisterKeyCommands(CommandTable& table);         // keys.cc
void RegisterStringCommands(CommandTable& table);      // strings.cc
void RegisterBitmapCommands(CommandTable& table);      // bitmaps.cc: SETBIT BITCOUNT BITFIELD ...
void RegisterHyperLogLogCommands(CommandTable& table);  // hyperloglog.cc: PFADD PFCOUNT PFMERGE ...
void RegisterGeoCommands(CommandTable& table);  // geo.cc, geo_search.cc: GEOADD ... GEOSEARCH
void RegisterStreamCommands(CommandTable& table);      // streams.cc, stream_read.cc: XADD ... XREAD
void RegisterHashCommands(CommandTable& table);        // hashes.cc
void RegisterListCommands(CommandTable& table);        // lists.cc
void RegisterSetCommands(CommandTable& table);         // sets.cc
void RegisterZsetCommands(CommandTable& table);        // zsets.cc
void RegisterBlockingCommands(CommandTable& table);    // blocking.cc: BLPOP ... BZMPOP
void RegisterSortCommands(CommandTable& table);        // sort.cc: SORT SORT_RO

// All of the above.
void RegisterDataCommands(CommandTable& table);

}  // namespace kv::cmd

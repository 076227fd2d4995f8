// Internal to the geo command files (geo.cc, geo_search.cc): the argument and reply helpers
// they share and the search handlers geo.cc registers.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cmd/context.h"
#include "cmd/geohash.h"
#include "store/zset_type.h"

namespace kv::cmd::geo {

// The zset at key for reading: null when missing (nothing answered), WRONGTYPE answered when
// another type (*wrongtype set).
const store::ZSetValue* ReadZset(Context& c, std::string_view key, bool* wrongtype);
// A member's position, decoded from its score; nullopt when the zset or the member is missing.
std::optional<std::pair<double, double>> Position(const store::ZSetValue* z,
                                                  std::string_view member);
// Redis' extractLongLatOrReply: two floats within the Mercator limits, else an error answered.
bool ParseLonLat(Context& c, std::string_view lon, std::string_view lat, double* xy);
// Redis' extractUnitOrReply: meters per unit, or -1 after answering the error.
double ParseUnit(Context& c, std::string_view unit);
// A coordinate as Redis' addReplyHumanLongDouble: a bulk string in RESP2, a double in RESP3.
void ReplyCoordinate(Context& c, double v);
// A distance as Redis' addReplyDoubleDistance: "%.4f" in a bulk string.
void ReplyDistance(Context& c, double d);

// geo_search.cc.
void GeoRadius(Context& c);
void GeoRadiusRo(Context& c);
void GeoRadiusByMember(Context& c);
void GeoRadiusByMemberRo(Context& c);
void GeoSearch(Context& c);
void GeoSearchStore(Context& c);

}  // namespace kv::cmd::geo

// Internal to the stream command files (streams.cc, stream_add.cc, stream_read.cc,
// stream_groups.cc, stream_claims.cc, stream_info.cc): the helpers they share and the handlers
// streams.cc registers. Nothing outside cmd/ includes it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/context.h"
#include "store/stream_type.h"

namespace kv::cmd::stream {

// Redis' streamGenericParseIDOrReply: "<ms>-<seq>", "<ms>" (seq = missing_seq), "-" and "+"
// (refused when strict), and "<ms>-*" when seq_given is asked for (*seq_given false then).
// Answers the error when c is given.
bool ParseId(Context* c, std::string_view arg, store::StreamID* id, uint64_t missing_seq,
             bool strict, bool* seq_given);
// Strict IDs from argument `from` to the end, all checked before any is used.
bool ParseIds(Context& c, size_t from, std::vector<store::StreamID>* ids);
// Redis' streamParseIntervalIDOrReply: "(" makes the bound exclusive (and the ID strict).
bool ParseIntervalId(Context& c, std::string_view arg, store::StreamID* id, bool* exclude,
                     uint64_t missing_seq);
// The stream at key: null when missing; on another type WRONGTYPE is answered, *wrongtype set.
store::StreamValue* ReadStream(Context& c, std::string_view key, bool* wrongtype);
store::StreamValue* WriteStream(Context& c, std::string_view key, bool* wrongtype);
// One entry as Redis replies it: [id, [field, value, ...]].
void ReplyEntry(Context& c, store::StreamID id,
                std::span<const store::StreamValue::FieldValue> fields);
// The entries start..end (at most count, 0: all) as an array; returns how many.
size_t ReplyRange(Context& c, const store::StreamValue& s, store::StreamID start,
                  store::StreamID end, size_t count, bool rev);

// Streams that hold tombstones between start and end (streamRangeHasTombstones).
bool RangeHasTombstones(const store::StreamValue& s, store::StreamID start, store::StreamID end);
store::StreamGroup* FindGroup(store::StreamValue& s, std::string_view name);
// A new consumer (streamCreateConsumer): fires "xgroup-createconsumer" and counts a change.
store::StreamConsumer* CreateConsumer(Context& c, store::StreamGroup& g, std::string_view name,
                                      std::string_view key);
// The group's consumer of that name, made (CreateConsumer) when missing; its seen time is now.
store::StreamConsumer* Claimer(Context& c, store::StreamGroup& g, std::string_view name,
                               std::string_view key);
// Whether a live entry has this ID (streamEntryExists).
bool EntryExists(const store::StreamValue& s, store::StreamID id);
// The entry at id as a reply element; false (nothing answered) when it is gone.
bool ReplyOneEntry(Context& c, const store::StreamValue& s, store::StreamID id);
// Moves a pending entry to `to` (the NACK stays in the group's PEL).
void GiveNack(store::StreamNack* nack, store::StreamID id, store::StreamConsumer* to);
// Removes a pending entry from the group's PEL and its consumer's.
void RemoveNack(store::StreamGroup& g, store::StreamID id);
// The stream at argument 1 (*s) and its group named by argument 2; null after answering
// WRONGTYPE or -NOGROUP.
store::StreamGroup* LookupGroup(Context& c, store::StreamValue** s);
// The XCLAIM Redis propagates for a pending entry (streamPropagateXCLAIM).
std::vector<std::string> XclaimArgv(std::string_view key, std::string_view group,
                                    const store::StreamGroup& g, store::StreamID id,
                                    const store::StreamNack& nack);
// XGROUP SETID key group <last id> ENTRIESREAD <n> (streamPropagateGroupID).
std::vector<std::string> SetIdArgv(std::string_view key, std::string_view group,
                                   const store::StreamGroup& g);
// XREADGROUP's serving of one stream (streamReplyWithRange with a group): new entries after
// `start` (updating the group's last ID and read counter, adding PEL entries unless noack,
// each propagated as an XCLAIM; with noack the new last ID as XGROUP SETID), or with
// `history` the consumer's own pending entries from `start`.
void ReplyGroupRange(Context& c, store::StreamValue& s, std::string_view key,
                     std::string_view group_name, store::StreamGroup& g,
                     store::StreamConsumer& consumer, store::StreamID start, size_t count,
                     bool noack, bool history);

// stream_add.cc.
void XAdd(Context& c);
void XTrim(Context& c);
// stream_read.cc.
void XRead(Context& c);
void XReadGroup(Context& c);
// stream_groups.cc.
void XGroup(Context& c);
void XAck(Context& c);
void XPending(Context& c);
// stream_claims.cc.
void XClaim(Context& c);
void XAutoClaim(Context& c);
// stream_info.cc.
void XInfo(Context& c);

}  // namespace kv::cmd::stream

// Internal to the stream command files (streams.cc, stream_read.cc): the helpers they share.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "cmd/context.h"
#include "store/stream_type.h"

namespace kv::cmd::stream {

// Redis' streamGenericParseIDOrReply: "<ms>-<seq>", "<ms>" (seq = missing_seq), "-" and "+"
// (refused when strict), and "<ms>-*" when seq_given is asked for (*seq_given false then).
// Answers the error when c is given.
bool ParseId(Context* c, std::string_view arg, store::StreamID* id, uint64_t missing_seq,
             bool strict, bool* seq_given);
// The stream at key: null when missing; on another type WRONGTYPE is answered, *wrongtype set.
store::StreamValue* ReadStream(Context& c, std::string_view key, bool* wrongtype);
store::StreamValue* WriteStream(Context& c, std::string_view key, bool* wrongtype);
// One entry as Redis replies it: [id, [field, value, ...]].
void ReplyEntry(Context& c, store::StreamID id,
                std::span<const store::StreamValue::FieldValue> fields);
// The entries start..end (at most count, 0: all) as an array; returns how many.
size_t ReplyRange(Context& c, const store::StreamValue& s, store::StreamID start,
                  store::StreamID end, size_t count, bool rev);

// stream_read.cc.
void XRead(Context& c);

}  // namespace kv::cmd::stream

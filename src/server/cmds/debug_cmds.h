// DEBUG's actions, one family per file: debug_cmds.cc (the action table, the keyspace and
// crash actions), debug_help.cc (HELP), debug_protocol.cc (PROTOCOL, ERROR), debug_htstats.cc (the
// data structures' internals), debug_server.cc (the server's switches, LOADAOF, RESTART). Internal
// to these files.
#pragma once

#include "cmd/context.h"

namespace kv::server::debug {

// debug_help.cc
void Help(cmd::Context& c);

// debug_protocol.cc
void Protocol(cmd::Context& c);
void Error(cmd::Context& c);

// debug_htstats.cc
void HtStats(cmd::Context& c);
void HtStatsKey(cmd::Context& c);
void SdsLen(cmd::Context& c);
void Listpack(cmd::Context& c);
void Quicklist(cmd::Context& c);
void StructSize(cmd::Context& c);

// debug_server.cc
void LoadAof(cmd::Context& c);
void ChangeReplId(cmd::Context& c);
void PauseCron(cmd::Context& c);
void AofFlushSleep(cmd::Context& c);
void SetSkipChecksumValidation(cmd::Context& c);
void SetDisableDenyScripts(cmd::Context& c);
void QuicklistPackedThreshold(cmd::Context& c);
void ReplyBuffer(cmd::Context& c);
void ClientEviction(cmd::Context& c);
void DropClusterPacketFilter(cmd::Context& c);
void ClusterLink(cmd::Context& c);
void ConfigRewriteForceAll(cmd::Context& c);
void Restart(cmd::Context& c);
void Log(cmd::Context& c);
void Leak(cmd::Context& c);
void Oom(cmd::Context& c);
void StringmatchTest(cmd::Context& c);

}  // namespace kv::server::debug

// CLIENT and its subcommands.
#include "cmd/context.h"
#include "cmd/errors.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "server/acl_users.h"
#include "server/client.h"
#include "server/server.h"

namespace kv::server {
namespace {

using cmd::Context;

bool ValidName(std::string_view n) {
  for (unsigned char ch : n) {
    if (ch < '!' || ch > '~') return false;
  }
  return true;
}

// The client type CLIENT LIST TYPE / CLIENT KILL TYPE filter on.
std::string_view TypeOf(const Client& cl) {
  if (cl.flags() & Client::kMaster) return "master";
  if (cl.flags() & Client::kReplica) return "replica";
  if (cl.flags() & Client::kPubSub) return "pubsub";
  return "normal";
}

bool ParseType(std::string_view t, std::string* out) {
  std::string l = ToLower(t);
  if (l == "slave") l = "replica";
  if (l != "normal" && l != "master" && l != "replica" && l != "pubsub") return false;
  *out = l;
  return true;
}

void ClientId(Context& c) { c.out.Int(static_cast<int64_t>(c.session.id)); }

void ClientGetName(Context& c) {
  if (c.session.name.empty())
    c.out.Null();
  else
    c.out.Bulk(c.session.name);
}

void ClientSetName(Context& c) {
  if (!ValidName(c.arg(2))) {
    c.Error("Client names cannot contain spaces, newlines or special characters.");
    return;
  }
  c.session.name = std::string(c.arg(2));
  c.out.Ok();
}

void ClientInfo(Context& c) {
  Server& s = ServerOf(c);
  c.out.Verbatim(s.current_client().Describe(MonoMs()) + "\n");
}

void ClientList(Context& c) {
  Server& s = ServerOf(c);
  std::string type;
  std::vector<uint64_t> ids;
  for (size_t i = 2; i < c.argc(); i++) {
    if (EqualsIgnoreCase(c.arg(i), "TYPE") && i + 1 < c.argc()) {
      if (!ParseType(c.arg(++i), &type)) {
        c.Error("Unknown client type '" + std::string(c.arg(i)) + "'");
        return;
      }
    } else if (EqualsIgnoreCase(c.arg(i), "ID") && i + 1 < c.argc()) {
      for (i++; i < c.argc(); i++) {
        auto id = ParseInt64(c.arg(i));
        if (!id || *id <= 0) {
          c.Error("Invalid client ID");
          return;
        }
        ids.push_back(static_cast<uint64_t>(*id));
      }
    } else {
      c.Error(cmd::OpStatus::kSyntax);
      return;
    }
  }
  std::string out;
  int64_t now = MonoMs();
  for (const auto& [id, cl] : s.clients()) {
    // An evicted client is gone, as Redis frees it there and then (its close is under way).
    if (cl->mem_slot().evicted.load(std::memory_order_relaxed)) continue;
    if (!type.empty() && TypeOf(*cl) != type) continue;
    if (!ids.empty() && std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
    out += cl->Describe(now);
    out += '\n';
  }
  c.out.Verbatim(out);
}

struct KillFilter {
  int64_t id = 0;
  std::string type, user, addr, laddr;
  bool skipme = true;
};

// Parses the new-style CLIENT KILL filters; answers the error and returns false on failure.
bool ParseKillFilter(Context& c, KillFilter* f) {
  if ((c.argc() - 2) % 2 != 0) {
    c.Error(cmd::OpStatus::kSyntax);
    return false;
  }
  for (size_t i = 2; i < c.argc(); i += 2) {
    std::string_view opt = c.arg(i), val = c.arg(i + 1);
    if (EqualsIgnoreCase(opt, "ID")) {
      auto id = ParseInt64(val);
      if (!id || *id <= 0) {
        c.Error("client-id should be greater than 0");
        return false;
      }
      f->id = *id;
    } else if (EqualsIgnoreCase(opt, "TYPE")) {
      if (!ParseType(val, &f->type)) {
        c.Error("Unknown client type '" + std::string(val) + "'");
        return false;
      }
    } else if (EqualsIgnoreCase(opt, "USER")) {
      // As Redis, a user that does not exist is an error.
      if (!ServerOf(c).acl().Find(val)) {
        c.Error("No such user '" + std::string(val) + "'");
        return false;
      }
      f->user = std::string(val);
    } else if (EqualsIgnoreCase(opt, "ADDR")) {
      f->addr = std::string(val);
    } else if (EqualsIgnoreCase(opt, "LADDR")) {
      f->laddr = std::string(val);
    } else if (EqualsIgnoreCase(opt, "SKIPME")) {
      if (EqualsIgnoreCase(val, "yes"))
        f->skipme = true;
      else if (EqualsIgnoreCase(val, "no"))
        f->skipme = false;
      else {
        c.Error(cmd::OpStatus::kSyntax);
        return false;
      }
    } else {
      c.Error(cmd::OpStatus::kSyntax);
      return false;
    }
  }
  return true;
}

void ClientKill(Context& c) {
  Server& s = ServerOf(c);
  Client& me = s.current_client();
  KillFilter f;
  bool old_style = c.argc() == 3;
  if (old_style) {
    f.addr = std::string(c.arg(2));
    f.skipme = false;
  } else if (!ParseKillFilter(c, &f)) {
    return;
  }
  int64_t killed = 0;
  for (const auto& [id, cl] : s.clients()) {
    if (f.id && static_cast<int64_t>(id) != f.id) continue;
    if (!f.type.empty() && TypeOf(*cl) != f.type) continue;
    if (!f.user.empty() && cl->session().user != f.user) continue;
    if (!f.addr.empty() && cl->peer() != f.addr) continue;
    if (!f.laddr.empty() && cl->local() != f.laddr) continue;
    if (cl == &me) {
      if (f.skipme) continue;
      c.session.close_after_reply = true;  // answer first, then close
    } else {
      cl->Kill();
    }
    killed++;
  }
  if (old_style) {
    if (killed == 0)
      c.Error("No such client");
    else
      c.out.Ok();
    return;
  }
  c.out.Int(killed);
}

void ClientSetInfo(Context& c) {
  std::string_view attr = c.arg(2), val = c.arg(3);
  bool is_name = EqualsIgnoreCase(attr, "LIB-NAME");
  if (!is_name && !EqualsIgnoreCase(attr, "LIB-VER")) {
    c.Error("Unrecognized option '" + std::string(attr) + "'");
    return;
  }
  if (!ValidName(val)) {
    c.Error(std::string(is_name ? "lib-name" : "lib-ver") +
            " cannot contain spaces, newlines or special characters.");
    return;
  }
  (is_name ? c.session.lib_name : c.session.lib_ver) = std::string(val);
  c.out.Ok();
}

void ClientNoEvict(Context& c) {
  if (EqualsIgnoreCase(c.arg(2), "ON"))
    c.session.no_evict = true;
  else if (EqualsIgnoreCase(c.arg(2), "OFF"))
    c.session.no_evict = false;
  else {
    c.Error(cmd::OpStatus::kSyntax);
    return;
  }
  c.out.Ok();
}

// CLIENT REPLY ON|OFF|SKIP, as Redis: ON is answered (even right after SKIP, whose skip it
// cancels), OFF and SKIP are not. What the client was sent before the mode changes is judged
// by the mode it was written under (a checkpoint), which matters inside EXEC.
void ClientReply(Context& c) {
  Client& me = ServerOf(c).current_client();
  if (EqualsIgnoreCase(c.arg(2), "ON")) {
    me.CheckpointReplies();
    c.session.reply_mode = cmd::ReplyMode::kOn;
    me.ClearReplySkip();
    c.out.Ok();
  } else if (EqualsIgnoreCase(c.arg(2), "OFF")) {
    me.CheckpointReplies();
    c.session.reply_mode = cmd::ReplyMode::kOff;
  } else if (EqualsIgnoreCase(c.arg(2), "SKIP")) {
    if (c.session.reply_mode != cmd::ReplyMode::kOff) me.SkipNextReply();
  } else {
    c.Error(cmd::OpStatus::kSyntax);
  }
}

// CLIENT PAUSE timeout [WRITE|ALL]: the mode is checked before the timeout, as in Redis 7.0,
// and a timeout so large that it wraps ends at once (Redis 7.0.15 adds it to the time as is).
void ClientPause(Context& c) {
  if (c.argc() > 4) {
    c.Error(cmd::SubcommandSyntax(c.arg(1), "client"));
    return;
  }
  Server::PauseType type = Server::PauseType::kAll;
  if (c.argc() == 4) {
    if (EqualsIgnoreCase(c.arg(3), "WRITE")) {
      type = Server::PauseType::kWrite;
    } else if (!EqualsIgnoreCase(c.arg(3), "ALL")) {
      c.Error("CLIENT PAUSE mode must be WRITE or ALL");
      return;
    }
  }
  auto timeout = ParseInt64(c.arg(2));
  if (!timeout) {
    c.Error("timeout is not an integer or out of range");
    return;
  }
  if (*timeout < 0) {
    c.Error(cmd::OpStatus::kNegativeTimeout);
    return;
  }
  int64_t end = 0;  // 0: already over
  if (*timeout > 0) {
    end = static_cast<int64_t>(static_cast<uint64_t>(*timeout) + static_cast<uint64_t>(WallMs()));
  }
  Server& s = ServerOf(c);
  s.PauseClients(end, type, s.current_client().group().loop());
  c.out.Ok();
}

void ClientUnpause(Context& c) {
  ServerOf(c).UnpauseClients();
  c.out.Ok();
}

// CLIENT UNBLOCK id [TIMEOUT|ERROR]: answers a client blocked in a blocking command (not one
// held by CLIENT PAUSE) as its timeout would, or with -UNBLOCKED; 1 if there was one.
void ClientUnblock(Context& c) {
  if (c.argc() > 4) {
    c.Error(cmd::SubcommandSyntax(c.arg(1), "client"));
    return;
  }
  bool error = false;
  if (c.argc() == 4) {
    if (EqualsIgnoreCase(c.arg(3), "ERROR")) {
      error = true;
    } else if (!EqualsIgnoreCase(c.arg(3), "TIMEOUT")) {
      c.Error("CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
      return;
    }
  }
  int64_t id;
  if (!c.ParseInt(c.arg(2), &id)) return;
  Server& s = ServerOf(c);
  auto it = s.clients().find(static_cast<uint64_t>(id));
  bool unblocked = it != s.clients().end() && s.UnblockByCommand(*it->second, error);
  c.out.Int(unblocked ? 1 : 0);
}

void ClientHelp(Context& c) {
  static constexpr std::string_view kLines[] = {
      "CACHING (YES|NO)",
      "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
      "GETREDIR",
      "    Return the client ID we are redirecting to when tracking is enabled.",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are:",
      "    * ADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made from the specified address",
      "    * LADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made to specified local address",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Kill connections by type.",
      "    * USER <username>",
      "      Kill connections authenticated by <username>.",
      "    * SKIPME (YES|NO)",
      "      Skip killing current connection (default: yes).",
      "    * ID <client-id>",
      "      Kill connections by client id.",
      "LIST [options ...]",
      "    Return information about client connections. Options:",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Return clients of specified type.",
      "    * ID <client-id> [<client-id> ...]",
      "      Return clients of specified IDs only.",
      "UNPAUSE",
      "    Stop the current client pause, resuming traffic.",
      "PAUSE <timeout> [WRITE|ALL]",
      "    Suspend all, or just write, clients for <timeout> milliseconds.",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "SETINFO <option> <value>",
      "    Set client meta attributes: LIB-NAME or LIB-VER.",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
      "         [OPTIN] [OPTOUT] [NOLOOP]",
      "    Control server assisted client side caching.",
      "TRACKINGINFO",
      "    Report tracking status for the current connection.",
      "NO-EVICT (ON|OFF)",
      "    Protect current client connection from eviction.",
  };
  c.ReplyHelp(kLines);
}

}  // namespace

// CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO (client_tracking_cmds.cc).
void RegisterClientTrackingCommands(cmd::CommandTable& t, cmd::CommandSpec* client);

void RegisterClientCommands(cmd::CommandTable& t) {
  using namespace cmd;
  CommandSpec* client = t.Add({.name = "client",
                               .arity = -2,
                               .group = "connection",
                               .summary = "A container for client connection commands",
                               .since = "2.4.0"});
  auto sub = [&](const char* name, int arity, uint32_t flags, Handler h, const char* summary,
                 const char* since) {
    t.AddSub(client, {.name = name,
                      .arity = arity,
                      .flags = flags | kLoading | kStale,
                      .handler = h,
                      .group = "connection",
                      .summary = summary,
                      .since = since});
  };
  sub("id", 2, kNoScript, ClientId, "Returns the client ID for the current connection", "5.0.0");
  sub("getname", 2, kNoScript, ClientGetName, "Get the current connection name", "2.6.9");
  sub("setname", 3, kNoScript, ClientSetName, "Set the current connection name", "2.6.9");
  sub("info", 2, kNoScript, ClientInfo, "Returns information about the current client connection.",
      "6.2.0");
  sub("list", -2, kAdmin | kNoScript, ClientList, "Get the list of client connections", "2.4.0");
  sub("kill", -3, kAdmin | kNoScript, ClientKill, "Kill the connection of a client", "2.4.0");
  // Redis 7.2's; clients send it on connect (Redis 7.0 answers an unknown subcommand).
  sub("setinfo", 4, kNoScript, ClientSetInfo,
      "Sets information specific to the client or connection", "7.2.0");
  sub("no-evict", 3, kAdmin | kNoScript, ClientNoEvict,
      "Set client eviction mode for the current connection", "7.0.0");
  sub("reply", 3, kNoScript, ClientReply, "Instruct the server whether to reply to commands",
      "3.2.0");
  sub("pause", -3, kAdmin | kNoScript, ClientPause,
      "Stop processing commands from clients for some time", "2.9.50");
  sub("unpause", 2, kAdmin | kNoScript, ClientUnpause,
      "Resume processing of clients that were paused", "6.2.0");
  sub("unblock", -3, kAdmin | kNoScript, ClientUnblock,
      "Unblock a client blocked in a blocking command from a different connection", "5.0.0");
  RegisterClientTrackingCommands(t, client);
  sub("help", 2, 0, ClientHelp, "Show helpful text about the different subcommands", "5.0.0");
}

}  // namespace kv::server

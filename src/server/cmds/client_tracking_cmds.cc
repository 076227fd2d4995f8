// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO: client-side caching's commands, with Redis
// 7.0's checks in its order and its error texts. The tracking itself is tracking.h's.
#include "cmd/command.h"
#include "cmd/context.h"
#include "cmd/errors.h"
#include "common/strutil.h"
#include "server/client.h"
#include "server/server.h"
#include "server/tracking.h"

namespace kv::server {
namespace {

using cmd::Context;

// The options after ON|OFF; false once an error was answered.
bool ParseTrackingOptions(Context& c, TrackingOptions* o) {
  Server& s = ServerOf(c);
  for (size_t j = 3; j < c.argc(); j++) {
    bool more = j + 1 < c.argc();
    std::string_view opt = c.arg(j);
    if (EqualsIgnoreCase(opt, "redirect") && more) {
      j++;
      if (o->redirect != 0) {
        c.Error("A client can only redirect to a single other client");
        return false;
      }
      int64_t id;
      if (!c.ParseInt(c.arg(j), &id)) return false;
      // The client must exist now, though it may leave later (the R flag then).
      if (id <= 0 || !s.clients().contains(static_cast<uint64_t>(id))) {
        c.Error("The client ID you want redirect to does not exist");
        return false;
      }
      o->redirect = static_cast<uint64_t>(id);
    } else if (EqualsIgnoreCase(opt, "bcast")) {
      o->bcast = true;
    } else if (EqualsIgnoreCase(opt, "optin")) {
      o->optin = true;
    } else if (EqualsIgnoreCase(opt, "optout")) {
      o->optout = true;
    } else if (EqualsIgnoreCase(opt, "noloop")) {
      o->noloop = true;
    } else if (EqualsIgnoreCase(opt, "prefix") && more) {
      o->prefixes.emplace_back(c.arg(++j));
    } else {
      c.Error(cmd::OpStatus::kSyntax);
      return false;
    }
  }
  return true;
}

// The checks of CLIENT TRACKING ON against the options and the client's current mode.
bool CheckTrackingOn(Context& c, const Client& me, const TrackingOptions& o) {
  const ClientTracking& t = me.tracking();
  if (!o.bcast && !o.prefixes.empty()) {
    c.Error("PREFIX option requires BCAST mode to be enabled");
    return false;
  }
  if (t.on && t.bcast != o.bcast) {
    c.Error(
        "You can't switch BCAST mode on/off before disabling tracking for "
        "this client, and then "
        "re-enabling it with a different mode.");
    return false;
  }
  if (o.bcast) {
    // Redis 7.0 answers an overlap between two new prefixes past the first with its error and then
    // +OK as well (two replies to one command); kvstore answers the error alone.
    std::string collision = ServerOf(c).tracking().PrefixCollision(me, o.prefixes);
    if (!collision.empty()) {
      c.Error(collision);
      return false;
    }
  }
  if (o.optin && o.optout) {
    c.Error("You can't specify both OPTIN mode and OPTOUT mode");
    return false;
  }
  if ((o.optin && t.optout) || (o.optout && t.optin)) {
    c.Error(
        "You can't switch OPTIN/OPTOUT mode before disabling tracking for "
        "this client, and then "
        "re-enabling it with a different mode.");
    return false;
  }
  if (o.bcast && (o.optin || o.optout)) {
    c.Error("OPTIN and OPTOUT are not compatible with BCAST");
    return false;
  }
  return true;
}

// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]: the
// options are parsed (and the redirect checked) before ON or OFF is read.
void TrackingCmd(Context& c) {
  Server& s = ServerOf(c);
  Client& me = s.current_client();
  TrackingOptions o;
  if (!ParseTrackingOptions(c, &o)) return;
  if (EqualsIgnoreCase(c.arg(2), "on")) {
    if (!CheckTrackingOn(c, me, o)) return;
    s.tracking().Enable(me, o);
  } else if (EqualsIgnoreCase(c.arg(2), "off")) {
    s.tracking().Disable(me);
  } else {
    c.Error(cmd::OpStatus::kSyntax);
    return;
  }
  c.out.Ok();
}

// CLIENT CACHING YES|NO: the next command (or transaction) of an OPTIN client is tracked, or that
// of an OPTOUT client is not.
void ClientCaching(Context& c) {
  ClientTracking& t = ServerOf(c).current_client().tracking();
  if (!t.on) {
    c.Error(
        "CLIENT CACHING can be called only when the client is in tracking "
        "mode with OPTIN or "
        "OPTOUT mode enabled");
    return;
  }
  if (EqualsIgnoreCase(c.arg(2), "yes")) {
    if (!t.optin) {
      c.Error(
          "CLIENT CACHING YES is only valid when tracking is enabled in "
          "OPTIN mode.");
      return;
    }
  } else if (EqualsIgnoreCase(c.arg(2), "no")) {
    if (!t.optout) {
      c.Error(
          "CLIENT CACHING NO is only valid when tracking is enabled in "
          "OPTOUT mode.");
      return;
    }
  } else {
    c.Error(cmd::OpStatus::kSyntax);
    return;
  }
  t.caching = true;
  c.out.Ok();
}

void ClientGetRedir(Context& c) {
  const ClientTracking& t = ServerOf(c).current_client().tracking();
  c.out.Int(t.on ? static_cast<int64_t>(t.redirect) : -1);
}

void ClientTrackingInfo(Context& c) {
  const ClientTracking& t = ServerOf(c).current_client().tracking();
  std::vector<std::string_view> flags = {t.on ? "on" : "off"};
  if (t.bcast) flags.push_back("bcast");
  if (t.optin) flags.push_back("optin");
  if (t.optin && t.caching) flags.push_back("caching-yes");
  if (t.optout) flags.push_back("optout");
  if (t.optout && t.caching) flags.push_back("caching-no");
  if (t.noloop) flags.push_back("noloop");
  if (t.broken_redirect) flags.push_back("broken_redirect");
  c.out.Map(3);
  c.out.Bulk("flags");
  c.out.Set(flags.size());
  for (std::string_view f : flags) c.out.Bulk(f);
  c.out.Bulk("redirect");
  c.out.Int(t.on ? static_cast<int64_t>(t.redirect) : -1);
  c.out.Bulk("prefixes");
  c.out.Array(t.prefixes.size());
  for (const std::string& p : t.prefixes) c.out.Bulk(p);
}

}  // namespace

void RegisterClientTrackingCommands(cmd::CommandTable& t, cmd::CommandSpec* client) {
  using namespace cmd;
  auto sub = [&](const char* name, int arity, Handler h, const char* summary, const char* since) {
    t.AddSub(client, {.name = name,
                      .arity = arity,
                      .flags = kNoScript | kLoading | kStale,
                      .handler = h,
                      .group = "connection",
                      .summary = summary,
                      .since = since});
  };
  sub("tracking", -3, TrackingCmd, "Enable or disable server assisted client side caching support",
      "6.0.0");
  sub("caching", 3, ClientCaching,
      "Instruct the server about tracking or not keys in the next request", "6.0.0");
  sub("getredir", 2, ClientGetRedir, "Get tracking notifications redirection client ID if any",
      "6.0.0");
  sub("trackinginfo", 2, ClientTrackingInfo,
      "Return information about server assisted client side caching for the "
      "current connection",
      "6.2.0");
}

}  // namespace kv::server

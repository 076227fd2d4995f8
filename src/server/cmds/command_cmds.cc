// COMMAND and its subcommands (COUNT, DOCS, GETKEYS, GETKEYSANDFLAGS, INFO, LIST, HELP).
//
// COMMAND reads the command table as data: arity, flags, key positions, key specs and tips come
// from each CommandSpec; ACL categories are the explicit ones or the group's, plus those the
// flags imply, the way Redis derives its implicit ones.
#include <algorithm>
#include <bit>
#include <initializer_list>

#include "cmd/acl_categories.h"
#include "cmd/context.h"
#include "common/strutil.h"
#include "server/server.h"

namespace kv::server {
namespace {

using cmd::Categories;
using cmd::CommandSpec;
using cmd::Context;
using cmd::kNumCategories;

// ---- COMMAND -----------------------------------------------------------------------------

// COMMAND DOCS' group names: kvstore's "keyspace" group is Redis' "generic".
std::string_view DocsGroup(std::string_view group) {
  return group == "keyspace" ? std::string_view("generic") : group;
}

// Looks a command up by its full name, "get" or "config|get" (Redis' lookupCommandBySds).
const CommandSpec* LookupFullName(const cmd::CommandTable& t, std::string_view name) {
  size_t bar = name.find('|');
  const CommandSpec* base = t.Find(name.substr(0, bar));
  if (!base || bar == std::string_view::npos) return base;
  std::string_view sub = name.substr(bar + 1);
  if (sub.find('|') != std::string_view::npos) return nullptr;
  return base->FindSub(sub);
}

// A set of key-spec flag names.
void ReplyKeyFlags(Context& c, uint32_t flags) {
  auto names = cmd::KeyFlagNames(flags);
  c.out.Set(names.size());
  for (std::string_view n : names) c.out.Simple(n);
}

// {type, spec} maps of a key spec's begin_search and find_keys, as Redis' COMMAND INFO.
void ReplySpecPart(Context& c, std::string_view type,
                   std::initializer_list<std::pair<std::string_view, int64_t>> ints,
                   const char* keyword = nullptr) {
  c.out.Map(2);
  c.out.Bulk("type");
  c.out.Bulk(type);
  c.out.Bulk("spec");
  c.out.Map(ints.size() + (keyword ? 1 : 0));
  if (keyword) {
    c.out.Bulk("keyword");
    c.out.Bulk(keyword);
  }
  for (const auto& [name, v] : ints) {
    c.out.Bulk(name);
    c.out.Int(v);
  }
}

void ReplyKeySpec(Context& c, const cmd::KeySpec& ks) {
  using BS = cmd::BeginSearch::Type;
  using FK = cmd::FindKeys::Type;
  c.out.Map(ks.notes ? 4 : 3);
  if (ks.notes) {
    c.out.Bulk("notes");
    c.out.Bulk(ks.notes);
  }
  c.out.Bulk("flags");
  ReplyKeyFlags(c, ks.flags);
  c.out.Bulk("begin_search");
  switch (ks.begin.type) {
    case BS::kIndex:
      ReplySpecPart(c, "index", {{"index", ks.begin.index}});
      break;
    case BS::kKeyword:
      ReplySpecPart(c, "keyword", {{"startfrom", ks.begin.startfrom}}, ks.begin.keyword);
      break;
    case BS::kUnknown:
      ReplySpecPart(c, "unknown", {});
      break;
  }
  c.out.Bulk("find_keys");
  const cmd::FindKeys& f = ks.find;
  switch (f.type) {
    case FK::kRange:
      ReplySpecPart(c, "range", {{"lastkey", f.a}, {"keystep", f.b}, {"limit", f.c}});
      break;
    case FK::kKeyNum:
      ReplySpecPart(c, "keynum", {{"keynumidx", f.a}, {"firstkey", f.b}, {"keystep", f.c}});
      break;
    case FK::kUnknown:
      ReplySpecPart(c, "unknown", {});
      break;
  }
}

// One 10-element COMMAND INFO entry.
void ReplyCommandInfo(Context& c, const CommandSpec& spec) {
  c.out.Array(10);
  c.out.Bulk(spec.name);
  c.out.Int(spec.arity);
  auto flags = cmd::FlagNames(spec.flags);
  c.out.Set(flags.size());
  for (std::string_view f : flags) c.out.Simple(f);
  c.out.Int(spec.first_key);
  c.out.Int(spec.last_key);
  c.out.Int(spec.key_step);
  uint32_t cats = Categories(spec);
  c.out.Set(std::popcount(cats));
  for (int i = 0; i < kNumCategories; i++) {
    if (cats & (1u << i)) c.out.Simple("@" + std::string(cmd::AclCategoryNames()[i]));
  }
  c.out.Set(spec.tips.size());
  for (const std::string& tip : spec.tips) c.out.Bulk(tip);
  c.out.Set(spec.key_specs.size());
  for (const cmd::KeySpec& ks : spec.key_specs) ReplyKeySpec(c, ks);
  if (spec.subcommands.empty()) {
    c.out.Set(0);
    return;
  }
  c.out.Array(spec.subcommands.size());
  for (const auto& sub : spec.subcommands) ReplyCommandInfo(c, *sub);
}

// One COMMAND DOCS map: summary, since, group and subcommands (what the table records).
void ReplyCommandDocs(Context& c, const CommandSpec& spec) {
  size_t fields = 1 + !spec.summary.empty() + !spec.since.empty() + !spec.subcommands.empty();
  c.out.Map(fields);
  if (!spec.summary.empty()) {
    c.out.Bulk("summary");
    c.out.Bulk(spec.summary);
  }
  if (!spec.since.empty()) {
    c.out.Bulk("since");
    c.out.Bulk(spec.since);
  }
  c.out.Bulk("group");
  c.out.Bulk(DocsGroup(spec.group));
  if (spec.subcommands.empty()) return;
  c.out.Bulk("subcommands");
  c.out.Map(spec.subcommands.size());
  for (const auto& sub : spec.subcommands) {
    c.out.Bulk(sub->name);
    ReplyCommandDocs(c, *sub);
  }
}

void CommandAll(Context& c) {
  const auto& all = ServerOf(c).commands().all();
  c.out.Array(all.size());
  for (const CommandSpec* spec : all) ReplyCommandInfo(c, *spec);
}

void CommandCount(Context& c) {
  c.out.Int(static_cast<int64_t>(ServerOf(c).commands().all().size()));
}

void CommandInfo(Context& c) {
  if (c.argc() == 2) {
    CommandAll(c);
    return;
  }
  const cmd::CommandTable& t = ServerOf(c).commands();
  c.out.Array(c.argc() - 2);
  for (size_t i = 2; i < c.argc(); i++) {
    const CommandSpec* spec = LookupFullName(t, c.arg(i));
    if (spec)
      ReplyCommandInfo(c, *spec);
    else
      c.out.Null();
  }
}

void CommandDocs(Context& c) {
  const cmd::CommandTable& t = ServerOf(c).commands();
  std::vector<const CommandSpec*> found;
  if (c.argc() == 2) {
    found.assign(t.all().begin(), t.all().end());
  } else {
    for (size_t i = 2; i < c.argc(); i++) {
      if (const CommandSpec* spec = LookupFullName(t, c.arg(i))) found.push_back(spec);
    }
  }
  c.out.Map(found.size());
  for (const CommandSpec* spec : found) {
    c.out.Bulk(spec->name);
    ReplyCommandDocs(c, *spec);
  }
}

// COMMAND LIST's FILTERBY: kind is "module", "aclcat" or "pattern".
struct ListFilter {
  std::string kind, arg;

  bool Keeps(const CommandSpec& spec) const {
    if (kind.empty()) return true;
    if (kind == "module") return false;  // no command comes from a module
    if (kind == "pattern") return GlobMatch(arg, spec.name, /*nocase=*/true);
    int cat = cmd::AclCategoryIndex(arg);
    if (cat < 0) return false;  // unknown category: nothing matches
    return Categories(spec) & (1u << cat);
  }
};

void CommandList(Context& c) {
  ListFilter filter;
  if (c.argc() == 5 && EqualsIgnoreCase(c.arg(2), "FILTERBY")) {
    filter.kind = ToLower(c.arg(3));
    filter.arg = std::string(c.arg(4));
    if (filter.kind != "module" && filter.kind != "aclcat" && filter.kind != "pattern") {
      c.Error(cmd::OpStatus::kSyntax);
      return;
    }
  } else if (c.argc() != 2) {
    c.Error(cmd::OpStatus::kSyntax);
    return;
  }
  std::vector<const std::string*> names;
  for (const CommandSpec* spec : ServerOf(c).commands().all()) {
    if (filter.Keeps(*spec)) names.push_back(&spec->name);
    for (const auto& sub : spec->subcommands) {
      if (filter.Keeps(*sub)) names.push_back(&sub->name);
    }
  }
  c.out.Array(names.size());
  for (const std::string* n : names) c.out.Bulk(*n);
}

bool ArityOk(int arity, size_t argc) {
  return arity > 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
}

// The command of a GETKEYS / GETKEYSANDFLAGS request, after Redis' checks in its order
// (getKeysSubcommandImpl); nullptr when an error was answered.
const CommandSpec* GetKeysCommand(Context& c) {
  std::span<const std::string_view> args = c.args.subspan(2);
  const CommandSpec* spec = ServerOf(c).commands().Find(args[0]);
  if (spec && !spec->subcommands.empty() && args.size() >= 2) spec = spec->FindSub(args[1]);
  if (!spec) {
    c.Error("Invalid command specified");
    return nullptr;
  }
  // Shard channels are declared as keys flagged not_key; Redis finds no keys in those commands.
  bool only_not_keys = !spec->key_specs.empty() && !spec->getkeys &&
                       std::ranges::all_of(spec->key_specs, [](const cmd::KeySpec& ks) {
                         return (ks.flags & cmd::kKeyNotKey) != 0;
                       });
  if (!spec->HasKeys() || only_not_keys) {
    c.Error("The command has no key arguments");
    return nullptr;
  }
  if (!ArityOk(spec->arity, args.size())) {
    c.Error("Invalid number of arguments specified for command");
    return nullptr;
  }
  return spec;
}

// The keys as GETKEYSANDFLAGS finds them (Redis 7.0 answers both from the key specs where they
// fit): PFMERGE with its destination alone is an error in both. `with_flags`: each key with
// its flags (GETKEYSANDFLAGS), or the names alone (GETKEYS).
void ReplyGetKeys(Context& c, bool with_flags) {
  const CommandSpec* spec = GetKeysCommand(c);
  if (!spec) return;
  std::span<const std::string_view> args = c.args.subspan(2);
  std::vector<cmd::KeyRef> keys = cmd::KeysAndFlags(*spec, args);
  if (keys.empty()) {
    // A command whose keys are optional (EVAL with numkeys 0) has none, not bad arguments.
    if (spec->flags & cmd::kNoMandatoryKeys) {
      c.out.EmptyArray();
    } else {
      c.Error("Invalid arguments specified for command");
    }
    return;
  }
  c.out.Array(keys.size());
  for (const cmd::KeyRef& k : keys) {
    if (!with_flags) {
      c.out.Bulk(args[k.index]);
      continue;
    }
    c.out.Array(2);
    c.out.Bulk(args[k.index]);
    ReplyKeyFlags(c, k.flags);
  }
}

void CommandGetKeys(Context& c) { ReplyGetKeys(c, false); }
void CommandGetKeysAndFlags(Context& c) { ReplyGetKeys(c, true); }

void CommandHelp(Context& c) {
  static constexpr std::string_view kLines[] = {
      "(no subcommand)",
      "    Return details about all Redis commands.",
      "COUNT",
      "    Return the total number of commands in this Redis server.",
      "LIST",
      "    Return a list of all commands in this Redis server.",
      "INFO [<command-name> ...]",
      "    Return details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "GETKEYS <full-command>",
      "    Return the keys from a full Redis command.",
      "GETKEYSANDFLAGS <full-command>",
      "    Return the keys and the access flags from a full Redis command.",
  };
  c.ReplyHelp(kLines);
}

}  // namespace

void RegisterCommandCommand(cmd::CommandTable& t) {
  using namespace cmd;
  CommandSpec* command = t.Add({.name = "command",
                                .arity = -1,
                                .flags = kLoading | kStale,
                                .handler = CommandAll,
                                .group = "server",
                                .summary = "Get array of Redis command details",
                                .since = "2.8.13"});
  auto sub = [&](const char* name, int arity, Handler h, const char* summary, const char* since) {
    t.AddSub(command, {.name = name,
                       .arity = arity,
                       .flags = kLoading | kStale,
                       .handler = h,
                       .group = "server",
                       .summary = summary,
                       .since = since});
  };
  sub("count", 2, CommandCount, "Get total number of Redis commands", "2.8.13");
  sub("docs", -2, CommandDocs, "Get array of specific Redis command documentation", "7.0.0");
  sub("getkeys", -4, CommandGetKeys, "Extract keys given a full Redis command", "2.8.13");
  sub("getkeysandflags", -4, CommandGetKeysAndFlags,
      "Extract keys and access flags given a full Redis command", "7.0.0");
  sub("info", -2, CommandInfo,
      "Get array of specific Redis command details, or all when no argument is given.", "2.8.13");
  sub("list", -2, CommandList, "Get an array of Redis command names", "7.0.0");
  sub("help", 2, CommandHelp, "Show helpful text about the different subcommands", "5.0.0");
}

}  // namespace kv::server

#include "cmd/command.h"

#include <cctype>

#include "cmd/command_meta.h"
#include "cmd/errors.h"
#include "common/strutil.h"

namespace kv::cmd {

std::vector<std::string_view> FlagNames(uint32_t flags) {
  static const std::pair<Flag, std::string_view> kNames[] = {
      {kWrite, "write"},         {kReadOnly, "readonly"},   {kDenyOom, "denyoom"},
      {kAdmin, "admin"},         {kPubSub, "pubsub"},       {kNoScript, "noscript"},
      {kBlocking, "blocking"},   {kLoading, "loading"},     {kStale, "stale"},
      {kSkipMonitor, "skip_monitor"}, {kSkipSlowlog, "skip_slowlog"}, {kAsking, "asking"},
      {kFast, "fast"},
      {kNoAuth, "no_auth"},      {kNoMandatoryKeys, "no_mandatory_keys"},
      {kNoAsyncLoading, "no_async_loading"},
      {kNoMulti, "no_multi"},    {kMovableKeys, "movablekeys"},
      {kAllowBusy, "allow_busy"},
  };
  std::vector<std::string_view> out;
  for (const auto& [f, n] : kNames) {
    if (flags & f) out.push_back(n);
  }
  return out;
}

std::vector<int> CommandSpec::KeyIndexes(int argc) const {
  std::vector<int> keys;
  ForEachKeyIndex(argc, [&](int i) { keys.push_back(i); });
  return keys;
}

std::vector<int> CommandSpec::FindKeys(std::span<const std::string_view> args) const {
  if (getkeys) return getkeys(args);
  return KeyIndexes(static_cast<int>(args.size()));
}

CommandSpec* CommandSpec::FindSub(std::string_view sub) const {
  for (const auto& s : subcommands) {
    std::string_view n = s->name;
    n = n.substr(n.find('|') + 1);
    if (EqualsIgnoreCase(n, sub)) return s.get();
  }
  return nullptr;
}

namespace {

// Completes a registration with what Redis 7.0 declares about the command (command_meta.h).
void AttachMeta(CommandSpec* spec) {
  const CommandMeta* meta = FindCommandMeta(spec->name);
  if (!meta) return;
  spec->flags |= meta->flags;
  if (spec->acl_categories.empty()) spec->acl_categories = meta->acl_categories;
  spec->key_specs = meta->key_specs;
  for (size_t i = 0; i < meta->tips.size();) {
    size_t end = meta->tips.find(' ', i);
    if (end == std::string_view::npos) end = meta->tips.size();
    spec->tips.emplace_back(meta->tips.substr(i, end - i));
    i = end + 1;
  }
  spec->key_flags = meta->key_flags;
}

}  // namespace

CommandSpec* CommandTable::Add(CommandSpec spec) {
  if (spec.getkeys) spec.flags |= kMovableKeys;
  AttachMeta(&spec);
  spec.id = next_id_++;
  auto owned = std::make_unique<CommandSpec>(std::move(spec));
  CommandSpec* p = owned.get();
  by_name_[p->name] = p;
  all_.push_back(p);
  owned_.push_back(std::move(owned));
  return p;
}

CommandSpec* CommandTable::AddSub(CommandSpec* parent, CommandSpec spec) {
  spec.name = parent->name + "|" + spec.name;
  if (spec.getkeys) spec.flags |= kMovableKeys;
  AttachMeta(&spec);
  spec.id = next_id_++;
  auto owned = std::make_unique<CommandSpec>(std::move(spec));
  owned->parent = parent;
  CommandSpec* p = owned.get();
  parent->subcommands.push_back(std::move(owned));
  return p;
}

CommandSpec* CommandTable::Find(std::string_view name) const {
  char buf[64];
  if (name.size() > sizeof(buf)) return nullptr;
  for (size_t i = 0; i < name.size(); i++) {
    char ch = name[i];
    buf[i] = ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch + ('a' - 'A')) : ch;
  }
  auto it = by_name_.find(std::string_view(buf, name.size()));
  return it == by_name_.end() ? nullptr : it->second;
}

bool CommandTable::Rename(std::string_view from, std::string_view to) {
  auto it = by_name_.find(ToLower(from));
  if (it == by_name_.end()) return false;
  CommandSpec* spec = it->second;
  by_name_.erase(it);
  if (!to.empty()) by_name_[ToLower(to)] = spec;
  return true;
}

void CommandTable::ResetStats() {
  for (CommandSpec* c : all_) {
    c->stats = {};
    for (auto& s : c->subcommands) s->stats = {};
  }
}

}  // namespace kv::cmd

namespace kv::cmd {

bool ArityOk(int arity, size_t argc) {
  return arity > 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
}

namespace {

CommandSpec SpecOf(const CommandRow& r, const char* group) {
  return {.name = r.name,
          .arity = r.arity,
          .flags = r.flags,
          .first_key = r.first_key,
          .last_key = r.last_key,
          .key_step = r.key_step,
          .handler = r.handler,
          .getkeys = r.getkeys,
          .group = group,
          .summary = r.summary,
          .since = r.since};
}

}  // namespace

void AddRows(CommandTable& table, std::span<const CommandRow> rows, const char* group) {
  for (const CommandRow& r : rows) table.Add(SpecOf(r, group));
}

void AddSubRows(CommandTable& table, CommandSpec* parent, std::span<const CommandRow> rows,
                const char* group) {
  for (const CommandRow& r : rows) table.AddSub(parent, SpecOf(r, group));
}

std::vector<KeyRef> KeysAndFlags(const CommandSpec& spec, std::span<const std::string_view> args) {
  std::vector<KeyRef> out;
  KeysAndFlagsInto(spec, args, &out);
  return out;
}

void KeysAndFlagsInto(const CommandSpec& spec, std::span<const std::string_view> args,
                      std::vector<KeyRef>* out) {
  out->clear();
  uint32_t all = 0, usable = 0;
  for (const KeySpec& ks : spec.key_specs) {
    all |= ks.flags;
    if (!(ks.flags & kKeyNotKey)) usable++;
  }
  if (usable > 0 && !(all & kKeyVariableFlags)) {
    if (KeysFromSpecsInto(spec.key_specs, args, out)) return;
    out->clear();
    if (!spec.getkeys) return;  // no getkeys function to fall back on
  }
  auto add = [&](int k) { out->push_back({k, spec.key_flags ? spec.key_flags(args, k) : 0}); };
  if (spec.getkeys) {
    for (int k : spec.getkeys(args)) add(k);
  } else {
    spec.ForEachKeyIndex(static_cast<int>(args.size()), add);
  }
}

const CommandSpec* ResolveCommand(const CommandTable& table,
                                  std::span<const std::string_view> args, std::string* error) {
  const CommandSpec* spec = table.Find(args[0]);
  if (!spec) {
    *error = UnknownCommand(args[0], args);
    return nullptr;
  }
  if (!spec->subcommands.empty() && args.size() >= 2) {
    const CommandSpec* sub = spec->FindSub(args[1]);
    if (!sub) {
      *error = UnknownSubcommand(args[1], spec->name);
      return nullptr;
    }
    spec = sub;
  }
  if (!ArityOk(spec->arity, args.size())) {
    *error = WrongArity(spec->name);
    return nullptr;
  }
  return spec;
}

}  // namespace kv::cmd

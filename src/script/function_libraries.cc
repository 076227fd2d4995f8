#include "script/function_libraries.h"

#include <strings.h>

#include <algorithm>
#include <utility>

#include "common/strutil.h"

namespace kv::script {
namespace {

bool ValidLibraryName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

constexpr char kBadName[] =
    "Library names can only contain letters, numbers, or underscores(_) and must be at least one "
    "character long";

}  // namespace

bool ParseLibraryMeta(std::string_view code, LibraryMeta* meta, std::string* err) {
  if (code.substr(0, 2) != "#!") {
    *err = "Missing library metadata";
    return false;
  }
  size_t end = code.find('\n');
  if (end == std::string_view::npos) {
    *err = "Invalid library metadata";
    return false;
  }
  auto parts = SplitArgs(code.substr(0, end));
  if (!parts || parts->empty()) {
    *err = "Invalid library metadata";
    return false;
  }
  meta->engine = (*parts)[0].substr(2);
  bool has_name = false;
  for (size_t i = 1; i < parts->size(); i++) {
    const std::string& part = (*parts)[i];
    if (strncasecmp(part.c_str(), "name=", 5) == 0) {
      if (has_name) {
        *err = "Invalid metadata value, name argument was given multiple times";
        return false;
      }
      meta->name = part.substr(5);
      has_name = true;
      continue;
    }
    *err = "Invalid metadata value given: " + part;
    return false;
  }
  if (!has_name) {
    *err = "Library name was not given";
    return false;
  }
  meta->code_at = end;
  return true;
}

FunctionLibraries::FunctionLibraries(std::string version)
    : version_(std::move(version)),
      engine_(std::make_unique<LuaEngine>(version_, EngineKind::kFunctions)) {}

bool FunctionLibraries::Create(Set& set, std::string_view code, bool replace, int64_t timeout_ms,
                               std::string* name, std::string* err) {
  LibraryMeta meta;
  if (!ParseLibraryMeta(code, &meta, err)) return false;
  if (!ValidLibraryName(meta.name)) {
    *err = kBadName;
    return false;
  }
  if (strcasecmp(meta.engine.c_str(), "lua") != 0) {
    *err = "Engine '" + meta.engine + "' not found";
    return false;
  }
  auto old = set.libs.find(meta.name);
  if (old != set.libs.end() && !replace) {
    *err = "Library '" + meta.name + "' already exists";
    return false;
  }
  Library lib{meta.name, std::string(code), {}};
  if (!engine_->LoadLibrary(code.substr(meta.code_at), timeout_ms, &lib.functions, err)) {
    return false;
  }
  if (lib.functions.empty()) {
    *err = "No functions registered";
    return false;
  }
  // The library it replaces gives its function names up.
  Library replaced;
  bool has_old = old != set.libs.end();
  if (has_old) replaced = Unlink(set, meta.name);
  if (const FunctionDef* f = Collision(set, lib)) {
    *err = "Function " + f->name + " already exists";
    Free(lib);
    if (has_old) Link(set, std::move(replaced));
    return false;
  }
  if (has_old) Free(replaced);
  *name = meta.name;
  Link(set, std::move(lib));
  return true;
}

const FunctionDef* FunctionLibraries::Collision(const Set& set, const Library& lib) {
  for (const FunctionDef& f : lib.functions) {
    if (set.by_name.count(ToLower(f.name))) return &f;
  }
  return nullptr;
}

void FunctionLibraries::Link(Set& set, Library lib) {
  for (size_t i = 0; i < lib.functions.size(); i++) {
    set.by_name.emplace(ToLower(lib.functions[i].name), std::make_pair(lib.name, i));
  }
  std::string name = lib.name;
  set.libs.emplace(std::move(name), std::move(lib));
}

Library FunctionLibraries::Unlink(Set& set, std::string_view name) {
  auto it = set.libs.find(name);
  Library lib = std::move(it->second);
  set.libs.erase(it);
  for (const FunctionDef& f : lib.functions) {
    auto at = set.by_name.find(ToLower(f.name));
    if (at != set.by_name.end() && at->second.first == lib.name) set.by_name.erase(at);
  }
  return lib;
}

void FunctionLibraries::Free(Library& lib) {
  for (const FunctionDef& f : lib.functions) engine_->Release(f);
  lib.functions.clear();
}

void FunctionLibraries::FreeAll(Set& set) {
  for (auto& [name, lib] : set.libs) Free(lib);
  set = Set{};
}

bool FunctionLibraries::Load(std::string_view code, bool replace, int64_t timeout_ms,
                             std::string* name, std::string* err) {
  return Create(set_, code, replace, timeout_ms, name, err);
}

bool FunctionLibraries::Delete(std::string_view name) {
  if (!set_.libs.count(name)) return false;
  Library lib = Unlink(set_, name);
  Free(lib);
  return true;
}

void FunctionLibraries::Flush() {
  set_ = Set{};
  engine_ = std::make_unique<LuaEngine>(version_, EngineKind::kFunctions);
}

bool FunctionLibraries::ReplaceAll(const std::vector<std::string>& codes, std::string* err) {
  FunctionLibraries fresh(version_);
  for (const std::string& code : codes) {
    std::string name;
    if (!fresh.Load(code, false, 0, &name, err)) return false;
  }
  std::swap(engine_, fresh.engine_);
  std::swap(set_, fresh.set_);
  return true;
}

bool FunctionLibraries::Restore(const std::vector<std::string>& codes, Policy policy,
                                std::string* err) {
  if (policy == Policy::kFlush) return ReplaceAll(codes, err);
  // The payload's libraries, built in this engine (their callbacks stay valid once joined).
  Set incoming;
  for (const std::string& code : codes) {
    std::string name;
    if (!Create(incoming, code, false, 0, &name, err)) {
      FreeAll(incoming);
      return false;
    }
  }
  // libraryJoin: a library already here fails APPEND; REPLACE takes it out (back on failure).
  std::vector<Library> replaced;
  auto undo = [&] {
    for (Library& lib : replaced) Link(set_, std::move(lib));
    FreeAll(incoming);
  };
  for (const auto& [name, lib] : incoming.libs) {
    if (!set_.libs.count(name)) continue;
    if (policy == Policy::kAppend) {
      *err = "Library " + name + " already exists";
      undo();
      return false;
    }
    replaced.push_back(Unlink(set_, name));
  }
  for (const auto& [name, lib] : incoming.libs) {
    if (const FunctionDef* f = Collision(set_, lib)) {
      *err = "Function " + f->name + " already exists";
      undo();
      return false;
    }
  }
  for (auto& [name, lib] : incoming.libs) Link(set_, std::move(lib));
  for (Library& lib : replaced) Free(lib);
  return true;
}

const FunctionDef* FunctionLibraries::Find(std::string_view name) const {
  // FCALL and its dispatch both look the name up: no copy when it is lowercase already.
  bool lower = std::none_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
  auto it = lower ? set_.by_name.find(name) : set_.by_name.find(ToLower(name));
  if (it == set_.by_name.end()) return nullptr;
  return &set_.libs.find(it->second.first)->second.functions[it->second.second];
}

std::vector<std::string> FunctionLibraries::Codes() const {
  std::vector<std::string> out;
  out.reserve(set_.libs.size());
  for (const auto& [name, lib] : set_.libs) out.push_back(lib.code);
  return out;
}

size_t FunctionLibraries::overhead_bytes() const {
  // As functionsMemoryEngine counts: the structures, names, descriptions and code.
  size_t n = sizeof(*this) + set_.by_name.size() * 64;
  for (const auto& [name, lib] : set_.libs) {
    n += sizeof(Library) + 64 + lib.name.size() + lib.code.size();
    for (const FunctionDef& f : lib.functions)
      n += sizeof(FunctionDef) + f.name.size() + f.desc.size();
  }
  return n;
}

}  // namespace kv::script

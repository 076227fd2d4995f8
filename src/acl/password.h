// ACL passwords: users keep SHA-256 hashes (64 lowercase hex digits), never cleartext, as
// Redis 7.0 does; and ACL GENPASS's random passwords. Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace kv::acl {

// SHA-256 of `cleartext` as 64 lowercase hex digits (Redis' ACLHashPassword).
std::string HashPassword(std::string_view cleartext);

// Whether `hash` is what #<hash> and !<hash> accept: exactly 64 characters of [0-9a-f].
bool IsValidPasswordHash(std::string_view hash);

// Compares two equal-length hashes in time that does not depend on where they differ.
bool HashesEqual(std::string_view a, std::string_view b);

// The most bits ACL GENPASS accepts, and its default.
inline constexpr int kGenPassMaxBits = 4096;
inline constexpr int kGenPassDefaultBits = 256;

// ACL GENPASS: (bits + 3) / 4 random hex digits from the system's CSPRNG. `bits` must be in
// 1..kGenPassMaxBits (the caller answers Redis' error otherwise).
std::string GenPass(int bits = kGenPassDefaultBits);

}  // namespace kv::acl

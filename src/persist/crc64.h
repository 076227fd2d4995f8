// CRC-64/Jones (reflected, polynomial 0xad93d23594c935a9, init 0, no final xor): the checksum of
// RDB files and DUMP payloads. crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
//
// Crc64 picks the fastest implementation the CPU has: carry-less multiplication folding over
// 64-byte registers (VPCLMULQDQ with AVX-512, about 55 GB/s on cached data) or 16-byte ones
// (PCLMUL, about 15 GB/s), or slice-by-8 tables (about 2 GB/s). All give identical results.
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kv::persist {

// Continues a CRC: Crc64(Crc64(0, a), b) == Crc64(0, a ++ b).
uint64_t Crc64(uint64_t crc, const void* data, size_t len);

// The portable table implementation (exposed for tests and benchmarks).
uint64_t Crc64Table(uint64_t crc, const void* data, size_t len);

// The implementations by name, for tests and benchmarks. Crc64Using runs `impl`, which must be
// supported, on lengths it handles (the folds need 128 and 256 bytes) and the table on the rest.
enum class Crc64Impl { kTable, kFold16, kFold64 };
bool Crc64Supports(Crc64Impl impl);
uint64_t Crc64Using(Crc64Impl impl, uint64_t crc, const void* data, size_t len);

}  // namespace kv::persist

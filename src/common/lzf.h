// LZF compression in the format Redis stores compressed strings in (liblzf's): a stream of
// literal runs (control byte 0..31 = run of 1..32 bytes) and back references (control byte with a
// length in its top three bits, extended by one byte at 7, and a 13-bit offset), at most 8 KiB
// back. The compressor writes the stream liblzf writes with Redis' settings, byte for byte; any
// stream liblzf writes, the decompressor reads. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kv {

// Compresses `in` into `out` (capacity `out_cap`). Returns the compressed size, or 0 when the
// result would not fit in out_cap (the data does not compress well enough).
size_t LzfCompress(const void* in, size_t in_len, void* out, size_t out_cap);

// Decompresses into `out`, which must receive exactly `out_len` bytes. Returns false on a
// malformed stream (a reference before the start, a run past either end) or a size mismatch;
// never reads or writes out of bounds.
bool LzfDecompress(const void* in, size_t in_len, void* out, size_t out_len);

}  // namespace kv

#include "common/sha1.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace kv {
namespace {

std::string Digest(std::string_view s) { return Sha1::HexDigest(s); }

// FIPS 180-2 appendix A and the usual extra vectors.
TEST(Sha1, StandardVectors) {
  EXPECT_EQ(Digest(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Digest("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(Digest("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                   "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "a49b2446a02c645bf419f995b67091253a04a259");
  EXPECT_EQ(Digest("The quick brown fox jumps over the lazy dog"),
            "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
}

TEST(Sha1, MillionA) {
  EXPECT_EQ(Digest(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

// Lengths around the padding boundaries (55/56 bytes: the length fits in the last block or not;
// 64: an exact block). Expected values from Python's hashlib.sha1(b"x" * n).
TEST(Sha1, PaddingBoundaries) {
  const std::pair<size_t, const char*> cases[] = {
      {55, "cef734ba81a024479e09eb5a75b6ddae62e6abf1"},
      {56, "901305367c259952f4e7af8323f480d59f81335b"},
      {63, "0ddc4e0cccd9a12850deb5abb0853a4425559fec"},
      {64, "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163"},
      {65, "78c741ddc482e4cdf8c474a0876347a0905b6233"},
      {119, "4300320394f7ee239bcdce7d3b8bcee173a0cd5c"},
      {120, "ceb2821639c4b6dcb10bce0e522ca2e608ce056d"},
  };
  for (const auto& [n, want] : cases) EXPECT_EQ(Digest(std::string(n, 'x')), want) << n;
}

TEST(Sha1, SplitUpdatesMatchOneShot) {
  std::string msg;
  for (int i = 0; i < 300; i++) msg.push_back(static_cast<char>(i * 37 + 11));
  const std::string want = Digest(msg);
  for (size_t cut1 = 0; cut1 <= msg.size(); cut1 += 7) {
    for (size_t cut2 = cut1; cut2 <= msg.size(); cut2 += 13) {
      Sha1 s;
      s.Update(msg.data(), cut1);
      s.Update(msg.data() + cut1, cut2 - cut1);
      s.Update(msg.data() + cut2, msg.size() - cut2);
      uint8_t out[Sha1::kDigestSize];
      s.Final(out);
      ASSERT_EQ(HexEncode(out, sizeof(out)), want) << cut1 << " " << cut2;
    }
  }
}

TEST(Sha1, FinalResets) {
  Sha1 s;
  s.Update("garbage");
  uint8_t out[Sha1::kDigestSize];
  s.Final(out);
  s.Update("abc");
  s.Final(out);
  EXPECT_EQ(HexEncode(out, sizeof(out)), "a9993e364706816aba3e25717850c26c9cd0d89d");
}

}  // namespace
}  // namespace kv

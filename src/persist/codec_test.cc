#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/lzf.h"
#include "persist/blob_encodings.h"
#include "persist/crc64.h"
#include "persist/listpack.h"
#include "persist/value_reader.h"

namespace kv::persist {
namespace {

std::string RandomBytes(std::mt19937_64& rng, size_t n, int alphabet = 256) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() % alphabet);
  return s;
}

TEST(Crc64, KnownValue) {
  EXPECT_EQ(Crc64(0, "123456789", 9), 0xe9c6d914c4b8d9caULL);
  EXPECT_EQ(Crc64Table(0, "123456789", 9), 0xe9c6d914c4b8d9caULL);
  EXPECT_EQ(Crc64(0, "", 0), 0u);
}

// Each folding implementation against the table code, where the CPU has it (the wider one
// needs VPCLMULQDQ and AVX-512); Crc64 itself, whatever it picked, too.
void ExpectFoldingMatchesTable(Crc64Impl impl) {
  std::mt19937_64 rng(7);
  std::string data = RandomBytes(rng, 70000);
  for (size_t len : {0, 1, 7, 8, 15, 16, 63, 64, 127, 128, 129, 255, 256, 257, 271, 319, 320,
                     383, 511, 512, 513, 767, 1000, 4097, 65536, 65536 + 200}) {
    for (size_t off : {0, 1, 3, 8, 13}) {
      uint64_t seed = rng();
      uint64_t want = Crc64Table(seed, data.data() + off, len);
      EXPECT_EQ(Crc64Using(impl, seed, data.data() + off, len), want)
          << "len " << len << " off " << off;
      EXPECT_EQ(Crc64(seed, data.data() + off, len), want) << "len " << len << " off " << off;
    }
  }
}

TEST(Crc64, Fold16MatchesTableAtEveryLengthAndAlignment) {
  if (!Crc64Supports(Crc64Impl::kFold16)) GTEST_SKIP() << "no PCLMUL on this CPU";
  ExpectFoldingMatchesTable(Crc64Impl::kFold16);
}

TEST(Crc64, Fold64MatchesTableAtEveryLengthAndAlignment) {
  if (!Crc64Supports(Crc64Impl::kFold64)) GTEST_SKIP() << "no VPCLMULQDQ/AVX-512 on this CPU";
  ExpectFoldingMatchesTable(Crc64Impl::kFold64);
}

TEST(Crc64, ContinuationEqualsOneShot) {
  std::mt19937_64 rng(8);
  std::string data = RandomBytes(rng, 10000);
  for (size_t cut : {0, 1, 100, 4999, 10000}) {
    uint64_t a = Crc64(0, data.data(), cut);
    EXPECT_EQ(Crc64(a, data.data() + cut, data.size() - cut), Crc64(0, data.data(), data.size()));
  }
}

TEST(Lzf, RoundTripsCompressibleData) {
  std::mt19937_64 rng(1);
  for (size_t n : {200, 1000, 8192, 8193, 100000, 1 << 20}) {
    std::string in = RandomBytes(rng, n, 4);  // small alphabet: compresses
    std::string out(n, '\0');
    size_t c = LzfCompress(in.data(), in.size(), out.data(), n - 4);
    ASSERT_GT(c, 0u) << n;
    std::string back(n, '\0');
    ASSERT_TRUE(LzfDecompress(out.data(), c, back.data(), n));
    EXPECT_EQ(back, in);
  }
  std::string runs(50000, 'a');
  std::string out(runs.size(), '\0');
  size_t c = LzfCompress(runs.data(), runs.size(), out.data(), runs.size());
  EXPECT_LT(c, 1000u);
  std::string back(runs.size(), '\0');
  ASSERT_TRUE(LzfDecompress(out.data(), c, back.data(), back.size()));
  EXPECT_EQ(back, runs);
}

TEST(Lzf, GivesUpOnRandomData) {
  std::mt19937_64 rng(2);
  std::string in = RandomBytes(rng, 1000);
  std::string out(in.size(), '\0');
  EXPECT_EQ(LzfCompress(in.data(), in.size(), out.data(), in.size() - 4), 0u);
}

TEST(Lzf, DecompressRejectsMalformedStreams) {
  std::string out(16, '\0');
  // A back reference before the start of the output.
  const char bad_ref[] = {'\x20', '\x05'};
  EXPECT_FALSE(LzfDecompress(bad_ref, 2, out.data(), 3));
  // A literal run longer than the input.
  const char short_lit[] = {'\x05', 'a'};
  EXPECT_FALSE(LzfDecompress(short_lit, 2, out.data(), 6));
  // Output size mismatch.
  const char lit[] = {'\x01', 'a', 'b'};
  EXPECT_FALSE(LzfDecompress(lit, 3, out.data(), 3));
  EXPECT_TRUE(LzfDecompress(lit, 3, out.data(), 2));
  // Random garbage never crashes.
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; i++) {
    std::string g = RandomBytes(rng, rng() % 64);
    std::string o(rng() % 128 + 1, '\0');
    (void)LzfDecompress(g.data(), g.size(), o.data(), o.size());
  }
}

std::vector<std::string> ListpackElements(std::string_view lp) {
  std::vector<std::string> out;
  Status st = ForEachListpackEntry(lp, [&](std::string_view s) {
    out.emplace_back(s);
    return Status::Ok();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

TEST(Listpack, RoundTripsStringsAndEveryIntegerWidth) {
  std::vector<std::string> in = {"", "a", "hello", "0", "127", "128", "-1", "4095", "-4096",
                                 "4096", "32767", "-32768", "32768", "8388607", "-8388608",
                                 "8388608", "2147483647", "-2147483648", "2147483648",
                                 "9223372036854775807", "-9223372036854775808", "007", "+1",
                                 "1.5", std::string(63, 'x'), std::string(64, 'y'),
                                 std::string(4095, 'z'), std::string(4096, 'w'),
                                 std::string(70000, 'v')};
  ListpackBuilder b;
  for (const auto& s : in) b.Add(s);
  EXPECT_EQ(ListpackElements(b.Finish()), in);
}

TEST(Listpack, IntegersUseTheCompactEncodings) {
  ListpackBuilder b;
  b.Add("5");
  // header 6 + entry (1 byte + 1 backlen) + terminator.
  EXPECT_EQ(b.Finish().size(), 9u);
}

TEST(Listpack, RejectsCorruptionWithoutReadingOutside) {
  ListpackBuilder b;
  for (int i = 0; i < 50; i++) b.Add("element-" + std::to_string(i * 1000));
  std::string good(b.Finish());
  std::mt19937_64 rng(4);
  int rejected = 0;
  for (int i = 0; i < 3000; i++) {
    std::string bad = good;
    int flips = 1 + rng() % 3;
    for (int f = 0; f < flips; f++) bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    if (rng() % 4 == 0) bad.resize(rng() % bad.size());
    Status st = ForEachListpackEntry(bad, [](std::string_view) { return Status::Ok(); });
    if (!st.ok()) rejected++;
  }
  EXPECT_GT(rejected, 1000);
}

TEST(Intset, BuildsAtTheNarrowestWidthAndReadsBack) {
  std::vector<int64_t> small = {-5, 0, 7, 32767};
  std::string blob = BuildIntset(small.size(), [&](size_t i) { return small[i]; });
  EXPECT_EQ(blob.size(), 8 + 2 * small.size());
  std::vector<int64_t> wide = {INT64_MIN, -1, 70000, INT64_MAX};
  std::string blob8 = BuildIntset(wide.size(), [&](size_t i) { return wide[i]; });
  EXPECT_EQ(blob8.size(), 8 + 8 * wide.size());
  std::vector<int64_t> got;
  ASSERT_TRUE(ForEachIntsetMember(blob8, [&](int64_t v) {
                got.push_back(v);
                return Status::Ok();
              }).ok());
  EXPECT_EQ(got, wide);
  // Unsorted members are corruption.
  std::vector<int64_t> unsorted = {3, 1};
  std::string bad = BuildIntset(2, [&](size_t i) { return unsorted[i]; });
  EXPECT_FALSE(ForEachIntsetMember(bad, [](int64_t) { return Status::Ok(); }).ok());
  EXPECT_FALSE(ForEachIntsetMember(blob.substr(0, blob.size() - 1),
                                   [](int64_t) { return Status::Ok(); }).ok());
}

// A ziplist as Redis < 7 wrote one: "hi", 12 (immediate), -2 (int8 encoding? no: immediate
// covers 0..12), 300 (int16), a 70-byte string (14-bit length).
std::string MakeZiplist() {
  std::string entries;
  size_t prev = 0;
  uint32_t tail = 10;
  auto add = [&](std::string enc_and_data) {
    tail = static_cast<uint32_t>(10 + entries.size());
    entries.push_back(static_cast<char>(prev));  // the previous entry's size
    entries += enc_and_data;
    prev = 1 + enc_and_data.size();
  };
  add(std::string("\x02hi", 3));
  add(std::string("\xfd", 1));                 // immediate 12
  add(std::string("\xfe\xfe", 2));             // int8 -2
  add(std::string("\xc0\x2c\x01", 3));         // int16 300
  add(std::string("\x40\x46", 2) + std::string(70, 'q'));
  std::string zl(10, '\0');
  zl += entries;
  zl.push_back('\xff');
  uint32_t bytes = static_cast<uint32_t>(zl.size());
  memcpy(zl.data(), &bytes, 4);
  memcpy(zl.data() + 4, &tail, 4);
  uint16_t n = 5;
  memcpy(zl.data() + 8, &n, 2);
  return zl;
}

TEST(Ziplist, ReadsEveryEncoding) {
  std::vector<std::string> got;
  Status st = ForEachZiplistEntry(MakeZiplist(), [&](std::string_view s) {
    got.emplace_back(s);
    return Status::Ok();
  });
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(got, (std::vector<std::string>{"hi", "12", "-2", "300", std::string(70, 'q')}));
  std::string zl = MakeZiplist();
  zl[9 + 1 + 1] = 'x';  // first entry's encoding byte -> a 56-byte string past the end
  EXPECT_FALSE(ForEachZiplistEntry(zl, [](std::string_view) { return Status::Ok(); }).ok());
}

// The fields code walking a ziplist trusts: each prevlen, zltail, zllen.
TEST(Ziplist, RefusesInconsistentLinks) {
  auto ok = [](const std::string& zl) {
    return ForEachZiplistEntry(zl, [](std::string_view) { return Status::Ok(); }).ok();
  };
  const std::string good = MakeZiplist();
  ASSERT_TRUE(ok(good));
  std::string zl = good;
  zl[10] = 1;  // the first entry has no predecessor
  EXPECT_FALSE(ok(zl));
  zl = good;
  zl[14] = 3;  // the second entry's prevlen: the first is 4 bytes
  EXPECT_FALSE(ok(zl));
  zl = good;
  zl[14] = static_cast<char>(0xfe);  // a 5-byte prevlen reaching into the next entries
  EXPECT_FALSE(ok(zl));
  zl = good;
  zl[4] = static_cast<char>(zl[4] + 1);  // zltail inside the last entry
  EXPECT_FALSE(ok(zl));
  zl = good;
  uint32_t past = static_cast<uint32_t>(zl.size());
  memcpy(zl.data() + 4, &past, 4);  // zltail past the terminator
  EXPECT_FALSE(ok(zl));
  zl = good;
  zl[8] = 4;  // zllen
  EXPECT_FALSE(ok(zl));
}

TEST(Zipmap, ReadsPairs) {
  std::string zm = "\x02";
  zm += std::string("\x03" "foo" "\x03\x00" "bar", 9);
  zm += std::string("\x01" "k" "\x02\x01" "vv" "X", 7);  // one byte of free space
  zm.push_back('\xff');
  std::vector<std::string> got;
  Status st = ForEachZipmapPair(zm, [&](std::string_view k, std::string_view v) {
    got.emplace_back(std::string(k) + "=" + std::string(v));
    return Status::Ok();
  });
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(got, (std::vector<std::string>{"foo=bar", "k=vv"}));
  EXPECT_FALSE(ForEachZipmapPair(zm.substr(0, 6), [](std::string_view, std::string_view) {
                 return Status::Ok();
               }).ok());
}

}  // namespace
}  // namespace kv::persist

namespace kv::persist {
namespace {

// A string longer than a value holds (4294967295 bytes) is refused by its length, before any
// byte of it is read, instead of being stored cut short.
TEST(ValueReaderLimits, StringsPastTheLongestValueAreRefused) {
  store::EncodingLimits limits;
  std::string scratch;
  // RDB_64BITLEN (0x81) and 2^32, big-endian.
  std::string over("\x81\x00\x00\x00\x01\x00\x00\x00\x00", 9);
  MemorySource src(over);
  ValueReader reader(src, limits);
  auto r = reader.ReadString(scratch);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("longer than the longest value kvstore holds"),
            std::string::npos)
      << r.status().message();
  // At the limit the length is accepted (and the short input ends the read).
  std::string at("\x81\x00\x00\x00\x00\xff\xff\xff\xff", 9);
  MemorySource src2(at);
  ValueReader reader2(src2, limits);
  auto r2 = reader2.ReadString(scratch);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().message().find("longer than the longest value"), std::string::npos);
}

}  // namespace
}  // namespace kv::persist

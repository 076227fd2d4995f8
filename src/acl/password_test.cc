#include "acl/password.h"

#include <gtest/gtest.h>

namespace kv::acl {
namespace {

TEST(AclPassword, HashIsSha256Hex) {
  // The hash Redis 7.0 shows for ">pw" (ACL LIST: #30c952...).
  EXPECT_EQ(HashPassword("pw"), "30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4");
  EXPECT_EQ(HashPassword(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(AclPassword, ValidHash) {
  EXPECT_TRUE(IsValidPasswordHash(HashPassword("x")));
  EXPECT_TRUE(IsValidPasswordHash(std::string(64, 'f')));
  EXPECT_FALSE(IsValidPasswordHash(std::string(64, 'A')));  // lower case only
  EXPECT_FALSE(IsValidPasswordHash(std::string(63, 'a')));
  EXPECT_FALSE(IsValidPasswordHash(std::string(65, 'a')));
  EXPECT_FALSE(IsValidPasswordHash(std::string(63, 'a') + "g"));
}

TEST(AclPassword, HashesEqual) {
  EXPECT_TRUE(HashesEqual("abc", "abc"));
  EXPECT_FALSE(HashesEqual("abc", "abd"));
  EXPECT_FALSE(HashesEqual("abc", "abcd"));
}

TEST(AclPassword, GenPassLengthAndAlphabet) {
  EXPECT_EQ(GenPass().size(), 64u);  // 256 bits
  EXPECT_EQ(GenPass(1).size(), 1u);
  EXPECT_EQ(GenPass(5).size(), 2u);
  EXPECT_EQ(GenPass(kGenPassMaxBits).size(), 1024u);
  std::string p = GenPass(256);
  EXPECT_EQ(p.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(GenPass(), GenPass());
}

}  // namespace
}  // namespace kv::acl

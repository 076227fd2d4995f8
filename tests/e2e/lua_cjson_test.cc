// The cjson library (kvstore's own, src/script/lua_cjson*.cc), differentially: every case runs on
// Debian's redis-server (7.0.15) and on kvstore, and the reply bytes must match. Encoding (numbers
// at each precision, escapes, arrays, sparse arrays, objects, key types, every error), decoding
// (tokens, escapes, surrogate pairs, numbers strtod reads, every parse error and its position), the
// settings (what each accepts and returns, kept from one script to the next, per cjson.new()
// table), nesting limits at the depths where Lua's stack runs out, and generated tables and mutated
// JSON texts. The bit library, the limits and the crashes of Debian's libraries: lua_libs_test.cc.
//
// Each group begins with FLUSHALL and SCRIPT FLUSH (a fresh interpreter, so cjson's settings
// start from their defaults); within a group the settings carry over, on both servers alike.
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "tests/e2e/scripting_util.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/script_diff.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using namespace lua_diff;

// ---------------------------------------------------------------------------------------------
// cjson.encode.
const std::vector<Cmd> kEncode = {
    // The module.
    Eval(R"(return {cjson._NAME, cjson._VERSION, type(cjson.null), tostring(cjson.null == nil)})"),
    Eval(R"(local t = {} for k in pairs(cjson) do t[#t+1] = k end return t)"),
    Eval(R"(local t = {} for k in pairs(cjson.new()) do t[#t+1] = k end return t)"),
    // Scalars.
    Eval(R"(return cjson.encode(12))"),
    Eval(R"(return cjson.encode(true))"),
    Eval(R"(return cjson.encode(false))"),
    Eval(R"(return cjson.encode(nil))"),
    Eval(R"(return cjson.encode(cjson.null))"),
    Eval(R"(return cjson.encode(''))"),
    Eval(R"(return cjson.encode('1'))"),
    // Numbers: %.14g, -0, exponents, the extremes.
    Eval(R"(return cjson.encode({1.5, 10, -3, 1e20, 0.1, 1/3, -0, 0, 2^53, 2^63, 1e308, 5e-324,
        1e-7, 123456789012345678, 0.30000000000000004, -1e-300, 1e14, 1e15, 99999999999999.5}))"),
    Eval(R"(return cjson.encode(-0))"),
    Eval(R"(return cjson.encode(1/0))"),
    Eval(R"(return cjson.encode(-1/0))"),
    Eval(R"(return cjson.encode(0/0))"),
    Eval(R"(return cjson.encode({[-1/0]=1}))"),
    // Every byte in a string.
    Eval(R"(local t = {} for i = 0, 255 do t[#t+1] = cjson.encode(string.char(i)) end
        return table.concat(t, ' '))"),
    Eval(R"(return cjson.encode('a"b\\c\n/\r\t\b\f\0\127\128\255'))"),
    Eval(R"(return cjson.encode("\226\130\172 \195\169"))"),
    Eval(R"(return cjson.encode({["a/b"]="c\"d", ["\0"]="\0"}))"),
    // Arrays, holes, sparse arrays (ratio 2, safe 10 by default), objects, empty tables.
    Eval(R"(return cjson.encode({1,2,3}))"),
    Eval(R"(return cjson.encode({}))"),
    Eval(R"(return cjson.encode({{},{{}},{a={}}}))"),
    Eval(R"(return cjson.encode({1, {2, {3, {4, {}}}}}))"),
    Eval(R"(return cjson.encode({[1]=1,[2]=2,[4]=4}))"),
    Eval(R"(return cjson.encode({1, nil, 3}))"),
    Eval(R"(return cjson.encode({[1]=1,[10]=2}))"),
    Eval(R"(return cjson.encode({[1]=1,[11]=2}))"),
    Eval(R"(return cjson.encode({[20]=2}))"),
    Eval(R"(return cjson.encode({[1]=1,[2]=1,[3]=1,[7]=1,[20]=2}))"),
    Eval(R"(return cjson.encode({[1]=1,[2]=1,[3]=1,[4]=1,[5]=1,[6]=1,[12]=2}))"),
    Eval(R"(return cjson.encode({a=1}))"),
    Eval(R"(return cjson.encode({'a', x=1}))"),
    // Number keys: beyond an int, fractions, zero and negatives make objects.
    Eval(R"(return cjson.encode({[2^31]=2}))"),
    Eval(R"(return cjson.encode({[2^40]=2}))"),
    Eval(R"(return cjson.encode({[1.5]=2}))"),
    Eval(R"(return cjson.encode({[-1]=2}))"),
    Eval(R"(return cjson.encode({[0]=2}))"),
    Eval(R"(return cjson.encode({[1]=1, [1e300]=2}))"),
    // What cannot be encoded.
    Eval(R"(return cjson.encode({[true]=1}))"),
    Eval(R"(return cjson.encode({[cjson.null]=1}))"),
    Eval(R"(return cjson.encode({[{}]=1}))"),
    Eval(R"(return cjson.encode(function() end))"),
    Eval(R"(return cjson.encode({a=function() end}))"),
    Eval(R"(return cjson.encode({1, 2, tostring}))"),
    Eval(R"(return cjson.encode(coroutine.create(function() end)))"),
    Eval(R"(return cjson.encode())"),
    Eval(R"(return cjson.encode(1, 2))"),
    Pcall("cjson.encode, {1, 2, function() end}"),
    // A failed encode leaves nothing behind.
    Eval(R"(pcall(cjson.encode, {1, 2, function() end}) return cjson.encode({3}))"),
    // Round trips.
    Eval(R"(return cjson.encode(cjson.decode('{"k":[1,2.5,"s",null,true]}')))"),
    Eval(R"(return cjson.encode(cjson.decode('[1e2, -0, 12345678901234, 1E400]')))"),
};

TEST(LuaLibs, CjsonEncodeAsRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kEncode, false);
  Compare(s, kEncode, true);
}

// ---------------------------------------------------------------------------------------------
// cjson.decode.
const std::vector<Cmd> kDecode = {
    Eval(R"(return cjson.decode('[1,2,3]'))"),
    Eval(R"(return cjson.decode('[1.5,10,"x",true,false]'))"),
    Eval(R"(return cjson.decode('{"a":1}').a)"),
    Eval(R"(return cjson.decode('{"a":1,"a":2}').a)"),
    Eval(R"(return cjson.decode('{"":1}')[""])"),
    Eval(R"(return {#cjson.decode('[1,2,3,null,5]'), cjson.decode('[null]')[1] == cjson.null})"),
    Eval(R"(return {type(cjson.decode('null')), tostring(cjson.decode('null') == cjson.null)})"),
    Eval(R"(return tostring(cjson.decode('123456789012345678')))"),
    Eval(R"(return cjson.decode('  \t\r\n 42 \n '))"),
    Eval(R"(return cjson.decode('  true'))"),
    Eval(R"(return cjson.decode('false '))"),
    Eval(R"(return cjson.decode(1.5))"),
    Eval(R"(return cjson.decode(12))"),
    // Strings: escapes, \u to UTF-8, surrogate pairs, raw bytes.
    Eval(R"(return cjson.decode('"\\"\\\\\\/\\b\\f\\n\\r\\t"'))"),
    Eval(R"(return cjson.decode('"\\u0041\\u00e9\\u20AC\\u0000x"'))"),
    Eval(R"(return cjson.decode('"\\ud83d\\ude00"'))"),
    Eval(R"(return cjson.decode('"\\uD83D\\uDE00"'))"),
    Eval(R"(return cjson.decode('"\\uDBFF\\uDFFF\\ud800\\udc00"'))"),
    Eval(R"(return cjson.decode('"raw\1\2\127\255"'))"),
    // Numbers as strtod reads them (hex, '+', leading zeros, inf and nan are allowed).
    Eval(R"(return cjson.decode('[0x10, 1e2, +5, 010, 1., -.5, 0x1p4, 1E-2]'))"),
    Eval(R"(local t = cjson.decode('[Infinity, -Infinity, infinity, Inf, +inf, NaN, nan(12),
        -nan, 1e400, -1e-400]') for i = 1, #t do t[i] = tostring(t[i]) end return t)"),
    // A NUL byte: the text ends there, but UTF-16/32 is refused.
    Eval(R"(return cjson.decode('12\0abc'))"),
    Eval(R"(return cjson.decode('1\0abc'))"),
    Eval(R"(return cjson.decode('\0'))"),
    Eval(R"(return cjson.decode('\0\0\0['))"),
    // Errors, with the character where they were found.
    Eval(R"(return cjson.decode(''))"),
    Eval(R"(return cjson.decode(' '))"),
    Eval(R"(return cjson.decode('{bad'))"),
    Eval(R"(return cjson.decode('[1 2]'))"),
    Eval(R"(return cjson.decode('[1,2'))"),
    Eval(R"(return cjson.decode('[1,]'))"),
    Eval(R"(return cjson.decode('[,1]'))"),
    Eval(R"(return cjson.decode('[:]'))"),
    Eval(R"(return cjson.decode('{"a" 1}'))"),
    Eval(R"(return cjson.decode('{1:1}'))"),
    Eval(R"(return cjson.decode('{"a":1 "b"}'))"),
    Eval(R"(return cjson.decode('{"a":1,'))"),
    Eval(R"(return cjson.decode('{"a":1,}'))"),
    Eval(R"(return cjson.decode('{"a"'))"),
    Eval(R"(return cjson.decode('{"a":}'))"),
    Eval(R"(return cjson.decode('{,}'))"),
    Eval(R"(return cjson.decode('{}}'))"),
    Eval(R"(return cjson.decode(']]'))"),
    Eval(R"(return cjson.decode('1 2'))"),
    Eval(R"(return cjson.decode('"abc'))"),
    Eval(R"(return cjson.decode('"a\\qb"'))"),
    Eval(R"(return cjson.decode('"\\'))"),
    Eval(R"(return cjson.decode('"\\u'))"),
    Eval(R"(return cjson.decode('"a\\u12"'))"),
    Eval(R"(return cjson.decode('"\\uzzzz"'))"),
    Eval(R"(return cjson.decode('"\\ud800"'))"),
    Eval(R"(return cjson.decode('"\\udc00"'))"),
    Eval(R"(return cjson.decode('"\\ud800\\u0041"'))"),
    Eval(R"(return cjson.decode('"\\ud83d\\'))"),
    Eval(R"(return cjson.decode('"\\ud83d\\ude0'))"),
    Eval(R"(return cjson.decode('tru'))"),
    Eval(R"(return cjson.decode('nulls'))"),
    Eval(R"(return cjson.decode('truex'))"),
    Eval(R"(return cjson.decode('nul'))"),
    Eval(R"(return cjson.decode('-'))"),
    Eval(R"(return cjson.decode('--1'))"),
    Eval(R"(return cjson.decode('+'))"),
    Eval(R"(return cjson.decode('1e'))"),
    Eval(R"(return cjson.decode('1e5x'))"),
    Eval(R"(return cjson.decode('.5'))"),
    Eval(R"(return cjson.decode('x'))"),
    Eval(R"(return cjson.decode('n'))"),
    Eval(R"(return cjson.decode('N'))"),
    Eval(R"(return cjson.decode('I'))"),
    Eval(R"(return cjson.decode('\255'))"),
    Eval(R"(return cjson.decode('-\255'))"),
    Eval(R"(return cjson.decode())"),
    Eval(R"(return cjson.decode('1', 2))"),
    Eval(R"(return cjson.decode(nil))"),
    Eval(R"(return cjson.decode({}))"),
};

TEST(LuaLibs, CjsonDecodeAsRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kDecode, false);
}

// ---------------------------------------------------------------------------------------------
// The settings: defaults, what each accepts, what it returns, and their effect.
const std::vector<Cmd> kSettings = {
    Eval(R"(return {cjson.encode_sparse_array()})"),
    Eval(R"(return {cjson.encode_max_depth(), cjson.decode_max_depth()})"),
    Eval(R"(return {cjson.encode_number_precision(), cjson.encode_keep_buffer()})"),
    Eval(R"(return {cjson.encode_invalid_numbers(), cjson.decode_invalid_numbers()})"),
    // Sparse arrays.
    Eval(R"(return {cjson.encode_sparse_array(true, 3, 5)})"),
    Eval(R"(return {cjson.encode_sparse_array()})"),
    Eval(R"(return cjson.encode({[1]=1,[20]=2}))"),
    Eval(R"(return cjson.encode({[1]=1,[20]=2,[2^40]=1}))"),
    Eval(R"(return {cjson.encode_sparse_array('off')})"),
    Eval(R"(return {cjson.encode_sparse_array('on', nil, nil)})"),
    Eval(R"(return {cjson.encode_sparse_array(false, 0)})"),
    Eval(R"(return cjson.encode({[1]=1,[20]=2}))"),
    Eval(R"(cjson.encode_sparse_array(false, 1, 0) return cjson.encode({[1]=1,[3]=2}))"),
    Eval(R"(cjson.encode_sparse_array(false, 1, 0) return cjson.encode({[1]=1,[2]=2}))"),
    Eval(R"(cjson.encode_sparse_array(false, 2147483647, 0) return cjson.encode({1,2,3}))"),
    Eval(R"(cjson.encode_sparse_array(false, 2147483647, 0) return cjson.encode({[1]=1,[5]=3}))"),
    Eval(R"(return {cjson.encode_sparse_array('x')})"),
    Eval(R"(return {cjson.encode_sparse_array(1)})"),
    Eval(R"(return {cjson.encode_sparse_array(nil, -1)})"),
    Eval(R"(return {cjson.encode_sparse_array(nil, 1, 'x')})"),
    Eval(R"(return {cjson.encode_sparse_array(nil, 1, 2, 3)})"),
    // Integer settings: truncated as C truncates, the range error names argument 1.
    Eval(R"(return {cjson.encode_max_depth(5)})"),
    Eval(R"(return cjson.encode_max_depth())"),
    Eval(R"(return cjson.encode({{{{{1}}}}}))"),
    Eval(R"(return cjson.encode({{{{{{1}}}}}}))"),
    Eval(R"(return {cjson.encode_max_depth(2.7)})"),
    Eval(R"(return {cjson.encode_max_depth('3')})"),
    Eval(R"(return {cjson.encode_max_depth(2^32+5)})"),
    Eval(R"(return {cjson.encode_max_depth(0)})"),
    Eval(R"(return {cjson.encode_max_depth(2^31)})"),
    Eval(R"(return {cjson.encode_max_depth('x')})"),
    Eval(R"(return {cjson.encode_max_depth(1, 2)})"),
    Eval(R"(return {cjson.decode_max_depth(1)})"),
    Eval(R"(return cjson.decode('[1]'))"),
    Eval(R"(return cjson.decode('[[1]]'))"),
    Eval(R"(return cjson.decode('{"a":{}}'))"),
    Eval(R"(return {cjson.decode_max_depth(-1)})"),
    Eval(R"(return {cjson.encode_number_precision(3)})"),
    Eval(R"(return cjson.encode({3.14159, 1e20, 123456, 0.5}))"),
    Eval(R"(return {cjson.encode_number_precision(1)})"),
    Eval(R"(return cjson.encode({1.5, 2.5, 15, 0.05, 123}))"),
    Eval(R"(return {cjson.encode_number_precision(14)})"),
    Eval(R"(return cjson.encode({1/3}))"),
    Eval(R"(return {cjson.encode_number_precision(15)})"),
    Eval(R"(return {cjson.encode_number_precision(0)})"),
    // Enumerations.
    Eval(R"(return {cjson.encode_invalid_numbers('null')})"),
    Eval(R"(return {cjson.encode_invalid_numbers()})"),
    Eval(R"(return cjson.encode({1/0, -1/0, 0/0}))"),
    Eval(R"(return cjson.encode({[1/0]=1}))"),
    Eval(R"(return {cjson.encode_invalid_numbers(true)})"),
    Eval(R"(return cjson.encode({1/0, -1/0, 0/0, -(0/0)}))"),
    Eval(R"(return cjson.encode({[1/0]=1}))"),
    Eval(R"(return {cjson.encode_invalid_numbers('off')})"),
    Eval(R"(return cjson.encode({1, 0/0}))"),
    Eval(R"(return {cjson.encode_invalid_numbers('maybe')})"),
    Eval(R"(return {cjson.encode_invalid_numbers(0)})"),
    Eval(R"(return {cjson.encode_keep_buffer(false)})"),
    Eval(R"(return cjson.encode({1, 'two', {3}}))"),
    Eval(R"(return {cjson.encode_keep_buffer('on')})"),
    Eval(R"(return cjson.encode({1, 'two', {3}}))"),
    Eval(R"(return {cjson.decode_invalid_numbers(false)})"),
    Eval(R"(return cjson.decode('NaN'))"),
    Eval(R"(return cjson.decode('[0x10]'))"),
    Eval(R"(return cjson.decode('[1, 010]'))"),
    Eval(R"(return cjson.decode('+1'))"),
    Eval(R"(return cjson.decode('-Infinity'))"),
    Eval(R"(return cjson.decode('[1, -0.5, 0, 0.25]'))"),
    Eval(R"(return {cjson.decode_invalid_numbers('on')})"),
    Eval(R"(return cjson.decode('[0x10]'))"),
    // Another module table has its own settings; the global one keeps its own.
    Eval(R"(return {cjson.new().encode_number_precision(), cjson.encode_number_precision()})"),
    Eval(R"(local c = cjson.new() c.encode_number_precision(2)
        return {c.encode(1/3), cjson.encode(1/3)})"),
    Eval(R"(return cjson.new().new().encode({1}))"),
    Eval(R"(return {type(cjson.new()), cjson.new().null == cjson.null, cjson.new()._VERSION})"),
};

TEST(LuaLibs, CjsonSettingsAsRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kSettings, false);
}

// ---------------------------------------------------------------------------------------------
// Nesting: the depth limits, cycles, and, with the limits raised, where Lua's stack runs out
// (arrays take one slot a level and objects two, so the depths differ).
const std::vector<Cmd> kNesting = {
    Eval(R"(local t = {} t[1] = t return cjson.encode(t))"),
    Eval(R"(local t = {} t.a = t return cjson.encode(t))"),
    Eval(R"(local t = {} local c = t for i = 1, 999 do c[1] = {} c = c[1] end
        return cjson.encode(t))"),
    Eval(R"(local t = {} local c = t for i = 1, 1000 do c[1] = {} c = c[1] end
        return cjson.encode(t))"),
    Eval(R"(local t = {} local c = t for i = 1, 1000 do c.x = {} c = c.x end
        return cjson.encode(t))"),
    Pcall("cjson.decode, string.rep('[', 1000) .. string.rep(']', 1000)"),
    Pcall("cjson.decode, string.rep('[', 1001) .. string.rep(']', 1001)"),
    Pcall("cjson.decode, string.rep('[', 10000)"),
    Pcall("cjson.decode, string.rep('{\"a\":', 1001)"),
    Eval(R"(cjson.encode_max_depth(100000) cjson.decode_max_depth(100000) return 1)"),
    Eval(R"(local t = {} local c = t for i = 1, 20000 do c[1] = {} c = c[1] end
        local ok, e = pcall(cjson.encode, t) return {tostring(ok), e})"),
    Eval(R"(local t = {} local c = t for i = 1, 6000 do c.x = {} c = c.x end
        local ok, e = pcall(cjson.encode, t) return {tostring(ok), e})"),
    Eval(R"(local t = {} local c = t for i = 1, 6000 do c[1] = {x = {}} c = c[1].x end
        local ok, e = pcall(cjson.encode, t) return {tostring(ok), e})"),
    Pcall("cjson.decode, string.rep('[', 10000)"),
    Pcall("cjson.decode, string.rep('{\"a\":', 10000)"),
    Pcall("cjson.decode, string.rep('[{\"a\":', 10000)"),
    Eval(R"(local ok, t = pcall(cjson.decode, string.rep('[', 7000) .. string.rep(']', 7000))
        return {tostring(ok), type(t)})"),
};

TEST(LuaLibs, CjsonNestingAsRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kNesting, false);
}

// ---------------------------------------------------------------------------------------------
// Generated cases: random tables encoded under several settings (math.random is the same
// sequence on both servers once seeded), and mutated JSON texts decoded and encoded back.

// Random tables of every kind of key and value, encoded `count` times after `setup`.
Cmd EncodeRandomTables(const std::string& setup, int count) {
  return Eval("math.randomseed(42) " + setup + R"(
    local vals = {0, -0, 1, -1, 0.1, 1/3, 1e15, 1e16, 2^53, -2^63, 1e-5, 123.456, 'x', '',
                  'a\0b', '\1/"', true, false, cjson.null, 1/0, 0/0}
    local function gen(d)
      if d > 3 or math.random(10) <= 4 then return vals[math.random(#vals)] end
      local t = {}
      for i = 1, math.random(0, 6) do
        local kr, k = math.random(6)
        if kr <= 3 then k = math.random(12) elseif kr == 4 then k = 'k' .. math.random(5)
        elseif kr == 5 then k = math.random(100) / 4 else k = -math.random(3) end
        t[k] = gen(d + 1)
      end
      return t
    end
    local out = {}
    for i = 1, )" +
              std::to_string(count) + R"( do
      local ok, e = pcall(cjson.encode, gen(0))
      out[#out+1] = tostring(ok) .. e
    end
    return out)");
}

// Deterministic pseudo-random numbers (the same sequence on every platform).
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : x_(seed) {}
  uint32_t Next(uint32_t n) {
    x_ = x_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(x_ >> 33) % n;
  }

 private:
  uint64_t x_;
};

// A JSON text of nested values built from fragments that exercise the tokenizer.
std::string RandomJson(Lcg& r, int depth) {
  static const char* const kAtoms[] = {"1",
                                       "-0",
                                       "0.5",
                                       "1e5",
                                       "-1E-5",
                                       "123456789012345678901",
                                       "\"x\"",
                                       "\"\\u00e9\"",
                                       "\"\\ud83d\\ude00\"",
                                       "true",
                                       "false",
                                       "null",
                                       "[]",
                                       "{}",
                                       "\"a\\/b\\n\"",
                                       "0x1F",
                                       "NaN",
                                       "-Infinity",
                                       "+3",
                                       "007",
                                       "1.",
                                       "\"\\u0000\"",
                                       "\"\x01\x7f\xff\"",
                                       "1e400",
                                       "5e-324",
                                       "0.1",
                                       "3.14159265358979"};
  uint32_t kind = r.Next(10);
  if (depth > 4 || kind < 4) return kAtoms[r.Next(std::size(kAtoms))];
  std::string out = kind < 7 ? "[" : "{";
  uint32_t n = r.Next(5);
  for (uint32_t i = 0; i < n; i++) {
    if (i > 0) out += ",";
    if (kind >= 7) out += "\"k" + std::to_string(r.Next(10)) + "\":";
    out += RandomJson(r, depth + 1);
  }
  return out + (kind < 7 ? "]" : "}");
}

// The text with up to three bytes deleted, inserted or replaced.
std::string Mutate(Lcg& r, std::string s) {
  static const char kBytes[] = "[]{},:\"\\u0 1-+e.x\xffntf";
  for (uint32_t i = r.Next(4); i > 0; i--) {
    size_t at = r.Next(static_cast<uint32_t>(s.size() + 1));
    uint32_t op = r.Next(3);
    if (op == 0 && at < s.size()) {
      s.erase(at, 1);
    } else if (op == 1) {
      s.insert(at, 1, kBytes[r.Next(sizeof(kBytes) - 1)]);
    } else if (at < s.size()) {
      s[at] = kBytes[r.Next(9)];
    }
  }
  if (r.Next(20) == 0) s.insert(r.Next(static_cast<uint32_t>(s.size() + 1)), 1, '\0');
  return s;
}

// Decodes each argument and encodes the result back, after `setup`.
Cmd DecodeTexts(const std::string& setup, Lcg& r, int count) {
  Cmd cmd = {"EVAL", setup + R"(
    local out = {}
    for i, s in ipairs(ARGV) do
      local ok, v = pcall(cjson.decode, s)
      if not ok then out[#out+1] = 'E:' .. v else
        local ok2, e = pcall(cjson.encode, v)
        out[#out+1] = tostring(ok2) .. ':' .. e
      end
    end
    return out)",
             "0"};
  for (int i = 0; i < count; i++) {
    std::string text = RandomJson(r, 0);
    cmd.push_back(r.Next(10) < 7 ? Mutate(r, text) : text);
  }
  return cmd;
}

TEST(LuaLibs, CjsonGeneratedAsRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  std::vector<Cmd> cmds;
  for (int precision : {1, 5, 14}) {
    cmds.push_back(EncodeRandomTables(
        "cjson.encode_number_precision(" + std::to_string(precision) + ")", 1000));
  }
  cmds.push_back(
      EncodeRandomTables("cjson.encode_invalid_numbers(true) "
                         "cjson.encode_sparse_array(true, 1, 2)",
                         1500));
  cmds.push_back(
      EncodeRandomTables("cjson.encode_invalid_numbers('null') "
                         "cjson.encode_sparse_array(false, 0)",
                         1500));
  Lcg r(20240101);
  for (const char* setup :
       {"", "cjson.decode_invalid_numbers(false) ",
        "cjson.encode_invalid_numbers(true) cjson.encode_number_precision(6) ",
        "cjson.encode_invalid_numbers('null') cjson.encode_sparse_array(true, 1, 1) ",
        "cjson.decode_max_depth(3) cjson.encode_max_depth(2) "}) {
    cmds.push_back(DecodeTexts(setup, r, 500));
  }
  Compare(s, cmds, false);
}

}  // namespace
}  // namespace kv::test

#include "persist/dump.h"

#include <cstring>
#include <functional>

#include "persist/crc64.h"
#include "persist/rdb_format.h"
#include "persist/rdb_writer.h"
#include "persist/sink.h"
#include "persist/value_reader.h"

namespace kv::persist {

namespace {

// A payload: what `body` writes (a StringSink does not fail), then the version and checksum.
std::string Payload(RdbWriteOptions opts, const std::function<void(RdbWriter&)>& body) {
  StringSink sink;
  opts.checksum = false;
  RdbWriter w(sink, opts);
  body(w);
  (void)w.Flush();
  std::string& out = sink.str();
  out.push_back(static_cast<char>(kRdbVersion & 0xff));
  out.push_back(static_cast<char>((kRdbVersion >> 8) & 0xff));
  uint64_t crc = Crc64(0, out.data(), out.size());
  out.append(reinterpret_cast<const char*>(&crc), 8);  // little-endian hosts
  return std::move(out);
}

}  // namespace

std::string DumpValue(const store::Value& v, const store::EncodingLimits& limits,
                      bool compression) {
  RdbWriteOptions opts;
  opts.compression = compression;
  opts.limits = limits;
  return Payload(opts, [&](RdbWriter& w) { (void)w.WriteObject(v); });
}

std::string DumpFunctions(const std::vector<std::string>& codes) {
  return Payload({}, [&](RdbWriter& w) { (void)w.WriteFunctions(codes); });
}

Result<std::vector<std::string>> FunctionCodes(std::string_view payload) {
  MemorySource src(payload.substr(0, payload.size() - 10));
  ValueReader reader(src, store::EncodingLimits{});
  std::vector<std::string> codes;
  std::string scratch;
  while (src.remaining() > 0) {
    auto type = reader.ReadByte();
    if (!type.ok()) return Status::Corruption("can not read data type");
    if (*type == kOpFunctionPreGa)
      return Status::Corruption("Pre-GA function format not supported");
    if (*type != kOpFunction2) return Status::Corruption("given type is not a function");
    auto code = reader.ReadString(scratch);
    if (!code.ok()) return Status::Corruption("Failed loading library payload");
    codes.emplace_back(*code);
  }
  return codes;
}

Status VerifyDumpPayload(std::string_view p, bool verify_checksum) {
  if (p.size() < 10) return Status::Invalid("payload too short");
  const uint8_t* footer = reinterpret_cast<const uint8_t*>(p.data() + p.size() - 10);
  int version = footer[0] | (footer[1] << 8);
  if (version > kRdbVersion) return Status::Invalid("payload version too new");
  if (!verify_checksum) return Status::Ok();
  uint64_t crc = Crc64(0, p.data(), p.size() - 8);
  if (memcmp(&crc, footer + 2, 8) != 0) return Status::Invalid("payload checksum mismatch");
  return Status::Ok();
}

Result<store::Value> RestoreValue(std::string_view payload, const store::EncodingLimits& limits) {
  MemorySource src(payload.substr(0, payload.size() - 10));
  ValueReader reader(src, limits);
  KV_TRY_ASSIGN(type, reader.ReadByte());
  bool skipped = false;
  std::string why;
  KV_TRY_ASSIGN(v, reader.ReadObject(type, &skipped, &why));
  if (skipped) return Status::Corruption(why);
  return v;
}

}  // namespace kv::persist

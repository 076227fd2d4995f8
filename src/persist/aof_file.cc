#include "persist/aof_file.h"

#include <cstring>
#include <span>

#include "common/strutil.h"
#include "persist/rdb_format.h"
#include "store/stream_type.h"

namespace kv::persist {
namespace {

// Redis reads AOF lines into a buffer of AOF_ANNOTATION_LINE_MAX_LEN bytes.
constexpr size_t kMaxLine = 1024;

// Redis' atoi / strtol on what follows the type character: leading digits, sign allowed.
int64_t LeadingInt(std::string_view s) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  int64_t v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; i++) {
    if (v > (INT64_MAX - 9) / 10) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return neg ? -v : v;
}

}  // namespace

bool AofCommandReader::Line(std::string_view* line) {
  if (pos_ >= data_.size()) return false;
  size_t limit = std::min(data_.size(), pos_ + kMaxLine - 1);
  const char* start = data_.data() + pos_;
  const void* nl = memchr(start, '\n', limit - pos_);
  size_t end = nl ? static_cast<const char*>(nl) - data_.data() + 1 : limit;
  *line = data_.substr(pos_, end - pos_);
  pos_ = end;
  return true;
}

AofCommandReader::Next AofCommandReader::Read(std::vector<std::string_view>* argv) {
  argv->clear();
  for (;;) {
    uint64_t start = pos_;
    std::string_view line;
    if (!Line(&line)) return Next::kEnd;
    if (line[0] == '#') continue;  // an annotation
    auto fail = [&](Next how, std::string what) {
      pos_ = start;
      error_ = std::move(what);
      return how;
    };
    if (line[0] != '*')
      return fail(Next::kFormatError, "expected '*' at offset " + std::to_string(start));
    if (line.size() == 1) return fail(Next::kTruncated, "");
    int64_t argc = LeadingInt(line.substr(1));
    if (argc < 1)
      return fail(Next::kFormatError, "bad argument count at offset " + std::to_string(start));
    argv->reserve(static_cast<size_t>(std::min<int64_t>(argc, 1024)));
    for (int64_t j = 0; j < argc; j++) {
      uint64_t arg_at = pos_;
      std::string_view len_line;
      if (!Line(&len_line)) return fail(Next::kTruncated, "");
      if (len_line[0] != '$') {
        return fail(Next::kFormatError, "expected '$' at offset " + std::to_string(arg_at));
      }
      int64_t len = LeadingInt(len_line.substr(1));
      // strtol's negative lengths read as huge unsigned ones in Redis: the read fails there.
      if (len < 0 || static_cast<uint64_t>(len) + 2 > data_.size() - pos_) {
        return fail(Next::kTruncated, "");
      }
      argv->push_back(data_.substr(pos_, static_cast<size_t>(len)));
      pos_ += static_cast<uint64_t>(len) + 2;  // the bytes and their CRLF
    }
    return Next::kCommand;
  }
}

void AppendAofCommand(std::string* out, std::initializer_list<std::string_view> argv) {
  out->append("*").append(std::to_string(argv.size())).append("\r\n");
  for (std::string_view a : argv) {
    out->append("$").append(std::to_string(a.size())).append("\r\n").append(a).append("\r\n");
  }
}

namespace {

// Writes through a 1 MiB buffer.
class CommandWriter {
 public:
  explicit CommandWriter(Sink& sink) : sink_(sink) { buf_.reserve(kFlushAt + 4096); }
  void Count(char type, size_t n) {
    buf_ += type;
    buf_ += std::to_string(n);
    buf_ += "\r\n";
  }
  void Bulk(std::string_view s) {
    Count('$', s.size());
    buf_.append(s);
    buf_ += "\r\n";
  }
  void Raw(std::string_view s) { buf_.append(s); }
  Status MaybeFlush() { return buf_.size() >= kFlushAt ? Flush() : Status::Ok(); }
  Status Flush() {
    Status st = sink_.Write(buf_.data(), buf_.size());
    buf_.clear();
    return st;
  }

 private:
  static constexpr size_t kFlushAt = 1 << 20;
  Sink& sink_;
  std::string buf_;
};

// A collection as commands `name key item...` of at most 64 items (pairs for ZADD and HMSET).
void WriteCollection(CommandWriter& w, std::string_view name, std::string_view key,
                     const store::Collection& c, bool pairs, bool score_first) {
  size_t items = c.Size(), count = 0;
  c.ForEach([&](std::string_view first, std::string_view second) {
    if (count == 0) {
      size_t n = std::min(items, kAofRewriteItemsPerCmd);
      w.Count('*', 2 + (pairs ? n * 2 : n));
      w.Bulk(name);
      w.Bulk(key);
    }
    if (pairs && score_first) {
      w.Bulk(second);
      w.Bulk(first);
    } else {
      w.Bulk(first);
      if (pairs) w.Bulk(second);
    }
    if (++count == kAofRewriteItemsPerCmd) count = 0;
    items--;
  });
}

// Redis' rewriteStreamObject: an XADD per entry (or XADD MAXLEN 0 0-1 x y for an empty
// stream), XSETID with the counters, then per group XGROUP CREATE ... ENTRIESREAD, an XCLAIM
// ... JUSTID FORCE per pending entry of each consumer, XGROUP CREATECONSUMER for those with none.
Status WriteStream(CommandWriter& w, std::string_view key, const store::StreamValue& s) {
  Status st;
  if (s.length() > 0) {
    s.Range(store::StreamID::Min(), store::StreamID::Max(), false,
            [&](store::StreamID id, std::span<const store::StreamValue::FieldValue> fields) {
              w.Count('*', 3 + fields.size() * 2);
              w.Bulk("XADD");
              w.Bulk(key);
              w.Bulk(id.ToString());
              for (const auto& [f, v] : fields) {
                w.Bulk(f);
                w.Bulk(v);
              }
              st = w.MaybeFlush();
              return st.ok();
            });
    KV_TRY(st);
  } else {
    w.Count('*', 7);
    for (std::string_view a :
         {std::string_view("XADD"), key, std::string_view("MAXLEN"), std::string_view("0"),
          std::string_view("0-1"), std::string_view("x"), std::string_view("y")}) {
      w.Bulk(a);
    }
  }
  w.Count('*', 7);
  w.Bulk("XSETID");
  w.Bulk(key);
  w.Bulk(s.last_id().ToString());
  w.Bulk("ENTRIESADDED");
  w.Bulk(std::to_string(s.entries_added()));
  w.Bulk("MAXDELETEDID");
  w.Bulk(s.max_deleted_id().ToString());
  for (const auto& [name, g] : s.groups()) {
    w.Count('*', 7);
    w.Bulk("XGROUP");
    w.Bulk("CREATE");
    w.Bulk(key);
    w.Bulk(name);
    w.Bulk(g->last_id.ToString());
    w.Bulk("ENTRIESREAD");
    w.Bulk(std::to_string(g->entries_read));
    for (const auto& [cname, c] : g->consumers) {
      if (c->pel.empty()) {
        w.Count('*', 5);
        w.Bulk("XGROUP");
        w.Bulk("CREATECONSUMER");
        w.Bulk(key);
        w.Bulk(name);
        w.Bulk(cname);
        continue;
      }
      for (const auto& [id, nack] : c->pel) {
        w.Count('*', 12);
        w.Bulk("XCLAIM");
        w.Bulk(key);
        w.Bulk(name);
        w.Bulk(cname);
        w.Bulk("0");
        w.Bulk(id.ToString());
        w.Bulk("TIME");
        w.Bulk(std::to_string(nack->delivery_time));
        w.Bulk("RETRYCOUNT");
        w.Bulk(std::to_string(nack->delivery_count));
        w.Bulk("JUSTID");
        w.Bulk("FORCE");
        KV_TRY(w.MaybeFlush());
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status WriteAofCommands(store::Keyspace& ks, Sink& sink, const AofCommandsOptions& opts,
                        uint64_t* keys_written) {
  CommandWriter w(sink);
  uint64_t keys = 0;
  if (opts.timestamp) w.Raw("#TS:" + std::to_string(opts.now_s) + "\r\n");
  for (const std::string& code : opts.functions) {
    w.Raw("*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n");
    w.Bulk(code);
  }
  Status st;
  for (int i = 0; i < ks.num_dbs() && st.ok(); i++) {
    store::Db& db = ks.db(i);
    if (db.size() == 0) continue;
    w.Raw("*2\r\n$6\r\nSELECT\r\n");
    w.Bulk(std::to_string(i));
    db.table().ForEach([&](store::Entry* e) {
      if (!st.ok()) return;
      const store::Value& v = e->value;
      std::string_view key = e->key();
      switch (v.type()) {
        case store::ObjType::kString: {
          char scratch[24];
          w.Raw("*3\r\n$3\r\nSET\r\n");
          w.Bulk(key);
          w.Bulk(v.Str(scratch));
          break;
        }
        case store::ObjType::kList:
          WriteCollection(w, "RPUSH", key, *v.object(), false, false);
          break;
        case store::ObjType::kSet:
          WriteCollection(w, "SADD", key, *v.object(), false, false);
          break;
        case store::ObjType::kZSet:
          WriteCollection(w, "ZADD", key, *v.object(), true, true);
          break;
        case store::ObjType::kHash:
          WriteCollection(w, "HMSET", key, *v.object(), true, false);
          break;
        case store::ObjType::kStream:
          st = WriteStream(w, key, *v.As<store::StreamValue>());
          if (!st.ok()) return;
          break;
      }
      if (int64_t when = db.GetExpire(e); when >= 0) {
        w.Raw("*3\r\n$9\r\nPEXPIREAT\r\n");
        w.Bulk(key);
        w.Bulk(std::to_string(when));
      }
      keys++;
      st = w.MaybeFlush();
      if (opts.progress && keys % 1024 == 0) opts.progress(keys);
      if (opts.key_save_delay_us != 0) DebugKeyDelay(opts.key_save_delay_us);
    });
  }
  if (st.ok()) st = w.Flush();
  if (keys_written) *keys_written = keys;
  return st;
}

}  // namespace kv::persist

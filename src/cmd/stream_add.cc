// XADD and XTRIM (Redis 7.0 t_stream.c): their shared arguments (streamParseAddOrTrimArgsOrReply),
// the ID XADD gives the new entry, and what replicas and the AOF get: the ID actually used and,
// after an approximate trim, what the trim left. streams.cc registers them.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cmd/command.h"
#include "cmd/errors.h"
#include "cmd/stream_cmds.h"
#include "common/strutil.h"

namespace kv::cmd::stream {

using store::ObjType;
using store::StreamID;
using store::StreamValue;

namespace {

// Redis' streamAddTrimArgs and streamParseAddOrTrimArgsOrReply.
struct AddTrimArgs {
  StreamID id;
  bool id_given = false, seq_given = false, no_mkstream = false;
  StreamValue::TrimArgs trim;
  size_t trim_arg_idx = 0;  // the MAXLEN/MINID argument, rewritten for propagation
  bool limit_given = false;
};

// An integer that must not be negative (MAXLEN, LIMIT): Redis' errors for either failure.
bool ParseCount(Context& c, std::string_view arg, const char* negative, int64_t* out) {
  auto v = ParseInt64(arg);
  if (!v) {
    c.Error(OpStatus::kNotInteger);
    return false;
  }
  if (*v < 0) {
    c.Error(negative);
    return false;
  }
  *out = *v;
  return true;
}

// Returns the ID's position (XADD), or 0 after answering an error.
size_t ParseAddOrTrim(Context& c, AddTrimArgs* a, bool xadd) {
  using TS = StreamValue::TrimStrategy;
  size_t i = 2;
  for (; i < c.argc(); i++) {
    size_t moreargs = c.argc() - 1 - i;
    std::string_view opt = c.arg(i);
    if (xadd && opt == "*") break;
    if ((EqualsIgnoreCase(opt, "maxlen") || EqualsIgnoreCase(opt, "minid")) && moreargs) {
      bool maxlen = EqualsIgnoreCase(opt, "maxlen");
      if (a->trim.strategy != TS::kNone) {
        c.Error("syntax error, MAXLEN and MINID options at the same time are not compatible");
        return 0;
      }
      a->trim.approx = false;
      std::string_view next = c.arg(i + 1);
      if (moreargs >= 2 && next == "~") {
        a->trim.approx = true;
        i++;
      } else if (moreargs >= 2 && next == "=") {
        i++;
      }
      if (maxlen) {
        if (!ParseCount(c, c.arg(i + 1), "The MAXLEN argument must be >= 0.", &a->trim.maxlen)) {
          return 0;
        }
        a->trim.strategy = TS::kMaxLen;
      } else {
        if (!ParseId(&c, c.arg(i + 1), &a->trim.minid, 0, true, nullptr)) return 0;
        a->trim.strategy = TS::kMinId;
      }
      i++;
      a->trim_arg_idx = i;
    } else if (EqualsIgnoreCase(opt, "limit") && moreargs) {
      if (!ParseCount(c, c.arg(i + 1), "The LIMIT argument must be >= 0.", &a->trim.limit)) {
        return 0;
      }
      a->limit_given = true;
      i++;
    } else if (xadd && EqualsIgnoreCase(opt, "nomkstream")) {
      a->no_mkstream = true;
    } else if (xadd) {
      if (!ParseId(&c, c.arg(i), &a->id, 0, true, &a->seq_given)) return 0;
      a->id_given = true;
      break;
    } else {
      c.Error(OpStatus::kSyntax);
      return 0;
    }
  }
  if (a->trim.limit && a->trim.strategy == TS::kNone) {
    c.Error("syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return 0;
  }
  if (!xadd && a->trim.strategy == TS::kNone) {
    c.Error("syntax error, XTRIM must be called with a trimming strategy");
    return 0;
  }
  if (c.session.obey) {
    a->trim.limit = 0;  // the primary and the AOF rewrote the trim to what it removed
  } else if (a->limit_given) {
    if (!a->trim.approx) {
      c.Error("syntax error, LIMIT cannot be used without the special ~ option");
      return 0;
    }
  } else if (a->trim.approx) {
    int64_t limit = 100 * c.ks.limits().stream_node_max_entries;  // at most 100 nodes
    if (limit <= 0) limit = 10000;
    if (limit > 1000000) limit = 1000000;
    a->trim.limit = limit;
  } else {
    a->trim.limit = 0;
  }
  return i;
}

// After an approximate trim, replicas and the AOF get "=" and what the trim left (Redis'
// streamRewriteApproxSpecifier and streamRewriteTrimArgument).
void RewriteTrim(Context& c, const AddTrimArgs& a, const StreamValue& s,
                 std::vector<std::string>* argv) {
  (*argv)[a.trim_arg_idx - 1].assign(1, '=');  // not = "=": GCC 12 -Wrestrict bug
  if (a.trim.strategy == StreamValue::TrimStrategy::kMaxLen) {
    (*argv)[a.trim_arg_idx] = std::to_string(s.length());
  } else {
    (*argv)[a.trim_arg_idx] = s.RawEdgeId(true).ToString();  // tombstones count here
  }
}

std::vector<std::string> Argv(Context& c) {
  return std::vector<std::string>(c.args.begin(), c.args.end());
}

}  // namespace

void XAdd(Context& c) {
  AddTrimArgs a;
  size_t idpos = ParseAddOrTrim(c, &a, true);
  if (idpos == 0) return;
  size_t field_pos = idpos + 1;
  if (c.argc() < field_pos + 2 || (c.argc() - field_pos) % 2 == 1) {
    c.Error(WrongArity(c.spec ? c.spec->name : "xadd"));
    return;
  }
  if (a.id_given && a.seq_given && a.id == StreamID::Min()) {
    c.Error("The ID specified in XADD must be greater than 0-0");
    return;
  }
  bool wrongtype;
  StreamValue* s = WriteStream(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  if (!s) {
    if (a.no_mkstream) {
      c.out.Null();
      return;
    }
    c.ks.Set(c.session.db, c.arg(1),
             store::Value::Object(ObjType::kStream, std::make_unique<StreamValue>()));
    s = c.LookupWrite(c.arg(1))->value.As<StreamValue>();
    c.Notify(kNotifyNew, "new", c.arg(1));
  }
  if (s->last_id() == StreamID::Max()) {
    c.Error("The stream has exhausted the last possible ID, unable to add more items");
    return;
  }
  // streamAppendItem's ID choice and checks.
  StreamID id;
  if (a.id_given) {
    if (a.seq_given) {
      id = a.id;
    } else if (s->last_id().ms == a.id.ms) {
      if (s->last_id().seq == UINT64_MAX) {
        c.Error("The ID specified in XADD is equal or smaller than the target stream top item");
        return;
      }
      id = s->last_id();
      id.seq++;
    } else {
      id = a.id;
    }
  } else {
    uint64_t ms = static_cast<uint64_t>(c.now_ms);
    if (ms > s->last_id().ms) {
      id = {ms, 0};
    } else {
      id = s->last_id();
      id.Incr();
    }
  }
  if (id <= s->last_id()) {
    c.Error("The ID specified in XADD is equal or smaller than the target stream top item");
    return;
  }
  size_t total = 0;
  for (size_t i = field_pos; i < c.argc(); i++) total += c.arg(i).size();
  if (total > (size_t{1} << 30)) {
    c.Error("Elements are too large to be stored");
    return;
  }
  const store::EncodingLimits& lim = c.ks.limits();
  s->Append(id, c.args.subspan(field_pos), lim.stream_node_max_bytes, lim.stream_node_max_entries);
  c.out.Bulk(id.ToString());
  c.Changed(c.arg(1), kNotifyStream, "xadd");

  std::vector<std::string> argv;
  if (a.trim.strategy != StreamValue::TrimStrategy::kNone) {
    if (s->Trim(a.trim)) c.Notify(kNotifyStream, "xtrim", c.arg(1));
    if (a.trim.approx) {
      argv = Argv(c);
      RewriteTrim(c, a, *s, &argv);
    }
  }
  // The ID actually used is what replicas and the AOF see.
  if (!a.id_given || !a.seq_given) {
    if (argv.empty()) argv = Argv(c);
    argv[idpos] = id.ToString();
  }
  if (!argv.empty()) c.rewrite = std::move(argv);
}

void XTrim(Context& c) {
  AddTrimArgs a;
  if (ParseAddOrTrim(c, &a, false) == 0) return;
  bool wrongtype;
  StreamValue* s = WriteStream(c, c.arg(1), &wrongtype);
  if (wrongtype) return;
  if (!s) {
    c.out.Int(0);
    return;
  }
  int64_t deleted = s->Trim(a.trim);
  if (deleted) {
    if (a.trim.approx) {
      std::vector<std::string> argv = Argv(c);
      RewriteTrim(c, a, *s, &argv);
      c.rewrite = std::move(argv);
    }
    c.Changed(c.arg(1), kNotifyStream, "xtrim");
    c.dirty += static_cast<uint64_t>(deleted) - 1;
  }
  c.out.Int(deleted);
}

}  // namespace kv::cmd::stream

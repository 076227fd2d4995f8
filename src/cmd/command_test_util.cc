#include "cmd/command_test_util.h"

#include "cmd/registry.h"
#include "common/clock.h"

namespace kv::cmd {

CommandRunner::CommandRunner() {
  RegisterDataCommands(table);
  session.authenticated = true;
}

std::string CommandRunner::Run(std::vector<std::string> args) {
  std::vector<std::string_view> views(args.begin(), args.end());
  std::string out;
  resp::ReplyWriter w(&out, session.resp);
  propagated_.clear();
  propagated_all_.clear();
  std::string error;
  const CommandSpec* spec = ResolveCommand(table, views, &error);
  if (!spec) {
    w.Error(error);
    return out;
  }
  Context ctx(views, w, ks, session, hooks, stats, fixed_now_ms_ >= 0 ? fixed_now_ms_ : WallMs());
  ctx.spec = spec;
  spec->handler(ctx);
  if (spec->IsWrite() && ctx.dirty > 0) {
    if (ctx.propagate.empty()) {
      propagated_all_.push_back(ctx.rewrite ? *ctx.rewrite : args);
    } else {
      propagated_all_ = std::move(ctx.propagate);
    }
    propagated_ = propagated_all_.front();
  }
  return out;
}

}  // namespace kv::cmd

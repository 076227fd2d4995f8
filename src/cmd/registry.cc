#include "cmd/registry.h"

namespace kv::cmd {

void RegisterDataCommands(CommandTable& table) {
  RegisterConnectionCommands(table);
  RegisterKeyCommands(table);
  RegisterStringCommands(table);
  RegisterBitmapCommands(table);
  RegisterHyperLogLogCommands(table);
  RegisterGeoCommands(table);
  RegisterStreamCommands(table);
  RegisterHashCommands(table);
  RegisterListCommands(table);
  RegisterSetCommands(table);
  RegisterZsetCommands(table);
  RegisterBlockingCommands(table);
  RegisterSortCommands(table);
}

}  // namespace kv::cmd

#include "plugin_state.hpp"

namespace wireup::spank {

PluginState& state() {
  static PluginState s;
  return s;
}

}  // namespace wireup::spank

// Host callbacks: functions the host registers (Python callables through the bindings) and the
// host_callback op calls with its operands, ready, in program order. The core only knows this
// registry of std::functions; the binding wraps each Python callable (taking the GIL itself).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "core/array.h"

namespace xjax {

using HostCallback = std::function<void(const std::vector<Array>&)>;

// Registers fn; returns its callback_id. Thread-safe.
int64_t register_callback(HostCallback fn);
// Removes a callback (calls of its id then fail).
void unregister_callback(int64_t id);
// Calls callback `id` with args; throws ValueError for an unknown id.
void call_callback(int64_t id, const std::vector<Array>& args);

}  // namespace xjax

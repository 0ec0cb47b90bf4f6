#include "core/compiler/callbacks.h"

#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/errors.h"
#include "core/float_env.h"

namespace xjax {

namespace {
struct Registry {
  std::mutex mu;
  std::unordered_map<int64_t, std::shared_ptr<HostCallback>> fns;
  int64_t next = 1;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: callbacks may run during shutdown
  return *r;
}
}  // namespace

int64_t register_callback(HostCallback fn) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  int64_t id = r.next++;
  r.fns[id] = std::make_shared<HostCallback>(std::move(fn));
  return id;
}

void unregister_callback(int64_t id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.fns.erase(id);
}

void call_callback(int64_t id, const std::vector<Array>& args) {
  std::shared_ptr<HostCallback> fn;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.fns.find(id);
    if (it == r.fns.end()) throw ValueError("[host_callback] no callback registered with id " + std::to_string(id));
    fn = it->second;
  }
  KeepSubnormalsScope keep;  // host code (NumPy in a Python callback) computes as usual
  (*fn)(args);               // outside the lock: the callback may register others
}

}  // namespace xjax

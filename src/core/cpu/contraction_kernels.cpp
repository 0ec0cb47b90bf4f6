// Picks the built-in contraction kernels for the CPU at hand, once.
#include "core/cpu/contraction_kernels.h"

#include <cstdlib>
#include <cstring>

#include "core/arch.h"

namespace xjax::contraction {

namespace {
enum class Isa { Avx512, Avx2, Generic };

Isa detect() {
#ifdef XJAX_ARCH_X86_64
  __builtin_cpu_init();
  bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  bool avx512 = false, avx2 = false;  // only the generic kernels are built
#endif
  Isa best = avx512 ? Isa::Avx512 : avx2 ? Isa::Avx2 : Isa::Generic;
  // A request for a narrower set is honoured (to test each build); a wider one is not.
  if (const char* env = std::getenv("XJAX_CONTRACTION_ISA")) {
    if (std::strcmp(env, "generic") == 0) return Isa::Generic;
    if (std::strcmp(env, "avx2") == 0 && avx2) return Isa::Avx2;
  }
  return best;
}

Isa isa() {
  static const Isa chosen = detect();
  return chosen;
}
}  // namespace

template <typename T>
const Kernels<T>& kernels() {
#ifdef XJAX_ARCH_X86_64
  static const Kernels<T> table = isa() == Isa::Avx512 ? avx512::make_kernels<T>()
                                  : isa() == Isa::Avx2 ? avx2::make_kernels<T>()
                                                       : generic::make_kernels<T>();
#else
  static const Kernels<T> table = generic::make_kernels<T>();
#endif
  return table;
}

template const Kernels<float>& kernels<float>();
template const Kernels<double>& kernels<double>();
template const Kernels<uint32_t>& kernels<uint32_t>();
template const Kernels<uint64_t>& kernels<uint64_t>();

const char* kernels_isa() {
  switch (isa()) {
    case Isa::Avx512: return "avx512";
    case Isa::Avx2: return "avx2";
    default: return "generic";
  }
}

}  // namespace xjax::contraction

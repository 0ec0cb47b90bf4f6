// The CPU split into devices, as JAX's jax_num_cpu_devices does: pmap runs one shard per device.
// Each device owns a share of the cores (its own ThreadPool) and a host thread that runs its work
// with that pool current, so the shards' kernels run side by side without sharing threads.
#pragma once
#include <functional>
#include <vector>

#include "core/thread_pool.h"

namespace xjax {

// Sets how many devices the CPU is split into (1: one device on the global pool). Allowed until
// the devices are first used; afterwards only the same number (else std::logic_error).
void set_num_devices(int n);
int num_devices();
// Device d's pool: the global pool when there is one device, else one of
// max(1, global size / num_devices()) threads of its own.
ThreadPool& device_pool(int d);
// Runs work[i] on the host thread of device devices[i] (distinct ids), all at once, each with its
// device's pool current; returns when all have finished and rethrows the first error (by
// position). Called from a device's own work it runs the items one after another instead.
void run_on_devices(const std::vector<int>& devices, const std::vector<std::function<void()>>& work);

}  // namespace xjax

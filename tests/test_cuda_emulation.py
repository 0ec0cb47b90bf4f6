"""The emulation header (src/core/cuda/emulation.h) and the harness that runs plans on it
(tests/cuda_emulation.py): barriers are honoured; a kernel whose result depends on the order of its
threads or blocks -- a race on a real GPU -- gives a wrong answer in one of the two orders the
differential tests run; a write outside a buffer, or to an input, fails the run; an output element
left unwritten, or read past an input's end, is garbage, as on a GPU."""
import numpy as np
import pytest

import cuda_emulation as emu

N = 256  # threads per block, as the generators launch them

# Each thread stores its input in shared memory and reads its neighbour's: with a barrier between
# the two, correct; without one, the neighbour may not have written yet.
NEIGHBOUR = """
extern "C" __global__ void {name}(const float* __restrict__ in0, float* __restrict__ out0) {{
  __shared__ float s[{n}];
  const unsigned t = threadIdx.x;
  s[t] = in0[blockIdx.x * {n} + t];
  {barrier}
  out0[blockIdx.x * {n} + t] = s[(t + 1) % {n}];
  {barrier}
}}
"""

# Thread i writes element i + shift of an output of `blocks * N` elements.
SHIFTED = """
extern "C" __global__ void {name}(const float* __restrict__ in0, float* __restrict__ out0) {{
  const int i = blockIdx.x * blockDim.x + threadIdx.x + {shift};
  if (i < {limit}) out0[i] = in0[blockIdx.x * blockDim.x + threadIdx.x];
}}
"""

# Writes its output, then its input (which the executor's buffers must never see), or reads one element
# past its input's end.
INPUT_ABUSE = """
extern "C" __global__ void {name}(float* __restrict__ in0, float* __restrict__ out0) {{
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out0[i] = in0[i + {read_shift}];
  {extra}
}}
"""

# Block b adds block b-1's output to its input: right only if blocks ran in order, which CUDA never
# promises.
CHAINED = """
extern "C" __global__ void chained(const float* __restrict__ in0, float* __restrict__ out0) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out0[i] = in0[i] + (blockIdx.x ? out0[i - blockDim.x] : 0.0f);
}
"""


def plan(source, name, blocks):
    return {"source": source, "scratch": [], "outputs": [((blocks * N,), "float32")],
            "launches": [{"name": name, "grid": (blocks, 1, 1), "block": (N, 1, 1), "shared": 0,
                          "params": ["in0", "out0"]}]}


@pytest.fixture(scope="module")
def kernels():
    b = emu.Batch()
    b.ids = {
        "synced": b.add(plan(NEIGHBOUR.format(name="synced", n=N, barrier="__syncthreads();"), "synced", 2)),
        "racy": b.add(plan(NEIGHBOUR.format(name="racy", n=N, barrier=""), "racy", 2)),
        "chained": b.add(plan(CHAINED, "chained", 3)),
        "past_end": b.add(plan(SHIFTED.format(name="past_end", shift=1, limit=N + 1), "past_end", 1)),
        "before_start": b.add(plan(SHIFTED.format(name="before_start", shift=-1, limit=N), "before_start", 1)),
        "partial": b.add(plan(SHIFTED.format(name="partial", shift=0, limit=N - 1), "partial", 1)),
        "writes_input": b.add(plan(INPUT_ABUSE.format(name="writes_input", read_shift=0, extra="in0[i] = 0.0f;"),
                                   "writes_input", 1)),
        "reads_past_input": b.add(plan(INPUT_ABUSE.format(name="reads_past_input", read_shift=1, extra=""),
                                       "reads_past_input", 1)),
    }
    return b.build()


def neighbour_reference(x):
    return np.roll(x.reshape(-1, N), -1, axis=1).reshape(-1)


@pytest.mark.parametrize("order", emu.ORDERS)
def test_barriers_are_honoured_in_either_order(kernels, order):
    x = np.arange(2 * N, dtype=np.float32) + 1
    (got,) = kernels.run(kernels.ids["synced"], [x], order)
    np.testing.assert_array_equal(got, neighbour_reference(x))


def test_a_missing_barrier_is_caught_by_one_of_the_orders(kernels):
    x = np.arange(2 * N, dtype=np.float32) + 1
    right = [np.array_equal(kernels.run(kernels.ids["racy"], [x], order)[0], neighbour_reference(x))
             for order in emu.ORDERS]
    assert False in right, right


def test_blocks_relying_on_each_others_order_are_caught_by_one_of_the_orders(kernels):
    x = np.ones(3 * N, dtype=np.float32)
    want = np.repeat(np.arange(1, 4, dtype=np.float32), N)  # what in-order blocks would give
    right = [np.array_equal(kernels.run(kernels.ids["chained"], [x], order)[0], want) for order in emu.ORDERS]
    assert right == [True, False], right


@pytest.mark.parametrize("name", ["past_end", "before_start"])
def test_a_write_outside_the_output_fails_the_run(kernels, name):
    with pytest.raises(AssertionError, match=r"wrote outside its output buffer 0"):
        kernels.run(kernels.ids[name], [np.ones(N, np.float32)])


def test_an_unwritten_output_element_is_garbage(kernels):
    (got,) = kernels.run(kernels.ids["partial"], [np.ones(N, np.float32)])
    assert (got[:-1] == 1).all() and got[-1:].view(np.uint8).tolist() == [emu.GARBAGE] * 4


def test_a_write_to_an_input_fails_the_run(kernels):
    with pytest.raises(AssertionError, match=r"wrote to its input 0"):
        kernels.run(kernels.ids["writes_input"], [np.ones(N, np.float32)])


def test_a_read_past_an_input_gets_garbage(kernels):
    (got,) = kernels.run(kernels.ids["reads_past_input"], [np.ones(N, np.float32)])
    assert (got[:-1] == 1).all() and got[-1:].view(np.uint8).tolist() == [emu.GARBAGE] * 4

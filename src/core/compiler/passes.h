// Graph-to-graph compiler passes, each a small named function that can be run and tested alone.
// Every pass keeps the parameters (in order) and the outputs' types; subgraphs of control ops are
// optimised when they are compiled (with the parent), not by these functions.
#pragma once
#include <string>
#include <vector>

#include "core/graph.h"

namespace xjax {

// Checks that g is well formed: operands precede their users, every node's types are what its
// rule infers, parameters are numbered in order, outputs exist; recursively for subgraphs.
// Throws ValueError("[verify] ...").
void verify(const Graph& g);
// Removes nodes whose values reach no output (effects, and control ops holding effects, stay).
Graph eliminate_dead_code(const Graph& g);
// Merges identical nodes (same op, operands and attributes): hash-consing (not `empty` buffers).
Graph eliminate_common_subexpressions(const Graph& g);
// Evaluates elementwise, broadcast, reshape and reduction nodes whose operands are all constants;
// splat operands give splat results of any size, other results up to kFoldLimit elements.
Graph fold_constants(const Graph& g);
// Algebraic identities: x*1, x+0, x-0, x/1, neg(neg x), integer_pow(x, 1), convert to the same
// dtype, reshape/transpose/broadcast to the same shape, reshape of reshape, transpose of
// transpose, transpose of a dot_general swapping its free dims -> the dot with swapped operands,
// broadcast of broadcast, x + dot(a, b) of float matrices -> dot_general_add(a, b, x),
// size-preserving broadcast -> reshape, select_n with equal
// cases or a constant selector, reductions over no axes.
Graph simplify(const Graph& g);
// Dot strength reduction: a dot_general computing a batch (of 2 or more) of dot products, in
// float32/float64, becomes reduce_sum(mul) of broadcasts, which fusion runs as one pass instead of
// one tiny matrix product per batch element.
Graph reduce_small_dots(const Graph& g);

// Loop packing: a while loop's carries of one type whose new values every lane computes alike
// (at least 4: a scan over a tuple of scalars, its residuals, its cotangents) become one carried
// array with the lanes last, computed by array ops over all lanes (pack_carries.cpp).
Graph pack_loop_carries(const Graph& g);

// Contraction: a float32/float64 multiply read only by an add or a subtract (directly or through a
// negation read only there) becomes one fused multiply-add with the other operand, as XLA's CPU and
// GPU code contracts them (LLVM's fp-contract=fast: a multiply of one use; of two candidates, the
// first operand's), so that jitted programs give JAX's bits (contract.cpp). Eager ops, one per
// program, never meet it, as JAX's eager ops do not.
Graph contract_multiply_adds(const Graph& g);

// The number of times each node's values are read (operands anywhere, and the graph's outputs).
std::vector<int> use_counts(const Graph& g);

// Runs every op that does not take float8 values itself (ops/float8_ops.h) in float32: converts
// its float8 operands up and its float8 results back (widen_float8.cpp). Not an optimisation: the
// kernels need it, so compile() runs it first whatever the passes asked for.
Graph widen_float8(const Graph& g);

constexpr int64_t kFoldLimit = 1 << 14;

// The graph passes by name ("verify", "widen_float8", "pack_loops", "simplify", "dot_reduce", "fold", "cse", "dce",
// "contract"), in the order given.
Graph run_passes(const Graph& g, const std::vector<std::string>& passes);
// What compile() runs by default.
const std::vector<std::string>& default_passes();

// A while loop counted by an int32 carry: its condition is `carried[counter] < bound` (what scan
// and fori_loop lower to). The plan keeps it on the loop's step, and the executor compares the
// counter itself instead of running the condition's plan every iteration.
struct CountedLoop {
  int counter = -1;  // the carried value that counts; -1: the condition is something else
  int32_t bound = 0;
  bool found() const { return counter >= 0; }
};
// Recognises a counted loop from its (optimised) condition graph (counted_loop.cpp).
CountedLoop recognize_counted_loop(const Graph& cond);

// True when a node has effects: an Effect op, or a control op whose subgraphs hold one.
bool has_effects(const Node& n);

// Copies nodes of a source graph into a new one, remapping operands (the passes' common tool).
class Rewriter {
 public:
  explicit Rewriter(const Graph& src) : src_(src), map_(src.nodes().size()) {}
  // The new value standing for an old one.
  ValueRef get(ValueRef old) const { return map_[old.node][old.index]; }
  // The old node's operands, remapped.
  std::vector<ValueRef> inputs(int old_node) const;
  // Copies old node i (operands remapped) and maps its results to the copy.
  void copy(int i);
  // Maps old node i's results to existing new values.
  void replace(int i, std::vector<ValueRef> values) { map_[i] = std::move(values); }
  Graph& dst() { return dst_; }
  // Sets the outputs (remapped) and returns the new graph.
  Graph finish();

 private:
  const Graph& src_;
  Graph dst_;
  std::vector<std::vector<ValueRef>> map_;
};

}  // namespace xjax

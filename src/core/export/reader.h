// The reader's parts (reader.cpp: header, tables, weights, functions; read_graph.cpp: graphs).
#pragma once
#include <vector>

#include "core/export/cursor.h"

namespace xjax::xjx {

// The op and dtype names of a file, resolved.
struct Tables {
  std::vector<OpId> ops;
  std::vector<DType> dtypes;
};

// A type: dtype index, rank (<= kMaxRank), dimensions (>= 0), of at most max_bytes.
TypeInfo read_type(Cursor& c, const Tables& t, int64_t max_bytes);

// The graph list. Each graph is rebuilt with Graph::add, so the ops' shape rules check every node;
// the stored result types must be what the rules infer. Subgraph indices must be smaller than their
// user's and used once; nesting is at most kMaxSubgraphDepth deep; the module's constants need at
// most options.max_array_bytes in all.
std::vector<std::shared_ptr<const Graph>> read_graphs(Cursor& c, const Tables& t, const ReadOptions& options);

}  // namespace xjax::xjx

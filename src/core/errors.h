// Error types that cross into Python as TypeError / ValueError / NotImplementedError; messages start with the API name.
#pragma once
#include <stdexcept>
#include <string>

namespace xjax {

struct TypeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};
// std::invalid_argument itself maps to ValueError.
using ValueError = std::invalid_argument;
// A feature the core does not have yet (NotImplementedError): never a wrong answer instead.
struct NotImplementedError : std::logic_error {
  using std::logic_error::logic_error;
};

}  // namespace xjax

// The key functions of the public exception types (include/xjax/errors.h): their type information
// is emitted here once, and exported by the shared library, so that a program catches the same
// type the library throws.
#include "xjax/errors.h"

namespace xjax {
inline namespace v1 {

FormatError::~FormatError() = default;
ArgumentError::~ArgumentError() = default;

}  // namespace v1
}  // namespace xjax

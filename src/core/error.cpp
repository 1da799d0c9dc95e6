#include "core/check.h"

namespace stride::detail {

void throw_internal(const char* cond, const char* file, int line, const std::string& msg) {
  throw InternalError(str_cat("internal error: ", cond, " failed at ", file, ":", line,
                              msg.empty() ? "" : " (", msg, msg.empty() ? "" : ")",
                              "; this is a bug in stride, please report it."));
}

}  // namespace stride::detail

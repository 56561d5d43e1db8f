// Helpers shared by the reference's .cpp files; not part of its API.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace kf::deepseek_v4::reference::internal {

// A violated precondition (a shape or an index that does not fit) is a bug in
// the caller: the golden stops at once, naming it, in every build type.
inline void check(bool ok, const char *what) {
  if (ok)
    return;
  std::fprintf(stderr, "deepseek_v4 reference: precondition failed: %s\n",
               what);
  std::abort();
}

// Elementary functions of an fp32 argument, evaluated in fp64 and rounded to
// fp32 once: the reference holds their results as fp32 tensors, and the
// golden gives the most accurate fp32 value it cheaply can.
inline float expF32(float x) {
  return static_cast<float>(std::exp(static_cast<double>(x)));
}

inline float sigmoidF32(float x) {
  return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x))));
}

} // namespace kf::deepseek_v4::reference::internal

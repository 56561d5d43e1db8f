//===- DotEmitters.cpp - The dot emitter of each ISA ----------------------===//

#include "isa/DotEmitters.h"

namespace kf::codegen {

std::unique_ptr<DotEmitter> createDotEmitter(KernelIsa isa) {
  switch (isa) {
  case KernelIsa::Scalar:
    return createScalarDotEmitter();
  case KernelIsa::Avx2:
    return createAvx2DotEmitter();
  case KernelIsa::Avx512Vnni:
    return createAvx512VnniDotEmitter();
  case KernelIsa::NeonDotprod:
    return createNeonDotprodDotEmitter();
  }
  return nullptr;
}

} // namespace kf::codegen

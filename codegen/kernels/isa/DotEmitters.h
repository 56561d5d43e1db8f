//===- DotEmitters.h - The per-ISA dot emitters, for the factory ----------===//

#ifndef KF_CODEGEN_KERNELS_ISA_DOTEMITTERS_H
#define KF_CODEGEN_KERNELS_ISA_DOTEMITTERS_H

#include "kf/Codegen/Emitters.h"

namespace kf::codegen {

std::unique_ptr<DotEmitter> createScalarDotEmitter();
std::unique_ptr<DotEmitter> createAvx2DotEmitter();
std::unique_ptr<DotEmitter> createAvx512VnniDotEmitter();
std::unique_ptr<DotEmitter> createNeonDotprodDotEmitter();

} // namespace kf::codegen

#endif // KF_CODEGEN_KERNELS_ISA_DOTEMITTERS_H

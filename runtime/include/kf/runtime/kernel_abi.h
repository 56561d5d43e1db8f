/* The C ABI of compiled kernels (docs/codegen.md, "Kernel ABI"): the code
 * generator emits functions of these types, the runtime calls them. Plain C,
 * so that an object or shared library of kernels links with anything. */
#ifndef KF_RUNTIME_KERNEL_ABI_H
#define KF_RUNTIME_KERNEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Rows [n_begin, n_end) of y for m token columns:
 * y[j * ldy + n] = sum_k x[j][k] * w[n][k]. packed_w is the whole weight in
 * the kernel's packed layout, packed_x m columns of packed activations, or,
 * for a kernel that quantizes its activations (quantize = fused), m rows of
 * K floats, K apart. n_begin is a multiple of the kernel's row group; n_end
 * is one too, or N. */
typedef void (*kf_matmul_kernel_fn)(const void *packedW, const void *packedX,
                                    float *y, int64_t ldy, int64_t m,
                                    int64_t nBegin, int64_t nEnd);

/* Quantizes m columns of K floats, ldx apart in x, into packed activations
 * (per column, column after column: K / 32 blocks of 48 bytes for Q8_0,
 * K / 256 of 292 for Q8_K, 64-byte blocks of bf16 or f32 for the float
 * kernels; docs/codegen.md, "Activations"). */
typedef void (*kf_quantize_kernel_fn)(const float *x, int64_t ldx,
                                      void *packedX, int64_t m);

#ifdef __cplusplus
}
#endif

#endif /* KF_RUNTIME_KERNEL_ABI_H */

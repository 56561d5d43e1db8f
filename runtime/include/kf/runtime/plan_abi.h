/* The plan ABI (docs/engine.md, "Plan ABI"): what a compiled plan's kernels
 * are to the runtime that runs them. The compiler emits step kernels of this
 * type and records the version it emitted them for; the runtime refuses a
 * plan of another version. Plain C, so that a shared object of kernels links
 * with anything; its names are C's (the NOLINT lines exempt them from the
 * C++ naming rule). */
#ifndef KF_RUNTIME_PLAN_ABI_H
#define KF_RUNTIME_PLAN_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a type or a meaning below changes. */
#define KF_PLAN_ABI_VERSION 2

/* One step of a plan on work items [begin, end) of its run over m token rows.
 * operands are the step's addresses in the order its kernel was compiled for
 * (activations in the arena, packed weights, the run's inputs and outputs);
 * every size the kernel needs but m is compiled into it. A step kernel is a
 * pure function of its operands: two calls on disjoint item ranges touch
 * disjoint output bytes, so the runtime may split the items between threads
 * any way it likes and the result does not depend on how. */
typedef void (*kf_step_fn)(void *const *operands, int64_t m, int64_t begin,
                           int64_t end);

/* Where an operand's address comes from. */
/* NOLINTNEXTLINE(readability-identifier-naming) */
enum kf_operand_kind {
  KF_OPERAND_ARENA = 0,  /* the activation arena, at a byte offset */
  KF_OPERAND_WEIGHT = 1, /* a packed weight of the plan's table */
  KF_OPERAND_INPUT = 2,  /* a buffer of the run: tokens, positions, logits */
  /* The model's state that outlives a run (the KV caches), shared by the
   * plans of one model, at a byte offset: addressed by token position, so
   * that nothing reads what the sequence has not written. */
  KF_OPERAND_STATE = 3
};

/* How the runtime shares a step's work items between its threads. */
/* NOLINTNEXTLINE(readability-identifier-naming) */
enum kf_work_split {
  /* Contiguous blocks, one per thread, of whole groups of items: for items
   * of equal cost (rows of a norm, row groups of a matmul). */
  KF_SPLIT_BLOCKS = 0,
  /* Batches of `group` items claimed from a shared counter: for items of
   * uneven cost, so that no thread idles while another has several left. */
  KF_SPLIT_CLAIM = 1,
  /* All items on one thread: bookkeeping too small to share. */
  KF_SPLIT_SINGLE = 2
};

/* What a step calls. */
/* NOLINTNEXTLINE(readability-identifier-naming) */
enum kf_step_kind {
  /* A step kernel (kf_step_fn) on the step's work items. */
  KF_STEP_KERNEL = 0,
  /* A routed expert matmul: the runtime groups the [T, k] slots by expert
   * (experts ascending, each one's slots ascending), gathers each expert's
   * packed activation rows side by side and calls a matmul kernel of
   * kernel_abi.h (kf_matmul_kernel_fn) on work items of (expert, block of
   * output rows) that the threads claim, scattering the rows back to their
   * slots. Memory and scheduling only: the arithmetic is the kernel's. */
  KF_STEP_EXPERTS = 1
};

/* A compiled artifact (a shared object) exports its step kernels by their
 * names in the plan and the plan's bytes (kf/runtime/plan_file.h) as an
 * array of kf_plan_size bytes at kf_plan_data. */
#define KF_PLAN_DATA_SYMBOL "kf_plan_data"
#define KF_PLAN_SIZE_SYMBOL "kf_plan_size"

#ifdef __cplusplus
}
#endif

#endif /* KF_RUNTIME_PLAN_ABI_H */

/* Runs AArch64 matmul kernels under QEMU and compares them with the outputs
 * the host computed with kf::dot (AArch64CrossTest.cpp, which compiles this
 * file with the kernels' object and writes the cases file): bit for bit where
 * the tolerance is 0 (the int8 family), else within it (the float family).
 * Plain C: the cross sysroot has libc but no libstdc++. Kernels are found by
 * name with dlsym (the executable is linked with -rdynamic).
 *
 * Cases file, little-endian:
 *   u32 kernels; per kernel:
 *     u32 name bytes, name; u64 weight bytes, weights; u64 activation bytes,
 *     activations; u32 runs; per run:
 *       i64 m, ldy, nBegin, nEnd; f32 sentinel; f32 y[m * ldy] expected;
 *       f32 tolerance[m * ldy]
 *   y starts as the sentinel everywhere, so the expected y also says what the
 *   kernel must leave untouched.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*MatmulFn)(const void *packedW, const void *x, float *y,
                         int64_t ldy, int64_t m, int64_t nBegin, int64_t nEnd);

static FILE *cases;

static void readOrDie(void *dst, size_t bytes) {
  if (fread(dst, 1, bytes, cases) != bytes) {
    fprintf(stderr, "driver: the cases file is truncated\n");
    exit(2);
  }
}

static uint32_t readU32(void) {
  uint32_t v;
  readOrDie(&v, sizeof v);
  return v;
}

static uint64_t readU64(void) {
  uint64_t v;
  readOrDie(&v, sizeof v);
  return v;
}

static void *allocateOrDie(uint64_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "driver: out of memory\n");
    exit(2);
  }
  return p;
}

static void *readBlob(uint64_t bytes) {
  void *p = allocateOrDie(bytes);
  readOrDie(p, bytes);
  return p;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CASES\n", argv[0]);
    return 2;
  }
  cases = fopen(argv[1], "rb");
  if (!cases) {
    fprintf(stderr, "driver: cannot open %s\n", argv[1]);
    return 2;
  }
  unsigned mismatches = 0, runs = 0;
  uint32_t kernels = readU32();
  for (uint32_t i = 0; i < kernels; ++i) {
    uint32_t nameBytes = readU32();
    char *name = allocateOrDie(nameBytes + 1ull);
    readOrDie(name, nameBytes);
    name[nameBytes] = 0;
    MatmulFn fn = (MatmulFn)dlsym(RTLD_DEFAULT, name);
    if (!fn) {
      fprintf(stderr, "driver: no kernel %s\n", name);
      return 2;
    }
    void *w = readBlob(readU64());
    void *x = readBlob(readU64());
    for (uint32_t r = 0, numRuns = readU32(); r < numRuns; ++r, ++runs) {
      int64_t shape[4]; /* m, ldy, nBegin, nEnd */
      readOrDie(shape, sizeof shape);
      float sentinel;
      readOrDie(&sentinel, sizeof sentinel);
      const uint64_t count = (uint64_t)(shape[0] * shape[1]);
      float *want = readBlob(count * sizeof(float));
      float *tolerance = readBlob(count * sizeof(float));
      float *y = allocateOrDie(count * sizeof(float));
      for (uint64_t e = 0; e < count; ++e)
        y[e] = sentinel;
      fn(w, x, y, shape[1], shape[0], shape[2], shape[3]);
      for (uint64_t e = 0; e < count; ++e) {
        uint32_t got, expected;
        memcpy(&got, &y[e], 4);
        memcpy(&expected, &want[e], 4);
        const float error = y[e] > want[e] ? y[e] - want[e] : want[e] - y[e];
        const int close = tolerance[e] > 0 && error <= tolerance[e];
        if (got != expected && !close && ++mismatches <= 10)
          printf("MISMATCH %s m=%lld rows [%lld, %lld): y[%llu][%llu] = "
                 "%.9g (0x%08x), expected %.9g (0x%08x)\n",
                 name, (long long)shape[0], (long long)shape[2],
                 (long long)shape[3], (unsigned long long)(e / shape[1]),
                 (unsigned long long)(e % shape[1]), y[e], got, want[e],
                 expected);
      }
      free(want);
      free(tolerance);
      free(y);
    }
    free(w);
    free(x);
    free(name);
  }
  if (fgetc(cases) != EOF) {
    fprintf(stderr, "driver: trailing bytes in the cases file\n");
    return 2;
  }
  if (mismatches) {
    printf("FAILED: %u mismatches\n", mismatches);
    return 1;
  }
  printf("OK: %u kernels, %u runs\n", kernels, runs);
  return 0;
}

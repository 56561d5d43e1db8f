// What the packing tests share: random file rows of a format, and a pack that
// checks the packed weights decode and unpack to the file's.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "QuantTestUtil.h"
#include "kf/runtime/packing.h"

#include "gtest/gtest.h"

namespace kf::testing {

inline std::vector<uint8_t> randomRows(Format f, int64_t n, int64_t k,
                                       uint32_t seed) {
  std::vector<float> x = gaussian(static_cast<size_t>(n * k), seed);
  return quantized(f, x);
}

// Packs the n x k `file` rows to `layout`, checks that the packed weights
// decode as the file's rows decode (bit for bit) and unpack to the file's
// bytes, and returns them.
inline std::vector<uint8_t> packAndCheck(const PackedLayout &layout,
                                         const std::vector<uint8_t> &file,
                                         int64_t n, int64_t k) {
  absl::StatusOr<std::vector<uint8_t>> packed = packWeights(layout, file, n, k);
  EXPECT_TRUE(packed.ok()) << packed.status();
  if (!packed.ok())
    return {};
  std::vector<float> want = dequantized(layout.format, file, n * k);
  std::vector<float> got(n * k);
  EXPECT_TRUE(dequantizePacked(layout, *packed, n, k, got).ok());
  for (int64_t i = 0; i < n * k; ++i)
    if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(want[i])) {
      ADD_FAILURE() << "element " << i << ": " << got[i] << " decoded, "
                    << want[i] << " expected";
      break;
    }
  std::vector<uint8_t> back(file.size());
  EXPECT_TRUE(unpackWeights(layout, *packed, n, k, back).ok());
  EXPECT_EQ(back, file);
  return *std::move(packed);
}

} // namespace kf::testing

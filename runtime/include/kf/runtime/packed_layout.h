// The packed layouts compiled matmul kernels read (docs/codegen.md, "Packed
// weight layouts" and "Activations"), as plain constexpr data: the runtime
// packs to them (kf/runtime/packing.h) and the code generators read the same
// description without linking the runtime.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kf/runtime/format.h"

namespace kf {

// How the int8 lanes of a packed weight hold a weight value w.
enum class LaneEncoding : uint8_t {
  // x86: vpdpbusd and vpmaddubsw multiply unsigned by signed bytes, so Q8_0
  // lanes hold w + 128 (0..255); Q4_0 nibbles are already unsigned (w + 8).
  Unsigned,
  // NEON: sdot multiplies signed by signed, so Q8_0 lanes hold w itself; Q4_0
  // nibbles stay as stored (the kernel subtracts 8 after the split).
  Signed,
};

// Rows are grouped by `rows` (the last group padded with zero rows); for each
// group and each block of 32 weights: the `rows` scales as in the file (fp16
// for Q8_0 and Q4_0, the E8M0 byte for MXFP4), then the weights as K-groups of
// 4 lanes for every row, [g][r][4], so that one load of 4 * rows bytes holds 4
// consecutive weights of every row of the group. Q8_0 has 8 K-groups of 4
// bytes; Q4_0 and MXFP4 have 4, each byte holding the file's nibble pair (low
// nibble element 4g + i, high nibble element 16 + 4g + i): Q4_0's nibbles are
// w + 8, MXFP4's are E2M1 codes, which the kernel looks up in kMxfp4Values.
//
// The K-quants (Q4_K, Q5_K, Q6_K) pack the same way per super-block of 256
// weights: a header per row (the file's scale fields, each field's rows side
// by side so that one load of `rows` bytes or halves holds it for every row of
// the group), then the file's weight bytes as [g][r][4] K-groups, in file
// order; the bytes per weight are the file's:
//  * Q4_K: R fp16 d, R fp16 dmin, the 12 packed 6-bit scale/min bytes as
//    [12][R], then 32 K-groups of nibble pairs (byte 4g + i: low nibble
//    element 64(g / 8) + 4(g % 8) + i, high nibble that + 32);
//  * Q5_K: Q4_K's header, then the 8 K-groups of qh (bit c of byte l: the
//    fifth bit of element 32c + l), then Q4_K's 32 K-groups of nibbles;
//  * Q6_K: R fp16 d, the 16 int8 scales as [16][R], then the 32 K-groups of
//    ql and the 16 of qh, as in the file.
//
// The float formats (BF16, F32) have no scales: a block is 64 bytes per row,
// 16 K-groups of 4 bytes [g][r][4] holding 2 bf16 (elements 2g, 2g + 1, the
// pair vdpbf16ps and bfdot multiply) or 1 f32 (element g), so a block is 32
// bf16 or 16 f32 elements. K need not be a multiple of it: the last block of
// a row is padded with zeros (packedKBlocks).
//
// The IQ grid formats keep per 8 weights of a row one index into a grid of
// 8-byte entries, which the kernel looks up (a gather from the grid, held in
// L1): their packed blocks put each field's rows side by side, so that one
// load of `rows` bytes holds a grid slot's indices for every row of the group
// (below, "IQ grid formats").
//
// Kernelforge's own formats, FRACTAL64 and VQ3_64 (docs/formats/), pack per
// block of 64 weights the file's bytes per row, rearranged into K-groups
// [g][r][4] (below, "Kernelforge's own formats").
//
// A layout may also transcode the file's weight codes into codes a kernel
// decodes with shifts instead of table lookups (WeightCoding; "IQ1 ternary
// layouts" below): the values stay the file's exactly, the bytes differ.
enum class WeightCoding : uint8_t {
  File,     // the file's codes (grid indices, nibbles, ...) as stored
  Ternary,  // IQ1_S, IQ1_M: each weight's grid value in {-1, 0, 1} as a
            // 2-bit code instead of an 11-bit grid index per 8 weights
  CodeBook, // IQ2_XXS: the grid indices in the order a code book lookup
            // reads them and the signs as its lanes' masks ("IQ2_XXS code
            // book layouts" below)
};

struct PackedLayout {
  Format format = Format::Q8_0; // Q8_0, Q4_0, MXFP4, Q4_K, Q5_K, Q6_K, IQ2_XXS,
                                // IQ1_S, IQ1_M, FRACTAL64, VQ3_64, BF16 or F32
  int rows = 16;                // rows per interleaved group: 1, 4, 8 or 16
  LaneEncoding encoding = LaneEncoding::Unsigned;
  WeightCoding coding = WeightCoding::File;

  friend bool operator==(const PackedLayout &, const PackedLayout &) = default;
};

// Whether `format` has a layout of `coding` (every format has File's).
constexpr bool hasWeightCoding(Format format, WeightCoding coding) {
  switch (coding) {
  case WeightCoding::File:
    return true;
  case WeightCoding::Ternary:
    return format == Format::IQ1_S || format == Format::IQ1_M;
  case WeightCoding::CodeBook:
    return format == Format::IQ2_XXS;
  }
  return false;
}

inline constexpr WeightCoding kWeightCodings[] = {
    WeightCoding::File, WeightCoding::Ternary, WeightCoding::CodeBook};
// A coding's name in layout and kernel names, tuning files (coding=...) and
// tools, and the list of them for messages.
constexpr std::string_view weightCodingName(WeightCoding coding) {
  switch (coding) {
  case WeightCoding::File:
    return "file";
  case WeightCoding::Ternary:
    return "ternary";
  case WeightCoding::CodeBook:
    return "codebook";
  }
  return "";
}
inline constexpr std::string_view kWeightCodingNames =
    "file, ternary or codebook";
// `separator` and the coding's name ("_ternary"), or nothing for the file's
// codes: the suffix of layout and kernel names.
inline std::string weightCodingSuffix(WeightCoding coding,
                                      char separator = '_') {
  if (coding == WeightCoding::File)
    return "";
  std::string suffix(1, separator);
  suffix += weightCodingName(coding);
  return suffix;
}
// The coding named `name`, if one is.
constexpr std::optional<WeightCoding> weightCodingNamed(std::string_view name) {
  for (WeightCoding coding : kWeightCodings)
    if (weightCodingName(coding) == name)
      return coding;
  return std::nullopt;
}

// A layout's full name, as plans record it: the format, "_r" and the rows,
// the coding's suffix, and "_signed" for signed lanes ("q8_0_r16",
// "iq1_s_r16_ternary", "q8_0_r16_signed" for NEON's).
inline std::string packedLayoutName(const PackedLayout &layout) {
  std::string name(formatInfo(layout.format).name);
  name +=
      "_r" + std::to_string(layout.rows) + weightCodingSuffix(layout.coding);
  if (layout.encoding == LaneEncoding::Signed)
    name += "_signed";
  return name;
}

// The layout packedLayoutName gives `name`, if any (the rows are checked
// to be a positive number, not that the runtime packs them: checkLayout).
inline std::optional<PackedLayout> packedLayoutNamed(std::string_view name) {
  PackedLayout layout;
  auto consumeSuffix = [&](std::string_view suffix) {
    if (suffix.empty() || !name.ends_with(suffix))
      return false;
    name.remove_suffix(suffix.size());
    return true;
  };
  layout.encoding =
      consumeSuffix("_signed") ? LaneEncoding::Signed : LaneEncoding::Unsigned;
  for (WeightCoding coding : kWeightCodings)
    if (consumeSuffix(weightCodingSuffix(coding)))
      layout.coding = coding;
  // A format's name may contain '_' (iq2_xxs): split at the last "_r".
  size_t split = name.rfind("_r");
  if (split == std::string_view::npos || split + 2 == name.size())
    return std::nullopt;
  int rows = 0;
  for (char c : name.substr(split + 2)) {
    if (c < '0' || c > '9' || rows > 1 << 20)
      return std::nullopt;
    rows = 10 * rows + (c - '0');
  }
  std::optional<Format> format = formatFromName(name.substr(0, split));
  if (!format || rows < 1)
    return std::nullopt;
  layout.format = *format;
  layout.rows = rows;
  return layout;
}

// The float formats, whose kernels multiply and add in fp32 (no int8 lanes,
// no scales).
constexpr bool isFloatFormat(Format format) {
  return format == Format::BF16 || format == Format::F32;
}

// Bytes of one row's weights in a float block: 16 K-groups of 4 bytes.
inline constexpr int64_t kFloatBlockRowBytes = 64;

// What a lane holds for weight w: w + laneOffset (128 for unsigned Q8_0, 8
// for Q4_0, 0 for signed Q8_0). MXFP4's lanes hold codes, not offset weights.
constexpr int laneOffset(const PackedLayout &layout) {
  if (layout.format == Format::Q4_0)
    return 8;
  return layout.encoding == LaneEncoding::Unsigned ? 128 : 0;
}

// --- IQ grid formats ---------------------------------------------------------
//
// IQ2_XXS: per super-block of 256 weights and row 70 bytes (the file's 66 and
// 4 more): R fp16 d; the eight 4-bit group scales ls as [4][R] bytes (byte p:
// group 2p in the low nibble, 2p + 1 in the high one); then for each grid
// slot s = 4g + l of 8 weights (32 of them), the grid indices [R] and the
// sign masks [R]. A sign mask is ksigns_iq2xs of the file's 7-bit sign index,
// its parity bit expanded at load time (bit j negates weight j), so that the
// masks of 8 rows are one 64-bit lane mask for the kernel's 64 lanes.

constexpr bool isIqGridFormat(Format format) {
  return format == Format::IQ2_XXS || format == Format::IQ1_S ||
         format == Format::IQ1_M;
}

// Bytes of one row's block in its packed layout: the file's, but for IQ2_XXS,
// whose sign indices are expanded to masks (in either coding), the IQ1 ternary
// layouts (70 and 76 bytes against the file's 50 and 56) and the float
// formats' 64.
constexpr int64_t packedRowBlockBytes(const PackedLayout &layout) {
  if (isFloatFormat(layout.format))
    return kFloatBlockRowBytes;
  if (layout.coding == WeightCoding::Ternary)
    return layout.format == Format::IQ1_M ? 76 : 70;
  if (layout.format == Format::IQ2_XXS)
    return 70;
  return formatInfo(layout.format).blockBytes;
}

// Where a row's field lies in a packed IQ2_XXS block: its fp16 d, the scale
// byte p (groups 2p and 2p + 1), and the grid index and sign mask of slot s.
constexpr int64_t iq2xxsDOffset(int r) { return 2 * r; }
constexpr int64_t iq2xxsScaleOffset(const PackedLayout &layout, int64_t p,
                                    int r) {
  return (2 + p) * layout.rows + r;
}
constexpr int64_t iq2xxsIndexOffset(const PackedLayout &layout, int64_t s,
                                    int r) {
  return (6 + 2 * s) * layout.rows + r;
}
constexpr int64_t iq2xxsSignsOffset(const PackedLayout &layout, int64_t s,
                                    int r) {
  return (7 + 2 * s) * layout.rows + r;
}

// --- IQ2_XXS code book layouts ----------------------------------------------
//
// The same 70 bytes per super-block and row, the same header (fp16 d [R], the
// scales [4][R] at iq2xxsDOffset and iq2xxsScaleOffset), but the slots'
// fields rearranged for the code book lookup of AVX-512 VBMI kernels
// (docs/codegen.md, "IQ grid formats"), which decodes a sub-block's 4 slots of
// 16 rows at once. Per sub-block g, 8R bytes:
//  * the 4R grid indices in row-pair order: byte 8(r / 2) + 2l + r % 2 holds
//    slot 4g + l's index of row r (R = 1: byte l), so that for R = 16 qword
//    q of the 64 holds rows 2q and 2q + 1 of every slot, the order the lookup
//    reads them in, with no permute;
//  * the 32R sign bits as the lanes' masks: bit (2l + h) 4R + 4r + t (of the
//    4R bytes, little-endian) negates weight 4h + t of slot 4g + l of row r,
//    so that for R = 16 each slot's K-group h has its 64-bit mask, lane 4r + t
//    at bit 4r + t, which one kmovq loads from memory.
// The signs are ksigns_iq2xs's masks as in the grid layout, transposed.
constexpr int64_t iq2xxsCodebookStepOffset(const PackedLayout &layout,
                                           int64_t g) {
  return (6 + 8 * g) * layout.rows;
}
constexpr int64_t iq2xxsCodebookIndexOffset(const PackedLayout &layout,
                                            int64_t s, int r) {
  const int64_t l = s % 4;
  return iq2xxsCodebookStepOffset(layout, s / 4) +
         (layout.rows == 1 ? l : 8 * (r / 2) + 2 * l + r % 2);
}
// The bit, counted from the block's first byte, that negates weight j (0..7)
// of slot s of row r.
constexpr int64_t iq2xxsCodebookSignBit(const PackedLayout &layout, int64_t s,
                                        int r, int j) {
  return 8 * (iq2xxsCodebookStepOffset(layout, s / 4) + 4 * layout.rows) +
         (2 * (s % 4) + j / 4) * 4 * layout.rows + 4 * r + j % 4;
}

// IQ1_S: per super-block and row 50 bytes, the file's, fields side by side:
// R fp16 d; the eight u16 qh as [8][R] (group g's: four 3-bit high index
// parts, bits 3l..3l + 2; the 3-bit scale, bits 12..14; the delta's sign,
// bit 15); then the low index bytes qs as [32][R], slot s = 4g + l.
constexpr int64_t iq1sDOffset(int r) { return 2 * r; }
constexpr int64_t iq1sQhOffset(const PackedLayout &layout, int64_t g, int r) {
  return 2 * layout.rows + 2 * (g * layout.rows + r);
}
constexpr int64_t iq1sIndexOffset(const PackedLayout &layout, int64_t s,
                                  int r) {
  return (18 + s) * layout.rows + r;
}

// IQ1_M: per super-block and row 56 bytes, the file's, fields side by side:
// the four u16 scale words as [4][R] (group g's two 3-bit scales in bits
// 6(g % 2)..+5 of word g / 2, the fp16 d in their top nibbles); the 16 qh
// bytes as [16][R] (slot 2i + h's 3 high index bits and delta sign in nibble
// h of byte i); then the low index bytes qs as [32][R].
constexpr int64_t iq1mScalesOffset(const PackedLayout &layout, int64_t p,
                                   int r) {
  return 2 * (p * layout.rows + r);
}
constexpr int64_t iq1mQhOffset(const PackedLayout &layout, int64_t i, int r) {
  return (8 + i) * layout.rows + r;
}
constexpr int64_t iq1mIndexOffset(const PackedLayout &layout, int64_t s,
                                  int r) {
  return (24 + s) * layout.rows + r;
}

// --- IQ1 ternary layouts -----------------------------------------------------
//
// IQ1_S's and IQ1_M's grid entries hold 8 values v in {-1, 0, 1}; looking one
// up per 8 weights (a gather from a 16 KiB table) bounds their kernels by
// the gathers, far below the DRAM roofline (docs/codegen.md, "IQ1 ternary
// layouts" under "Packed weight layouts"). The ternary layouts
// store instead each weight's code c = v + 1 in 2 bits, which a kernel turns
// into lanes with a shift and a mask: 40 % more bytes than the file (IQ1_S
// 70 per super-block and row against 50, IQ1_M 76 against 56), and decode
// work like Q4_0's. The scales stay the file's values, the delta signs too
// but for IQ1_M's, which are stored as its slots' row masks:
//  * IQ1_S: R fp16 d; a u32 per row [R], group g's 3-bit scale in bits
//    3g..3g + 2 and its delta's sign in bit 24 + g (set: the delta is
//    negative); then the codes;
//  * IQ1_M: the file's four u16 scale words as [4][R] (as in its grid
//    layout); the delta bits, 4R bytes, slot s of row r's in bit sR + r
//    (set: the delta is positive), so that a slot's R bits are the mask of
//    its rows' lanes (on AVX-512 one kmovw, where a per-row word needs a
//    test per slot); then the codes.
// The codes are 16 K-groups [t][r][4] (after the header): bits 2j..2j + 1 of
// byte i of K-group t hold the code of weight 16t + 4j + i, so that one
// shift and mask of a K-group gives 4 consecutive weights of every row (as
// FRACTAL64's low index bits do). A padding row has d 0 and every code 1
// (v = 0).
constexpr int64_t iq1TernaryHeaderBytes(Format format) {
  return format == Format::IQ1_M ? 12 : 6;
}
// IQ1_S's fp16 d and scale-and-sign word; IQ1_M's delta bits (its scale
// words are at iq1mScalesOffset), and the bit of slot s of row r in them.
constexpr int64_t iq1sTernaryDOffset(int r) { return 2 * r; }
constexpr int64_t iq1sTernaryScalesOffset(const PackedLayout &layout, int r) {
  return 2 * layout.rows + 4 * r;
}
constexpr int64_t iq1mTernaryDeltasOffset(const PackedLayout &layout) {
  return 8 * layout.rows;
}
constexpr int64_t iq1mTernaryDeltaBit(const PackedLayout &layout, int64_t s,
                                      int r) {
  return s * layout.rows + r;
}
// K-group t (0..15) of row r.
constexpr int64_t iq1TernaryCodesOffset(const PackedLayout &layout, int64_t t,
                                        int r) {
  return iq1TernaryHeaderBytes(layout.format) * layout.rows +
         (t * layout.rows + r) * 4;
}

// --- Kernelforge's own formats -----------------------------------------------
//
// FRACTAL64 and VQ3_64 pack per block of 64 weights and row the file's bytes
// (30 and 24), rearranged into K-groups [g][r][4] so that one load of 4 * R
// bytes gives a kernel a whole decode step for every row of the group (16
// weights of FRACTAL64, four codeword slots of VQ3_64). The bytes are codes,
// not offset weights, so both encodings share one layout and the names carry
// no suffix. All-zero bytes are a zero row (d = 0).
//
// FRACTAL64: R fp16 d; R u32 sub-scale words (the file's `scales`, nibble k
// the code u of weights 8k..8k + 7, s = 4 + u); then 6 K-groups [g][r][4]
// (packedKgroupOffset's, after a 6-byte header per row):
//  * g = t = 0..3, the low 2 index bits: bits 2j..2j + 1 of byte i hold
//    weight 16t + 4j + i's, so that the K-group holds weights 16t..16t + 15
//    (sub-blocks 2t and 2t + 1) of every row and one shift by 2j and mask by
//    3 gives 4 of them per row;
//  * g = 4 + q, q = 0, 1, the high (third) index bits: bit 4p + j of byte i
//    holds weight 16(2q + p) + 4j + i's, so that low K-group t's high bits
//    are nibble t % 2 of high K-group t / 2, in the same bit order.
// Weight w's index is low | high << 2 as in the file, its value
// d * float(s * kFractal64Levels[index]).
constexpr int64_t fractal64DOffset(int r) { return 2 * r; }
constexpr int64_t fractal64ScalesOffset(const PackedLayout &layout, int r) {
  return 2 * layout.rows + 4 * r;
}
// Low K-group t (0..3) and high K-group q (0, 1) of row r.
constexpr int64_t fractal64LowOffset(const PackedLayout &layout, int64_t t,
                                     int r) {
  return 6 * layout.rows + (t * layout.rows + r) * 4;
}
constexpr int64_t fractal64HighOffset(const PackedLayout &layout, int64_t q,
                                      int r) {
  return 22 * layout.rows + (q * layout.rows + r) * 4;
}
// Weight w (0..63) of row r: its low bits are bits fractal64LowShift(w) and
// the one above of byte fractal64LowOffset(layout, w / 16, r) + w % 4, its
// high bit is bit fractal64HighBit(w) of byte fractal64HighOffset(layout,
// w / 32, r) + w % 4.
constexpr int fractal64LowShift(int w) { return 2 * (w % 16 / 4); }
constexpr int fractal64HighBit(int w) { return 4 * (w / 16 % 2) + w % 16 / 4; }

// FRACTAL64's level of each 3-bit index (docs/formats/fractal64.md).
inline constexpr int8_t kFractal64Levels[8] = {-14, -8, -4, -1, 1, 4, 8, 14};

// VQ3_64: 6 K-groups [q][r][4] (packedKgroupOffset's, no header). Byte i of
// K-group q = 0..4 is slot 4q + i's byte; K-group 5 holds the rows' bytes of
// slots 20 and 21 side by side ([r][2]), then their fp16 d ([r], little-
// endian), so that one 16-row half-vector load gives the d's as the fp16
// conversion takes them, and the slot pairs widen to words (a row's pair in
// both halves of its word) in one permute. One K-group load holds four slots'
// bytes of every row of the group, and a row's block stays the file's 24
// bytes. A slot's byte holds its index in its low bits
// (vq3_64SlotIndexBits) and, in the bits above, sub-scale stream bits
// (vq3_64StreamBit).
constexpr int64_t vq3_64SlotOffset(const PackedLayout &layout, int t, int r) {
  if (t >= 20)
    return 20 * layout.rows + 2 * r + t - 20;
  return (t / 4 * layout.rows + r) * 4 + t % 4;
}
constexpr int64_t vq3_64DOffset(const PackedLayout &layout, int r) {
  return 22 * layout.rows + 2 * r;
}
// Slot t's index bits in its packed byte, from the file's byte. A book3 slot
// (t < 20) stores its sign (the file's bit 7) at bit 6, so that its low 7 bits
// index the book followed by its negation (one 128-entry lookup, vpermi2b,
// gives the signed value); a book2 slot keeps its 6 bits, its sign (bit 5)
// already above its 5-bit index. Bit 7 (book3) or bits 6 and 7 (book2) are the
// stream's.
constexpr uint8_t vq3_64SlotIndexBits(int t, uint8_t fileByte) {
  if (t >= 20)
    return fileByte & 0x3f;
  return static_cast<uint8_t>((fileByte & 0x3f) | (fileByte & 0x80) >> 1);
}
// The file's byte of slot t from its packed byte, stream bits left clear:
// vq3_64SlotIndexBits undone.
constexpr uint8_t vq3_64FileIndexBits(int t, uint8_t packedByte) {
  if (t >= 20)
    return packedByte & 0x3f;
  return static_cast<uint8_t>((packedByte & 0x3f) | (packedByte & 0x40) << 1);
}
// Where the packed bytes keep bit s (0..23) of the sub-scale stream, whose
// bits 3k .. 3k + 2 are u_k: bit i of u_k is in byte k % 4 of K-group i (k <
// 4), of K-group 3 + i (k >= 4, i < 2), and in slot 20 + k % 2 (bit 6 for u_4
// and u_5, bit 7 for u_6 and u_7). Each u's bits sit in one byte position of
// three K-groups (slots 20 and 21 widened to a word, their pair in both
// halves, standing for K-group 5), so that a kernel gathers four sub-scales
// at once: each K-group's spare bits moved to bit i of its bytes and or'ed,
// byte k % 4 of the result is u_k.
struct Vq3StreamBit {
  int slot; ///< 0..21
  int bit;  ///< 6 or 7
};
constexpr Vq3StreamBit vq3_64StreamBit(int s) {
  const int k = s / 3, i = s % 3, j = k % 4;
  if (k < 4)
    return {4 * i + j, 7};
  if (i < 2)
    return {12 + 4 * i + j, 7};
  return {20 + j % 2, j < 2 ? 6 : 7};
}

// The formats of this section (the private formats with a packed layout).
constexpr bool isPrivateFormat(Format format) {
  return format == Format::FRACTAL64 || format == Format::VQ3_64;
}

// Bytes of one packed block: `rows` x a row's block (the scales and the
// weights of every row of the group, in the file's bits per weight but for
// IQ2_XXS's sign masks).
constexpr int64_t packedBlockBytes(const PackedLayout &layout) {
  return layout.rows * packedRowBlockBytes(layout);
}

// Bytes of one row's scale fields in a packed block (the header): the file's
// scale field (fp16 d; MXFP4's E8M0 byte), a K-quant's d, dmin and sub-block
// scales, or FRACTAL64's d and sub-scale word. VQ3_64 has none: its d and
// sub-scale bits ride in the K-groups.
constexpr int64_t packedScaleBytes(Format format) {
  switch (format) {
  case Format::BF16:
  case Format::F32:
  case Format::VQ3_64:
    return 0;
  case Format::FRACTAL64:
    return 6;
  case Format::MXFP4:
    return 1;
  case Format::Q4_K:
  case Format::Q5_K:
    return 16;
  case Format::Q6_K:
    return 18;
  default:
    return 2;
  }
}

// Where the header starts in a file block (Q6_K's scales and d follow its
// weights); the weights are the other bytes, in file order.
constexpr int64_t fileScaleOffset(Format format) {
  return format == Format::Q6_K ? 192 : 0;
}

// Where header byte `j` (of the file's) of row `r` lies inside a packed block.
// The legacy formats keep each row's field whole; the K-quants put each
// field's rows side by side: Q4_K/Q5_K d [R], dmin [R], scale bytes [12][R];
// Q6_K d [R], scales [16][R]; FRACTAL64 d [R], its u32 sub-scale word [R].
constexpr int64_t packedScaleOffset(const PackedLayout &layout, int64_t j,
                                    int r) {
  const int64_t rows = layout.rows;
  switch (layout.format) {
  case Format::FRACTAL64:
    if (j < 2)
      return fractal64DOffset(r) + j;
    return fractal64ScalesOffset(layout, r) + (j - 2);
  case Format::Q4_K:
  case Format::Q5_K:
    if (j < 4)
      return (j / 2) * 2 * rows + 2 * r + j % 2;
    return 4 * rows + (j - 4) * rows + r;
  case Format::Q6_K: // file header: scales[16], then d
    if (j >= 16)
      return 2 * r + (j - 16);
    return 2 * rows + j * rows + r;
  default:
    return r * packedScaleBytes(layout.format) + j;
  }
}

// Where the 4 lanes of K-group `g` of row `r` start inside a packed block:
// after the rows' scales, groups [g][r][4]. Row 0's is the K-group's load.
constexpr int64_t packedKgroupOffset(const PackedLayout &layout, int64_t g,
                                     int r = 0) {
  return layout.rows * packedScaleBytes(layout.format) +
         (g * layout.rows + r) * 4;
}

// Elements of one packed block: 32, a K-quant's super-block of 256, 64 for
// FRACTAL64 and VQ3_64; 32 bf16 or 16 f32 (64 bytes per row).
constexpr int64_t packedBlockElems(Format format) {
  if (isFloatFormat(format))
    return kFloatBlockRowBytes / formatInfo(format).blockBytes;
  return formatInfo(format).blockElems;
}

// Elements of one K-group of a float format: 2 bf16 or 1 f32 in 4 bytes.
constexpr int64_t packedKgroupElems(Format format) {
  return 4 / formatInfo(format).blockBytes;
}

// Packed blocks per row of k elements: k is a whole number of blocks, except
// for the float formats, whose last block is padded with zeros.
constexpr int64_t packedKBlocks(Format format, int64_t k) {
  const int64_t elems = packedBlockElems(format);
  return (k + elems - 1) / elems;
}

// Bytes of one packed row group (the layout's rows over all of k).
constexpr int64_t packedGroupBytes(const PackedLayout &layout, int64_t k) {
  return packedKBlocks(layout.format, k) * packedBlockBytes(layout);
}

// MXFP4 (docs/formats/README.md): E2M1 code c of a block with E8M0 byte e
// is kMxfp4Values[c] * 2^(e - 128), the values doubled so that they are
// integers and the scale halved to match.
inline constexpr int8_t kMxfp4Values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};

// The fp32 bits of 2^(e - 128), exact for every E8M0 byte e: a normal number
// whose exponent field is e - 1 for e >= 2; the subnormals 2^-128 and 2^-127
// (mantissa bit 21 or 22) for e = 0 and 1. The kernels build the scale with
// the same integer arithmetic.
constexpr uint32_t mxfp4ScaleBits(uint8_t e) {
  return e >= 2 ? static_cast<uint32_t>(e - 1) << 23
                : static_cast<uint32_t>(e + 1) << 21;
}

constexpr float mxfp4Scale(uint8_t e) {
  return std::bit_cast<float>(mxfp4ScaleBits(e));
}

// "q8_0_r16"; a signed Q8_0 layout ends in "s" ("q8_0_r4s"). The other
// formats have one byte layout for both encodings (their lanes are unsigned
// and below 2^7), so their names carry no suffix. A ternary layout ends in
// "_ternary" ("iq1_s_r16_ternary"), a code book layout in "_codebook".
inline std::string layoutName(const PackedLayout &layout) {
  std::string name(formatInfo(layout.format).name);
  name += "_r" + std::to_string(layout.rows);
  if (layout.format == Format::Q8_0 && layout.encoding == LaneEncoding::Signed)
    name += "s";
  return name + weightCodingSuffix(layout.coding);
}

// --- Activations ------------------------------------------------------------
//
// One block per 32 elements of a column: the scale d (fp32 holding the fp16
// value the reference Q8_0 activation block stores), the integer sum of the
// quants, the four int16 sums of 8 consecutive quants, and 32 signed quants,
// all |q| <= 127. A kernel multiplies a sum by its weights' lane offset and
// subtracts it from the int32 dot, which leaves the signed dot exactly: the
// block's sum for a weight block of 32, the sums of 8 for FRACTAL64 and
// VQ3_64, whose integer sub-scales multiply 8 weights each, so that each
// sub-block's dot must be exact on its own. Sums rather than premultiplied
// corrections keep one packed activation valid for every weight format and
// ISA of the Q8_0 family. A column of k elements is k / 32 consecutive
// blocks; the quants start 16-byte aligned within a block.
inline constexpr int64_t kActivationBlockBytes = 48;
inline constexpr int64_t kActivationScaleOffset = 0;   // float
inline constexpr int64_t kActivationSumOffset = 4;     // int32
inline constexpr int64_t kActivationSums8Offset = 8;   // int16[4]
inline constexpr int64_t kActivationQuantsOffset = 16; // int8[32]

// Q8_K activations (the K-quants'): one block per 256 elements, the fp32
// scale d exactly as quantize_activation(Q8_K) stores it, the 16 int16 sums
// of 16 consecutive quants (a K-quant kernel's offset correction and min term
// per sub-block), and 256 signed quants, all |q| <= 127: 292 bytes, as many as
// the file's Q8_K block, in kernel order.
inline constexpr int64_t kQ8KActivationBlockBytes = 292;
inline constexpr int64_t kQ8KActivationScaleOffset = 0;   // float
inline constexpr int64_t kQ8KActivationSumsOffset = 4;    // int16[16]
inline constexpr int64_t kQ8KActivationQuantsOffset = 36; // int8[256]

// BF16 and F32 activations (the float formats'): the elements as
// quantize_activation stores them (bf16 rounded to nearest even, f32 as they
// are), in blocks of 64 bytes, 32 bf16 or 16 f32 like the weights' blocks,
// the last one padded with zeros; no scale and no sums.
//
// Where a block's sums of the quants are: each over `elems` consecutive
// quants, `bytes` wide (int32 or int16), from `offset`; elems 0 for none.
struct ActivationSums {
  int64_t offset, elems, bytes;
};

// How a packed activation format lays out its blocks: elements and bytes per
// block, where the scale, the sums and the quants (the elements) are. `sums`
// are the coarsest a block has, `fineSums` the finest (the same for Q8_K).
struct ActivationLayout {
  int64_t blockElems, blockBytes, scaleOffset;
  ActivationSums sums, fineSums;
  int64_t quantsOffset;
};

// Q8_0 (the Q8_0 family's), Q8_K, BF16 or F32.
constexpr ActivationLayout activationLayout(Format activation) {
  if (isFloatFormat(activation))
    return {packedBlockElems(activation), kFloatBlockRowBytes, 0, {}, {}, 0};
  if (activation == Format::Q8_K)
    return {256,
            kQ8KActivationBlockBytes,
            kQ8KActivationScaleOffset,
            {kQ8KActivationSumsOffset, 16, 2},
            {kQ8KActivationSumsOffset, 16, 2},
            kQ8KActivationQuantsOffset};
  return {32,
          kActivationBlockBytes,
          kActivationScaleOffset,
          {kActivationSumOffset, 32, 4},
          {kActivationSums8Offset, 8, 2},
          kActivationQuantsOffset};
}

// Bytes of one packed activation column of k elements: whole blocks, the
// float formats' last one padded.
constexpr int64_t packedActivationColumnBytes(Format activation, int64_t k) {
  const ActivationLayout act = activationLayout(activation);
  return (k + act.blockElems - 1) / act.blockElems * act.blockBytes;
}

} // namespace kf

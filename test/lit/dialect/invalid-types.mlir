// RUN: kf-opt %s --split-input-file --verify-diagnostics

// The kf types and attributes refuse what they cannot mean: !kf.qweight,
// the cache types, #kf.target, #kf.kernel, #kf.rope and the format names.

// expected-error @+1 {{!kf.qweight: q8_0 stores rows in blocks of 32, but cols = 100 is not a multiple of 32}}
func.func @qweight_partial_block(%w: !kf.qweight<q8_0, [4, 100]>)

// -----

// expected-error @+1 {{!kf.qweight: expected shape [cols], [rows, cols] or [experts, rows, cols], got 4 dimensions}}
func.func @qweight_rank4(%w: !kf.qweight<f32, [2, 2, 2, 64]>)

// -----

// expected-error @+1 {{!kf.qweight: q8_k is an activation format and cannot hold weights}}
func.func @qweight_activation_format(%w: !kf.qweight<q8_k, [4, 256]>)

// -----

// expected-error @+1 {{!kf.qweight: vq3_64 stores rows in blocks of 64, but cols = 96 is not a multiple of 64}}
func.func @qweight_private_partial_block(%w: !kf.qweight<vq3_64, [4, 96]>)

// -----

// expected-error @+1 {{!kf.qweight: dimensions must be positive, got 0}}
func.func @qweight_empty(%w: !kf.qweight<f32, [0, 64]>)

// -----

// expected-error @+2 {{unknown format 'q3_z' (expected one of f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0, q8_1, q2_k, q3_k, q4_k, q5_k, q6_k, q8_k, iq2_xxs, iq2_xs, iq1_s, iq4_nl, iq4_xs, i32, iq1_m, bf16, mxfp4, fractal64, vq3_64)}}
// expected-error @+1 {{failed to parse Kf_QWeightType parameter 'format'}}
func.func @qweight_unknown_format(%w: !kf.qweight<q3_z, [4, 64]>)

// -----

// expected-error @+1 {{#kf.target 't': triple 'riscv64-unknown-linux-gnu' is not x86_64 or aarch64}}
module attributes {kf.target = #kf.target<name = "t", triple = "riscv64-unknown-linux-gnu", cpu = "generic", features = "", l1d = 32768, l2 = 262144, l3 = 0, cores = 1>} {}

// -----

// expected-error @+1 {{#kf.target 't': unknown ISA feature 'avx1024'}}
module attributes {kf.target = #kf.target<name = "t", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+avx2,+avx1024", l1d = 32768, l2 = 262144, l3 = 0, cores = 1>} {}

// -----

// expected-error @+1 {{#kf.target 't': ISA feature 'dotprod' is not an x86_64 feature}}
module attributes {kf.target = #kf.target<name = "t", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+dotprod", l1d = 32768, l2 = 262144, l3 = 0, cores = 1>} {}

// -----

// expected-error @+1 {{#kf.target 't': l1d and l2 must be non-zero bytes}}
module attributes {kf.target = #kf.target<name = "t", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "", l1d = 0, l2 = 262144, l3 = 0, cores = 1>} {}

// -----

// expected-error @+1 {{#kf.target 't': cores must be at least 1}}
module attributes {kf.target = #kf.target<name = "t", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "", l1d = 32768, l2 = 262144, l3 = 0, cores = 0>} {}

// -----

// expected-error @+1 {{#kf.target 't': empty cpu name}}
module attributes {kf.target = #kf.target<name = "t", triple = "x86_64-unknown-linux-gnu", cpu = "", features = "", l1d = 32768, l2 = 262144, l3 = 0, cores = 1>} {}

// -----

// expected-error @+1 {{'kf.target' must be a #kf.target, got "znver5"}}
module attributes {kf.target = "znver5"} {}

// -----

// expected-error @+1 {{unknown kf attribute 'kf.tile'}}
module attributes {kf.tile = 8} {}

// -----

// expected-error @+1 {{'kf.layer_kind' must be a non-empty string on a kf.cache, got "CSA"}}
module attributes {kf.layer_kind = "CSA"} {}

// -----

// expected-error @+1 {{'kf.layer_kind' must be a non-empty string on a kf.cache, got ""}}
kf.cache @blk.0.kv {kf.layer_kind = ""} : !kf.window_cache<rows = 4, dim = 64, element = bf16>

// -----

// expected-error @+1 {{!kf.window_cache: rows and dim must be positive, got rows = 0, dim = 512}}
func.func @window_cache_rows(%c: !kf.window_cache<rows = 0, dim = 512, element = bf16>)

// -----

// expected-error @+1 {{!kf.window_cache: rows and dim must be positive, got rows = 128, dim = -1}}
func.func @window_cache_dim(%c: !kf.window_cache<rows = 128, dim = -1, element = bf16>)

// -----

// expected-error @+1 {{!kf.window_cache: element must be f32, bf16 or f16, got 'i8'}}
func.func @window_cache_element(%c: !kf.window_cache<rows = 128, dim = 512, element = i8>)

// -----

// expected-error @+1 {{!kf.compressed_cache: ratio and dim must be positive, got ratio = 0, dim = 512}}
func.func @compressed_cache_ratio(%c: !kf.compressed_cache<ratio = 0, dim = 512, overlap = true, element = bf16>)

// -----

// expected-error @+1 {{!kf.compressed_cache: ratio and dim must be positive, got ratio = 4, dim = 0}}
func.func @compressed_cache_dim(%c: !kf.compressed_cache<ratio = 4, dim = 0, overlap = true, element = bf16>)

// -----

// expected-error @+1 {{!kf.compressed_cache: element must be f32, bf16 or f16, got 'f64'}}
func.func @compressed_cache_element(%c: !kf.compressed_cache<ratio = 4, dim = 512, overlap = false, element = f64>)

// -----

// expected-error @+1 {{#kf.rope: dim must be positive and even, got 63}}
func.func @rope_odd_dim() attributes {rope = #kf.rope<dim = 63, base = 1.000000e+04>}

// -----

// expected-error @+1 {{#kf.rope: dim must be positive and even, got 0}}
func.func @rope_zero_dim() attributes {rope = #kf.rope<dim = 0, base = 1.000000e+04>}

// -----

// expected-error @+1 {{#kf.rope: base must exceed 1, got 1}}
func.func @rope_base() attributes {rope = #kf.rope<dim = 64, base = 1.0>}

// -----

// expected-error @+1 {{#kf.rope: YaRN needs yarn_factor > 1, beta_fast > beta_slow > 0 and original_context > 0, got 1.000000e+00, 3.200000e+01 > 1.000000e+00 and 65536}}
func.func @rope_yarn_factor() attributes {rope = #kf.rope<dim = 64, base = 1.6e+05, yarn_factor = 1.0, beta_fast = 32.0, beta_slow = 1.0, original_context = 65536>}

// -----

// expected-error @+1 {{#kf.rope: YaRN needs yarn_factor > 1, beta_fast > beta_slow > 0 and original_context > 0, got 1.600000e+01, 1.000000e+00 > 3.200000e+01 and 65536}}
func.func @rope_yarn_betas() attributes {rope = #kf.rope<dim = 64, base = 1.6e+05, yarn_factor = 16.0, beta_fast = 1.0, beta_slow = 32.0, original_context = 65536>}

// -----

// expected-error @+1 {{#kf.rope: YaRN needs yarn_factor > 1, beta_fast > beta_slow > 0 and original_context > 0, got 1.600000e+01, 3.200000e+01 > 0.000000e+00 and 65536}}
func.func @rope_yarn_beta_slow() attributes {rope = #kf.rope<dim = 64, base = 1.6e+05, yarn_factor = 16.0, beta_fast = 32.0, beta_slow = 0.0, original_context = 65536>}

// -----

// original_context alone asks for YaRN without its other parameters.
// expected-error @+1 {{#kf.rope: YaRN needs yarn_factor > 1, beta_fast > beta_slow > 0 and original_context > 0, got 0.000000e+00, 0.000000e+00 > 0.000000e+00 and 65536}}
func.func @rope_yarn_context_only() attributes {rope = #kf.rope<dim = 64, base = 1.6e+05, original_context = 65536>}

// -----

// expected-error @+1 {{#kf.rope: YaRN needs yarn_factor > 1, beta_fast > beta_slow > 0 and original_context > 0, got 1.600000e+01, 3.200000e+01 > 1.000000e+00 and 0}}
func.func @rope_yarn_context() attributes {rope = #kf.rope<dim = 64, base = 1.6e+05, yarn_factor = 16.0, beta_fast = 32.0, beta_slow = 1.0>}

// -----

// expected-error @+2 {{unknown format 'q9_0' in layout 'q9_0_r16'}}
// expected-error @+1 {{failed to parse Kf_KernelAttr parameter 'layout'}}
func.func @kernel_layout_format() attributes {k = #kf.kernel<isa = avx512vnni, layout = q9_0_r16, max_cols = 8, threads = 1>}

// -----

// expected-error @+2 {{expected a packed layout <format>_r<rows> such as q8_0_r16, got 'q8_0'}}
// expected-error @+1 {{failed to parse Kf_KernelAttr parameter 'layout'}}
func.func @kernel_layout_rows() attributes {k = #kf.kernel<isa = avx512vnni, layout = q8_0, max_cols = 8, threads = 1>}

// -----

// expected-error @+1 {{#kf.kernel: layout q8_0_r8: rows must be a positive multiple of 16 (avx512vnni's lanes per vector)}}
func.func @kernel_rows_lanes() attributes {k = #kf.kernel<isa = avx512vnni, layout = q8_0_r8, max_cols = 8, threads = 1>}

// -----

// expected-error @+1 {{#kf.kernel: layout q4_k_r16_ternary: ternary codes are IQ1_S's and IQ1_M's, not q4_k's}}
func.func @kernel_ternary_format() attributes {k = #kf.kernel<isa = avx512vnni, layout = q4_k_r16_ternary, max_cols = 8, threads = 1>}

// -----

// expected-error @+1 {{#kf.kernel: layout iq1_s_r16_codebook: a code book layout is IQ2_XXS's, not iq1_s's}}
func.func @kernel_codebook_format() attributes {k = #kf.kernel<isa = avx512vnni, layout = iq1_s_r16_codebook, max_cols = 8, threads = 1>}

// -----

// expected-error @+2 {{expected a packed layout <format>_r<rows> such as q8_0_r16, got 'iq1_s_ternary'}}
// expected-error @+1 {{failed to parse Kf_KernelAttr parameter 'layout'}}
func.func @kernel_ternary_rows() attributes {k = #kf.kernel<isa = avx512vnni, layout = iq1_s_ternary, max_cols = 8, threads = 1>}

// -----

// expected-error @+1 {{#kf.kernel: layout i32_r1: i32 is not a weight format a matmul multiplies by}}
func.func @kernel_integer_layout() attributes {k = #kf.kernel<isa = scalar, layout = i32_r1, max_cols = 8, threads = 1>}

// -----

// expected-error @+1 {{#kf.kernel: max_cols must be one of 8, 4, 3 (a micro-kernel width with which no M >= 2 needs a 1-wide tile), got 2}}
func.func @kernel_max_cols() attributes {k = #kf.kernel<isa = scalar, layout = q8_0_r1, max_cols = 2, threads = 1>}

// -----

// expected-error @+1 {{#kf.kernel: threads must be at least 1, got 0}}
func.func @kernel_threads() attributes {k = #kf.kernel<isa = scalar, layout = q8_0_r1, max_cols = 8, threads = 0>}

// -----

// expected-error @+1 {{#kf.kernel: cols [8, 1] must be widths of {8, 4, 3, 2} (max_cols = 8) widest first, or [1] for one column}}
func.func @kernel_cols_one() attributes {k = #kf.kernel<isa = scalar, layout = q8_0_r1, max_cols = 8, threads = 1, cols = [8, 1]>}

// -----

// expected-error @+1 {{#kf.kernel: cols [2, 4] must be widths of {4, 3, 2} (max_cols = 4) widest first, or [1] for one column}}
func.func @kernel_cols_order() attributes {k = #kf.kernel<isa = scalar, layout = q8_0_r1, max_cols = 4, threads = 1, cols = [2, 4]>}

// -----

// expected-error @+1 {{#kf.kernel: cols [8] must be widths of {4, 3, 2} (max_cols = 4) widest first, or [1] for one column}}
func.func @kernel_cols_max() attributes {k = #kf.kernel<isa = scalar, layout = q8_0_r1, max_cols = 4, threads = 1, cols = [8]>}

// -----

// expected-error @+1 {{#kf.kernel: cols [] must be widths of {8, 4, 3, 2} (max_cols = 8) widest first, or [1] for one column}}
func.func @kernel_cols_empty() attributes {k = #kf.kernel<isa = scalar, layout = q8_0_r1, max_cols = 8, threads = 1, cols = []>}

// -----

// expected-error @+1 {{#kf.kernel: l2_rows = 24 must be a positive multiple of the layout's 16 rows}}
func.func @kernel_l2_rows() attributes {k = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 1, l2_rows = 24>}

// -----

// expected-error @+1 {{#kf.kernel: l1_k = 128 must be a positive multiple of iq2_xxs's block of 256}}
func.func @kernel_l1_k() attributes {k = #kf.kernel<isa = avx2, layout = iq2_xxs_r8, max_cols = 8, threads = 1, l1_k = 128>}

// -----

func.func @kernel_quantize_value(%x: tensor<?x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x16xf32> {
  // expected-error @+3 {{expected ::mlir::kf::ActivationQuantize to be one of: separate, fused}}
  // expected-error @+2 {{failed to parse Kf_KernelAttr parameter 'quantize'}}
  %y = kf.linear %x, %w
      {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2, quantize = inline>}
      : tensor<?x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @kernel_decode_value(%x: tensor<?x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x16xf32> {
  // expected-error @+3 {{expected ::mlir::kf::WeightDecode to be one of: per_tile, once}}
  // expected-error @+2 {{failed to parse Kf_KernelAttr parameter 'decode'}}
  %y = kf.linear %x, %w
      {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2, decode = twice>}
      : tensor<?x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// expected-error @+1 {{#kf.kernel: decode = once needs a quantized format, whose weights are decoded; bf16 is not}}
func.func @kernel_decode_float() attributes {k = #kf.kernel<isa = avx2, layout = bf16_r8, max_cols = 8, threads = 1, decode = once>}

// -----

// expected-error @+1 {{#kf.kernel: decode = once needs calls of more columns than one tile, which quantize = fused never makes}}
func.func @kernel_decode_fused() attributes {k = #kf.kernel<isa = avx2, layout = iq1_s_r8, max_cols = 8, threads = 1, quantize = fused, decode = once>}

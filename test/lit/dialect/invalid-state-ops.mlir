// RUN: kf-opt %s --split-input-file --verify-diagnostics

// The weight and cache ops (KfStateOps.td) refuse ill-formed declarations
// and uses.

func.func @weight_outside_module() {
  // expected-error @+1 {{'kf.weight' op expects parent op 'builtin.module'}}
  kf.weight @w : !kf.qweight<f32, [4]>
  return
}

// -----

func.func @cache_outside_module() {
  // expected-error @+1 {{'kf.cache' op expects parent op 'builtin.module'}}
  kf.cache @c : !kf.window_cache<rows = 4, dim = 8, element = bf16>
  return
}

// -----

// expected-error @+1 {{'kf.weight' op attribute 'type' failed to satisfy constraint: type attribute of a weight tensor stored in a block format}}
kf.weight @w : tensor<4xf32>

// -----

// expected-error @+1 {{'kf.cache' op attribute 'type' failed to satisfy constraint: type attribute of a kf cache}}
kf.cache @c : !kf.qweight<f32, [4]>

// -----

// expected-note @+1 {{see existing symbol definition here}}
kf.weight @w : !kf.qweight<f32, [4]>
// expected-error @+1 {{redefinition of symbol named 'w'}}
kf.weight @w : !kf.qweight<f32, [4]>

// -----

func.func @get_weight_missing() {
  // expected-error @+1 {{'kf.get_weight' op 'blk.0.attn_norm.weight' is not a kf.weight of the module}}
  %w = kf.get_weight @blk.0.attn_norm.weight : !kf.qweight<f32, [4096]>
  return
}

// -----

kf.cache @blk.0.kv : !kf.window_cache<rows = 4, dim = 8, element = bf16>
func.func @get_weight_of_cache() {
  // expected-error @+1 {{'kf.get_weight' op 'blk.0.kv' is not a kf.weight of the module}}
  %w = kf.get_weight @blk.0.kv : !kf.qweight<f32, [8]>
  return
}

// -----

kf.weight @blk.0.attn_norm.weight : !kf.qweight<f32, [4096]>
func.func @get_weight_type() {
  // expected-error @+1 {{'kf.get_weight' op result type '!kf.qweight<f32, [2048]>' differs from the declared '!kf.qweight<f32, [4096]>' of 'blk.0.attn_norm.weight'}}
  %w = kf.get_weight @blk.0.attn_norm.weight : !kf.qweight<f32, [2048]>
  return
}

// -----

func.func @get_cache_missing() {
  // expected-error @+1 {{'kf.get_cache' op 'blk.0.kv' is not a kf.cache of the module}}
  %c = kf.get_cache @blk.0.kv : !kf.window_cache<rows = 4, dim = 8, element = bf16>
  return
}

// -----

kf.weight @blk.0.kv : !kf.qweight<f32, [8]>
func.func @get_cache_of_weight() {
  // expected-error @+1 {{'kf.get_cache' op 'blk.0.kv' is not a kf.cache of the module}}
  %c = kf.get_cache @blk.0.kv : !kf.window_cache<rows = 4, dim = 8, element = bf16>
  return
}

// -----

kf.cache @blk.0.kv : !kf.window_cache<rows = 4, dim = 8, element = bf16>
func.func @get_cache_type() {
  // expected-error @+1 {{'kf.get_cache' op result type '!kf.window_cache<rows = 8, dim = 8, element = bf16>' differs from the declared '!kf.window_cache<rows = 4, dim = 8, element = bf16>' of 'blk.0.kv'}}
  %c = kf.get_cache @blk.0.kv : !kf.window_cache<rows = 8, dim = 8, element = bf16>
  return
}

// -----

func.func @cache_append_rows(%c: !kf.window_cache<rows = 128, dim = 512, element = bf16>,
                             %kv: tensor<?x256xf32>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{'kf.cache_append' op rows must be [?, 512], got [?, 256]}}
  kf.cache_append %c, %kv, %pos : !kf.window_cache<rows = 128, dim = 512, element = bf16>, tensor<?x256xf32>, tensor<?xi64>
  return
}

// -----

func.func @cache_append_positions(%c: !kf.window_cache<rows = 128, dim = 512, element = bf16>,
                                  %kv: tensor<4x512xf32>, %pos: tensor<3xi64>) {
  // expected-error @+1 {{'kf.cache_append' op positions must be [4], got [3]}}
  kf.cache_append %c, %kv, %pos : !kf.window_cache<rows = 128, dim = 512, element = bf16>, tensor<4x512xf32>, tensor<3xi64>
  return
}

// -----

func.func @cache_append_compressed(%c: !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>,
                                   %kv: tensor<4x512xf32>, %pos: tensor<4xi64>) {
  // expected-error @+1 {{'kf.cache_append' op operand #0 must be a ring of the latest KV rows of one attention layer, but got '!kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>'}}
  kf.cache_append %c, %kv, %pos : !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>, tensor<4x512xf32>, tensor<4xi64>
  return
}

// -----

func.func @cache_read_window(%c: !kf.window_cache<rows = 128, dim = 512, element = bf16>) {
  // expected-error @+1 {{'kf.cache_read' op result must be [128, 512], got [64, 512]}}
  %r = kf.cache_read %c : !kf.window_cache<rows = 128, dim = 512, element = bf16> -> tensor<64x512xf32>
  return
}

// -----

func.func @cache_read_compressed(%c: !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>) {
  // expected-error @+1 {{'kf.cache_read' op result must be [?, 512], got [?, 1024]}}
  %r = kf.cache_read %c : !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16> -> tensor<?x1024xf32>
  return
}

// RUN: kf-opt %s --split-input-file --verify-diagnostics --kf-graph-stats -o /dev/null

// A layer's caches must agree on the kind their model names.
module {
  kf.cache @blk.0.kv {kf.layer_kind = "CSA"} : !kf.window_cache<rows = 4, dim = 64, element = bf16>
  // expected-error @below {{'kf.cache' op names its layer's kind "HCA" but blk.0.kv names it "CSA"}}
  kf.cache @blk.0.compressor {kf.layer_kind = "HCA"} : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>
}

// -----

module {
  kf.cache @blk.0.kv {kf.layer_kind = "SWA"} : !kf.window_cache<rows = 4, dim = 64, element = bf16>
  // expected-error @below {{'kf.cache' op names its layer's kind none but blk.0.kv names it "SWA"}}
  kf.cache @blk.0.compressor : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>
}

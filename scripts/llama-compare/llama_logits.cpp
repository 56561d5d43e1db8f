// The logits llama.cpp computes for every position of a token sequence,
// written as a float32 .npy [positions, vocab], for scripts/compare-llama.
// Built against a llama.cpp build outside this repository; not part of the
// project's build.
//
//   llama_logits MODEL.gguf T1,T2,... MODE OUT.npy [THREADS]
//
// MODE: batch  — every token in one llama_decode call (a prefill);
//       decode — one token per call;
//       split:N — the first N tokens in one call, then one per call.
// The KV cache is f32 and flash attention off, so that nothing is held in
// f16 on the way.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "llama.h"

namespace {

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "llama_logits: %s\n", message.c_str());
  std::exit(1);
}

std::vector<llama_token> parseTokens(const char *text) {
  std::vector<llama_token> tokens;
  const char *p = text;
  while (*p) {
    char *end = nullptr;
    long v = std::strtol(p, &end, 10);
    if (end == p || v < 0)
      fail(std::string("bad token list '") + text + "'");
    tokens.push_back(static_cast<llama_token>(v));
    p = *end == ',' ? end + 1 : end;
    if (*end != ',' && *end != '\0')
      fail(std::string("bad token list '") + text + "'");
  }
  if (tokens.empty())
    fail("no tokens");
  return tokens;
}

void write_npy(const char *path, int64_t rows, int64_t cols,
               const std::vector<float> &values) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) +
                       "), }";
  // Magic, version 1.0, a 16-bit header length; header padded with spaces
  // and ended with a newline so that the data starts on a 64-byte boundary.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  FILE *f = std::fopen(path, "wb");
  if (!f)
    fail(std::string("cannot write ") + path);
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  uint16_t length = static_cast<uint16_t>(header.size());
  std::fwrite(magic, 1, 8, f);
  std::fwrite(&length, 2, 1, f);
  std::fwrite(header.data(), 1, header.size(), f);
  std::fwrite(values.data(), sizeof(float), values.size(), f);
  if (std::fclose(f) != 0)
    fail(std::string("cannot write ") + path);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 5 || argc > 6)
    fail("usage: llama_logits MODEL.gguf T1,T2,... batch|decode|split:N "
         "OUT.npy [THREADS]");
  std::vector<llama_token> tokens = parseTokens(argv[2]);
  const std::string mode = argv[3];
  const int n = static_cast<int>(tokens.size());
  int first_call = n; // tokens in the first llama_decode call
  if (mode == "decode")
    first_call = 1;
  else if (mode.rfind("split:", 0) == 0)
    first_call = std::atoi(mode.c_str() + 6);
  else if (mode != "batch")
    fail("unknown mode '" + mode + "': expected batch, decode or split:N");
  if (first_call < 1 || first_call > n)
    fail("split:N needs 1 <= N <= the number of tokens");
  const int threads = argc == 6 ? std::atoi(argv[5]) : 2;

  llama_backend_init();
  llama_model_params model_params = llama_model_default_params();
  model_params.n_gpu_layers = 0;
  llama_model *model = llama_model_load_from_file(argv[1], model_params);
  if (!model)
    fail(std::string("cannot load ") + argv[1]);
  const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

  llama_context_params params = llama_context_default_params();
  params.n_ctx = static_cast<uint32_t>(n);
  params.n_batch = params.n_ubatch = static_cast<uint32_t>(n);
  params.n_threads = params.n_threads_batch = threads;
  params.type_k = params.type_v = GGML_TYPE_F32;
  params.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  llama_context *ctx = llama_init_from_model(model, params);
  if (!ctx)
    fail("cannot create a context");

  std::vector<float> logits;
  logits.reserve(static_cast<size_t>(n) * vocab);
  llama_batch batch = llama_batch_init(n, 0, 1);
  for (int begin = 0; begin < n;) {
    const int count = begin == 0 ? first_call : 1;
    batch.n_tokens = count;
    for (int i = 0; i < count; ++i) {
      batch.token[i] = tokens[begin + i];
      batch.pos[i] = begin + i;
      batch.n_seq_id[i] = 1;
      batch.seq_id[i][0] = 0;
      batch.logits[i] = 1;
    }
    if (int status = llama_decode(ctx, batch); status != 0)
      fail("llama_decode failed with status " + std::to_string(status) +
           " at position " + std::to_string(begin));
    for (int i = 0; i < count; ++i) {
      const float *row = llama_get_logits_ith(ctx, i);
      if (!row)
        fail("no logits for position " + std::to_string(begin + i));
      logits.insert(logits.end(), row, row + vocab);
    }
    begin += count;
  }
  write_npy(argv[4], n, vocab, logits);
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}

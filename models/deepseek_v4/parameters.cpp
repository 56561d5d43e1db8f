#include "kf/deepseek_v4/parameters.h"

#include "kf/deepseek_v4/tensors.h"

namespace kf::deepseek_v4 {

ParameterCount countParameters(const Config &config) {
  ParameterCount count;
  for (const TensorSpec &spec : tensorSpecs(config)) {
    int64_t n = spec.elements();
    switch (spec.kind) {
    case TensorKind::Tid2Eid:
      break;
    case TensorKind::Embedding:
      count.total += n;
      count.embeddingAndHead += n;
      break;
    case TensorKind::Output:
      count.total += n;
      count.active += n;
      count.embeddingAndHead += n;
      break;
    case TensorKind::RoutedExperts:
      count.total += n;
      // n = E experts of equal size, of which k take part.
      count.active += n / config.nExpert * config.nExpertUsed;
      break;
    default:
      count.total += n;
      count.active += n;
    }
  }
  return count;
}

} // namespace kf::deepseek_v4

#include "kf/deepseek_v4/tensor_formats.h"

#include "kf/runtime/gguf.h"
#include "kf/runtime/recipe.h"
#include "kf/runtime/status_macros.h"

namespace kf::deepseek_v4 {

const std::string_view kDefaultRecipe =
    "token_embd\\.weight=q8_0,output\\.weight=q8_0,"
    ".*_exps\\.weight=mxfp4,.*_shexp\\.weight=q8_0,"
    ".*\\.(attn_(q_a|q_b|kv|output_a|output_b)|indexer\\.(attn_q_b|proj)|"
    "(attn|indexer)_compressor_(kv|gate))\\.weight=q8_0,"
    "*=f32";

namespace {

Format chooseFormat(const TensorSpec &spec, const Recipe *user,
                    const Recipe &defaults, std::ostream *log) {
  if (std::optional<Format> fixed = fixedFormat(spec.kind))
    return *fixed;
  for (const Recipe *recipe : {user, &defaults}) {
    if (!recipe)
      continue;
    for (const Recipe::Rule &rule : recipe->rules()) {
      if (!rule.matches(spec.name))
        continue;
      if (!rule.target)
        break; // keep: the default rules decide
      if (!accepts(spec.kind, *rule.target))
        continue;
      const FormatInfo &to = formatInfo(*rule.target);
      if (spec.shape[0] % to.blockElems != 0) {
        if (log)
          *log << "warning: tensor " << gguf::quoted(spec.name)
               << " has rows of " << spec.shape[0]
               << " elements, not a multiple of " << to.blockElems
               << " (the block size of " << to.name << "); rule "
               << gguf::quoted(rule.text) << " passed over\n";
        continue;
      }
      return *rule.target;
    }
  }
  return Format::F32; // unreachable: the default recipe ends with "*=f32"
}

} // namespace

absl::StatusOr<std::vector<Format>>
tensorFormats(std::span<const TensorSpec> specs,
              std::optional<std::string_view> recipe, std::ostream *log) {
  std::optional<Recipe> user;
  if (recipe) {
    KF_ASSIGN_OR_RETURN(user, Recipe::parse(*recipe));
  }
  KF_ASSIGN_OR_RETURN(Recipe defaults, Recipe::parse(kDefaultRecipe));
  std::vector<Format> formats;
  formats.reserve(specs.size());
  for (const TensorSpec &spec : specs)
    formats.push_back(
        chooseFormat(spec, user ? &*user : nullptr, defaults, log));
  return formats;
}

} // namespace kf::deepseek_v4

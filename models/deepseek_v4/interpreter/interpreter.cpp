//===- interpreter.cpp - Binding a module and running its functions -------===//

#include "kf/deepseek_v4/interpreter/interpreter.h"

#include "internal.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

namespace kf::deepseek_v4::interpreter {

using detail::Cache;
using detail::CompressorState;
using detail::Context;
using detail::Frame;
using detail::opError;
using detail::Weight;
using detail::WindowRing;
using mlir::Operation;

class Interpreter::Impl {
public:
  explicit Impl(mlir::ModuleOp module) : module(module) {}

  /// Collects the weight and cache symbols; `bindWeight` binds each weight.
  absl::Status declare(llvm::function_ref<absl::Status(Weight &)> bindWeight);

  absl::StatusOr<std::vector<Tensor>> call(llvm::StringRef function,
                                           std::vector<Tensor> arguments);
  absl::StatusOr<std::vector<Tensor>> run(llvm::StringRef function,
                                          std::span<const int32_t> tokens,
                                          std::span<const int64_t> positions);

  absl::Status execute(Operation *op, Frame &frame);

  mlir::ModuleOp module;
  llvm::StringMap<Weight> weights;
  llvm::StringMap<Cache> caches;
  Context context;
  Observer observer;
  std::optional<int64_t> nextPosition;
};

namespace {

/// ggml's ne order of a declared [.., rows, cols] shape.
std::vector<int64_t> ggmlShape(mlir::kf::QWeightType type) {
  return std::vector<int64_t>(type.getShape().rbegin(), type.getShape().rend());
}

int64_t elementCount(mlir::kf::QWeightType type) {
  int64_t n = 1;
  for (int64_t d : type.getShape())
    n *= d;
  return n;
}

std::string typeString(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

absl::Status bindError(const Weight &weight, const llvm::Twine &message) {
  return absl::InvalidArgumentError(
      ("interpreter: weight '" + weight.name + "': " + message).str());
}

} // namespace

absl::Status Interpreter::Impl::declare(
    llvm::function_ref<absl::Status(Weight &)> bindWeight) {
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto decl = llvm::dyn_cast<mlir::kf::WeightOp>(op)) {
      Weight weight;
      weight.name = decl.getSymName().str();
      weight.type = decl.getWeightType();
      if (absl::Status bound = bindWeight(weight); !bound.ok())
        return bound;
      weights.try_emplace(decl.getSymName(), std::move(weight));
    } else if (auto decl = llvm::dyn_cast<mlir::kf::CacheOp>(op)) {
      Cache cache;
      cache.name = decl.getSymName().str();
      if (auto ring =
              llvm::dyn_cast<mlir::kf::WindowCacheType>(decl.getType())) {
        cache.state = WindowRing{ring, std::vector<float>(static_cast<size_t>(
                                           ring.getRows() * ring.getDim()))};
      } else {
        auto compressed =
            llvm::cast<mlir::kf::CompressedCacheType>(decl.getType());
        CompressorState state;
        state.type = compressed;
        cache.state = std::move(state);
      }
      caches.try_emplace(decl.getSymName(), std::move(cache));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Interpreter> Interpreter::create(mlir::ModuleOp module,
                                                const gguf::File &file) {
  auto impl = std::make_unique<Impl>(module);
  absl::Status declared = impl->declare([&](Weight &weight) {
    const gguf::TensorInfo *tensor = file.findTensor(weight.name);
    if (!tensor)
      return bindError(weight, "no tensor of that name in " + file.name());
    auto format = static_cast<::kf::Format>(weight.type.getFormat());
    std::vector<int64_t> shape = ggmlShape(weight.type);
    if (tensor->format != format || tensor->shape != shape) {
      std::string stored(formatInfo(tensor->format).name);
      return bindError(weight, file.name() + " stores it as " + stored + " " +
                                   gguf::shapeString(tensor->shape) +
                                   " (ggml order), the graph declares " +
                                   typeString(weight.type));
    }
    weight.file = &file;
    weight.tensor = tensor;
    return absl::OkStatus();
  });
  if (!declared.ok())
    return declared;
  return Interpreter(std::move(impl));
}

absl::StatusOr<Interpreter> Interpreter::create(mlir::ModuleOp module,
                                                InMemoryWeights weights) {
  auto impl = std::make_unique<Impl>(module);
  absl::Status declared = impl->declare([&](Weight &weight) {
    bool integer = weight.type.getFormat() == mlir::kf::Format::I32;
    size_t found = 0;
    if (integer) {
      auto it = weights.ints.find(weight.name);
      if (it == weights.ints.end())
        return bindError(weight, "no int32 tensor of that name is given");
      weight.ints = std::move(it->second);
      found = weight.ints.size();
    } else {
      auto it = weights.floats.find(weight.name);
      if (it == weights.floats.end())
        return bindError(weight, "no fp32 tensor of that name is given");
      weight.floats = std::move(it->second);
      found = weight.floats.size();
    }
    if (found != static_cast<size_t>(elementCount(weight.type)))
      return bindError(weight, "has " + llvm::Twine(found) +
                                   " values, the graph declares " +
                                   typeString(weight.type));
    weight.loaded = true;
    return detail::checkFinite(weight);
  });
  if (!declared.ok())
    return declared;
  return Interpreter(std::move(impl));
}

absl::Status Interpreter::Impl::execute(Operation *op, Frame &frame) {
  if (absl::Status operands = detail::checkOperands(op, frame); !operands.ok())
    return operands;
  auto run = [&](auto concrete) {
    return detail::execute(concrete, frame, context);
  };
  return llvm::TypeSwitch<Operation *, absl::Status>(op)
      .Case([&](mlir::kf::GetWeightOp get) {
        // The verifier ties the symbol to a kf.weight, which declare bound.
        frame.set(get.getResult(), &weights.find(get.getName())->second);
        return absl::OkStatus();
      })
      .Case([&](mlir::kf::GetCacheOp get) {
        frame.set(get.getResult(), &caches.find(get.getName())->second);
        return absl::OkStatus();
      })
// One case per executed op, each calling its detail::execute.
#define KF_EXECUTED_OP(Op) .Case([&](Op concrete) { return run(concrete); })
#include "executed_ops.def"
      .Default([&](Operation *other) {
        return absl::UnimplementedError(("interpreter: unsupported op '" +
                                         other->getName().getStringRef() + "'")
                                            .str());
      });
}

absl::StatusOr<std::vector<Tensor>>
Interpreter::Impl::call(llvm::StringRef function,
                        std::vector<Tensor> arguments) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(function);
  if (!func || func.isExternal())
    return absl::NotFoundError(
        ("interpreter: the module has no function @" + function).str());
  std::string where = ("interpreter: @" + function).str();
  if (func.getNumArguments() != arguments.size())
    return absl::InvalidArgumentError(
        where + " takes " + std::to_string(func.getNumArguments()) +
        " arguments, got " + std::to_string(arguments.size()));
  Frame frame;
  for (auto [i, argument] : llvm::enumerate(arguments)) {
    mlir::BlockArgument arg = func.getArgument(i);
    auto type = llvm::dyn_cast<mlir::RankedTensorType>(arg.getType());
    bool fits = type && type.getRank() == argument.getRank();
    for (int64_t d = 0; fits && d < type.getRank(); ++d)
      fits =
          type.isDynamicDim(d) || type.getDimSize(d) == argument.getDimSize(d);
    mlir::Type element = type ? type.getElementType() : mlir::Type();
    ElementType held = argument.getElementType();
    fits = fits && ((held == ElementType::F32 && element.isF32()) ||
                    (held == ElementType::I32 && element.isInteger(32)) ||
                    (held == ElementType::I64 && element.isInteger(64)) ||
                    (held == ElementType::I8 && element.isInteger(8)));
    if (!fits)
      return absl::InvalidArgumentError(
          where + ": argument #" + std::to_string(i) + " is " +
          typeString(arg.getType()) + ", which cannot take a tensor of shape " +
          detail::shapeString(argument.getShape()));
    frame.set(arg, std::move(argument));
  }

  std::vector<const Tensor *> observed;
  for (Operation &op : func.getBody().front()) {
    if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      std::vector<Tensor> results;
      for (mlir::Value value : ret.getOperands()) {
        const detail::RuntimeValue *held = frame.lookup(value);
        const auto *tensor =
            held ? std::get_if<std::shared_ptr<const Tensor>>(held) : nullptr;
        if (!tensor)
          return opError(&op, "returns a value that is not a tensor");
        results.push_back(**tensor);
      }
      return results;
    }
    if (op.getNumRegions() != 0)
      return absl::UnimplementedError(
          ("interpreter: unsupported op '" + op.getName().getStringRef() +
           "' (ops with regions are not interpreted)")
              .str());
    if (absl::Status status = execute(&op, frame); !status.ok())
      return status;
    observed.clear();
    for (auto [i, result] : llvm::enumerate(op.getResults())) {
      const detail::RuntimeValue *held = frame.lookup(result);
      if (!held)
        return opError(&op, "result #" + llvm::Twine(i) + " was not computed");
      const auto *tensor = std::get_if<std::shared_ptr<const Tensor>>(held);
      if (tensor) {
        if (absl::Status fits = detail::checkResult(&op, i, **tensor);
            !fits.ok())
          return fits;
      }
      observed.push_back(tensor ? tensor->get() : nullptr);
    }
    if (observer && !observed.empty())
      observer(&op, observed);
  }
  return absl::InvalidArgumentError(where + " ends without func.return");
}

absl::StatusOr<std::vector<Tensor>>
Interpreter::Impl::run(llvm::StringRef function,
                       std::span<const int32_t> tokens,
                       std::span<const int64_t> positions) {
  std::string where = ("interpreter: @" + function).str();
  if (tokens.empty() || tokens.size() != positions.size())
    return absl::InvalidArgumentError(
        where + ": " + std::to_string(tokens.size()) + " tokens and " +
        std::to_string(positions.size()) +
        " positions, expected one position per token and at least one token");
  // Every op that addresses state by position (the rings, the compressors,
  // the fresh window bank) relies on a run of consecutive positions.
  for (size_t t = 0; t < positions.size(); ++t) {
    if (positions[t] < 0)
      return absl::InvalidArgumentError(
          where + ": position " + std::to_string(positions[t]) + " of token " +
          std::to_string(t) + " is negative");
    if (t > 0 && positions[t] != positions[t - 1] + 1)
      return absl::InvalidArgumentError(
          where + ": position " + std::to_string(positions[t]) + " of token " +
          std::to_string(t) + " does not follow " +
          std::to_string(positions[t - 1]));
  }
  // A prefill starts a sequence, or continues it in chunks.
  if (function == "prefill" && positions[0] != 0 &&
      positions[0] != nextPosition.value_or(-1))
    return absl::InvalidArgumentError(
        nextPosition
            ? where + " starts a sequence at position 0 or continues it at " +
                  std::to_string(*nextPosition) + ", got " +
                  std::to_string(positions[0])
            : where + " starts a sequence, so its positions start at 0, got " +
                  std::to_string(positions[0]));
  if (function == "decode" && positions[0] != nextPosition.value_or(-1))
    return absl::InvalidArgumentError(
        nextPosition ? where + " continues the sequence at position " +
                           std::to_string(*nextPosition) + ", got " +
                           std::to_string(positions[0])
                     : where + " has no sequence to continue: run @prefill "
                               "first");

  int64_t count = static_cast<int64_t>(tokens.size());
  std::vector<Tensor> arguments;
  arguments.emplace_back(std::vector<int64_t>{count},
                         std::vector<int32_t>(tokens.begin(), tokens.end()));
  arguments.emplace_back(
      std::vector<int64_t>{count},
      std::vector<int64_t>(positions.begin(), positions.end()));
  // A failed call leaves the caches part-way through it.
  nextPosition.reset();
  absl::StatusOr<std::vector<Tensor>> results =
      call(function, std::move(arguments));
  if (results.ok())
    nextPosition = positions.back() + 1;
  return results;
}

Interpreter::Interpreter(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Interpreter::Interpreter(Interpreter &&) noexcept = default;
Interpreter &Interpreter::operator=(Interpreter &&) noexcept = default;
Interpreter::~Interpreter() = default;

void Interpreter::setObserver(Observer observer) {
  impl->observer = std::move(observer);
}

void Interpreter::setKernelResolver(KernelResolver resolver) {
  impl->context.setKernelResolver(std::move(resolver));
}

absl::StatusOr<std::vector<Tensor>>
Interpreter::run(llvm::StringRef function, std::span<const int32_t> tokens,
                 std::span<const int64_t> positions) {
  return impl->run(function, tokens, positions);
}

absl::StatusOr<std::vector<Tensor>>
Interpreter::call(llvm::StringRef function, std::vector<Tensor> arguments) {
  // The call may change the caches under a running sequence.
  impl->nextPosition.reset();
  return impl->call(function, std::move(arguments));
}

std::optional<int64_t> Interpreter::getNextPosition() const {
  return impl->nextPosition;
}

} // namespace kf::deepseek_v4::interpreter

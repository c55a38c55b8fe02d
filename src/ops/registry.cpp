// The list of shipped ops (ops/registry.hpp): for each, its command-line parameters, their check
// and a tuning run on random inputs. Each op's own file keeps its key, set and kernels.
#include "tunekit/ops/registry.hpp"

#include <algorithm>

#include "tunekit/local_tuner.hpp"
#include "tunekit/ops/matmul.hpp"
#include "tunekit/ops/matrix.hpp"
#include "tunekit/ops/reduce.hpp"
#include "tunekit/ops/transpose.hpp"

namespace tunekit::ops {

std::uint64_t OpArguments::size(std::string_view name, std::uint64_t fallback) const {
  const auto it = sizes.find(name);
  return it == sizes.end() ? fallback : it->second;
}

std::string OpArguments::choice(std::string_view name, std::string_view fallback) const {
  const auto it = choices.find(name);
  return it == choices.end() ? std::string(fallback) : it->second;
}

namespace {

template <class Key>
std::vector<TuningReport> reports_of(LocalTuner<Key>& tuner, cl::Client& client) {
  client.finish();
  return tuner.tuner(client.id()).reports();
}

// A matrix op's shape: --rows and --cols, each defaulting to --size.
struct Shape {
  std::uint64_t rows, cols;
};
Shape matrix_shape(const OpArguments& a, std::uint64_t fallback) {
  const std::uint64_t size = a.size("size", fallback);
  return {a.size("rows", size), a.size("cols", size)};
}
std::vector<SizeParameter> matrix_sizes(const char* default_help) {
  return {{"size", default_help, true},
          {"rows", "rows of the input matrix"},
          {"cols", "columns of the input matrix"}};
}
void check_matrix(const OpArguments& a) {
  const Shape shape = matrix_shape(a, 1024);
  (void)checked_matrix_bytes(shape.rows, shape.cols, DType::f32, "the matrix");
}

const ChoiceParameter reduction{"reduce", {"sum", "max"}, "sum or max (default sum)"};
ReduceOp reduce_op(const OpArguments& a) {
  return a.choice("reduce", "sum") == "max" ? ReduceOp::max : ReduceOp::sum;
}

struct MatmulShape {
  std::uint64_t m, n, k;
  DType dtype;
  MatmulMath math;
};
MatmulShape matmul_shape(const OpArguments& a) {
  const std::uint64_t size = a.size("size", 256);
  return {a.size("m", size), a.size("n", size), a.size("k", size),
          a.choice("dtype", "f32") == "f16"    ? DType::f16
          : a.choice("dtype", "f32") == "bf16" ? DType::bf16
                                               : DType::f32,
          a.choice("math", "ieee") == "tf32" ? MatmulMath::tf32 : MatmulMath::ieee};
}

ShippedOp matmul_op() {
  return {"matmul",
          "C = A * B, A m x k, B k x n (f32, f16 or bf16)",
          {{"size", "m = n = k = N (default 256)", true},
           {"m", "rows of A and C"},
           {"n", "columns of B and C"},
           {"k", "columns of A, rows of B"}},
          {{"dtype", {"f32", "f16", "bf16"}, "element type: f32, f16 or bf16 (default f32)"},
           {"math",
            {"ieee", "tf32"},
            "f32 products: ieee, or tf32 to allow TF32 inputs on tensor cores (default ieee)"}},
          [](const OpArguments& a) {
            const auto [m, n, k, dtype, math] = matmul_shape(a);
            (void)math;
            (void)checked_matrix_bytes(m, k, dtype, "A");
            (void)checked_matrix_bytes(k, n, dtype, "B");
            (void)checked_matrix_bytes(m, n, dtype, "C");
          },
          [](cl::Client& client, const OpArguments& args) {
            const auto [m, n, k, dtype, math] = matmul_shape(args);
            const auto context = client.context();
            const auto a = random_matrix(context, m, k, dtype, 1);
            const auto b = random_matrix(context, k, n, dtype, 2);
            auto c = random_matrix(context, m, n, dtype, 3);
            matmul(client, a, b, c, 1.0f, 0.0f, math);
            return reports_of(matmul_tuner(), client);
          }};
}

ShippedOp reduce_op_entry() {
  return {"reduce",
          "the sum or maximum of an f32 array",
          {{"size", "array length (default 1048576)", true}},
          {reduction},
          [](const OpArguments&) {},
          [](cl::Client& client, const OpArguments& args) {
            const auto input = random_vector(client.context(), args.size("size", 1u << 20), 1);
            (void)reduce(client, input, reduce_op(args));
            return reports_of(reduce_tuner(), client);
          }};
}

ShippedOp reduce_rows_op() {
  return {"reduce_rows",
          "the sum or maximum of every row of an f32 matrix",
          matrix_sizes("rows = cols = N (default 1024)"),
          {reduction},
          check_matrix,
          [](cl::Client& client, const OpArguments& args) {
            const Shape shape = matrix_shape(args, 1024);
            const auto context = client.context();
            const auto matrix = random_matrix(context, shape.rows, shape.cols, DType::f32, 1);
            auto out = random_vector(context, shape.rows, 2);
            reduce_rows(client, matrix, reduce_op(args), out);
            return reports_of(reduce_rows_tuner(), client);
          }};
}

ShippedOp transpose_op() {
  return {"transpose",
          "out = in^T for an f32 matrix",
          matrix_sizes("rows = cols = N (default 1024)"),
          {},
          check_matrix,
          [](cl::Client& client, const OpArguments& args) {
            const Shape shape = matrix_shape(args, 1024);
            const auto context = client.context();
            const auto in = random_matrix(context, shape.rows, shape.cols, DType::f32, 1);
            auto out = random_matrix(context, shape.cols, shape.rows, DType::f32, 2);
            transpose(client, in, out);
            return reports_of(transpose_tuner(), client);
          }};
}

// Every size and choice in `a` is one `op` declares, and every choice's value one of its values:
// a caller that builds OpArguments itself (the tool's parser checks the same) gets an error that
// names what it gave and what the op takes, not a default in its place.
void check_declared(const ShippedOp& op, const OpArguments& a) {
  const auto refuse = [&op](const std::string& what) {
    throw AutotuneError(ErrorKind::settings, what, op.name);
  };
  // Named members, not structured bindings: clang before 16 cannot capture those in a lambda.
  for (const auto& size : a.sizes) {
    const std::string& name = size.first;
    const bool known = std::any_of(op.sizes.begin(), op.sizes.end(),
                                   [&](const SizeParameter& p) { return p.name == name; });
    if (!known) refuse("'" + name + "' is not a size of " + op.name);
  }
  for (const auto& choice : a.choices) {
    const std::string& name = choice.first;
    const std::string& value = choice.second;
    const auto it = std::find_if(op.choices.begin(), op.choices.end(),
                                 [&](const ChoiceParameter& p) { return p.name == name; });
    if (it == op.choices.end()) refuse("'" + name + "' is not a choice of " + op.name);
    if (std::find(it->values.begin(), it->values.end(), value) == it->values.end()) {
      std::string values;
      for (const auto& v : it->values) values += (values.empty() ? "" : ", ") + v;
      refuse("'" + value + "' is not a value of " + name + " (" + values + ")");
    }
  }
}

// `op` with its check and its tuning run behind check_declared.
ShippedOp declared_only(ShippedOp op) {
  const ShippedOp declared{op.name, op.summary, op.sizes, op.choices, {}, {}};
  op.check = [declared, own = std::move(op.check)](const OpArguments& a) {
    check_declared(declared, a);
    own(a);
  };
  op.tune = [declared, own = std::move(op.tune)](cl::Client& client, const OpArguments& a) {
    check_declared(declared, a);
    return own(client, a);
  };
  return op;
}

}  // namespace

const std::vector<ShippedOp>& shipped_ops() {
  static const std::vector<ShippedOp> ops{
      declared_only(matmul_op()), declared_only(reduce_op_entry()), declared_only(reduce_rows_op()),
      declared_only(transpose_op())};
  return ops;
}

const ShippedOp* find_shipped_op(std::string_view name) {
  const auto& ops = shipped_ops();
  const auto it =
      std::find_if(ops.begin(), ops.end(), [&](const ShippedOp& op) { return op.name == name; });
  return it == ops.end() ? nullptr : &*it;
}

}  // namespace tunekit::ops

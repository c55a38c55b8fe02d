// The list of shipped ops (ops/registry.hpp): every op in it tunes under its own name from the
// parameters it declares, and checks its sizes before any device work.
#include <catch2/catch.hpp>
#include <set>
#include <tunekit/ops/registry.hpp>

#include "ops_support.hpp"

using namespace tunekit;
using namespace tunekit::ops;

TEST_CASE("every shipped op in the registry tunes under its own name from its parameters",
          "[ops][registry][opencl]") {
  test::quick_tuning();
  auto& client = test::default_client();
  std::set<std::string> names;
  for (const auto& op : shipped_ops()) {
    INFO(op.name);
    CHECK(names.insert(op.name).second);  // one entry per op
    CHECK(find_shipped_op(op.name) == &op);
    CHECK_FALSE(op.summary.empty());
    REQUIRE(op.check);
    REQUIRE(op.tune);
    OpArguments small;
    for (const auto& size : op.sizes) small.sizes.emplace(size.name, 16);
    for (const auto& choice : op.choices) {
      REQUIRE_FALSE(choice.values.empty());
      small.choices.emplace(choice.name, choice.values.back());  // not the default
    }
    op.check(small);
    const auto reports = op.tune(client, small);
    REQUIRE_FALSE(reports.empty());
    for (const auto& report : reports) {
      CHECK(report.op == op.name);
      CHECK(report.winner() != nullptr);
    }
  }
  CHECK(names == std::set<std::string>{"matmul", "reduce", "reduce_rows", "transpose"});
  CHECK(find_shipped_op("conv2d") == nullptr);
}

TEST_CASE("a shipped op's choices reach its key, and sizes too large for its kernels are refused",
          "[ops][registry][opencl]") {
  test::quick_tuning();
  auto& client = test::default_client();
  const ShippedOp* reduce = find_shipped_op("reduce");
  REQUIRE(reduce);
  OpArguments max;
  max.sizes.emplace("size", 1000);
  max.choices.emplace("reduce", "max");
  bool found = false;
  for (const auto& report : reduce->tune(client, max)) found |= report.key == "n=1024 op=max";
  CHECK(found);
  const ShippedOp* transpose = find_shipped_op("transpose");
  REQUIRE(transpose);
  OpArguments wide;
  wide.sizes.emplace("rows", 3);
  wide.sizes.emplace("cols", std::uint64_t{6148914691236517206});
  CHECK_THROWS_AS(transpose->check(wide), AutotuneError);
  wide.sizes["cols"] = 16;
  CHECK_NOTHROW(transpose->check(wide));
}

TEST_CASE(
    "a shipped op refuses a size, a choice or a choice's value it does not declare, naming it",
    "[ops][registry]") {
  const ShippedOp* matmul = find_shipped_op("matmul");
  REQUIRE(matmul);
  OpArguments upper;
  upper.choices.emplace("math", "TF32");  // not a default in its place: an error
  CHECK_THROWS_WITH(matmul->check(upper),
                    Catch::Contains("'TF32' is not a value of math (ieee, tf32)"));
  OpArguments unknown;
  unknown.choices.emplace("precision", "high");
  CHECK_THROWS_WITH(matmul->check(unknown),
                    Catch::Contains("'precision' is not a choice of matmul"));
  OpArguments rows;
  rows.sizes.emplace("rows", 16);  // transpose's, not matmul's
  CHECK_THROWS_AS(matmul->check(rows), AutotuneError);
  // The tuning run checks the same, for a caller that skips check().
  auto& client = test::default_client();
  CHECK_THROWS_WITH(matmul->tune(client, upper), Catch::Contains("'TF32'"));
  OpArguments fine;
  fine.sizes.emplace("size", 16);
  fine.choices.emplace("dtype", "f16");
  fine.choices.emplace("math", "tf32");  // ignored for 16-bit storage (MatmulMath)
  CHECK_NOTHROW(matmul->check(fine));
}

// A user's program that clang must compile as GCC does (diagnostics.clang_compiles_a_user_program):
// candidates that return their output, validated against a host reference, and candidates that
// return void, validated on their inputs. Until 2026-12-07 clang 14 rejected the first (the
// validation's discarded `return` of the inputs sat in a generic lambda).
#include <cstdint>
#include <functional>
#include <tunekit/tunekit.hpp>
#include <tuple>

struct SizeKey {
  BOOST_HANA_DEFINE_STRUCT(SizeKey, (tunekit::Anchored<std::uint64_t>, n));
};

int main() {
  const auto key = [](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; };
  const auto inputs = [](const SizeKey& k, const int&) {
    return std::tuple<int>(static_cast<int>(k.n.value()));
  };
  tunekit::HostClient client;
  int n = 8;

  static tunekit::LocalTuner<SizeKey> returning("returning");
  const auto& with_output = returning.init([&] {
    return tunekit::TunableSet{key, inputs}
        .with(tunekit::Tunable{"plus_zero", [](tunekit::HostClient&, int& v) { return v + 0; }})
        .with(tunekit::Tunable{"times_one", [](tunekit::HostClient&, int& v) { return v * 1; }})
        .validate_with(tunekit::HostReference{[](int v) { return v; }, std::equal_to<>{}});
  });
  const int out = returning.execute(client.id(), client, with_output, n);

  static tunekit::LocalTuner<SizeKey> in_place("in_place");
  const auto& without_output = in_place.init([&] {
    return tunekit::TunableSet{key, inputs}
        .with(tunekit::Tunable{"add_zero", [](tunekit::HostClient&, int& v) { v += 0; }})
        .with(tunekit::Tunable{"mul_one", [](tunekit::HostClient&, int& v) { v *= 1; }});
  });
  in_place.execute(client.id(), client, without_output, n);
  return out == n ? 0 : 1;
}

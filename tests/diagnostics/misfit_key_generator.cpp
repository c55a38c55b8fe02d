// Does not compile, on purpose: the key generator takes an `int&`, but keys are made from the
// inputs as const references. tests/diagnostics/check_first_error.cmake checks that the
// compiler says so first (before, its first error was a bare "no matching function ... make_key").
#include <tunekit/tunekit.hpp>

struct Key {
  BOOST_HANA_DEFINE_STRUCT(Key, (int, n));
};

int main() {
  static tunekit::LocalTuner<Key> tuner("misfit_key");
  tunekit::HostClient host;
  const auto& set = tuner.init([] {
    return tunekit::TunableSet{[](int& n) { return Key{n}; }, tunekit::CloneInputs{}}.with(
        tunekit::Tunable{"fits", [](int& n) { return n; }});
  });
  int n = 1;
  return tuner.execute(host.id(), host, set, n);
}

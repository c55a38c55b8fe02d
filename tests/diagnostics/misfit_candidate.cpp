// Does not compile, on purpose: candidate 1 takes a `float&`, which an int cannot bind to.
// tests/diagnostics/check_first_error.cmake checks what the compiler says first.
#include <tunekit/tunekit.hpp>

struct Key {
  BOOST_HANA_DEFINE_STRUCT(Key, (int, n));
};

int main() {
  static tunekit::LocalTuner<Key> tuner("misfit");
  tunekit::HostClient host;
  const auto& set = tuner.init([] {
    return tunekit::TunableSet{[](const int& n) { return Key{n}; }, tunekit::CloneInputs{}}
        .with(tunekit::Tunable{"fits", [](int& n) { return n; }})
        .with(tunekit::Tunable{"misfit", [](float& x) { return static_cast<int>(x); }});
  });
  int n = 1;
  return tuner.execute(host.id(), host, set, n);
}

// CandidateValidation: how a tuning checks a candidate's output before it may be measured. The
// reference is the set's host reference, else the first candidate that runs (computed once). A
// candidate on shared inputs (returning void or a handle to its output) is validated on cleared
// or fresh ones, so that the previous candidate's outputs cannot pass as its own. Two candidates
// that agree with each other and not with a candidate reference fail the tuning, naming the
// reference as the suspect.
// A part of TuningRun (tuning_run.hpp), which owns one per tuning; also the engine's small shared
// pieces of it (callers_error, Stopwatch).
#pragma once

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tunekit/detail/call.hpp"
#include "tunekit/error.hpp"
#include "tunekit/host_reference.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/timing_client.hpp"

namespace tunekit {

namespace detail {

/// An exception of the caller's own code that a tuning calls (the input generator, the
/// validator, a priority): it ends the tuning and reaches execute()'s caller, and no candidate
/// is failed for it, so nothing is remembered or stored (a fixed validator must not find its
/// old error on disk: the set's checksum does not cover the caller's code). `tuning` names the
/// op and key ("dot [length=1024]"), so that the caller's catch block needs no context of its own.
inline AutotuneError callers_error(const std::string& what, const std::string& tuning,
                                   std::exception_ptr thrown) {
  const auto cause = error_from_exception(thrown, "");
  return AutotuneError(cause.kind(),
                       what + " failed in the tuning of " + tuning + ": " + cause.message());
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Adds the wall time of its scope to `into` (one of TuningReport::time_spent's members).
struct Stopwatch {
  double& into;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  ~Stopwatch() { into += seconds_since(started); }
};

}  // namespace detail

/// The validation of one tuning's candidates of `Set` on `Client` (see the file's comment).
template <class Key, class Client, class Set, class... Inputs>
class CandidateValidation {
 public:
  using Output = execute_result_t<Set, Client, Inputs...>;
  /// One set of benchmark inputs, as the set's input generator makes them.
  using Bench = decltype(std::declval<const Set&>().make_inputs(
      std::declval<Client&>(), std::declval<const Key&>(), std::declval<const Inputs&>()...));

  /// `fresh_inputs`: a new set of benchmark inputs (throws what the input generator throws).
  /// `time`: where the validation's and the first calls' wall time is added.
  /// `tuning`: the op and key, as the caller's errors name them (detail::callers_error).
  CandidateValidation(Client& client, const Set& set, std::function<Bench()> fresh_inputs,
                      TuningTime& time, std::string tuning)
      : client_(client),
        set_(set),
        fresh_inputs_(std::move(fresh_inputs)),
        time_(time),
        tuning_(std::move(tuning)) {}
  CandidateValidation(const CandidateValidation&) = delete;
  CandidateValidation& operator=(const CandidateValidation&) = delete;

  /// Why candidate `index`'s output on `bench` (the tuning's inputs for its next call: the shared
  /// ones where the set shares them) is wrong, or nothing when it is right or nothing can be
  /// compared. Throws when the reference itself is the suspect, and the caller's errors
  /// (detail::callers_error).
  std::optional<AutotuneError> validate(std::size_t index, Bench& bench) {
    StepTime step{time_};  // first: it outlasts the outputs it times the end of
    const std::string name = set_.name(index);
    if (!reference_tried_) {
      reference_tried_ = true;
      make_reference(bench);
    }
    std::optional<std::string> problem;
    std::optional<Compared> output;
    std::optional<Bench> fresh;
    Bench& on = validation_inputs(bench, fresh);
    try {
      const detail::Stopwatch first_call{step.first_call};
      output.emplace(output_of(set_.locate(index), on));
      wait_for(client_);
    } catch (...) {
      return error_from_exception(std::current_exception(), name);
    }
    if (!reference_) {
      // No candidate ran when the reference was made (each failed then): the first that runs
      // is the reference, and the others are compared with it, never passed unchecked.
      if constexpr (!detail::is_host_reference_v<Validator>) {
        reference_.emplace(std::move(*output));
        reference_index_ = index;
      }
      return std::nullopt;
    }
    try {
      problem = differs(*reference_, *output);
    } catch (...) {
      throw detail::callers_error("the validator", tuning_, std::current_exception());
    }
    if (!problem) return std::nullopt;
    if (reference_index_ == index) {  // the reference differs from itself: not deterministic
      return AutotuneError(ErrorKind::wrong_output,
                           *problem + " (it is the reference: its output changes between calls)",
                           name);
    }
    suspect_reference(name, std::move(*output));
    return AutotuneError(ErrorKind::wrong_output,
                         *problem + " (reference: '" + reference_name() + "')", name);
  }

 private:
  // A validation step's wall time, all of it in TuningTime: its candidate's first call in
  // first_calls, the rest (the reference, the clear of shared outputs, the comparison, the
  // outputs' release) in validating. On the H200 the comparison's stopwatch alone left 2-4 s of
  // a cold matmul 2048 tuning's validation steps in the report's "other".
  struct StepTime {
    TuningTime& time;
    double first_call = 0;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    ~StepTime() {
      time.first_calls += first_call;
      time.validating += detail::seconds_since(started) - first_call;  // first_call is inside
    }
  };

  // What validation compares: the output, or the benchmark inputs of a candidate returning void.
  using Compared = std::conditional_t<std::is_void_v<Output>, Bench, Output>;
  using Validator = std::remove_cvref_t<decltype(std::declval<const Set&>().validator())>;
  // What the reference is: a host reference's own result where it is not a Compared (e.g. the
  // sampled elements of a product: validation reads no more than it compares), else a Compared.
  template <class V, bool = detail::is_host_reference_v<V>>
  struct ReferenceOf {
    using type = Compared;
  };
  template <class V, class Tuple>
  struct ExpectedOf;
  template <class V, class... In>
  struct ExpectedOf<V, std::tuple<In...>> {
    using type = std::remove_cvref_t<
        detail::maybe_client_result_t<decltype(std::declval<const V&>().expected), Client, In&...>>;
  };
  template <class V>
  struct ReferenceOf<V, true> {
    using Made = typename ExpectedOf<V, Bench>::type;
    using type = std::conditional_t<std::is_convertible_v<Made, Compared>, Compared, Made>;
  };
  using Reference = typename ReferenceOf<Validator>::type;

  // The output of candidate `where` on `bench` (the inputs themselves when it returns void).
  // The test of void is the class's, not a generic lambda's: clang rejects a discarded
  // `return bench` that does not depend on the lambda's parameters.
  Compared output_of(CandidateLocation where, Bench& bench) {
    if constexpr (std::is_void_v<Output>) {
      std::apply([&](auto&... args) { detail::call_unwrapped(where, client_, set_, args...); },
                 bench);
      return bench;
    } else {
      return std::apply(
          [&](auto&... args) -> Compared {
            return detail::call_unwrapped(where, client_, set_, args...);
          },
          bench);
    }
  }

  // The inputs a candidate is validated on. Shared ones hold the previous candidate's outputs,
  // which a candidate that skips some of its writes would pass as its own (whether it returns
  // void or a handle to its output): the validator's clear step overwrites them (HostReference's
  // third member), else the candidate runs on a fresh set, made in `fresh`. Throws the caller's
  // errors (callers_error).
  Bench& validation_inputs(Bench& bench, std::optional<Bench>& fresh) {
    if (!set_.shares_inputs()) return bench;
    if constexpr (detail::clears_outputs_v<Validator>) {
      try {
        std::apply(
            [&](auto&... in) {
              (void)detail::invoke_maybe_client(set_.validator().clear, client_, in...);
            },
            bench);
      } catch (...) {
        throw detail::callers_error("the validator's clear step", tuning_,
                                    std::current_exception());
      }
      return bench;
    } else {
      try {
        fresh.emplace(fresh_inputs_());
      } catch (...) {
        throw detail::callers_error("the input generator", tuning_, std::current_exception());
      }
      return *fresh;
    }
  }

  // The reference output: the host reference's (on `bench` where the set shares its inputs, no
  // second set of buffers; else on fresh ones), else the first candidate's that runs.
  void make_reference(Bench& bench) {
    if constexpr (detail::is_host_reference_v<Validator>) {
      // Not caught: a host reference that fails is the set's error, not a candidate's.
      std::optional<Bench> own;
      if (!set_.shares_inputs()) own.emplace(fresh_inputs_());
      reference_.emplace(std::apply(
          [&](auto&... in) {
            return Reference(
                detail::invoke_maybe_client(set_.validator().expected, client_, in...));
          },
          own ? *own : bench));
    } else {
      (void)bench;
      for (std::size_t r = 0; r < set_.size() && !reference_; ++r) {
        std::optional<Bench> reference_inputs;
        try {  // the caller's failure ends the tuning: no check is skipped for it
          reference_inputs.emplace(fresh_inputs_());
        } catch (...) {
          throw detail::callers_error("the input generator", tuning_, std::current_exception());
        }
        try {  // a candidate that fails here is not the reference (its own call fails it)
          reference_.emplace(output_of(set_.locate(r), *reference_inputs));
          wait_for(client_);
          reference_index_ = r;
        } catch (...) {
          reference_.reset();
        }
      }
    }
  }

  // What messages call the reference: the candidate that is it, else the set's host reference.
  std::string reference_name() const {
    return reference_index_ ? set_.name(*reference_index_) : "host reference";
  }

  // What the validator says of `output` against `expected`: nothing when it accepts it.
  template <class Expected>
  std::optional<std::string> differs(const Expected& expected, const Compared& output) {
    const auto verdict = detail::invoke_maybe_client(set_.validator(), client_, expected, output);
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(verdict)>, bool>) {
      if (!verdict) return std::string("output differs from the reference");
    } else {
      if (verdict && !verdict->empty()) return *verdict;
    }
    return std::nullopt;
  }

  // Candidate `name` disagreed with a candidate reference. When two candidates disagree with it
  // but agree with each other, the reference is the suspect: the tuning fails naming it, and
  // nothing is decided (a wrong reference must not fail the right candidates and win).
  void suspect_reference(const std::string& name, Compared output) {
    if constexpr (!detail::is_host_reference_v<Validator>) {
      if (!dissent_) {
        dissent_.emplace(std::move(output));
        dissent_name_ = name;
        return;
      }
      bool agree = false;
      try {
        agree = !differs(*dissent_, output);
      } catch (...) {
      }
      if (agree) {
        throw AutotuneError(
            ErrorKind::wrong_output,
            "the validation reference '" + reference_name() + "' is the suspect: '" +
                dissent_name_ + "' and '" + name +
                "' agree with each other and differ from it. Nothing was decided; fix it, or give "
                "the set a host reference (HostReference)",
            reference_name());
      }
    } else {
      (void)name, (void)output;
    }
  }

  Client& client_;
  const Set& set_;
  std::function<Bench()> fresh_inputs_;
  TuningTime& time_;
  const std::string tuning_;  // "op [key]", for the caller's errors
  std::optional<Reference> reference_;
  std::optional<std::size_t> reference_index_;  // the candidate that is the reference, if one is
  bool reference_tried_ = false;
  std::optional<Compared> dissent_;  // the first output that differed from a candidate reference
  std::string dissent_name_;
};

}  // namespace tunekit

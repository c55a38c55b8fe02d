// A tuning survives being interrupted: its outcomes are recorded as they are measured (the
// in-progress record), and the next tuning of the same key, set and device resumes from them.
#include <sys/resource.h>

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <set>

#include "test_cache_support.hpp"

using namespace tunekit;
using namespace tunekit::test;

namespace {

constexpr std::size_t candidates = 6;
constexpr std::size_t fastest = 3;

/// What the on_progress hook throws to interrupt a tuning, as a kill would.
struct Interrupted {};

/// One "program": a fresh Tuner over a fresh FileStore in `dir` tunes key 64 of a set of six
/// candidates whose calls are counted. `stop_after`: the tuning is interrupted once it measured
/// that many candidates (0: never).
class Program {
 public:
  Program(const fs::path& dir, std::size_t stop_after, std::string source = "v1",
          std::string device = "device A")
      : client_(std::move(device)), source_(std::move(source)) {
    Settings settings = counting_settings();  // no confirmation: only measuring calls candidates
    settings.persistent_cache = true;
    settings.cache_dir = dir;
    if (stop_after > 0) {
      settings.on_progress = [stop_after](const TuningProgress& progress) {
        if (progress.done >= stop_after) throw Interrupted{};
      };
    }
    tuner_.emplace("resumed_op", client_.id(), settings, std::make_shared<FileStore>(dir));
  }

  /// Tunes (or loads) key 64; returns the winner's result.
  std::uint64_t run() {
    auto key_of = [](const std::uint64_t& n) { return SizeKey{n}; };
    auto inputs = [](const SizeKey& key, const std::uint64_t&) {
      return std::tuple<std::uint64_t>(key.n.value());
    };
    auto candidate = [this](std::size_t i) {
      return Tunable{"c" + std::to_string(i),
                     [this, i](VirtualClient& c, std::uint64_t& n) {
                       ++calls_[i];
                       c.spend(i == fastest ? 1e-3 : 2e-3 + 1e-4 * static_cast<double>(i));
                       return n + i;
                     }}
          .fingerprint(source_);
    };
    const auto set = TunableSet{key_of, inputs}
                         .with(candidate(0))
                         .with(candidate(1))
                         .with(candidate(2))
                         .with(candidate(3))
                         .with(candidate(4))
                         .with(candidate(5));
    std::uint64_t n = 64;
    return tuner_->execute(client_, set, SizeKey{64}, n);
  }

  /// The candidates that ran in this program.
  std::set<std::string> called() const {
    std::set<std::string> names;
    for (std::size_t i = 0; i < candidates; ++i) {
      if (calls_[i] > 0) names.insert("c" + std::to_string(i));
    }
    return names;
  }
  std::optional<TuningReport> report() const { return tuner_->report(SizeKey{64}); }

 private:
  VirtualClient client_;
  std::string source_;
  std::array<std::size_t, candidates> calls_{};
  std::optional<Tuner<SizeKey>> tuner_;
};

std::set<std::string> names_of(const std::vector<AutotuneOutcome>& outcomes) {
  std::set<std::string> names;
  for (const auto& outcome : outcomes) names.insert(outcome.name);
  return names;
}

std::set<std::string> all_but(const std::set<std::string>& measured) {
  std::set<std::string> rest;
  for (std::size_t i = 0; i < candidates; ++i) {
    if (!measured.contains("c" + std::to_string(i))) rest.insert("c" + std::to_string(i));
  }
  return rest;
}

}  // namespace

TEST_CASE("an interrupted tuning resumes: what was measured is not measured again", "[resume]") {
  TempDir dir;
  Program first(dir.path(), 3);
  REQUIRE_THROWS_AS(first.run(), Interrupted);
  const auto measured = first.called();
  REQUIRE(measured.size() == 3);
  {
    const auto records = FileStore(dir.path()).progress();
    REQUIRE(records.size() == 1);
    CHECK(records[0].id.key == key_to_string(SizeKey{64}));
    CHECK(records[0].result.winner.empty());
    CHECK(names_of(records[0].result.outcomes) == measured);
    const auto mode =
        fs::status(FileStore(dir.path()).progress_record_of(records[0].id)).permissions();
    CHECK((mode & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
  }

  Program second(dir.path(), 0);
  CHECK(second.run() == 64 + fastest);
  // The rest was measured, and one recorded candidate again: the best of the record, whose new
  // time scales the recorded ones to this tuning's problem (rescale_resumed).
  const auto called = second.called();
  std::set<std::string> again;
  for (const auto& name : measured) {
    if (called.count(name)) again.insert(name);
  }
  CHECK(again.size() == 1);
  CHECK(called.size() == all_but(measured).size() + 1);
  for (const auto& name : all_but(measured)) CHECK(called.count(name) == 1);
  const auto report = second.report();
  REQUIRE(report);
  CHECK(std::set<std::string>(report->resumed.begin(), report->resumed.end()) == measured);
  REQUIRE(report->winner() != nullptr);
  CHECK(report->winner()->name == "c3");
  CHECK(report->outcomes.size() == candidates);
  CHECK(FileStore(dir.path()).progress().empty());  // done: the record is gone

  Program third(dir.path(), 0);  // and the result is cached as usual
  CHECK(third.run() == 64 + fastest);
  CHECK(third.called() == std::set<std::string>{"c3"});
}

TEST_CASE("a record of another build of the set or another device is not resumed", "[resume]") {
  TempDir dir;
  Program first(dir.path(), 3, "v1");
  REQUIRE_THROWS_AS(first.run(), Interrupted);
  const auto v1 = FileStore(dir.path()).progress();
  REQUIRE(v1.size() == 1);

  Program other_device(dir.path(), 0, "v1", "device B");
  CHECK(other_device.run() == 64 + fastest);
  CHECK(other_device.called().size() == candidates);
  CHECK(other_device.report()->resumed.empty());

  Program changed(dir.path(), 2, "v2");  // another checksum: starts over, replaces the record
  REQUIRE_THROWS_AS(changed.run(), Interrupted);
  CHECK(changed.called().size() == 2);
  const auto v2 = FileStore(dir.path()).progress();
  REQUIRE(v2.size() == 1);
  CHECK(v2[0].id.checksum != v1[0].id.checksum);
  CHECK(v2[0].result.outcomes.size() == 2);

  Program back(dir.path(), 0, "v1");  // v1's record was replaced: measured in full
  CHECK(back.run() == 64 + fastest);
  CHECK(back.called().size() == candidates);
  CHECK(back.report()->resumed.empty());
}

TEST_CASE("an unusable in-progress record is reported and ignored", "[resume]") {
  TempDir dir;
  Program first(dir.path(), 2);
  REQUIRE_THROWS_AS(first.run(), Interrupted);
  const auto records = FileStore(dir.path()).progress();
  REQUIRE(records.size() == 1);
  const EntryId id = records[0].id;
  const fs::path record = FileStore(dir.path()).progress_record_of(id);
  const std::string valid = read_text(record);

  SECTION("garbage") { write_text(record, "garbage"); }
  SECTION("truncated") { write_text(record, valid.substr(0, valid.size() / 2)); }
  SECTION("edited by hand (its checksum no longer matches)") {
    std::string edited = valid;
    const auto at = edited.find("\"samples\": ");
    REQUIRE(at != std::string::npos);
    edited.insert(at + 11, "1");
    write_text(record, edited);
  }
  SECTION("a valid record naming what the set does not have") {
    auto outcomes = records[0].result.outcomes;
    outcomes[0].name = "not a candidate";
    FileStore(dir.path()).save_progress(id, outcomes);
  }
  SECTION("a link to another file") {
    const fs::path elsewhere = dir / "elsewhere.json";
    write_text(elsewhere, valid);
    fs::remove(record);
    fs::create_symlink(elsewhere, record);
  }
  CapturedWarnings warnings;
  Program second(dir.path(), 0);
  CHECK(second.run() == 64 + fastest);
  CHECK(second.called().size() == candidates);  // started over
  CHECK(second.report()->resumed.empty());
  CHECK(warnings.count("in-progress record") == 1);
  CHECK(FileStore(dir.path()).progress().empty());
  if (fs::exists(dir / "elsewhere.json")) CHECK(read_text(dir / "elsewhere.json") == valid);
}

TEST_CASE("clearing the cache removes in-progress records", "[resume]") {
  TempDir dir;
  Program first(dir.path(), 2);
  REQUIRE_THROWS_AS(first.run(), Interrupted);
  SECTION("of every op") { FileStore(dir.path()).clear(); }
  SECTION("of the op") { FileStore(dir.path()).clear("resumed_op"); }
  CHECK(FileStore(dir.path()).progress().empty());
  Program second(dir.path(), 0);
  CHECK(second.run() == 64 + fastest);
  CHECK(second.called().size() == candidates);
}

TEST_CASE("a process killed mid-tuning: the next one resumes where it died", "[resume][process]") {
  TempDir dir;
  const auto cache = (dir / "cache").string();
  Child killed({"--dir", cache, "--kill-after", "1", "64"}, dir / "killed.out");
  CHECK(killed.wait() == 128 + SIGKILL);
  REQUIRE(FileStore(cache).progress().size() == 1);
  CHECK(run_child({"--dir", cache, "64"}, dir / "next.out") == 1);
  const std::string out = read_text(dir / "next.out");
  CHECK(out.find("resumed=1 winners=fast") != std::string::npos);
  CHECK(FileStore(cache).progress().empty());
}

TEST_CASE("a process that ends while it tunes in the background ends cleanly",
          "[background][process]") {
  TempDir dir;
  const auto cache = (dir / "cache").string();
  // Main returns (the client, local to main, stops its tunings as it goes), or calls std::exit
  // (the exit handler stops them): either way the process exits 0, whatever the tuning's stage.
  for (const char* how : {"--background", "--exit"}) {
    std::vector<std::string> args{"--dir", cache, "--background", "--tune-ms", "50", "64"};
    if (std::string(how) == "--exit") args.push_back("--exit");
    Child child(args, dir / "background.out");
    CHECK(child.wait() == 0);
    CHECK(read_text(dir / "background.out").find("winners=") != std::string::npos);
  }
  // What they measured is resumed or cached: the next process ends with the right winner.
  CHECK(run_child({"--dir", cache, "64"}, dir / "next.out") >= 0);
  CHECK(read_text(dir / "next.out").find("winners=fast") != std::string::npos);
}

TEST_CASE(
    "a process that exits right after its first call still decides the key it queued in "
    "the background",
    "[background][process]") {
  TempDir dir;
  const auto cache = (dir / "cache").string();
  // std::exit right after the call: the exit handler lets the tuning (about 0.1 s) finish
  // within its grace instead of stopping it at once, so the key is decided and stored.
  Child child({"--dir", cache, "--background", "--tune-ms", "50", "--exit", "64"},
              dir / "short.out");
  CHECK(child.wait() == 0);
  CHECK(run_child({"--dir", cache, "64"}, dir / "next.out") >= 0);
  INFO(read_text(dir / "next.out"));
  CHECK(read_text(dir / "next.out").find("tunings=0 resumed=0 winners=fast") != std::string::npos);
}

TEST_CASE("a key stranded by stop_background_tunings() is tuned by its next call",
          "[background][process]") {
  TempDir dir;
  const auto cache = (dir / "cache").string();
  // Each candidate's input takes 200 ms: the stop comes while the tuning runs (or before it
  // starts). The next call of the key cannot queue it again, so it tunes it itself.
  Child child({"--dir", cache, "--background", "--tune-ms", "200", "--stop-all", "64"},
              dir / "stopped.out");
  CHECK(child.wait() == 0);
  INFO(read_text(dir / "stopped.out"));
  CHECK(read_text(dir / "stopped.out").find("decided_after_stop=1") != std::string::npos);
}

TEST_CASE("a progress record that cannot be written is said once, not once per candidate",
          "[resume]") {
  TempDir dir;
  FileStore store(dir.path());
  const EntryId id{"device A", "progress_op", "n=1", 0x77};
  const auto outcomes = sample_result().outcomes;
  store.save_progress(id, outcomes);
  const fs::path folder = dir / "v2" / "progress_op.progress";
  REQUIRE(fs::is_directory(folder));
  REQUIRE(std::distance(fs::directory_iterator(folder), fs::directory_iterator()) == 1);
  const fs::path record = fs::directory_iterator(folder)->path();
  // A full disk alike: no write of more than 64 bytes succeeds (EFBIG instead of ENOSPC), and
  // each failure names its own temporary file.
  (void)record;
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = before;
  small.rlim_cur = 64;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  CapturedWarnings warnings;
  for (int candidate = 0; candidate < 10; ++candidate) store.save_progress(id, outcomes);
  ::setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, old_handler);
  CHECK(warnings.count("could not record the progress") == 1);
  CHECK(warnings.lines() == 1);
}

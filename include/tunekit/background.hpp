// Background tunings (Settings::tuning = TuningMode::background): a Tuner queues the tunings of
// keys that execute() met untuned and runs them, one after another, on a worker thread of its
// own, while calls are served by a provisional candidate (engine/background_tuning.hpp). This
// header says what stops them, and when the process or a client goes away; the queue that runs
// them is engine/background_queue.hpp.
//
// A background tuning uses the client passed to the execute() that queued it (by reference) and
// copies of that call's inputs. It must end before the client is destroyed. tunekit makes sure of
// it where it can:
//  - At exit (std::exit, or main returning), an atexit handler registered each time a worker
//    starts lets the background tunings go on for up to 2 s (detail::background_grace), then
//    stops every one and waits for it, before any object constructed before that worker started
//    is destroyed: a static or global client, and the static LocalTuners of the ops, are still
//    alive while the tunings end. (Handlers run in the reverse order of registration,
//    interleaved with static destructors.) So a process that ends right after its first calls
//    still decides their keys, or leaves more of their tunings for the next process to resume.
//  - cl::Client's destructor gives the tunings that use it the same 2 s, then stops and waits
//    for them (a client local to main() goes before exit handlers run).
//  - Another client type (a TimingClient of your own) must outlive its tunings, or call
//    stop_background_tunings_using(this) in its destructor, or the program calls
//    stop_background_tunings().
// A stopped tuning ends between two candidates (the candidate being measured finishes first);
// its in-progress record stays in the cache, so the next process resumes it.
#pragma once

namespace tunekit {

/// Stops every background tuning of this process and waits for the running ones; tunings that
/// execute() would queue later are done in the calling thread instead (blocking mode).
void stop_background_tunings() noexcept;

/// Stops the background tunings that use `client` (queued ones are dropped, a running one ends
/// at its next candidate) and waits for them. Other clients' tunings go on.
void stop_background_tunings_using(const void* client) noexcept;

}  // namespace tunekit

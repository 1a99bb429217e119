// The CPU backend's threads: a pool that parallel_for (core/parallel.hpp) hands its items to.
//
// With OpenMP's parallel regions the calling thread waited at the region's end for every
// thread of the team, including one that the scheduler had not yet run: on the shared 2-core
// build machine a 0.15 ms operation took 4 to 12 ms (multiples of the 4 ms scheduler tick) in
// most 2-thread runs. Here pool threads take items from a shared counter when they get to run,
// the caller takes the rest, and the caller waits only for items in progress, so a late thread
// costs nothing but its share of the work. The caller's correctness never depends on the pool
// threads; a child process after fork() runs everything on its calling thread (below).
#include "core/parallel.hpp"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <system_error>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace granula::detail {

// Without GRANULA_WITH_THREADS everything runs on the calling thread.
#if defined(GRANULA_HAVE_THREADS)
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

struct job {
    void (*call)(void*, std::int64_t);
    void* context;
    std::int64_t n;
    int helpers;                        // pool threads that may join
    std::atomic<std::int64_t> next{0};  // the first item nobody has taken
    std::atomic<int> joined{0};

    void work() {
        for (std::int64_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) call(context, i);
    }
};

class thread_pool {
public:
    // False while the pool runs another job (a nested or concurrent parallel_for): the caller
    // then runs the items itself.
    bool run(job& j) {
        if (busy_.exchange(true)) return false;
        grow(j.helpers);
        current_.store(&j);
        generation_.fetch_add(1);
        generation_.notify_all();
        j.work();
        // Pool threads that find no job from here on leave it alone; wait for those inside.
        current_.store(nullptr);
        for (int spins = 0; active_.load() != 0; ++spins)
            if (spins < 4096)
                cpu_relax();
            else
                std::this_thread::yield();
        busy_.store(false);
        return true;
    }

private:
    void grow(int helpers) {
        for (; started_ < helpers; ++started_) {
            try {
                std::thread([this, seen = generation_.load()] { serve(seen); }).detach();
            } catch (const std::system_error&) {
                return;  // no more threads: the caller does the work
            }
        }
    }

    [[noreturn]] void serve(std::uint32_t seen) {
        for (;;) {
            // A short spin before sleeping: operations of several passes start their next job
            // right away.
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
            while (generation_.load() == seen && std::chrono::steady_clock::now() < until) cpu_relax();
            generation_.wait(seen);
            seen = generation_.load();
            active_.fetch_add(1);
            if (job* j = current_.load(); j && j->joined.fetch_add(1) < j->helpers) j->work();
            active_.fetch_sub(1);
        }
    }

    std::atomic<bool> busy_{false};
    std::atomic<job*> current_{nullptr};
    std::atomic<std::uint32_t> generation_{0};
    std::atomic<int> active_{0};  // pool threads that may be reading current_'s job
    int started_ = 0;             // changed only by the caller holding busy_
};

// Never destroyed: its threads sleep until the process ends.
thread_pool& pool() {
    static auto* instance = new thread_pool;
    return *instance;
}

// In a child after fork() none of the pool's threads exist, and whatever another parent thread
// held at the fork stays held: the pool's counts, the internal locks of the atomics' wait and
// notify, even the guard of pool()'s first call. So a forked child never touches the pool and
// runs every parallel_for on its calling thread. The handler is registered while the library
// loads, before any thread of ours exists, so no fork can come before it.
std::atomic<bool> in_forked_child{false};
[[maybe_unused]] const int fork_handler_registered = pthread_atfork(nullptr, nullptr, [] { in_forked_child.store(true); });

}  // namespace

void run_parallel(std::int64_t n, int threads, void (*call)(void*, std::int64_t), void* context) {
    job j;
    j.call = call;
    j.context = context;
    j.n = n;
    j.helpers = threads - 1;
    if (in_forked_child.load() || !pool().run(j)) j.work();
}

#else

void run_parallel(std::int64_t n, int, void (*call)(void*, std::int64_t), void* context) {
    for (std::int64_t i = 0; i < n; ++i) call(context, i);
}

#endif

}  // namespace granula::detail

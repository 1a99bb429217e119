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

#include <algorithm>
#include <atomic>
#include <chrono>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace granula::detail {

namespace {

// A part's state, shared by its owner and the threads that may split it: the first row its
// owner has not reserved (low 32 bits) and its end (high 32 bits), in one word so that a
// reservation and a split never cross; a cache line each, as owners reserve rows all the time.
struct alignas(64) part_slot : std::atomic<std::uint64_t> {};
constexpr std::uint64_t pack_part(std::int64_t next, std::int64_t end) {
    return static_cast<std::uint64_t>(next) | static_cast<std::uint64_t>(end) << 32;
}
constexpr std::int64_t part_next(std::uint64_t v) { return static_cast<std::int64_t>(v & 0xffffffffu); }
constexpr std::int64_t part_end(std::uint64_t v) { return static_cast<std::int64_t>(v >> 32); }
// Rows an owner reserves at a time: one atomic operation per few rows.
constexpr std::int64_t reserved_rows = 8;

}  // namespace

bool row_part::reserve(std::int64_t y) {
    auto& slot = *static_cast<part_slot*>(slot_);
    std::uint64_t v = slot.load();
    for (;;) {
        const std::int64_t end = part_end(v);
        if (y >= end) return false;
        if (slot.compare_exchange_weak(v, pack_part(std::min(end, y + reserved_rows), end))) {
            reserved_ = std::min(end, y + reserved_rows);
            return true;
        }
    }
}

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

void run_rows(std::int64_t rows, std::int64_t min_rows, int threads, void (*call)(void*, row_part&), void* context) {
    // Rows and ends must fit a slot's halves; no image has this many rows in practice.
    if (rows >= (std::int64_t{1} << 31)) {
        row_part whole(0, rows);
        call(context, whole);
        return;
    }
    struct shared {
        std::vector<part_slot> slots;  // a part per thread
        std::atomic<int> arrived{0};
        std::int64_t rows = 0, min_rows = 1;
        void (*call)(void*, row_part&) = nullptr;
        void* context = nullptr;
    } state;
    state.slots = std::vector<part_slot>(static_cast<std::size_t>(threads));  // empty parts: 0, 0
    state.rows = rows;
    state.min_rows = std::max<std::int64_t>(1, min_rows);
    state.call = call;
    state.context = context;
    // An item per thread (run_parallel hands each to one thread): the first takes every row,
    // then each splits the largest part left until none is worth it.
    const auto item = [](void* p, std::int64_t) {
        auto& st = *static_cast<shared*>(p);
        part_slot& mine = st.slots[static_cast<std::size_t>(st.arrived.fetch_add(1))];
        if (&mine == &st.slots.front()) {
            mine.store(pack_part(0, st.rows));
            row_part part(0, st.rows, &mine);
            st.call(st.context, part);
        }
        for (;;) {
            std::int64_t begin = 0, end = 0;
            for (bool taken = false; !taken;) {
                part_slot* victim = nullptr;
                std::uint64_t seen = 0;
                for (auto& s : st.slots) {
                    const std::uint64_t v = s.load();
                    if (part_end(v) - part_next(v) >= 2 * st.min_rows &&
                        (!victim || part_end(v) - part_next(v) > part_end(seen) - part_next(seen))) {
                        victim = &s;
                        seen = v;
                    }
                }
                if (!victim) return;
                begin = part_next(seen) + (part_end(seen) - part_next(seen)) / 2;
                end = part_end(seen);
                // Fails when the owner reserved rows meanwhile: look again.
                taken = victim->compare_exchange_strong(seen, pack_part(part_next(seen), begin));
            }
            mine.store(pack_part(begin, end));
            row_part part(begin, end, &mine);
            st.call(st.context, part);
        }
    };
    run_parallel(threads, threads, item, &state);
}

#else

void run_rows(std::int64_t rows, std::int64_t, int, void (*call)(void*, row_part&), void* context) {
    row_part whole(0, rows);
    call(context, whole);
}

void run_parallel(std::int64_t n, int, void (*call)(void*, std::int64_t), void* context) {
    for (std::int64_t i = 0; i < n; ++i) call(context, i);
}

#endif

}  // namespace granula::detail

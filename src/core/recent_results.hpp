// The results of a costly, pure planning function for the last few keys it was called with,
// shared by all threads: repeated calls with one structuring element skip its planning.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

namespace granula::detail {

// Key needs ==; Value is copied out to the caller.
template <class Key, class Value, std::size_t Kept>
class recent_results {
public:
    // The value kept for `key`, else make() (called without the lock held), then kept.
    template <class Make>
    Value get(const Key& key, Make make) {
        {
            const std::lock_guard lock(mutex_);
            const auto it = std::find_if(recent_.begin(), recent_.end(), [&](const auto& e) { return e.first == key; });
            if (it != recent_.end()) return it->second;
        }
        Value value = make();
        const std::lock_guard lock(mutex_);
        recent_.emplace_front(key, value);
        if (recent_.size() > Kept) recent_.pop_back();
        return value;
    }

private:
    std::mutex mutex_;
    std::deque<std::pair<Key, Value>> recent_;  // the newest first
};

}  // namespace granula::detail

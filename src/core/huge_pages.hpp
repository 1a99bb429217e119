// Transparent huge pages for large host buffers (Linux, where the kernel's mode allows them on
// request): passes that touch a new 4 KiB page per row, and fresh per-call arrays faulted in
// page by page, cost more in TLB misses and page faults than in arithmetic.
#pragma once

#include <cstddef>

namespace granula::detail {

// Asks for 2 MiB pages over the whole 2 MiB pages inside [p, p + bytes). Advice only: nothing
// happens elsewhere or when the kernel declines.
void advise_huge_pages(void* p, std::size_t bytes);

}  // namespace granula::detail

// tests/ik/alloc_counter.h — the heap-allocation counter of kinema_ik_tests. One file of the
// program (no_alloc_test.cpp) replaces the global operator new; the others count through these
// two functions instead of replacing it again (two replacements would not link).
#pragma once

namespace kinema::test {

/// Resets the count and starts counting every allocation (any thread).
void start_counting_allocations();

/// Stops counting and returns the allocations made since start_counting_allocations().
long stop_counting_allocations();

}  // namespace kinema::test

// tests/common/alloc_counter.h — counting heap allocations in a test program. Exactly one file
// of a program includes tests/common/replace_global_new.h, which replaces the global operator
// new and defines these functions; every file of that program may call them.
#pragma once

namespace kinema::test {

/// Resets the count and starts counting every allocation (any thread).
void start_counting_allocations();

/// Stops counting and returns the allocations made since start_counting_allocations().
long stop_counting_allocations();

}  // namespace kinema::test

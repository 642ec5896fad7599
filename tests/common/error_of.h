// tests/common/error_of.h — the kinema::Error a call throws, to check its file, place and reason.
#pragma once

#include <gtest/gtest.h>

#include "kinema/core/error.h"

namespace kinema::test {

/// The kinema::Error `f` throws (fails the test when it throws none).
template <class F>
Error error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("", "", "");
}

}  // namespace kinema::test

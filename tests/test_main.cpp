// The test programs' main. Each run gets a private temporary folder, made the process's $TMPDIR
// (so std::filesystem::temp_directory_path() and the CLI processes tests start write there): a
// test's scratch files never meet another run's, and none are left behind in /tmp. The folder is
// removed when every test passed; when one failed it is kept and named, for a look at what the
// test wrote (KINEMA_KEEP_TEST_FILES=1 keeps it always).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

int main(int argc, char** argv) {
  testing::InitGoogleMock(&argc, argv);
  std::error_code error;
  std::string folder = (std::filesystem::temp_directory_path() / "kinema_tests_XXXXXX").string();
  if (::mkdtemp(folder.data()) == nullptr) {
    std::fprintf(stderr, "test main: cannot make a temporary folder %s\n", folder.c_str());
    return 2;
  }
  ::setenv("TMPDIR", folder.c_str(), 1);
  const int result = RUN_ALL_TESTS();
  const char* keep = std::getenv("KINEMA_KEEP_TEST_FILES");
  if (result == 0 && !(keep && *keep && std::string(keep) != "0"))
    std::filesystem::remove_all(folder, error);
  else
    std::fprintf(stderr, "test files kept in %s\n", folder.c_str());
  return result;
}

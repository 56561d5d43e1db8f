// A fresh directory under the test's temporary directory, removed with its
// files at the end of the test.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kf::testing {

class TempDir {
public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "kf-test-XXXXXX";
    if (mkdtemp(pattern.data()))
      path_ = pattern;
    EXPECT_FALSE(path_.empty()) << "cannot create " << pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }

  std::string file(const std::string &name) const {
    return (path_ / name).string();
  }
  // The names of the files in the directory, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto &entry : std::filesystem::directory_iterator(path_))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

private:
  std::filesystem::path path_;
};

} // namespace kf::testing

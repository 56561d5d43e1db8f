#include "kf/runtime/atomic_file.h"

#include <fstream>
#include <iterator>

#include "TempDir.h"
#include "gmock/gmock.h"

namespace kf {
namespace {

using ::testing::ElementsAre;

std::string contents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeText(AtomicFile &file, std::string_view text) {
  absl::Status s =
      file.write({reinterpret_cast<const uint8_t *>(text.data()), text.size()});
  EXPECT_TRUE(s.ok()) << s;
}

TEST(AtomicFile, CommitReplacesTheTarget) {
  testing::TempDir dir;
  std::string path = dir.file("out.bin");
  std::ofstream(path) << "old";
  absl::StatusOr<AtomicFile> file = AtomicFile::create(path);
  ASSERT_TRUE(file.ok()) << file.status();
  writeText(*file, "new ");
  writeText(*file, "contents");
  EXPECT_EQ(contents(path), "old"); // untouched until commit
  EXPECT_EQ(dir.files().size(), 2u);
  ASSERT_TRUE(file->commit().ok());
  EXPECT_EQ(contents(path), "new contents");
  EXPECT_THAT(dir.files(), ElementsAre("out.bin"));
}

TEST(AtomicFile, AbandonedFileLeavesTheTargetAndNoTemporary) {
  testing::TempDir dir;
  std::string path = dir.file("out.bin");
  std::ofstream(path) << "old";
  {
    absl::StatusOr<AtomicFile> file = AtomicFile::create(path);
    ASSERT_TRUE(file.ok()) << file.status();
    writeText(*file, "partial");
  }
  EXPECT_EQ(contents(path), "old");
  EXPECT_THAT(dir.files(), ElementsAre("out.bin"));
}

TEST(AtomicFile, MissingDirectory) {
  testing::TempDir dir;
  std::string path = dir.file("missing/out.bin");
  absl::StatusOr<AtomicFile> file = AtomicFile::create(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(file.status().message()),
              ::testing::MatchesRegex(
                  ".*/missing/out.bin: cannot create .*/missing/out.bin.tmp-"
                  "[0-9]+-[0-9]+: No such file or directory"));
}

} // namespace
} // namespace kf

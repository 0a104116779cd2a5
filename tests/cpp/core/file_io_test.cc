// Note [Safe file writes]: atomic replacement, symlinks never followed,
// typed errors naming the path.
#include "core/file_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "msrt/core/errors.h"

namespace msrt {
namespace {

namespace fs = std::filesystem;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("msrt_file_io_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  fs::path dir_;
};

TEST_F(FileIoTest, WritesAndReadsBack) {
  WriteFileAtomic(Path("a.bin"), std::string("hello\0world", 11));
  EXPECT_EQ(ReadFile(Path("a.bin")), std::string("hello\0world", 11));
  WriteFileAtomic(Path("a.bin"), "second", Durability::kNoSync);
  EXPECT_EQ(ReadFile(Path("a.bin")), "second");
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(FileIoTest, ReplacesASymlinkAtTheTargetInsteadOfWritingThroughIt) {
  std::string outside = Path("outside.txt");
  WriteFileAtomic(outside, "precious");
  fs::create_symlink(outside, Path("link.bin"));
  WriteFileAtomic(Path("link.bin"), "new");
  EXPECT_EQ(Slurp(outside), "precious");
  EXPECT_FALSE(fs::is_symlink(Path("link.bin")));
  EXPECT_EQ(Slurp(Path("link.bin")), "new");
}

TEST_F(FileIoTest, AppendRefusesSymlinksAndNonRegularFiles) {
  std::string outside = Path("outside.txt");
  WriteFileAtomic(outside, "precious");
  fs::create_symlink(outside, Path("link.log"));
  EXPECT_THROW(AppendFile{Path("link.log")}, OSError);
  EXPECT_EQ(Slurp(outside), "precious");
  EXPECT_THROW(AppendFile{dir_.string()}, OSError);
  {
    AppendFile file(Path("log"));
    file.Append("ab");
    file.Append("cd");
    EXPECT_EQ(file.size(), 4u);
    EXPECT_EQ(file.ReadPrefix(3), "abc");
  }
  EXPECT_EQ(Slurp(Path("log")), "abcd");
}

TEST_F(FileIoTest, ErrorsAreTypedAndNameThePath) {
  std::string missing = Path("no/such/folder/file");
  try {
    WriteFileAtomic(missing, "x");
    FAIL() << "expected OSError";
  } catch (const OSError& e) {
    EXPECT_NE(e.message().find(Path("no/such/folder/file")), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("No such file"), std::string::npos) << e.message();
  }
  EXPECT_THROW(ReadFile(Path("missing")), OSError);
  EXPECT_THROW(ReadFile(dir_.string()), OSError);
  EXPECT_THROW(WriteFileAtomic(std::string("a\0b", 3), "x"), ValueError);
  EXPECT_THROW(ReadFile(std::string("a\0b", 3)), ValueError);
  EXPECT_THROW(CreateDirectories(std::string("a\0b", 3)), ValueError);
  EXPECT_THROW(WriteFileAtomic("", "x"), ValueError);
  WriteFileAtomic(Path("file"), "x");
  EXPECT_THROW(CreateDirectories(Path("file/sub")), OSError);
  EXPECT_THROW(WriteFileAtomic(dir_.string() + "/", "x"), OSError);
}

TEST_F(FileIoTest, UnwritableFolderIsAnOSError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes anywhere";
  fs::create_directories(Path("ro"));
  fs::permissions(Path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_THROW(WriteFileAtomic(Path("ro/f"), "x"), OSError);
  EXPECT_THROW(CreateDirectories(Path("ro/sub")), OSError);
  fs::permissions(Path("ro"), fs::perms::owner_all);
}

TEST_F(FileIoTest, CreatesNestedFolders) {
  CreateDirectories(Path("a/b/c"));
  CreateDirectories(Path("a/b/c"));  // again: nothing to do
  EXPECT_TRUE(fs::is_directory(Path("a/b/c")));
}

TEST_F(FileIoTest, ConcurrentWritersLeaveOneCompleteFile) {
  std::string path = Path("shared.bin");
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::string data(200000 + t, static_cast<char>('a' + t));
      for (int i = 0; i < 5; ++i) WriteFileAtomic(path, data, Durability::kNoSync);
    });
  }
  for (auto& thread : threads) thread.join();
  std::string content = Slurp(path);
  ASSERT_GE(content.size(), 200000u);
  int t = static_cast<int>(content.size()) - 200000;
  EXPECT_EQ(content, std::string(200000 + t, static_cast<char>('a' + t)));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST(Crc, KnownValues) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32Ieee("123456789", 9), 0xCBF43926u);
  EXPECT_EQ(Crc32c(""), 0u);
  std::string long_text(1000, 'x');
  EXPECT_EQ(Crc32c(long_text.substr(500), Crc32c(long_text.substr(0, 500))), Crc32c(long_text));
}

}  // namespace
}  // namespace msrt

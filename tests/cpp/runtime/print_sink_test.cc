// The print file (Note [Print file format]) and the screen form of tensors.
#include "runtime/print_sink.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "msrt/core/errors.h"

namespace msrt::runtime {
namespace {

namespace fs = std::filesystem;
using kernels::PrintItem;

class PrintFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("msrt_print_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

template <typename T>
Tensor Make(std::vector<T> values, Shape shape, DType dtype) {
  return Tensor::FromHost(values.data(), values.size() * sizeof(T), shape, dtype);
}

TEST_F(PrintFileTest, RecordsAppendAndReadBackInOrder) {
  std::string path = Path("p.data");
  Tensor a = Make<float>({1.5f, -2.0f, 3.0f, 4.0f}, {2, 2}, DType::kFloat32);
  Tensor b = Make<int64_t>({7}, {}, DType::kInt64);
  Tensor c = Make<uint8_t>({1, 0, 1}, {3}, DType::kBool);
  AppendPrintRecord(path, {PrintItem(std::string("a:")), PrintItem(a)});
  AppendPrintRecord(path, {PrintItem(b), PrintItem(c), PrintItem(std::string(""))});
  std::vector<PrintItem> items = ReadPrintFile(path);
  ASSERT_EQ(items.size(), 5u);
  EXPECT_EQ(std::get<std::string>(items[0]), "a:");
  const Tensor& ra = std::get<Tensor>(items[1]);
  EXPECT_EQ(ra.shape(), (Shape{2, 2}));
  EXPECT_EQ(ra.dtype(), DType::kFloat32);
  EXPECT_EQ(ra.data<float>()[1], -2.0f);
  EXPECT_EQ(std::get<Tensor>(items[2]).data<int64_t>()[0], 7);
  EXPECT_EQ(std::get<Tensor>(items[3]).dtype(), DType::kBool);
  EXPECT_EQ(std::get<std::string>(items[4]), "");
  // The header is written once.
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(data.find("MSRTPRNT"), 0u);
  EXPECT_EQ(data.find("MSRTPRNT", 1), std::string::npos);
}

TEST_F(PrintFileTest, ErrorsHaveTheDocumentedTypes) {
  EXPECT_THROW(ReadPrintFile(Path("missing")), ValueError);
  std::ofstream(Path("junk")) << "junk";
  EXPECT_THROW(ReadPrintFile(Path("junk")), RuntimeError);
  EXPECT_THROW(AppendPrintRecord(Path("junk"), {PrintItem(std::string("x"))}), OSError);
  EXPECT_THROW(AppendPrintRecord(dir_.string(), {PrintItem(std::string("x"))}), OSError);
  // Every strict prefix of a valid file past the header fails to parse.
  std::string path = Path("ok");
  AppendPrintRecord(path, {PrintItem(Make<int32_t>({1, 2}, {2}, DType::kInt32))});
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t n = 1; n < data.size(); ++n) {
    if (n == 20) continue;  // the header alone is a valid, empty print file
    std::ofstream(Path("cut"), std::ios::binary | std::ios::trunc).write(data.data(), static_cast<std::streamsize>(n));
    EXPECT_THROW(ReadPrintFile(Path("cut")), RuntimeError) << n;
  }
  // Every single-bit flip anywhere is caught by a checksum, never read as another value.
  for (size_t i = 0; i < data.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string corrupt = data;
      corrupt[i] = static_cast<char>(corrupt[i] ^ (1 << bit));
      EXPECT_THROW(ParsePrintFile(corrupt, "flipped"), RuntimeError) << i << ":" << bit;
    }
  }
}

TEST_F(PrintFileTest, ASymlinkAtThePathIsRefusedNotFollowed) {
  std::string outside = Path("outside");
  std::ofstream(outside) << "precious";
  std::filesystem::create_symlink(outside, Path("link"));
  EXPECT_THROW(AppendPrintRecord(Path("link"), {PrintItem(std::string("x"))}), OSError);
  std::ifstream in(outside);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "precious");
}

TEST(FormatTensor, MatchesTheReprLayout) {
  EXPECT_EQ(FormatTensor(Make<int32_t>({1, 2, 10, 20}, {2, 2}, DType::kInt32)),
            "Tensor(shape=[2, 2], dtype=Int32, value=\n[[ 1,  2],\n [10, 20]])");
  EXPECT_EQ(FormatTensor(Make<float>({2.5f}, {}, DType::kFloat32)), "Tensor(shape=[], dtype=Float32, value= 2.5)");
  EXPECT_EQ(FormatTensor(Make<float>({3.0f}, {}, DType::kFloat32)), "Tensor(shape=[], dtype=Float32, value= 3)");
  EXPECT_EQ(FormatTensor(Make<uint8_t>({1, 0}, {2}, DType::kBool)),
            "Tensor(shape=[2], dtype=Bool, value= [ True, False])");
  EXPECT_EQ(FormatTensor(Make<double>({-1.0, 0.5}, {2}, DType::kFloat64)),
            "Tensor(shape=[2], dtype=Float64, value= [-1.00000000e+00,  5.00000000e-01])");
}

}  // namespace
}  // namespace msrt::runtime

// ObserverList: a snapshot is the list at one moment and stays readable
// after later edits (a reader walking it while another thread adds or
// removes an observer sees the old list, whole).
#include "core/observer_list.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace msrt {
namespace {

struct Counter {
  int id = 0;
};

TEST(ObserverList, ASnapshotKeepsTheListAsItWas) {
  ObserverList<Counter> list;
  Counter a{1}, b{2};
  EXPECT_TRUE(list.empty());
  EXPECT_TRUE(list.snapshot()->empty());
  list.Add(&a);
  auto before = list.snapshot();
  list.Add(&b);
  list.Add(&a);  // once only
  EXPECT_EQ(*before, std::vector<Counter*>{&a});
  EXPECT_EQ(*list.snapshot(), (std::vector<Counter*>{&a, &b}));
  list.Remove(&a);
  EXPECT_EQ(*list.snapshot(), std::vector<Counter*>{&b});
  EXPECT_EQ(*before, std::vector<Counter*>{&a});
  list.Remove(&b);
  EXPECT_TRUE(list.empty());
}

TEST(ObserverList, ReadersWhileAnotherThreadEdits) {
  ObserverList<Counter> list;
  Counter a{1}, b{2};
  list.Add(&a);
  std::atomic<bool> stop{false};
  std::thread editor([&] {
    for (int i = 0; i < 2000; ++i) {
      list.Add(&b);
      list.Remove(&b);
    }
    stop = true;
  });
  long seen = 0;
  do {  // at least once, however the threads are scheduled
    for (Counter* c : *list.snapshot()) {
      ASSERT_TRUE(c == &a || c == &b);
      seen += c->id;
    }
  } while (!stop);
  editor.join();
  EXPECT_GT(seen, 0);
  EXPECT_EQ(*list.snapshot(), std::vector<Counter*>{&a});
}

}  // namespace
}  // namespace msrt

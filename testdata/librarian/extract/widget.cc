#include "widget.h"
#include <vector>

namespace ns {

// Widget holds a list of sizes. It is cheap.
class Widget {
 public:
  Widget();
  ~Widget();
  int size() const { return static_cast<int>(items_.size()); }

 private:
  std::vector<int> items_;
};

struct Point {
  int x;
  int y;
};

using Sizes = std::vector<int>;

enum class Color { kRed, kGreen };

Widget::Widget() { items_.push_back(1); }

Widget::~Widget() {
  items_.clear();
}

}  // namespace ns

/* Adds two numbers. */
int add(int a, int b) {
  return a + b;
}

template <typename T>
T twice(T value) {
  return add(value, value);
}

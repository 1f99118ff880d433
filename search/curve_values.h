// CurveValues: a trial's objective value by resource level, kept as a sorted vector.
// A study holds one per trial for its whole life; a std::map spent 48 bytes a report on tree
// nodes, which made the coordinator's memory grow three times faster than the reports did.
// Reports arrive in increasing epoch order, so inserting at the end is the common case.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sift::search {

class CurveValues {
 public:
  using value_type = std::pair<int64_t, double>;
  using Items = std::vector<value_type>;
  using iterator = Items::iterator;
  using const_iterator = Items::const_iterator;
  using const_reverse_iterator = Items::const_reverse_iterator;

  CurveValues() = default;
  CurveValues(std::initializer_list<value_type> items) {
    for (const auto& [r, v] : items) (*this)[r] = v;
  }

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  const_reverse_iterator rbegin() const { return items_.rbegin(); }
  const_reverse_iterator rend() const { return items_.rend(); }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }

  const_iterator lower_bound(int64_t r) const {
    return std::lower_bound(items_.begin(), items_.end(), r, KeyLess);
  }
  const_iterator upper_bound(int64_t r) const {
    return std::upper_bound(items_.begin(), items_.end(), r,
                            [](int64_t key, const value_type& e) { return key < e.first; });
  }
  const_iterator find(int64_t r) const {
    auto it = lower_bound(r);
    return it != items_.end() && it->first == r ? it : items_.end();
  }
  size_t count(int64_t r) const { return find(r) != items_.end() ? 1 : 0; }
  double at(int64_t r) const {
    auto it = find(r);
    if (it == items_.end()) throw std::out_of_range("no value at resource " + std::to_string(r));
    return it->second;
  }
  double& operator[](int64_t r) {
    if (items_.empty() || items_.back().first < r) return items_.emplace_back(r, 0.0).second;
    auto it = std::lower_bound(items_.begin(), items_.end(), r, KeyLess);
    if (it == items_.end() || it->first != r) it = items_.emplace(it, r, 0.0);
    return it->second;
  }
  size_t erase(int64_t r) {
    auto it = std::lower_bound(items_.begin(), items_.end(), r, KeyLess);
    if (it == items_.end() || it->first != r) return 0;
    items_.erase(it);
    return 1;
  }
  // Gives back the growth slack once a trial has ended and its curve is final.
  void shrink_to_fit() { items_.shrink_to_fit(); }

  bool operator==(const CurveValues& o) const { return items_ == o.items_; }
  bool operator!=(const CurveValues& o) const { return items_ != o.items_; }

 private:
  static bool KeyLess(const value_type& e, int64_t key) { return e.first < key; }
  Items items_;
};

}  // namespace sift::search

// A stable bottom-up merge sort, safe with a comparator that is not a
// strict weak order (an HLO sort's comparator is any computation;
// std::stable_sort may read out of range on one that compares NaN false
// both ways). The evaluator and the CPU plugin's sort kernel use this one,
// so that they order such inputs alike. Its merges depend only on the
// comparator's answers, so sorting values gives the same sequence as
// sorting indices by the values they index.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace anvil::hlo {

template <typename T, typename Less>
void MergeSort(std::vector<T>& v, Less less) {
  std::vector<T> tmp(v.size());
  for (size_t width = 1; width < v.size(); width *= 2) {
    for (size_t lo = 0; lo < v.size(); lo += 2 * width) {
      size_t mid = std::min(lo + width, v.size()), hi = std::min(lo + 2 * width, v.size());
      size_t a = lo, b = mid, out = lo;
      while (a < mid && b < hi) tmp[out++] = less(v[b], v[a]) ? v[b++] : v[a++];
      while (a < mid) tmp[out++] = v[a++];
      while (b < hi) tmp[out++] = v[b++];
    }
    v.swap(tmp);
  }
}

}  // namespace anvil::hlo

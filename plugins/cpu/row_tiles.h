// The plain loop of a row reduction, `rows` rows side by side: each row's
// next `rows` elements are read as a run and turned through a small tile,
// so that the rows' chains advance as one vector loop, and each row still
// combines its elements in order. Shared by the reduce kernel
// (kernels_reduce.cc) and the row sums' baseline loop (row_sums.cc).
#pragma once

#include <cstdint>

namespace anvil::cpu {

// acc[j] = combine(acc[j], x[bases[j] + k]) for k = from, ..., inner - 1 in
// that order, for each of `rows` rows j: the elements a tile leaves over.
template <typename T, typename Acc, typename Combine>
inline void CombineRowTails(const T* x, const int64_t* bases, int64_t rows, int64_t from, int64_t inner, Acc* acc,
                            Combine combine) {
  for (int64_t k = from; k < inner; ++k) {
    for (int64_t j = 0; j < rows; ++j) acc[j] = combine(acc[j], x[bases[j] + k]);
  }
}

// The same for k = 0, ..., inner - 1, kRows elements of each row at a time
// through a kRows x kRows tile.
template <int64_t kRows, typename T, typename Acc, typename Combine>
inline void CombineRowsThroughTile(const T* x, const int64_t* bases, int64_t inner, Acc* acc, Combine combine) {
  T tile[kRows][kRows];
  int64_t k = 0;
  for (; k + kRows <= inner; k += kRows) {
    for (int64_t j = 0; j < kRows; ++j) {
      const T* row = x + bases[j] + k;
      for (int64_t t = 0; t < kRows; ++t) tile[t][j] = row[t];
    }
    for (int64_t t = 0; t < kRows; ++t) {
      for (int64_t j = 0; j < kRows; ++j) acc[j] = combine(acc[j], tile[t][j]);
    }
  }
  CombineRowTails(x, bases, kRows, k, inner, acc, combine);
}

}  // namespace anvil::cpu

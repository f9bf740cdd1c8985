#include "librarian/semvec/svd.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace trove::librarian::semvec {
namespace {

// splitmix64: a fixed, portable stream.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1).
  double Uniform() { return (static_cast<double>(Next() >> 11) + 0.5) / 9007199254740992.0; }
  double Gaussian() {
    const double u1 = Uniform(), u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::uint64_t s_;
};

// out = a * x (a: rows x cols sparse, x: cols x l).
Dense Multiply(const SparseMatrix& a, const Dense& x) {
  Dense out{a.rows, x.cols, std::vector<double>(a.rows * x.cols, 0.0)};
  const std::size_t l = x.cols;
  for (std::size_t i = 0; i < a.rows; ++i) {
    double* __restrict o = out.v.data() + i * l;
    for (std::size_t p = a.row_start[i]; p < a.row_start[i + 1]; ++p) {
      const double w = a.value[p];
      const double* __restrict xr = x.v.data() + static_cast<std::size_t>(a.col[p]) * l;
      for (std::size_t c = 0; c < l; ++c) o[c] += w * xr[c];
    }
  }
  return out;
}

// out = a^T * y (y: rows x l).
Dense MultiplyTransposed(const SparseMatrix& a, const Dense& y) {
  Dense out{a.cols, y.cols, std::vector<double>(a.cols * y.cols, 0.0)};
  const std::size_t l = y.cols;
  for (std::size_t i = 0; i < a.rows; ++i) {
    const double* __restrict yr = y.v.data() + i * l;
    for (std::size_t p = a.row_start[i]; p < a.row_start[i + 1]; ++p) {
      const double w = a.value[p];
      double* __restrict o = out.v.data() + static_cast<std::size_t>(a.col[p]) * l;
      for (std::size_t c = 0; c < l; ++c) o[c] += w * yr[c];
    }
  }
  return out;
}

// g = y^T y (l x l).
Dense Gram(const Dense& y) {
  const std::size_t l = y.cols;
  Dense g{l, l, std::vector<double>(l * l, 0.0)};
  for (std::size_t r = 0; r < y.rows; ++r) {
    const double* __restrict yr = y.v.data() + r * l;
    for (std::size_t i = 0; i < l; ++i) {
      const double yi = yr[i];
      if (yi == 0) continue;
      double* __restrict gi = g.v.data() + i * l;
      for (std::size_t j = i; j < l; ++j) gi[j] += yi * yr[j];
    }
  }
  for (std::size_t i = 0; i < l; ++i) {
    for (std::size_t j = 0; j < i; ++j) g.at(i, j) = g.at(j, i);
  }
  return g;
}

// out = y * m (m: l x c dense).
Dense MultiplyDense(const Dense& y, const Dense& m) {
  Dense out{y.rows, m.cols, std::vector<double>(y.rows * m.cols, 0.0)};
  for (std::size_t r = 0; r < y.rows; ++r) {
    const double* __restrict yr = y.v.data() + r * y.cols;
    double* __restrict o = out.v.data() + r * m.cols;
    for (std::size_t i = 0; i < y.cols; ++i) {
      const double yi = yr[i];
      if (yi == 0) continue;
      const double* __restrict mi = m.v.data() + i * m.cols;
      for (std::size_t c = 0; c < m.cols; ++c) o[c] += yi * mi[c];
    }
  }
  return out;
}

// An orthonormal basis of the column space of y: from the eigen-decomposition of y^T y,
// q = y V Λ^-1/2 over the eigenvalues above a relative floor (a rank-deficient sketch drops
// columns instead of dividing by zero). Done twice, as a single pass loses orthogonality when
// the condition number is large.
Dense Orthonormalize(const Dense& y) {
  Dense q = y;
  for (int pass = 0; pass < 2; ++pass) {
    SymmetricEigen e = JacobiEigen(Gram(q));
    const double top = e.values.empty() ? 0 : e.values.front();
    std::size_t keep = 0;
    while (keep < e.values.size() && e.values[keep] > top * 1e-12 && e.values[keep] > 0) ++keep;
    Dense m{q.cols, keep, std::vector<double>(q.cols * keep, 0.0)};
    for (std::size_t i = 0; i < q.cols; ++i) {
      for (std::size_t c = 0; c < keep; ++c) {
        m.at(i, c) = e.vectors.at(i, c) / std::sqrt(e.values[c]);
      }
    }
    q = MultiplyDense(q, m);
  }
  return q;
}

}  // namespace

SymmetricEigen JacobiEigen(const Dense& symmetric) {
  const std::size_t n = symmetric.rows;
  Dense a = symmetric;
  Dense v{n, n, std::vector<double>(n * n, 0.0)};
  for (std::size_t i = 0; i < n; ++i) v.at(i, i) = 1;
  // Cyclic sweeps until the off-diagonal mass is negligible against the diagonal.
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, diag = 0;
    for (std::size_t i = 0; i < n; ++i) {
      diag += a.at(i, i) * a.at(i, i);
      for (std::size_t j = i + 1; j < n; ++j) off += a.at(i, j) * a.at(i, j);
    }
    if (off <= 1e-30 * std::max(diag, 1e-300) || off == 0) break;
    for (std::size_t p = 0; p + 1 < n; ++p) {
      for (std::size_t q = p + 1; q < n; ++q) {
        const double apq = a.at(p, q);
        if (std::abs(apq) < 1e-300) continue;
        const double theta = (a.at(q, q) - a.at(p, p)) / (2 * apq);
        const double t =
            (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (std::size_t k = 0; k < n; ++k) {  // columns p, q
          const double akp = a.at(k, p), akq = a.at(k, q);
          a.at(k, p) = c * akp - s * akq;
          a.at(k, q) = s * akp + c * akq;
        }
        for (std::size_t k = 0; k < n; ++k) {  // rows p, q
          const double apk = a.at(p, k), aqk = a.at(q, k);
          a.at(p, k) = c * apk - s * aqk;
          a.at(q, k) = s * apk + c * aqk;
        }
        for (std::size_t k = 0; k < n; ++k) {
          const double vkp = v.at(k, p), vkq = v.at(k, q);
          v.at(k, p) = c * vkp - s * vkq;
          v.at(k, q) = s * vkp + c * vkq;
        }
      }
    }
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return a.at(x, x) > a.at(y, y); });
  SymmetricEigen out;
  out.vectors = Dense{n, n, std::vector<double>(n * n, 0.0)};
  for (std::size_t c = 0; c < n; ++c) {
    out.values.push_back(a.at(order[c], order[c]));
    for (std::size_t r = 0; r < n; ++r) out.vectors.at(r, c) = v.at(r, order[c]);
  }
  return out;
}

Svd TruncatedSvd(const SparseMatrix& a, const SvdOptions& options) {
  Svd out;
  const std::size_t l = std::min({options.rank + options.oversample, a.rows, a.cols});
  if (l == 0 || options.rank == 0) return out;
  Rng rng(options.seed);
  Dense omega{a.cols, l, std::vector<double>(a.cols * l)};
  for (double& x : omega.v) x = rng.Gaussian();
  Dense q = Orthonormalize(Multiply(a, omega));
  for (std::size_t i = 0; i < options.power_iterations && q.cols > 0; ++i) {
    Dense z = Orthonormalize(MultiplyTransposed(a, q));
    q = Orthonormalize(Multiply(a, z));
  }
  if (q.cols == 0) return out;
  // B = q^T a (l x cols); B B^T = (a^T q)^T (a^T q).
  const Dense bt = MultiplyTransposed(a, q);
  SymmetricEigen e = JacobiEigen(Gram(bt));
  std::size_t k = std::min(options.rank, e.values.size());
  const double top = e.values.empty() ? 0 : std::max(e.values.front(), 0.0);
  while (k > 0 && !(e.values[k - 1] > top * 1e-20)) --k;
  Dense w{q.cols, k, std::vector<double>(q.cols * k, 0.0)};
  for (std::size_t i = 0; i < q.cols; ++i) {
    for (std::size_t c = 0; c < k; ++c) w.at(i, c) = e.vectors.at(i, c);
  }
  out.u = MultiplyDense(q, w);
  for (std::size_t c = 0; c < k; ++c) out.sigma.push_back(std::sqrt(e.values[c]));
  return out;
}

}  // namespace trove::librarian::semvec

// The truncated SVD (svd.h) on small matrices whose singular values are known by construction.
#include "librarian/semvec/svd.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trove::librarian::semvec {
namespace {

SparseMatrix FromDense(const Dense& d) {
  SparseMatrix a;
  a.rows = d.rows;
  a.cols = d.cols;
  a.row_start.push_back(0);
  for (std::size_t r = 0; r < d.rows; ++r) {
    for (std::size_t c = 0; c < d.cols; ++c) {
      if (d.at(r, c) != 0) {
        a.col.push_back(static_cast<std::uint32_t>(c));
        a.value.push_back(d.at(r, c));
      }
    }
    a.row_start.push_back(a.col.size());
  }
  return a;
}

TEST(SvdTest, JacobiEigenOfASymmetricMatrix) {
  // [[2,1,0],[1,2,0],[0,0,5]]: eigenvalues 5, 3, 1.
  Dense m{3, 3, {2, 1, 0, 1, 2, 0, 0, 0, 5}};
  SymmetricEigen e = JacobiEigen(m);
  ASSERT_EQ(e.values.size(), 3u);
  EXPECT_NEAR(e.values[0], 5, 1e-9);
  EXPECT_NEAR(e.values[1], 3, 1e-9);
  EXPECT_NEAR(e.values[2], 1, 1e-9);
  // The eigenvector of 3 is (1, 1, 0) / sqrt 2, up to sign.
  EXPECT_NEAR(std::abs(e.vectors.at(0, 1)), std::sqrt(0.5), 1e-9);
  EXPECT_NEAR(std::abs(e.vectors.at(1, 1)), std::sqrt(0.5), 1e-9);
  EXPECT_NEAR(e.vectors.at(2, 1), 0, 1e-9);
}

// A = H diag(8, 4, 2, 1) G^T with H, G orthogonal (scaled Hadamard matrices with permuted
// columns), embedded in a 6 x 5 matrix with zero rows and columns: singular values 8, 4, 2, 1.
Dense KnownMatrix() {
  const double h = 0.5;
  const double hadamard[4][4] = {{h, h, h, h}, {h, -h, h, -h}, {h, h, -h, -h}, {h, -h, -h, h}};
  const double sigma[4] = {8, 4, 2, 1};
  const int gperm[4] = {2, 0, 3, 1};
  const std::size_t row_at[4] = {0, 2, 3, 5}, col_at[4] = {0, 1, 3, 4};
  Dense a{6, 5, std::vector<double>(30, 0.0)};
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      double v = 0;
      for (int k = 0; k < 4; ++k) v += hadamard[i][k] * sigma[k] * hadamard[j][gperm[k]];
      a.at(row_at[i], col_at[j]) = v;
    }
  }
  return a;
}

TEST(SvdTest, RecoversKnownSingularValuesAndVectors) {
  const Dense d = KnownMatrix();
  SvdOptions o;
  o.rank = 2;
  o.oversample = 2;
  Svd s = TruncatedSvd(FromDense(d), o);
  ASSERT_EQ(s.sigma.size(), 2u);
  EXPECT_NEAR(s.sigma[0], 8, 1e-6);
  EXPECT_NEAR(s.sigma[1], 4, 1e-6);
  ASSERT_EQ(s.u.rows, 6u);
  ASSERT_EQ(s.u.cols, 2u);
  // u1 is the first Hadamard column on rows 0, 2, 3, 5: (0.5, 0, 0.5, 0.5, 0, 0.5) up to sign;
  // u2 the second: (0.5, 0, -0.5, 0.5, 0, -0.5).
  const double u1[6] = {0.5, 0, 0.5, 0.5, 0, 0.5}, u2[6] = {0.5, 0, -0.5, 0.5, 0, -0.5};
  double d1 = 0, d2 = 0;
  for (std::size_t r = 0; r < 6; ++r) {
    d1 += s.u.at(r, 0) * u1[r];
    d2 += s.u.at(r, 1) * u2[r];
  }
  EXPECT_NEAR(std::abs(d1), 1, 1e-6);
  EXPECT_NEAR(std::abs(d2), 1, 1e-6);
}

TEST(SvdTest, AllSingularValuesAndRankDeficiency) {
  SvdOptions o;
  o.rank = 10;  // more than the rank (4): only four come back
  Svd s = TruncatedSvd(FromDense(KnownMatrix()), o);
  ASSERT_EQ(s.sigma.size(), 4u);
  EXPECT_NEAR(s.sigma[0], 8, 1e-6);
  EXPECT_NEAR(s.sigma[1], 4, 1e-6);
  EXPECT_NEAR(s.sigma[2], 2, 1e-6);
  EXPECT_NEAR(s.sigma[3], 1, 1e-6);
  // The columns of u are orthonormal.
  for (std::size_t a = 0; a < 4; ++a) {
    for (std::size_t b = 0; b < 4; ++b) {
      double dot = 0;
      for (std::size_t r = 0; r < s.u.rows; ++r) dot += s.u.at(r, a) * s.u.at(r, b);
      EXPECT_NEAR(dot, a == b ? 1 : 0, 1e-9);
    }
  }
}

TEST(SvdTest, DeterministicAndEmptyInputs) {
  SvdOptions o;
  o.rank = 3;
  Svd a = TruncatedSvd(FromDense(KnownMatrix()), o);
  Svd b = TruncatedSvd(FromDense(KnownMatrix()), o);
  EXPECT_EQ(a.sigma, b.sigma);
  EXPECT_EQ(a.u.v, b.u.v);
  SparseMatrix empty;
  empty.row_start.push_back(0);
  EXPECT_TRUE(TruncatedSvd(empty, o).sigma.empty());
  Dense zeros{3, 3, std::vector<double>(9, 0.0)};
  EXPECT_TRUE(TruncatedSvd(FromDense(zeros), o).sigma.empty());
}

}  // namespace
}  // namespace trove::librarian::semvec

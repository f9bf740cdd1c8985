// Truncated singular value decomposition of a sparse matrix, small and iterative (decision 0096):
// the randomized range finder of Halko, Martinsson and Tropp (2011, algorithm 4.4: a Gaussian
// sketch, a few power iterations with re-orthonormalization) followed by the exact SVD of the
// small projected matrix through cyclic Jacobi rotations of its Gram matrix. Written here
// because the machine has no Eigen or LAPACK package and the workspace-vector engine needs only
// the leading 64-128 singular triplets of a matrix of at most ~10^6 non-zeros, which this does
// in a few seconds with two dense n x l products per pass.
//
// Deterministic: the sketch comes from a seeded splitmix64 stream and Box-Muller (not
// std::normal_distribution, whose output differs between standard libraries), and every loop
// runs in a fixed order, so a bootstrap learns the same vectors on every machine.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace trove::librarian::semvec {

// A sparse matrix in compressed sparse row form.
struct SparseMatrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<std::size_t> row_start;  // rows + 1 offsets into col / value
  std::vector<std::uint32_t> col;
  std::vector<double> value;
};

// A dense row-major matrix.
struct Dense {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<double> v;  // rows * cols
  double& at(std::size_t r, std::size_t c) { return v[r * cols + c]; }
  double at(std::size_t r, std::size_t c) const { return v[r * cols + c]; }
};

// Eigen-decomposition of a symmetric n x n matrix by cyclic Jacobi rotations: eigenvalues in
// descending order and the matching eigenvectors as the columns of `vectors`.
struct SymmetricEigen {
  std::vector<double> values;
  Dense vectors;
};
SymmetricEigen JacobiEigen(const Dense& symmetric);

struct SvdOptions {
  std::size_t rank = 64;        // singular triplets wanted
  std::size_t oversample = 10;  // extra sketch columns
  std::size_t power_iterations = 2;
  std::uint64_t seed = 0x5eed5eedULL;
};

// The leading singular values (descending) and left singular vectors (the columns of `u`,
// rows x rank) of `a`. Fewer than `rank` when the matrix's rank is smaller.
struct Svd {
  std::vector<double> sigma;
  Dense u;
};
Svd TruncatedSvd(const SparseMatrix& a, const SvdOptions& options);

}  // namespace trove::librarian::semvec

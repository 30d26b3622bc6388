#include "sim/calibrate/null_space.hpp"

#include <cstddef>

#include <Eigen/Dense>

namespace trainsim::calibrate {

std::vector<double> null_space_share(const ceres::CRSMatrix& jacobian, double tolerance) {
  const auto at = [](const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; };
  Eigen::MatrixXd j = Eigen::MatrixXd::Zero(jacobian.num_rows, jacobian.num_cols);
  for (int r = 0; r < jacobian.num_rows; ++r) {
    for (int k = at(jacobian.rows, r); k < at(jacobian.rows, r + 1); ++k) {
      j(r, at(jacobian.cols, k)) = jacobian.values[static_cast<std::size_t>(k)];
    }
  }
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(j, Eigen::ComputeFullV);
  const Eigen::VectorXd& singular = svd.singularValues();  // descending
  const double largest = singular.size() > 0 ? singular(0) : 0.0;
  Eigen::Index rank = 0;
  while (rank < singular.size() && singular(rank) > tolerance * largest) ++rank;
  // V's columns past the rank (past the rows, too, when there are fewer rows than columns)
  // span the null space.
  const Eigen::MatrixXd& v = svd.matrixV();
  std::vector<double> share(static_cast<std::size_t>(jacobian.num_cols), 0.0);
  for (Eigen::Index p = 0; p < v.rows(); ++p) {
    for (Eigen::Index k = rank; k < v.cols(); ++k) {
      share[static_cast<std::size_t>(p)] += v(p, k) * v(p, k);
    }
  }
  return share;
}

}  // namespace trainsim::calibrate

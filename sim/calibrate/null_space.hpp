// What a fit's points leave undetermined: the null space of the Jacobian of its residuals.
// calibrate::fit holds such parameters at the base profile's values (docs/calibration.md,
// "The fit"). Kept apart from fit.cpp so that Eigen's headers stay out of the fit's own
// translation unit.
#pragma once

#include <vector>

#include <ceres/crs_matrix.h>

namespace trainsim::calibrate {

// For each column j of `jacobian` (rows: residuals, columns: parameters), the squared norm of
// the unit vector e_j projected on the Jacobian's null space: 0 when the residuals determine
// parameter j (to first order), 1 for a null column, in between where a direction of several
// parameters leaves every residual unchanged (one point informing two parameters). Singular
// values at or below `tolerance` times the largest count as zero (all of them when the matrix
// is zero). Cost: one SVD of the dense rows x columns matrix.
[[nodiscard]] std::vector<double> null_space_share(const ceres::CRSMatrix& jacobian,
                                                   double tolerance);

}  // namespace trainsim::calibrate

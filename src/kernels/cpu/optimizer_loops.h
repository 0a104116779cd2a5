// The float32 update loops of the Momentum step, for kernels outside
// optimizer.cc that update in place (matmul_apply_momentum, Note [Products
// into the accumulation] in onednn_matmul.cc). They are compiled with
// optimizer.cc's flags, so they vectorise as apply_momentum's loop does and
// round as it does.
#pragma once

#include <cstdint>

namespace msrt::kernels::cpu {

/// accum[i] = accum[i] * momentum + grad[i]; w[i] -= lr * accum[i]
/// (apply_momentum without Nesterov), over the intra-op threads.
void MomentumLoop(float* w, float* accum, const float* grad, float lr, float momentum, int64_t n);
/// w[i] -= lr * accum[i], over the intra-op threads.
void DescentLoop(float* w, const float* accum, float lr, int64_t n);

}  // namespace msrt::kernels::cpu

// The training-step counter: what PYNATIVE_MODE calls an iteration.
//
// Note [Eager iterations]
// A graph executor numbers its own executions; eager kernels have no graph,
// so their iteration is this process-wide counter, advanced once per training
// step (by nn.TrainOneStepCell, which ms.train.Model runs every step). The
// eager dispatcher reads it when an op is *called*, not when its kernel runs,
// so a queued kernel still belongs to the step that launched it.
#pragma once

#include <cstdint>

namespace msrt::runtime {

/// Completed training steps so far (0 before the first step ends).
uint64_t CurrentStep();
/// Ends the current step; returns the new count.
uint64_t AdvanceStep();

}  // namespace msrt::runtime

#pragma once
// The messages of the processor-scheduling model (payload: kind, value, real):
//   arrivals  -> allocator   arrival   value: the job's class (index into the model's workloads)
//   allocator -> processor   run       value: the run's number; real: the task's mean time
//                                      (fresh: the processor draws the actual time) or, for a
//                                      resumed task, the work it has left
//   allocator -> processor   preempt   value: the run to stop (Round-Robin's quantum end)
//   processor -> allocator   done      value: the run; the task completed at the message's time
//   processor -> allocator   stopped   value: the run; real: the work left (>= 0)
//   allocator -> itself      switched  value: the processor, now available to the job it was
//                                      given O earlier; real: the processor's grant number
//   allocator -> itself      quantum   Round-Robin's quantum end; value: the quantum's number

#include <cstdint>

namespace procsched {

enum Kind : std::int64_t { kArrival = 1, kRunFresh, kRunResumed, kPreempt, kDone, kStopped, kSwitched, kQuantum };

}  // namespace procsched

#pragma once
// Which sanitizer this translation unit is built with. The runtime's few sanitizer conditionals
// annotate its fiber switches and stacks, turn preemption off, and stretch a wait that is timed
// against the owner's own pace (a thief's, in owned_queue.cpp).

#if defined(__SANITIZE_ADDRESS__)
#define PRESTO_ASAN 1
#else
#define PRESTO_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define PRESTO_TSAN 1
#else
#define PRESTO_TSAN 0
#endif

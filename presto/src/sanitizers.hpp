#pragma once
// Which sanitizer this translation unit is built with. The only sanitizer conditionals of the
// runtime live in context_switch.cpp and stack_guard.cpp.

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

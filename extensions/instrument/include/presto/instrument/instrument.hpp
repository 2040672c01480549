#pragma once
// presto::instrument: an instrumented execution environment for PRESTO programs (see
// docs/guide/understanding-performance.md).

#include <presto/instrument/bounds.hpp>
#include <presto/instrument/instrumented_lock.hpp>
#include <presto/instrument/instrumented_thread.hpp>
#include <presto/instrument/profile.hpp>
#include <presto/instrument/recorder.hpp>
#include <presto/instrument/scope.hpp>

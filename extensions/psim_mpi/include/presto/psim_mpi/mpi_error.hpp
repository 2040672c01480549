#pragma once
// The errors of a distributed PSIM run (presto::psim_mpi).
//
//  - MpiError: an MPI call failed; what() names the call, this process's rank and MPI's own
//    error string. Thrown where the caller can still stop cleanly (before and after a run). An
//    MPI failure while the model runs (a peer died, the network broke) cannot be recovered:
//    the communication thread prints the same text on stderr and calls MPI_Abort, which ends
//    every rank; mpirun then names the failed rank and exits non-zero.
//  - DistributedError: the distributed run failed on some rank (an LP's exception, a message
//    that names no LP of this model or arrives before its link's lookahead allows, model
//    definitions that differ across ranks). Every rank throws it from
//    DistributedSimulation::run; what() starts with the rank that failed, and on that rank
//    carries the original error's text (a UsageError's, naming the LP and the link).

// The C API only: Open MPI's and MPICH's deprecated C++ bindings warn under -Wextra.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <stdexcept>
#include <string>

namespace presto::psim_mpi {

class MpiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class DistributedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// MPI's text for an error code.
std::string mpi_error_string(int code);
// Throws MpiError("rank R: CALL failed: <MPI's text>") unless rc is MPI_SUCCESS.
void check_mpi(int rc, const char* call);

}  // namespace presto::psim_mpi

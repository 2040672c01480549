#pragma once
// Environment: MPI for a distributed PSIM program, one per process, made in main() before any
// presto::Runtime and destroyed after every DistributedSimulation has run:
//
//   int main(int argc, char** argv) {
//     presto::psim_mpi::Environment mpi{argc, argv};   // MPI_Init_thread; MPI_Finalize at the end
//     presto::Runtime rt{{.processors = 2}};
//     return rt.run([&] { ... DistributedSimulation{sim}.run() ... });
//   }
//
// It asks for MPI_THREAD_SERIALIZED (a DistributedSimulation calls MPI from the presto thread
// that runs it and from its communication thread, never at once) and throws MpiError if the
// library offers less. It sets MPI_ERRORS_RETURN on MPI_COMM_WORLD: every MPI call of this
// extension is checked, and a failed one is reported, never ignored (see mpi_error.hpp).
// If MPI was initialized already (by the program), it uses that and leaves finalizing to it.

#include <presto/psim_mpi/mpi_error.hpp>

namespace presto::psim_mpi {

class Environment {
 public:
  Environment(int& argc, char**& argv);
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  ~Environment();

  // This process's rank in MPI_COMM_WORLD and the number of ranks.
  int rank() const noexcept { return rank_; }
  int ranks() const noexcept { return ranks_; }

 private:
  bool owns_ = false;  // this object initialized MPI and finalizes it
  int rank_ = 0;
  int ranks_ = 1;
};

}  // namespace presto::psim_mpi

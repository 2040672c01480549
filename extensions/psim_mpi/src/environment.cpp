#include <presto/psim_mpi/environment.hpp>

namespace presto::psim_mpi {

Environment::Environment(int& argc, char**& argv) {
  int initialized = 0;
  check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
  int provided = 0;
  if (initialized == 0) {
    check_mpi(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    owns_ = true;
  } else {
    check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    if (owns_) MPI_Finalize();
    throw MpiError("the MPI library offers thread level " + std::to_string(provided) +
                   "; presto::psim_mpi needs MPI_THREAD_SERIALIZED (" + std::to_string(MPI_THREAD_SERIALIZED) + ")");
  }
  check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &ranks_), "MPI_Comm_size");
}

Environment::~Environment() {
  if (owns_) MPI_Finalize();  // its failure cannot be reported from a destructor; nothing follows it
}

}  // namespace presto::psim_mpi

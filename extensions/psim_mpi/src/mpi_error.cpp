#include <presto/psim_mpi/mpi_error.hpp>

namespace presto::psim_mpi {

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) [[likely]] return;
  int rank = -1;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  throw MpiError("rank " + std::to_string(rank) + ": " + call + " failed: " + mpi_error_string(rc));
}

}  // namespace presto::psim_mpi

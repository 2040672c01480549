// What the MPI apps share to launch themselves: whether this process runs under mpirun, and
// the mpirun command line that runs this program again on N ranks with the given arguments
// (each already quoted).

#pragma once

#include <cstdlib>
#include <string>
#include <unistd.h>

namespace presto::apps {

inline bool under_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr; }

// This program's path (/proc/self/exe), or argv0 where that cannot be read.
inline std::string self_path(const char* argv0) {
  std::string self(4096, '\0');
  const ssize_t n = readlink("/proc/self/exe", self.data(), self.size() - 1);
  return n > 0 ? self.substr(0, static_cast<std::size_t>(n)) : std::string(argv0);
}

// "mpirun [--allow-run-as-root] --oversubscribe -n RANKS 'SELF' ARGS".
inline std::string mpirun_command(int ranks, const std::string& self, const std::string& args) {
  return std::string("mpirun") + (geteuid() == 0 ? " --allow-run-as-root" : "") + " --oversubscribe -n " +
         std::to_string(ranks) + " '" + self + "'" + args;
}

}  // namespace presto::apps

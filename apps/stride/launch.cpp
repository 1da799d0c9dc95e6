// stride train --nproc N: starts the same command under Open MPI's mpirun,
// N processes on this machine, so users need not spell out the launcher.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.h"
#include "stride/distributed.h"
#include "stride/error.h"

namespace stride::app {

namespace {

// argv without the --nproc option (as "--nproc N" or "--nproc=N").
std::vector<std::string> without_nproc(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--nproc") {
      ++i;
      continue;
    }
    if (arg.rfind("--nproc=", 0) == 0) continue;
    out.push_back(arg);
  }
  return out;
}

}  // namespace

int launch_with_mpirun(int nproc, int argc, char** argv) {
  if (distributed::launched_world_size() > 0) {
    throw ValueError(
        "--nproc starts mpirun itself; under mpirun, leave it out (mpirun -np "
        "sets the number of processes).");
  }
  if (!distributed::mpi_available()) {
    throw ValueError(
        "--nproc needs the MPI backend, and this build of stride has none. Hint: "
        "install Open MPI (libopenmpi-dev, openmpi-bin; `make deps`) and rebuild.");
  }
  std::vector<std::string> args = {"mpirun", "-np", std::to_string(nproc), "--oversubscribe"};
  if (geteuid() == 0) args.push_back("--allow-run-as-root");  // containers often run as root
  // This program's path, resolved here: mpirun would resolve /proc/self/exe
  // to itself.
  args.push_back(std::filesystem::read_symlink("/proc/self/exe").string());
  for (std::string& a : without_nproc(argc, argv)) args.push_back(std::move(a));
  std::vector<char*> c_args;
  for (std::string& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  execvp("mpirun", c_args.data());
  throw ValueError(std::string("--nproc could not start mpirun: ") + std::strerror(errno) +
                   ". Hint: install Open MPI's launcher (openmpi-bin).");
}

}  // namespace stride::app

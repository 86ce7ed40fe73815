# Sourced by build.sh and test.sh: the compiler a new build directory gets.
#
# clang-22 (Debian's, installed for the fuzz targets) builds strata in about
# half of GCC 12's time: its precompiled headers make the MLIR headers cheap
# where GCC's barely help (bench/RESULTS.md has the figures), and CI builds
# strata twice on two cores. CC and CXX from the environment win, and a
# build directory keeps the compiler it was first configured with.
if [ -z "${CXX:-}" ] && command -v clang++-22 >/dev/null 2>&1; then
  export CC=clang-22 CXX=clang++-22
fi

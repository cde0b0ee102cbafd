"""Instruction counts under valgrind: the toolchain (valgrind, the client library), the
collector's working directory, the forking server and its parent side, C++ programs."""

// SPDX-License-Identifier: Apache-2.0
// Catch2's main and implementation, compiled once for every test executable (the main suite's
// tests/test_main.cpp and libgemmtune's tests/src/api): it is most of a test main's compile time.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

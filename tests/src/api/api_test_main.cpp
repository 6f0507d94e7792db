// The Catch2 main of the libgemmtune tests, apart from tests/test_main.cpp, which needs the
// internal layers this executable must not link.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

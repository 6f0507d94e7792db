// Files compiled into the library (src/api/cmake/embed_files.cmake writes the table at build
// time): the kernel templates, the device profiles and the checked-in databases, so that an
// installed library needs nothing on disk at run time.
#pragma once

#include <cstddef>
#include <vector>

namespace gemmtune::api {

struct EmbeddedFile {
  const char* group;  // "kernel_templates", "devices" or "databases"
  const char* name;   // the file name ("xgemm.cl"), or for databases its path under results/
  const char* text;
  size_t size;
};

const std::vector<EmbeddedFile>& embedded_files();

}  // namespace gemmtune::api

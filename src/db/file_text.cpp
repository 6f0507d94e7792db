// SPDX-License-Identifier: Apache-2.0
#include "src/db/file_text.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"

#ifdef GEMMTUNE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace gemmtune {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string read_file_text(const std::string& path, uint64_t limit) {
#ifdef GEMMTUNE_HAVE_ZLIB
  // zlib reads a plain file as it is, so one path serves both.
  gzFile f = gzdopen(open_regular_file(path), "rb");
  if (!f) throw invalid_file(path, std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  std::vector<char> buf(size_t{1} << 16);
  while (true) {
    const int n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int err = 0;
      const std::string msg = gzerror(f, &err);
      gzclose(f);
      throw invalid_file(path, "cannot decompress: " + msg);
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > limit) {
      gzclose(f);
      throw invalid_file(path, "is larger than " + std::to_string(limit >> 20) +
                                   " MiB, the most gemmtune reads of such a file; not read");
    }
    text.append(buf.data(), static_cast<size_t>(n));
  }
  // zlib hands over what a cut compressed file holds and flags the cut; the reader of the text
  // decides what a cut means (a journal skips its last line, a Kernel Tuner cache ends after its
  // last whole entry).
  int err = 0;
  gzerror(f, &err);
  if (err == Z_BUF_ERROR) spdlog::warn("{}: the compressed data ends early (a cut file)", path);
  gzclose(f);
  return text;
#else
  if (ends_with(path, ".gz")) {
    throw invalid_file(path, "this build of gemmtune cannot read gzip files (built without zlib)");
  }
  return read_text_file(path, limit);
#endif
}

}  // namespace gemmtune

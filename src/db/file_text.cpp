#include "src/db/file_text.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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

std::string read_file_text(const std::string& path) {
  std::string text;
#ifdef GEMMTUNE_HAVE_ZLIB
  // zlib reads a plain file as it is, so one path serves both.
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw invalid_file(path, std::string("cannot open: ") + std::strerror(errno));
  char buf[1 << 16];
  while (true) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int err = 0;
      const std::string msg = gzerror(f, &err);
      gzclose(f);
      throw invalid_file(path, "cannot decompress: " + msg);
    }
    if (n == 0) break;
    text.append(buf, size_t(n));
  }
  // zlib hands over what a cut compressed file holds and flags the cut; the reader of the text
  // decides what a cut means (a journal skips its last line, a Kernel Tuner cache ends after its
  // last whole entry).
  int err = 0;
  gzerror(f, &err);
  if (err == Z_BUF_ERROR) spdlog::warn("{}: the compressed data ends early (a cut file)", path);
  gzclose(f);
#else
  if (ends_with(path, ".gz")) {
    throw invalid_file(path, "this build of gemmtune cannot read gzip files (built without zlib)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw invalid_file(path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  text = s.str();
#endif
  return text;
}

}  // namespace gemmtune

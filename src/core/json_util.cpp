#include "src/core/json_util.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "src/core/error.hpp"

namespace gemmtune {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw invalid_file(path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json parse_json_text(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the position of the error; give line and column as well.
    size_t line = 1, col = 1;
    for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    if (auto p = what.find("syntax error"); p != std::string::npos) what = what.substr(p);
    throw invalid_file(origin, "not valid JSON at line " + std::to_string(line) + ", column " +
                                   std::to_string(col) + " (byte " + std::to_string(e.byte) +
                                   "): " + what);
  }
}

nlohmann::json read_json_file(const std::string& path) {
  return parse_json_text(read_text_file(path), path);
}

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw invalid_file(path, std::string("cannot write: ") + std::strerror(errno));
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw invalid_file(path, std::string("cannot write: ") + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw invalid_file(path, std::string("cannot rename into place: ") + std::strerror(err));
  }
}

void write_json_atomic(const std::string& path, const nlohmann::json& j) {
  write_file_atomic(path, j.dump(2) + "\n");
}

std::string require_string(const nlohmann::json& j, const std::string& field,
                           const std::string& origin) {
  if (!j.is_object() || !j.contains(field) || !j[field].is_string()) {
    throw invalid_file(origin, "field '" + field + "' must be a string");
  }
  return j[field].get<std::string>();
}

double require_number(const nlohmann::json& j, const std::string& field,
                      const std::string& origin) {
  if (!j.is_object() || !j.contains(field) || !j[field].is_number()) {
    throw invalid_file(origin, "field '" + field + "' must be a number");
  }
  return j[field].get<double>();
}

}  // namespace gemmtune

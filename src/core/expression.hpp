// SPDX-License-Identifier: Apache-2.0
// Integer expressions over named values, used to declare constraints, derived parameters, local
// memory and launch geometry as data (e.g. "MWG % (MDIMC*VWM) == 0").
// Grammar (C precedence): ?: || && == != < <= > >= + - * / % unary(- !) min(a,b) max(a,b)
// ceil_div(a,b) round_up(a,b) log2(a), integer literals, identifiers and parentheses.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gemmtune {

struct ExprNode;

class Expression {
 public:
  using Lookup = std::function<std::optional<int64_t>(const std::string&)>;

  Expression() = default;
  // Throws Error(kInvalidArgument) with the position of a syntax error.
  static Expression parse(const std::string& text);

  // Throws Error on an unknown identifier or division by zero.
  int64_t evaluate(const Lookup& lookup) const;
  // As evaluate, but an arithmetic fault (division by zero) yields nullopt.
  std::optional<int64_t> try_evaluate(const Lookup& lookup) const;

  const std::string& text() const { return text_; }
  // Identifiers the expression reads, each once, in order of first appearance.
  const std::vector<std::string>& identifiers() const { return identifiers_; }
  bool empty() const { return !root_; }

 private:
  std::string text_;
  std::shared_ptr<const ExprNode> root_;
  std::vector<std::string> identifiers_;
};

}  // namespace gemmtune

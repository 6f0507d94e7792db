// SPDX-License-Identifier: Apache-2.0
#include "src/core/expression.hpp"

#include <algorithm>
#include <cctype>

#include "src/core/error.hpp"

namespace gemmtune {

struct ExprNode {
  enum class Kind { kLiteral, kIdentifier, kUnary, kBinary, kTernary, kCall } kind;
  int64_t literal = 0;
  std::string name;  // identifier, operator or function name
  std::vector<std::shared_ptr<const ExprNode>> args;
};

namespace {

struct ArithmeticFault {};

using NodePtr = std::shared_ptr<const ExprNode>;

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  NodePtr parse_all(std::vector<std::string>& identifiers) {
    auto node = ternary();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    identifiers = identifiers_;
    return node;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw invalid_argument("expression \"" + text_ + "\" at position " + std::to_string(pos_) +
                           ": " + what);
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(const std::string& op) {
    skip_space();
    if (text_.compare(pos_, op.size(), op) == 0) {
      // Do not split "<=" into "<" and "=", nor "&&" into "&".
      if (op.size() == 1 && pos_ + 1 < text_.size()) {
        const char next = text_[pos_ + 1];
        if ((op == "<" || op == ">" || op == "!" || op == "=") && next == '=') return false;
        if ((op == "&" && next == '&') || (op == "|" && next == '|')) return false;
      }
      pos_ += op.size();
      return true;
    }
    return false;
  }
  static NodePtr make(ExprNode::Kind kind, std::string name, std::vector<NodePtr> args) {
    auto n = std::make_shared<ExprNode>();
    n->kind = kind;
    n->name = std::move(name);
    n->args = std::move(args);
    return n;
  }
  NodePtr ternary() {
    auto cond = logical_or();
    if (accept("?")) {
      auto a = ternary();
      if (!accept(":")) fail("expected ':'");
      auto b = ternary();
      return make(ExprNode::Kind::kTernary, "?", {cond, a, b});
    }
    return cond;
  }
  NodePtr logical_or() {
    auto l = logical_and();
    while (accept("||")) l = make(ExprNode::Kind::kBinary, "||", {l, logical_and()});
    return l;
  }
  NodePtr logical_and() {
    auto l = equality();
    while (accept("&&")) l = make(ExprNode::Kind::kBinary, "&&", {l, equality()});
    return l;
  }
  NodePtr equality() {
    auto l = relational();
    for (;;) {
      if (accept("==")) l = make(ExprNode::Kind::kBinary, "==", {l, relational()});
      else if (accept("!=")) l = make(ExprNode::Kind::kBinary, "!=", {l, relational()});
      else return l;
    }
  }
  NodePtr relational() {
    auto l = additive();
    for (;;) {
      if (accept("<=")) l = make(ExprNode::Kind::kBinary, "<=", {l, additive()});
      else if (accept(">=")) l = make(ExprNode::Kind::kBinary, ">=", {l, additive()});
      else if (accept("<")) l = make(ExprNode::Kind::kBinary, "<", {l, additive()});
      else if (accept(">")) l = make(ExprNode::Kind::kBinary, ">", {l, additive()});
      else return l;
    }
  }
  NodePtr additive() {
    auto l = multiplicative();
    for (;;) {
      if (accept("+")) l = make(ExprNode::Kind::kBinary, "+", {l, multiplicative()});
      else if (accept("-")) l = make(ExprNode::Kind::kBinary, "-", {l, multiplicative()});
      else return l;
    }
  }
  NodePtr multiplicative() {
    auto l = unary();
    for (;;) {
      if (accept("*")) l = make(ExprNode::Kind::kBinary, "*", {l, unary()});
      else if (accept("/")) l = make(ExprNode::Kind::kBinary, "/", {l, unary()});
      else if (accept("%")) l = make(ExprNode::Kind::kBinary, "%", {l, unary()});
      else return l;
    }
  }
  NodePtr unary() {
    if (accept("-")) return make(ExprNode::Kind::kUnary, "-", {unary()});
    if (accept("!")) return make(ExprNode::Kind::kUnary, "!", {unary()});
    if (accept("+")) return unary();
    return primary();
  }
  NodePtr primary() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    const char c = text_[pos_];
    if (accept("(")) {
      auto e = ternary();
      if (!accept(")")) fail("expected ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      auto n = std::make_shared<ExprNode>();
      n->kind = ExprNode::Kind::kLiteral;
      n->literal = std::stoll(text_.substr(start, pos_ - start));
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        ++pos_;
      }
      std::string name = text_.substr(start, pos_ - start);
      if (accept("(")) {
        static const std::vector<std::pair<std::string, size_t>> kFunctions = {
            {"min", 2}, {"max", 2}, {"ceil_div", 2}, {"round_up", 2}, {"log2", 1}};
        auto it = std::find_if(kFunctions.begin(), kFunctions.end(),
                               [&](const auto& f) { return f.first == name; });
        if (it == kFunctions.end()) fail("unknown function '" + name + "'");
        std::vector<NodePtr> args;
        if (!accept(")")) {
          do args.push_back(ternary());
          while (accept(","));
          if (!accept(")")) fail("expected ')'");
        }
        if (args.size() != it->second) fail("function '" + name + "' takes " +
                                            std::to_string(it->second) + " arguments");
        return make(ExprNode::Kind::kCall, name, args);
      }
      if (std::find(identifiers_.begin(), identifiers_.end(), name) == identifiers_.end()) {
        identifiers_.push_back(name);
      }
      auto n = std::make_shared<ExprNode>();
      n->kind = ExprNode::Kind::kIdentifier;
      n->name = name;
      return n;
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  const std::string& text_;
  size_t pos_ = 0;
  std::vector<std::string> identifiers_;
};

int64_t eval(const ExprNode& n, const Expression::Lookup& lookup, const std::string& text) {
  using K = ExprNode::Kind;
  switch (n.kind) {
    case K::kLiteral:
      return n.literal;
    case K::kIdentifier: {
      auto v = lookup(n.name);
      if (!v) throw invalid_argument("expression \"" + text + "\": unknown name '" + n.name + "'");
      return *v;
    }
    case K::kUnary: {
      const int64_t a = eval(*n.args[0], lookup, text);
      return n.name == "-" ? -a : static_cast<int64_t>(!a);
    }
    case K::kTernary:
      return eval(*n.args[0], lookup, text) ? eval(*n.args[1], lookup, text)
                                            : eval(*n.args[2], lookup, text);
    case K::kCall: {
      const int64_t a = eval(*n.args[0], lookup, text);
      if (n.name == "log2") {
        if (a <= 0) throw ArithmeticFault{};
        int64_t r = 0;
        while ((int64_t{1} << (r + 1)) <= a) ++r;
        return r;
      }
      const int64_t b = eval(*n.args[1], lookup, text);
      if (n.name == "min") return std::min(a, b);
      if (n.name == "max") return std::max(a, b);
      if (b == 0) throw ArithmeticFault{};
      if (n.name == "ceil_div") return (a + b - 1) / b;
      return (a + b - 1) / b * b;  // round_up
    }
    case K::kBinary: {
      const std::string& op = n.name;
      const int64_t a = eval(*n.args[0], lookup, text);
      if (op == "&&") return a && eval(*n.args[1], lookup, text);
      if (op == "||") return a || eval(*n.args[1], lookup, text);
      const int64_t b = eval(*n.args[1], lookup, text);
      if (op == "+") return a + b;
      if (op == "-") return a - b;
      if (op == "*") return a * b;
      if (op == "/" || op == "%") {
        if (b == 0) throw ArithmeticFault{};
        return op == "/" ? a / b : a % b;
      }
      if (op == "==") return a == b;
      if (op == "!=") return a != b;
      if (op == "<") return a < b;
      if (op == "<=") return a <= b;
      if (op == ">") return a > b;
      return a >= b;
    }
  }
  return 0;
}

}  // namespace

Expression Expression::parse(const std::string& text) {
  Expression e;
  e.text_ = text;
  Parser parser(e.text_);
  e.root_ = parser.parse_all(e.identifiers_);
  return e;
}

int64_t Expression::evaluate(const Lookup& lookup) const {
  if (!root_) throw invalid_argument("empty expression");
  try {
    return eval(*root_, lookup, text_);
  } catch (const ArithmeticFault&) {
    throw invalid_argument("expression \"" + text_ + "\": division by zero");
  }
}

std::optional<int64_t> Expression::try_evaluate(const Lookup& lookup) const {
  if (!root_) return std::nullopt;
  try {
    return eval(*root_, lookup, text_);
  } catch (const ArithmeticFault&) {
    return std::nullopt;
  }
}

}  // namespace gemmtune

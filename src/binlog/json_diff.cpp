#include "binlog/json_diff.h"

#include <memory>
#include <string>
#include <vector>

#include "binlog/json_binary.h"

namespace chsync::binlog::internal {
namespace {

enum class DiffOp : uint8_t { kReplace = 0, kInsert = 1, kRemove = 2 };

// A JSON document as text pieces: scalars keep their exact text (so "9.00" and big integers
// survive), containers keep member order. Only JsonBinaryToText output is parsed, so the
// grammar needed is small; anything else is reported as corrupt.
struct Node {
  enum Kind { kScalar, kObject, kArray } kind = kScalar;
  std::string scalar;
  std::vector<std::string> keys;  // object member names as raw JSON string literals
  std::vector<Node> elements;     // array elements, or object member values (keys[i] names elements[i])
};

class TextParser {
 public:
  explicit TextParser(std::string_view s) : s_(s) {}
  bool Parse(Node& n) {
    if (!Value(n, 0)) return false;
    Space();
    return i_ == s_.size();
  }

 private:
  void Space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool String(std::string& out) {
    size_t start = i_;
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      if (s_[i_] == '\\') {
        ++i_;
      } else if (s_[i_] == '"') {
        ++i_;
        out.assign(s_.substr(start, i_ - start));
        return true;
      }
    }
    return false;
  }
  bool Value(Node& n, int depth) {
    if (depth > 250) return false;
    Space();
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '{' || c == '[') {
      bool object = c == '{';
      n.kind = object ? Node::kObject : Node::kArray;
      ++i_;
      Space();
      if (i_ < s_.size() && s_[i_] == (object ? '}' : ']')) {
        ++i_;
        return true;
      }
      while (true) {
        if (object) {
          std::string key;
          Space();
          if (!String(key)) return false;
          Space();
          if (i_ >= s_.size() || s_[i_++] != ':') return false;
          n.keys.push_back(std::move(key));
          n.elements.emplace_back();
          if (!Value(n.elements.back(), depth + 1)) return false;
        } else {
          n.elements.emplace_back();
          if (!Value(n.elements.back(), depth + 1)) return false;
        }
        Space();
        if (i_ >= s_.size()) return false;
        char d = s_[i_++];
        if (d == ',') continue;
        return d == (object ? '}' : ']');
      }
    }
    n.kind = Node::kScalar;
    if (c == '"') return String(n.scalar);
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' && s_[i_] != ' ') ++i_;
    n.scalar.assign(s_.substr(start, i_ - start));
    return !n.scalar.empty();
  }

  std::string_view s_;
  size_t i_ = 0;
};

void Write(const Node& n, std::string& out) {
  switch (n.kind) {
    case Node::kScalar: out.append(n.scalar); return;
    case Node::kObject:
      out.push_back('{');
      for (size_t i = 0; i < n.keys.size(); ++i) {
        if (i > 0) out.append(", ");
        out.append(n.keys[i]);
        out.append(": ");
        Write(n.elements[i], out);
      }
      out.push_back('}');
      return;
    case Node::kArray:
      out.push_back('[');
      for (size_t i = 0; i < n.elements.size(); ++i) {
        if (i > 0) out.append(", ");
        Write(n.elements[i], out);
      }
      out.push_back(']');
      return;
  }
}

// One step of a MySQL JSON path: a member name (as a JSON string literal) or an array index.
struct Leg {
  bool member = true;
  std::string key;
  size_t index = 0;
};

bool ParsePath(std::string_view p, std::vector<Leg>& legs) {
  if (p.empty() || p[0] != '$') return false;
  size_t i = 1;
  while (i < p.size()) {
    Leg leg;
    if (p[i] == '.') {
      ++i;
      std::string name;
      if (i < p.size() && p[i] == '"') {
        for (++i; i < p.size() && p[i] != '"'; ++i) {
          if (p[i] == '\\' && i + 1 < p.size()) ++i;
          name.push_back(p[i]);
        }
        if (i >= p.size()) return false;
        ++i;
      } else {
        while (i < p.size() && p[i] != '.' && p[i] != '[') name.push_back(p[i++]);
      }
      if (name.empty()) return false;
      leg.key.clear();
      AppendJsonString(name, leg.key);
    } else if (p[i] == '[') {
      leg.member = false;
      ++i;
      size_t digits = 0;
      while (i < p.size() && p[i] >= '0' && p[i] <= '9') {
        if (leg.index > 100000000) return false;
        leg.index = leg.index * 10 + static_cast<size_t>(p[i++] - '0');
        ++digits;
      }
      if (digits == 0 || i >= p.size() || p[i] != ']') return false;
      ++i;
    } else {
      return false;
    }
    legs.push_back(std::move(leg));
  }
  return true;
}

// Position of `key` among an object's members in MySQL's order (shorter keys first, then bytes).
size_t KeyPosition(const Node& object, const std::string& key) {
  auto less = [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  };
  size_t i = 0;
  while (i < object.keys.size() && less(object.keys[i], key)) ++i;
  return i;
}

Node* Child(Node& n, const Leg& leg) {
  if (leg.member) {
    if (n.kind != Node::kObject) return nullptr;
    for (size_t i = 0; i < n.keys.size(); ++i) {
      if (n.keys[i] == leg.key) return &n.elements[i];
    }
    return nullptr;
  }
  if (n.kind != Node::kArray || leg.index >= n.elements.size()) return nullptr;
  return &n.elements[leg.index];
}

bool Apply(Node& root, DiffOp op, const std::vector<Leg>& legs, Node value) {
  if (legs.empty()) {
    if (op != DiffOp::kReplace) return false;
    root = std::move(value);
    return true;
  }
  Node* parent = &root;
  for (size_t i = 0; i + 1 < legs.size(); ++i) {
    parent = Child(*parent, legs[i]);
    if (!parent) return false;
  }
  const Leg& last = legs.back();
  Node* target = Child(*parent, last);
  switch (op) {
    case DiffOp::kReplace:
      if (!target) return false;
      *target = std::move(value);
      return true;
    case DiffOp::kRemove:
      if (!target) return false;
      if (last.member) {
        for (size_t i = 0; i < parent->keys.size(); ++i) {
          if (parent->keys[i] == last.key) {
            parent->keys.erase(parent->keys.begin() + static_cast<long>(i));
            parent->elements.erase(parent->elements.begin() + static_cast<long>(i));
            break;
          }
        }
      } else {
        parent->elements.erase(parent->elements.begin() + static_cast<long>(last.index));
      }
      return true;
    case DiffOp::kInsert:
      if (last.member) {
        if (parent->kind != Node::kObject || target) return false;
        size_t at = KeyPosition(*parent, last.key);
        parent->keys.insert(parent->keys.begin() + static_cast<long>(at), last.key);
        parent->elements.insert(parent->elements.begin() + static_cast<long>(at), std::move(value));
      } else {
        if (parent->kind != Node::kArray) return false;
        size_t at = last.index < parent->elements.size() ? last.index : parent->elements.size();
        parent->elements.insert(parent->elements.begin() + static_cast<long>(at), std::move(value));
      }
      return true;
  }
  return false;
}

}  // namespace

Status ApplyJsonDiff(ByteReader& r, const ColumnInfo& column, const Value* before, ValueContext& ctx,
                     Value& out) {
  unsigned prefix = column.metadata;
  if (prefix < 1 || prefix > 4) return r.Corrupt("invalid JSON length-prefix size " + std::to_string(prefix));
  CHSYNC_ASSIGN_OR_RETURN(uint64_t len, r.ReadUintLE(prefix, "JSON diff length"));
  CHSYNC_ASSIGN_OR_RETURN(ByteReader d, r.Sub(len, "JSON diff"));
  struct Diff {
    DiffOp op;
    std::string_view path;
    std::string value;  // JSON text; empty for remove
  };
  std::vector<Diff> diffs;
  while (!d.empty()) {
    Diff diff;
    CHSYNC_ASSIGN_OR_RETURN(uint8_t op, d.ReadU8("JSON diff operation"));
    if (op > 2) return d.Corrupt("unknown JSON diff operation " + std::to_string(op));
    diff.op = static_cast<DiffOp>(op);
    CHSYNC_ASSIGN_OR_RETURN(uint64_t path_len, d.ReadPackedInt("JSON diff path length"));
    CHSYNC_ASSIGN_OR_RETURN(diff.path, d.ReadBytes(path_len, "JSON diff path"));
    if (diff.op != DiffOp::kRemove) {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t value_len, d.ReadPackedInt("JSON diff value length"));
      uint64_t at = d.offset();
      CHSYNC_ASSIGN_OR_RETURN(std::string_view value, d.ReadBytes(value_len, "JSON diff value"));
      CHSYNC_RETURN_IF_ERROR(JsonBinaryToText(value, at, diff.value));
    }
    diffs.push_back(std::move(diff));
  }
  out.type = ColumnType::kJson;
  if (before == nullptr || before->kind != ValueKind::kJson) {
    // No before-image to apply to (binlog_row_image=MINIMAL): hand the operations on.
    ctx.scratch.assign("[");
    static constexpr const char* kOps[] = {"replace", "insert", "remove"};
    for (size_t i = 0; i < diffs.size(); ++i) {
      if (i > 0) ctx.scratch.append(", ");
      ctx.scratch.append("{\"op\": \"");
      ctx.scratch.append(kOps[static_cast<int>(diffs[i].op)]);
      ctx.scratch.append("\", \"path\": ");
      AppendJsonString(diffs[i].path, ctx.scratch);
      if (diffs[i].op != DiffOp::kRemove) {
        ctx.scratch.append(", \"value\": ");
        ctx.scratch.append(diffs[i].value);
      }
      ctx.scratch.push_back('}');
    }
    ctx.scratch.push_back(']');
    out.kind = ValueKind::kJsonDiff;
    out.text = ctx.arena.Copy(ctx.scratch);
    return Status::Ok();
  }
  Node doc;
  if (!TextParser(before->text).Parse(doc)) return r.Corrupt("before-image JSON could not be re-read");
  for (const Diff& diff : diffs) {
    std::vector<Leg> legs;
    if (!ParsePath(diff.path, legs))
      return r.Corrupt("invalid JSON diff path '" + std::string(diff.path) + "'");
    Node value;
    if (diff.op != DiffOp::kRemove && !TextParser(diff.value).Parse(value)) {
      return r.Corrupt("JSON diff value could not be re-read");
    }
    if (!Apply(doc, diff.op, legs, std::move(value))) {
      return r.Corrupt("JSON diff path '" + std::string(diff.path) + "' does not apply to the before-image");
    }
  }
  ctx.scratch.clear();
  Write(doc, ctx.scratch);
  out.kind = ValueKind::kJson;
  out.text = ctx.arena.Copy(ctx.scratch);
  return Status::Ok();
}

}  // namespace chsync::binlog::internal

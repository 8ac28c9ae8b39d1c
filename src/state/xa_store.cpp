#include "state/xa_store.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "state/state_dir.h"

namespace chsync::pipe {
namespace {

constexpr std::string_view kHeader = "chsync-xa 2\n";
constexpr std::string_view kHeaderV1 = "chsync-xa 1\n";  // before the change counts

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t GetLE(std::string_view bytes, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  return v;
}

uint32_t Crc(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (!bytes.empty()) {
    uInt n = static_cast<uInt>(std::min<size_t>(bytes.size(), 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), n);
    bytes.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

std::string XaRowsFileName(uint32_t file_sequence, uint64_t position) {
  return "xa-" + std::to_string(file_sequence) + "-" + std::to_string(position) + ".rows";
}

std::string EncodeXaRows(const std::vector<XaBatch>& batches) {
  std::string out(kHeader);
  for (const XaBatch& b : batches) {
    for (const std::string* field : {&b.table, &b.prefix, &b.data}) {
      PutU64(out, field->size());
      out += *field;
    }
    for (uint64_t count : {b.inserts, b.updates, b.deletes}) PutU64(out, count);
  }
  uint32_t crc = Crc(out);
  for (int i = 0; i < 4; ++i) out += static_cast<char>((crc >> (8 * i)) & 0xff);
  return out;
}

Result<std::vector<XaBatch>> DecodeXaRows(std::string_view bytes, const std::string& origin) {
  auto corrupt = [&](const std::string& what) {
    return Error(ErrorKind::kCorrupt, "prepared XA rows in " + origin + ": " + what +
                                          "; the XA transaction's rows cannot be restored: run `chsync "
                                          "resync` for the tables it wrote");
  };
  if (bytes.size() < kHeader.size() + 4 ||
      (bytes.substr(0, kHeader.size()) != kHeader && bytes.substr(0, kHeaderV1.size()) != kHeaderV1))
    return corrupt("not a chsync XA rows file");
  const bool counts = bytes.substr(0, kHeader.size()) == kHeader;
  std::string_view body = bytes.substr(0, bytes.size() - 4);
  if (Crc(body) != static_cast<uint32_t>(GetLE(bytes.substr(bytes.size() - 4), 4)))
    return corrupt("checksum mismatch");
  body.remove_prefix(kHeader.size());
  std::vector<XaBatch> out;
  while (!body.empty()) {
    XaBatch b;
    for (std::string* field : {&b.table, &b.prefix, &b.data}) {
      if (body.size() < 8) return corrupt("truncated field length");
      uint64_t n = GetLE(body, 8);
      body.remove_prefix(8);
      if (n > body.size()) return corrupt("field of " + std::to_string(n) + " bytes past the end");
      field->assign(body.substr(0, n));
      body.remove_prefix(n);
    }
    if (counts) {
      if (body.size() < 24) return corrupt("truncated change counts");
      b.inserts = GetLE(body, 8);
      b.updates = GetLE(body.substr(8), 8);
      b.deletes = GetLE(body.substr(16), 8);
      body.remove_prefix(24);
    }
    out.push_back(std::move(b));
  }
  return out;
}

Status WriteXaRows(const std::string& dir, const std::string& name, const std::vector<XaBatch>& batches) {
  return WriteFileAtomically(dir + "/" + name, EncodeXaRows(batches));
}

Result<std::vector<XaBatch>> ReadXaRows(const std::string& dir, const std::string& name) {
  std::string path = dir + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error(ErrorKind::kIo, "cannot read the prepared XA rows " + path + ": " + std::strerror(errno) +
                                     "; run `chsync resync` for the tables the XA transaction wrote");
  }
  std::ostringstream content;
  content << in.rdbuf();
  return DecodeXaRows(content.str(), path);
}

void RemoveXaRows(const std::string& dir, const std::string& name) {
  unlink((dir + "/" + name).c_str());
}

}  // namespace chsync::pipe

#include "common/error.h"

namespace chsync {

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage: return "usage";
    case ErrorKind::kConfig: return "configuration";
    case ErrorKind::kCorrupt: return "corrupt input";
    case ErrorKind::kUnsupported: return "unsupported";
    case ErrorKind::kNetwork: return "network";
    case ErrorKind::kAuth: return "authentication";
    case ErrorKind::kServer: return "server";
    case ErrorKind::kIo: return "i/o";
    case ErrorKind::kNotFound: return "not found";
    case ErrorKind::kInternal: return "internal";
  }
  return "unknown";
}

Error& Error::AddContext(std::string_view context) {
  std::string m;
  m.reserve(context.size() + 2 + message_.size());
  m.append(context).append(": ").append(message_);
  message_ = std::move(m);
  return *this;
}

}  // namespace chsync

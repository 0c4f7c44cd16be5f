//===- CompileCache.cpp - compiled artifacts kept between processes -------===//

#include "mp/Support/CompileCache.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/TargetParser/Host.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>

using namespace llvm;

namespace mp {

/// The manifest's name inside an entry; no stored file may take it.
static constexpr StringLiteral kManifest = "manifest.json";
/// The default bound: enough for a few dozen models with their weights.
static constexpr uint64_t kDefaultMaxBytes = uint64_t(2) << 30;

std::string hashBytes(StringRef bytes) {
  return toHex(BLAKE3::hash<32>(arrayRefFromStringRef(bytes)),
               /*LowerCase=*/true);
}

std::optional<std::string> hashFile(StringRef path) {
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;
  return hashBytes((*buffer)->getBuffer());
}

const std::string &buildFingerprint() {
  static const std::string fingerprint = [] {
    Dl_info info;
    if (!dladdr(reinterpret_cast<void *>(&hashBytes), &info) || !info.dli_fname)
      return std::string();
    std::optional<std::string> binary = hashFile(info.dli_fname);
    if (!binary)
      return std::string();
    SmallVector<std::string> features;
    for (const auto &f : sys::getHostCPUFeatures())
      features.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
    llvm::sort(features);
    return "binary " + *binary + "\nhost " + sys::getHostCPUName().str() + " " +
           join(features, ",");
  }();
  return fingerprint;
}

std::string defaultCacheDir() {
  if (const char *dir = std::getenv("MP_CACHE_DIR")) {
    StringRef d(dir);
    return d == "off" || d == "0" ? std::string() : d.str();
  }
  SmallString<256> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    path = xdg;
  else if (!sys::path::home_directory(path))
    return std::string();
  else
    sys::path::append(path, ".cache");
  sys::path::append(path, "mp");
  return std::string(path);
}

CompileCache::CompileCache(std::string dir, uint64_t maxBytes)
    : dir(std::move(dir)), limit(maxBytes) {
  if (limit == 0) {
    limit = kDefaultMaxBytes;
    if (const char *mb = std::getenv("MP_CACHE_MAX_MB")) {
      uint64_t v = 0;
      if (!StringRef(mb).getAsInteger(10, v))
        limit = v << 20;
    }
  }
}

std::string CompileCache::entryPath(StringRef kind, StringRef key) const {
  SmallString<256> path(dir);
  sys::path::append(path, kind, hashBytes(key).substr(0, 32));
  return std::string(path);
}

/// Why the entry at `path` does not hold `key` with intact files, or
/// nothing; its files go to `files`.
static std::optional<std::string> readEntry(StringRef path, StringRef key,
                                            CacheFiles &files) {
  SmallString<256> manifestPath(path);
  sys::path::append(manifestPath, kManifest);
  auto buffer = MemoryBuffer::getFile(manifestPath);
  if (!buffer)
    return "no readable manifest";
  Expected<json::Value> manifest = json::parse((*buffer)->getBuffer());
  if (!manifest) {
    consumeError(manifest.takeError());
    return std::string("the manifest is not JSON");
  }
  const json::Object *root = manifest->getAsObject();
  const json::Object *list = root ? root->getObject("files") : nullptr;
  if (!root || root->getInteger("version") != 1 || !list)
    return std::string("the manifest has no file list");
  if (root->getString("key") != key)
    return std::string("the entry was written for another key");
  for (const auto &[name, value] : *list) {
    const json::Object *f = value.getAsObject();
    std::optional<int64_t> size = f ? f->getInteger("size") : std::nullopt;
    std::optional<StringRef> hash = f ? f->getString("blake3") : std::nullopt;
    if (!size || !hash)
      return "the manifest entry of '" + name.str() + "' is malformed";
    SmallString<256> filePath(path);
    sys::path::append(filePath, name.str());
    auto data = MemoryBuffer::getFile(filePath, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
    if (!data)
      return "'" + name.str() + "' is missing";
    StringRef bytes = (*data)->getBuffer();
    if (int64_t(bytes.size()) != *size)
      return "'" + name.str() + "' has " + std::to_string(bytes.size()) +
             " bytes, the manifest says " + std::to_string(*size);
    if (hashBytes(bytes) != *hash)
      return "'" + name.str() + "' does not match its hash";
    files[name.str()] = bytes.str();
  }
  return std::nullopt;
}

std::optional<CacheFiles> CompileCache::lookup(StringRef kind, StringRef key,
                                               std::string *problem) const {
  std::string path = entryPath(kind, key);
  if (!sys::fs::is_directory(path))
    return std::nullopt;
  CacheFiles files;
  if (std::optional<std::string> why = readEntry(path, key, files)) {
    if (problem)
      *problem = "compile cache entry " + path + " is unusable (" + *why +
                 "); it is removed and rebuilt";
    sys::fs::remove_directories(path, /*IgnoreErrors=*/true);
    return std::nullopt;
  }
  // Recently used entries are the last to go when the cache is trimmed.
  SmallString<256> manifestPath(path);
  sys::path::append(manifestPath, kManifest);
  int fd;
  if (!sys::fs::openFileForWrite(manifestPath, fd, sys::fs::CD_OpenExisting,
                                 sys::fs::OF_Append)) {
    (void)sys::fs::setLastAccessAndModificationTime(
        fd, std::chrono::system_clock::now());
    sys::Process::SafelyCloseFileDescriptor(fd);
  }
  return files;
}

static bool writeFile(StringRef path, StringRef bytes, std::string &error) {
  int fd;
  if (std::error_code ec = sys::fs::openFileForWrite(path, fd)) {
    error = "cannot write " + path.str() + ": " + ec.message();
    return false;
  }
  raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << bytes;
  os.close();
  if (os.has_error()) {
    error = "cannot write " + path.str() + ": " + os.error().message();
    os.clear_error();
    return false;
  }
  return true;
}

bool CompileCache::store(StringRef kind, StringRef key, const CacheFiles &files,
                         std::string &error) const {
  SmallString<256> kindDir(dir);
  sys::path::append(kindDir, kind);
  if (std::error_code ec = sys::fs::create_directories(kindDir)) {
    error = "cannot create the compile cache " + kindDir.str().str() + ": " +
            ec.message();
    return false;
  }
  // A folder of this process's own, renamed into place when complete.
  static std::atomic<unsigned> counter{0};
  SmallString<256> tmp(kindDir);
  sys::path::append(tmp, ".tmp-" + std::to_string(::getpid()) + "-" +
                             std::to_string(counter++));
  sys::fs::remove_directories(tmp, /*IgnoreErrors=*/true);
  if (std::error_code ec = sys::fs::create_directory(tmp)) {
    error = "cannot create " + tmp.str().str() + ": " + ec.message();
    return false;
  }
  json::Object list;
  bool ok = true;
  for (const auto &[name, bytes] : files) {
    if (name == kManifest || sys::path::filename(name) != name) {
      error = "bad cache file name '" + name + "'";
      ok = false;
      break;
    }
    SmallString<256> path(tmp);
    sys::path::append(path, name);
    if (!(ok = writeFile(path, bytes, error)))
      break;
    list[name] = json::Object{{"size", int64_t(bytes.size())},
                              {"blake3", hashBytes(bytes)}};
  }
  if (ok) {
    std::string text;
    raw_string_ostream os(text);
    os << json::Value(json::Object{
        {"version", 1}, {"key", key.str()}, {"files", std::move(list)}});
    SmallString<256> manifestPath(tmp);
    sys::path::append(manifestPath, kManifest);
    ok = writeFile(manifestPath, text, error);
  }
  std::string path = entryPath(kind, key);
  if (ok) {
    // Another process may have stored the same entry meanwhile: either
    // copy is whole, so the first one in place stays.
    sys::fs::remove_directories(path, /*IgnoreErrors=*/true);
    if (std::error_code ec = sys::fs::rename(tmp, path)) {
      if (!sys::fs::is_directory(path)) {
        error = "cannot move the entry into " + path + ": " + ec.message();
        ok = false;
      }
    }
  }
  sys::fs::remove_directories(tmp, /*IgnoreErrors=*/true);
  if (ok)
    trim();
  return ok;
}

void CompileCache::trim() const {
  struct Entry {
    std::string path;
    uint64_t bytes = 0;
    sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (sys::fs::directory_iterator kind(dir, ec), end; !ec && kind != end;
       kind.increment(ec)) {
    if (kind->type() != sys::fs::file_type::directory_file)
      continue;
    std::error_code ec2;
    for (sys::fs::directory_iterator e(kind->path(), ec2); !ec2 && e != end;
         e.increment(ec2)) {
      if (sys::path::filename(e->path()).starts_with(".tmp-"))
        continue;
      Entry entry{e->path(), 0, {}};
      SmallString<256> manifestPath(e->path());
      sys::path::append(manifestPath, kManifest);
      sys::fs::file_status status;
      if (!sys::fs::status(manifestPath, status))
        entry.used = status.getLastModificationTime();
      std::error_code ec3;
      for (sys::fs::directory_iterator f(e->path(), ec3); !ec3 && f != end;
           f.increment(ec3))
        if (auto st = f->status())
          entry.bytes += st->getSize();
      total += entry.bytes;
      entries.push_back(std::move(entry));
    }
  }
  if (total <= limit)
    return;
  llvm::sort(entries,
             [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &e : entries) {
    if (total <= limit)
      break;
    sys::fs::remove_directories(e.path, /*IgnoreErrors=*/true);
    total -= e.bytes;
  }
}

} // namespace mp

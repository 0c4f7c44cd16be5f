//===- CompileCache.h - compiled artifacts kept between processes -*- C++
//-*-===//
//
// A directory of entries, each the files one compilation produced (a JIT
// object and its entry signature, or an mp-compile library), named by a
// hash of everything the compilation read: the model's bytes, the options,
// the input shapes, the mp build and the host CPU. A process that compiles
// a model the same way again loads the entry instead.
//
// An entry holds a manifest with its full key text and the size and BLAKE3
// hash of every file: a truncated, edited or colliding entry is detected on
// lookup, removed and rebuilt, never loaded. Entries are written into a
// temporary folder and renamed into place, so concurrent processes see
// whole entries or none. Past the size bound the least recently used
// entries are removed.
//
//===----------------------------------------------------------------------===//

#ifndef MP_SUPPORT_COMPILECACHE_H
#define MP_SUPPORT_COMPILECACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mp {

/// Hex BLAKE3 hash of `bytes`.
std::string hashBytes(llvm::StringRef bytes);

/// Hex BLAKE3 hash of the file at `path`; nothing when it cannot be read.
std::optional<std::string> hashFile(llvm::StringRef path);

/// What identifies the mp build running this code: the hash of the binary
/// (executable or shared library) that holds it, with the host CPU and its
/// features, since the JIT compiles for them.
const std::string &buildFingerprint();

/// The folder the cache lives in unless told otherwise: MP_CACHE_DIR, else
/// $XDG_CACHE_HOME/mp, else ~/.cache/mp. Empty when MP_CACHE_DIR is "off"
/// or no home is known.
std::string defaultCacheDir();

/// One entry's files by name.
using CacheFiles = std::map<std::string, std::string>;

class CompileCache {
public:
  /// The cache in `dir` holding at most `maxBytes` (0: the default, or
  /// MP_CACHE_MAX_MB when set).
  explicit CompileCache(std::string dir, uint64_t maxBytes = 0);

  /// The files stored under `key` in `kind` ("jit", "library"), or nothing.
  /// An entry that fails its manifest (missing or changed file, other key)
  /// is removed; `problem` then says what was wrong.
  std::optional<CacheFiles> lookup(llvm::StringRef kind, llvm::StringRef key,
                                   std::string *problem = nullptr) const;

  /// Stores `files` under `key`, then trims the cache to its bound. False
  /// with `error` when the entry cannot be written (the cache is optional:
  /// callers warn and go on).
  bool store(llvm::StringRef kind, llvm::StringRef key, const CacheFiles &files,
             std::string &error) const;

  llvm::StringRef directory() const { return dir; }
  uint64_t maxBytes() const { return limit; }

  /// The folder of `key`'s entry (whether or not it exists).
  std::string entryPath(llvm::StringRef kind, llvm::StringRef key) const;

private:
  void trim() const;

  std::string dir;
  uint64_t limit;
};

} // namespace mp

#endif // MP_SUPPORT_COMPILECACHE_H

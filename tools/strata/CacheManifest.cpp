//===- CacheManifest.cpp - a compile cache entry's manifest ------------===//

#include "CacheManifest.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SHA256.h"

#include <array>

namespace strata::driver {

const KeyPart *Manifest::part(llvm::StringRef name) const {
  for (const KeyPart &p : parts)
    if (p.name == name)
      return &p;
  return nullptr;
}

std::string Manifest::modelHash() const {
  if (const KeyPart *model = part("model"))
    for (const auto &[field, value] : model->fields)
      if (field == "sha256")
        return value;
  return "";
}

std::string sha256Hex(llvm::ArrayRef<uint8_t> data) {
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(data);
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::string sha256Hex(llvm::StringRef data) {
  return sha256Hex(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(data.data()), data.size()));
}

std::string parseManifest(llvm::StringRef text, const std::string &file,
                          Manifest &manifest) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value)
    return "the manifest " + file +
           " is not valid JSON: " + llvm::toString(value.takeError());
  std::string bad = "the manifest " + file + " is malformed";
  const llvm::json::Object *root = value->getAsObject();
  if (!root)
    return bad + " (not an object)";
  if (root->getInteger("format") != kManifestFormat)
    return bad + " (unknown format)";
  auto key = root->getString("key");
  auto modelPath = root->getString("model_path");
  auto created = root->getString("created");
  const llvm::json::Object *module = root->getObject("module");
  const llvm::json::Object *parts = root->getObject("parts");
  if (!key || !modelPath || !created || !module || !parts)
    return bad + " (a field is missing)";
  manifest.key = key->str();
  manifest.modelPath = modelPath->str();
  manifest.created = created->str();
  auto moduleHash = module->getString("sha256");
  auto moduleBytes = module->getInteger("bytes");
  if (!moduleHash || !moduleBytes || *moduleBytes < 0)
    return bad + " (no module size and hash)";
  manifest.moduleHash = moduleHash->str();
  manifest.moduleBytes = static_cast<uint64_t>(*moduleBytes);
  for (const auto &[name, partValue] : *parts) {
    const llvm::json::Object *fields = partValue.getAsObject();
    if (!fields)
      return bad + " (key part '" + name.str() + "' is not an object)";
    KeyPart part{name.str(), {}};
    for (const auto &[field, value] : *fields) {
      std::optional<llvm::StringRef> text = value.getAsString();
      if (!text)
        return bad + " ('" + name.str() + "." + field.str() +
               "' is not a string)";
      part.fields.push_back({field.str(), text->str()});
    }
    // Sorted, for stable messages (a json::Object's order is its hash's).
    llvm::sort(part.fields);
    manifest.parts.push_back(std::move(part));
  }
  llvm::sort(manifest.parts, [](const KeyPart &a, const KeyPart &b) {
    return a.name < b.name;
  });
  return "";
}

std::string checkModuleBytes(const Manifest &manifest,
                             llvm::ArrayRef<uint8_t> bytes,
                             const std::string &moduleFile) {
  if (bytes.size() < manifest.moduleBytes)
    return moduleFile + ": the module is truncated (" +
           std::to_string(bytes.size()) + " of " +
           std::to_string(manifest.moduleBytes) + " bytes)";
  if (bytes.size() != manifest.moduleBytes)
    return moduleFile + ": the module has " + std::to_string(bytes.size()) +
           " bytes, its manifest says " + std::to_string(manifest.moduleBytes);
  if (sha256Hex(bytes) != manifest.moduleHash)
    return moduleFile +
           ": the module is corrupted (its SHA-256 differs from the "
           "manifest's)";
  return "";
}

} // namespace strata::driver

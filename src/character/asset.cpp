// Looking up an asset's clips (kinema/character/asset.h).
#include "kinema/character/asset.h"

#include <charconv>

#include "kinema/core/error.h"

namespace kinema {

AssetCounts count_contents(const Asset& asset) {
  AssetCounts c;
  c.joints = asset.skeleton.joint_count();
  c.roots = static_cast<int>(asset.skeleton.roots().size());
  c.meshes = static_cast<int>(asset.meshes.size());
  c.skins = static_cast<int>(asset.skins.size());
  for (const Mesh& m : asset.meshes) {
    c.vertices += m.vertex_count();
    c.triangles += m.indices.size() / 3;
    c.morph_targets += static_cast<int>(m.morph_targets.size());
  }
  return c;
}

int find_clip(const Asset& asset, const std::string& name_or_index, const std::string& file) {
  const int count = static_cast<int>(asset.clips.size());
  for (int i = 0; i < count; ++i)
    if (asset.clips[static_cast<size_t>(i)].name == name_or_index) return i;
  int index = -1;
  const char* first = name_or_index.data();
  const char* last = first + name_or_index.size();
  const auto [ptr, ec] = std::from_chars(first, last, index);
  if (ec == std::errc() && ptr == last && index >= 0 && index < count) return index;
  std::string names;
  for (int i = 0; i < count; ++i) {
    names += names.empty() ? "" : ", ";
    names += std::to_string(i) + " '" + asset.clips[static_cast<size_t>(i)].name + "'";
  }
  throw UsageError(
      file + ": no clip '" + name_or_index + "'" +
      (count == 0 ? std::string(" (the file has no animation)") : " (clips: " + names + ")"));
}

}  // namespace kinema

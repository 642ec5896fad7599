// tests/architecture/layers_test.cpp — the module layers: the graph the build defines
// (kinema_modules.txt, written by CMake from the kinema_module() calls) is the one
// docs/architecture.md draws, and every #include in include/kinema/<module>/ and src/<module>/
// stays inside the module or goes down to a module it may use.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_paths.h"

namespace {

namespace fs = std::filesystem;

const fs::path kSource = kinema::test_paths::source_dir();
const fs::path kModuleGraph = kinema::test_paths::module_graph();

/// Module → its direct dependencies, in the order given (bottom-up).
using ModuleGraph = std::vector<std::pair<std::string, std::set<std::string>>>;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Plain string scanning rather than <regex>: GCC 12's regex compiler trips
// -Wmaybe-uninitialized under the sanitizer preset's -O2, and warnings are errors.

bool is_name_char(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }

/// The runs of [a-z_] in text.
std::set<std::string> words(const std::string& text) {
  std::set<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    if (!is_name_char(text[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && is_name_char(text[end])) ++end;
    out.insert(text.substr(i, end - i));
    i = end;
  }
  return out;
}

/// The names written `like_this` in text.
std::vector<std::string> quoted_names(const std::string& text) {
  std::vector<std::string> out;
  size_t open = text.find('`');
  while (open != std::string::npos) {
    const size_t close = text.find('`', open + 1);
    if (close == std::string::npos) break;
    const std::string inner = text.substr(open + 1, close - open - 1);
    if (!inner.empty() && std::all_of(inner.begin(), inner.end(), is_name_char))
      out.push_back(inner);
    open = text.find('`', close + 1);
  }
  return out;
}

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

/// The path of a `#include "path"` line; empty for any other line.
std::string quoted_include(const std::string& line) {
  std::string rest = trimmed(line);
  if (rest.empty() || rest[0] != '#') return "";
  rest = trimmed(rest.substr(1));
  if (rest.rfind("include", 0) != 0) return "";
  rest = trimmed(rest.substr(7));
  if (rest.empty() || rest[0] != '"') return "";
  const size_t close = rest.find('"', 1);
  return close == std::string::npos ? "" : rest.substr(1, close - 1);
}

/// The build's graph: "module: dep dep" per line.
ModuleGraph build_graph() {
  ModuleGraph g;
  std::istringstream in(read_text(kModuleGraph));
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    g.emplace_back(line.substr(0, colon), words(line.substr(colon + 1)));
  }
  return g;
}

/// The documented graph: the rows of the table under "## Modules" in docs/architecture.md,
/// "| `module` | `dep`, `dep` | what it owns |" ("—" for none).
ModuleGraph documented_graph() {
  ModuleGraph g;
  std::istringstream in(read_text(kSource / "docs/architecture.md"));
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Modules";
    if (!in_section || line.rfind("|", 0) != 0) continue;
    // Cells: "", " `module` ", " `dep`, `dep` ", ...
    std::vector<std::string> cells;
    std::istringstream row(line);
    std::string cell;
    while (std::getline(row, cell, '|')) cells.push_back(cell);
    if (cells.size() < 3) continue;
    const std::vector<std::string> module = quoted_names(cells[1]);
    if (module.size() != 1 || trimmed(cells[1]) != "`" + module[0] + "`") continue;
    const std::vector<std::string> deps = quoted_names(cells[2]);
    g.emplace_back(module[0], std::set<std::string>(deps.begin(), deps.end()));
  }
  return g;
}

/// Every module a module may include: itself and its dependencies, transitively.
std::map<std::string, std::set<std::string>> closures(const ModuleGraph& g) {
  std::map<std::string, std::set<std::string>> c;
  for (const auto& [module, deps] : g) {
    std::set<std::string>& mine = c[module];
    mine.insert(module);
    for (const std::string& d : deps) mine.insert(c[d].begin(), c[d].end());
  }
  return c;
}

TEST(Architecture, DocumentedModulesAreTheBuildsModules) {
  const ModuleGraph built = build_graph(), documented = documented_graph();
  ASSERT_FALSE(built.empty()) << kModuleGraph;
  ASSERT_FALSE(documented.empty()) << "no module table under '## Modules' in docs/architecture.md";
  EXPECT_EQ(documented.size(), built.size());
  for (size_t i = 0; i < std::min(built.size(), documented.size()); ++i) {
    EXPECT_EQ(documented[i].first, built[i].first) << "row " << i << " (bottom-up order)";
    EXPECT_EQ(documented[i].second, built[i].second) << built[i].first << "'s dependencies";
  }
}

TEST(Architecture, EveryModuleFolderIsAModule) {
  std::set<std::string> modules;
  for (const auto& [m, deps] : build_graph()) modules.insert(m);
  for (const fs::path& root : {kSource / "src", kSource / "include/kinema"})
    for (const auto& e : fs::directory_iterator(root)) {
      if (!e.is_directory()) continue;
      EXPECT_TRUE(modules.count(e.path().filename().string()))
          << e.path() << " is not a module of the build (kinema_module in CMakeLists.txt)";
    }
}

TEST(Architecture, IncludesGoDownTheLayers) {
  const ModuleGraph g = build_graph();
  const auto allowed = closures(g);
  int files = 0;
  for (const auto& [module, deps] : g) {
    for (const fs::path& root : {kSource / "include/kinema" / module, kSource / "src" / module}) {
      if (!fs::is_directory(root)) continue;
      for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (!e.is_regular_file()) continue;
        ++files;
        std::istringstream in(read_text(e.path()));
        std::string line;
        int line_no = 0;
        while (std::getline(in, line)) {
          ++line_no;
          const std::string target = quoted_include(line);
          if (target.empty()) continue;
          const std::string where =
              fs::relative(e.path(), kSource).string() + ":" + std::to_string(line_no);
          if (target.rfind("kinema/", 0) == 0) {
            const std::string rest = target.substr(7);
            const size_t slash = rest.find('/');
            ASSERT_NE(slash, std::string::npos)
                << where << ": " << target << " (the umbrella header is for users, not modules)";
            const std::string to = rest.substr(0, slash);
            EXPECT_TRUE(allowed.at(module).count(to))
                << where << ": module '" << module << "' includes " << target << ", but '" << to
                << "' is not below it (docs/architecture.md)";
          } else {
            // A module-private header: a file of this module's own src/ folder.
            EXPECT_EQ(target.find(".."), std::string::npos) << where << ": " << target;
            EXPECT_TRUE(fs::exists(kSource / "src" / module / target))
                << where << ": " << target << " is not a private header of '" << module << "'";
          }
        }
      }
    }
  }
  EXPECT_GT(files, 100);
}

TEST(Architecture, TheUmbrellaHeaderIncludesEveryPublicHeader) {
  const std::string umbrella = read_text(kSource / "include/kinema/kinema.h");
  int headers = 0;
  for (const auto& e : fs::recursive_directory_iterator(kSource / "include/kinema")) {
    if (!e.is_regular_file() || e.path().filename() == "kinema.h") continue;
    ++headers;
    const std::string name = fs::relative(e.path(), kSource / "include").string();
    EXPECT_NE(umbrella.find("#include \"" + name + "\""), std::string::npos)
        << name << " is missing from kinema/kinema.h";
  }
  EXPECT_GT(headers, 50);
}

}  // namespace

// `kinema view` without sockets: the files sorted and checked before anything is served, each
// request path mapped to the page, its npm modules or a named file and nothing else, and kinema's
// formats converted to the JSON the page draws.
#include "kinema/pipeline/view.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error_of.h"
#include "kinema/core/error.h"
#include "kinema/core/file.h"
#include "kinema/io/point_cache.h"
#include "kinema/pipeline/feet.h"
#include "pipeline/pipeline_test_util.h"

namespace kinema::pipeline {
namespace {

namespace fs = std::filesystem;
using test::kData;
using test::kDemo;

const std::string kBvh = kData + "/bvh/cmu_iclone_cc3/007_12.bvh";
const std::string kGlb = kData + "/gltf/RiggedFigure.glb";
const std::string kGltf = kData + "/gltf/interpolation_test.gltf";

class ViewSiteTest : public test::PipelineTest {
 protected:
  void SetUp() override {
    test::PipelineTest::SetUp();
    // A stand-in for viewer/ with its npm modules installed.
    viewer_ = path("viewer");
    for (const char* f :
         {"index.html", "app/main.js", "node_modules/three/build/three.module.js",
          "node_modules/three/examples/jsm/loaders/BVHLoader.js", "node_modules/three/package.json",
          "node_modules/@pixiv/three-vrm/lib/three-vrm.module.js"}) {
      fs::create_directories((fs::path(viewer_) / f).parent_path());
      write_file_atomically((fs::path(viewer_) / f).string(), std::string("content of ") + f);
    }
    write_file_atomically(path("secret.txt"), "not to be served");
  }
  std::string viewer_;
};

TEST_F(ViewSiteTest, SortsFilesIntoKindsAndListsThem) {
  const ViewSite site = make_view_site({kBvh, kGlb}, viewer_);
  ASSERT_EQ(site.files.size(), 2u);
  EXPECT_EQ(site.files[0].kind, ViewKind::bvh);
  EXPECT_EQ(site.files[1].kind, ViewKind::gltf);
  EXPECT_EQ(site.files[0].body, read_file(kBvh));  // as it is: three.js reads it
  const ViewResponse r = view_respond(site, "/api/files");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  const auto j = nlohmann::json::parse(r.body);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["name"], "007_12.bvh");
  EXPECT_EQ(j[0]["kind"], "bvh");
  EXPECT_EQ(j[0]["url"], "/api/file/0/007_12.bvh");
  EXPECT_EQ(j[1]["kind"], "gltf");
}

TEST_F(ViewSiteTest, ServesThePageItsModulesAndTheNamedFilesOnly) {
  const ViewSite site = make_view_site({kBvh, kGltf}, viewer_);
  const auto body = [&](const std::string& p) {
    const ViewResponse r = view_respond(site, p);
    return r.status == 200 ? r.body : "404";
  };
  EXPECT_EQ(body("/"), "content of index.html");
  EXPECT_EQ(view_respond(site, "/").content_type, "text/html; charset=utf-8");
  EXPECT_EQ(body("/app/main.js"), "content of app/main.js");
  EXPECT_EQ(view_respond(site, "/app/main.js").content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(body("/three/build/three.module.js"),
            "content of node_modules/three/build/three.module.js");
  EXPECT_EQ(body("/three/examples/jsm/loaders/BVHLoader.js"),
            "content of node_modules/three/examples/jsm/loaders/BVHLoader.js");
  EXPECT_EQ(body("/three-vrm.js"),
            "content of node_modules/@pixiv/three-vrm/lib/three-vrm.module.js");
  EXPECT_EQ(body("/api/file/0/007_12.bvh"), read_file(kBvh));
  // A .gltf's buffer beside it is served with it, under the .gltf's address.
  EXPECT_EQ(body("/api/file/1/interpolation_test.gltf"), read_file(kGltf));
  EXPECT_EQ(body("/api/file/1/interpolation_test.bin"),
            read_file(kData + "/gltf/interpolation_test.bin"));
  // Nothing else: other files of node_modules, paths that climb, other names, other indices.
  for (const char* p :
       {"/three/package.json", "/three/build/../package.json", "/three/build/../../../secret.txt",
        "/app/../index.html", "/app/sub/main.js", "/app/.hidden", "/index.htm", "/secret.txt",
        "/api/file/0/other.bvh", "/api/file/0/../1/interpolation_test.gltf", "/api/file/2/x.bvh",
        "/api/file/x/007_12.bvh", "/api/file/0", "/api/file//007_12.bvh",
        "/api/file/0/interpolation_test.bin", "/api/file/99999999999999999999/a", "",
        "/three/build/%2e%2e/package.json", "/three/build//three.module.js"})
    EXPECT_EQ(body(p), "404") << p;
}

TEST_F(ViewSiteTest, RefusesBadInputsBeforeServing) {
  const auto usage = [&](const std::vector<std::string>& files, const std::string& dir,
                         const std::string& says) {
    try {
      (void)make_view_site(files, dir);
      ADD_FAILURE() << "no usage error for " << says;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  usage({}, viewer_, "at least one file");
  usage({path("secret.txt")}, viewer_, "secret.txt");
  usage({path("db.kmm")}, viewer_, "PATH.json");
  usage({kBvh}, path("nowhere"), "index.html");
  // A file that is missing or broken: kinema's error, naming it.
  Error e = test::error_of([&] { (void)make_view_site({path("missing.bvh")}, viewer_); });
  EXPECT_NE(std::string(e.what()).find("missing.bvh"), std::string::npos) << e.what();
  write_file_atomically(path("broken.glb"), "glTF but not really");
  e = test::error_of([&] { (void)make_view_site({kBvh, path("broken.glb")}, viewer_); });
  EXPECT_NE(std::string(e.what()).find("broken.glb"), std::string::npos) << e.what();
  write_file_atomically(path("broken.pc2"), "POINTCACHE2");
  e = test::error_of([&] { (void)make_view_site({path("broken.pc2")}, viewer_); });
  EXPECT_NE(std::string(e.what()).find("broken.pc2"), std::string::npos) << e.what();
  // The page without its npm modules: say how to install them.
  fs::remove_all(fs::path(viewer_) / "node_modules");
  usage({kBvh}, viewer_, "scripts/setup.sh");
}

TEST_F(ViewSiteTest, PointCachesBecomeJsonWithTheirPositions) {
  PointCache cache;
  cache.points = 2;
  cache.positions = {{0, 1, 2}, {3, 4, 5}, {0.5f, 1.5f, 2.5f}, {3.5f, 4.5f, 5.5f}};
  write_pc2(path("c.pc2"), cache);
  const ViewSite site = make_view_site({path("c.pc2")}, viewer_);
  EXPECT_EQ(site.files[0].kind, ViewKind::points);
  const ViewResponse r = view_respond(site, "/api/file/0/c.pc2");
  EXPECT_EQ(r.content_type, "application/json");
  const auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["kind"], "points");
  EXPECT_EQ(j["points"], 2);
  EXPECT_EQ(j["samples"], 2);
  EXPECT_DOUBLE_EQ(j["fps"].get<double>(), 30.0);  // no sidecar: kinema render's default
  ASSERT_EQ(j["positions"].size(), 12u);
  EXPECT_DOUBLE_EQ(j["positions"][6].get<double>(), 0.5);
  EXPECT_FALSE(j.contains("alive"));
}

TEST_F(ViewSiteTest, AGroundCarriesTheFeetGoalsOfTheClipBesideIt) {
  // The walk with its feet placed on the stairs (what `kinema ik feet --follow-ground` writes).
  FeetRequest feet;
  feet.in = kDemo + "/walk.bvh";
  feet.ground = kDemo + "/stairs.obj";
  feet.out = path("walk_stairs.glb");
  feet.options.follow_ground = true;
  (void)place_feet(feet);
  const ViewSite site = make_view_site({feet.out, feet.ground}, viewer_);
  ASSERT_EQ(site.files[1].kind, ViewKind::ground);
  const auto j = nlohmann::json::parse(site.files[1].body);
  EXPECT_EQ(j["kind"], "ground");
  const int nx = j["grid"]["nx"], nz = j["grid"]["nz"];
  EXPECT_EQ(j["grid"]["heights"].size(), size_t(nx) * size_t(nz));
  const auto& g = j["goals"];
  ASSERT_TRUE(g.contains("ankles")) << g.dump();
  EXPECT_EQ(g["legs"], (nlohmann::json{"left", "right"}));
  const int frames = g["frames"];
  EXPECT_EQ(frames, 343);
  EXPECT_EQ(g["ankles"].size(), size_t(frames) * 2 * 3);
  // Planted, the ankles stand their own height above the ground (8.5 cm for this walk)…
  for (const auto& h : g["ankle_heights"]) {
    EXPECT_GT(h.get<double>(), 0.05);
    EXPECT_LT(h.get<double>(), 0.12);
  }
  // …and on the flat floor before the stairs a foot is down at every frame.
  int down = 0;
  for (int f = 0; f < 60; ++f)
    down += g["planted"][size_t(2 * f)].get<int>() + g["planted"][size_t(2 * f + 1)].get<int>() > 0;
  EXPECT_EQ(down, 60);
}

}  // namespace
}  // namespace kinema::pipeline

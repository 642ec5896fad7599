// Length units by name (kinema/core/units.h).
#include <gtest/gtest.h>

#include <string>

#include "kinema/core/error.h"
#include "kinema/core/units.h"

namespace kinema {
namespace {

TEST(Units, NamesGiveMetresPerUnit) {
  EXPECT_EQ(metres_per_unit("m"), 1.0);
  EXPECT_EQ(metres_per_unit("cm"), 0.01);
  EXPECT_EQ(metres_per_unit("mm"), 0.001);
  EXPECT_EQ(metres_per_unit("inch"), 0.0254);
  EXPECT_EQ(metres_per_unit("in"), 0.0254);
  EXPECT_NEAR(metres_per_unit("cmu"), 0.05644, 1e-5);  // the CMU ASF unit, 1/0.45 inch
  EXPECT_THROW(metres_per_unit("furlong"), UsageError);
  EXPECT_THROW(metres_per_unit("M"), UsageError);
}

TEST(Units, LengthsNeedAUnitAndArePositive) {
  EXPECT_DOUBLE_EQ(parse_length("0.01cm", "--error"), 1e-4);
  EXPECT_DOUBLE_EQ(parse_length("3 cm", "--vertex"), 0.03);
  EXPECT_DOUBLE_EQ(parse_length("0.1mm", "--error"), 1e-4);
  EXPECT_DOUBLE_EQ(parse_length("2m", "--error"), 2.0);
  for (const char* bad : {"0.01", "cm", "-1cm", "0cm", "nan cm", "1furlong", ""}) {
    try {
      parse_length(bad, "--error");
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--error ", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace kinema

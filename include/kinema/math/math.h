// kinema/math.h — all of kinema's small math types.
#pragma once

#include "kinema/math/age_curve.h"
#include "kinema/math/dual_quat.h"
#include "kinema/math/euler.h"
#include "kinema/math/mat4.h"
#include "kinema/math/quat.h"
#include "kinema/math/scalar.h"
#include "kinema/math/transform.h"
#include "kinema/math/vec3.h"

// kinema/kinema.h — every public header of kinema, for quick starts. Larger projects include the
// module headers they use (kinema/math.h, kinema/skeleton/skeleton.h, kinema/io/file.h, …).
#pragma once

#include "kinema/clip/clip.h"
#include "kinema/core/error.h"
#include "kinema/io/asset.h"
#include "kinema/io/assimp_import.h"
#include "kinema/io/bvh.h"
#include "kinema/io/file.h"
#include "kinema/io/gltf.h"
#include "kinema/io/humanoid.h"
#include "kinema/math.h"
#include "kinema/skeleton/skeleton.h"

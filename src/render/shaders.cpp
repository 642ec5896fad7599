// src/render/shaders.cpp — the GLSL programs. The skinning vertex shader is the usual DQS shader
// (Kavan et al. 2008: dual quaternions stored as two vec4 (x, y, z, w) per joint, rotation written
// p + 2u×(u×p + w·p)) and its LBS counterpart with 3×4 palettes (three vec4 rows per joint),
// extended to 8 influences, normals and the pre-scale stage so that it matches skin_lbs /
// skin_dqs (src/skin/skinning.cpp) operation for operation.
#include "shaders.h"

#include <initializer_list>
#include <string>

#include "kinema/render/renderer.h"

namespace kinema::render_detail {

const char* const kSkinVertexShader = R"GLSL(#version 450 core
layout(location = 0) in vec3 aPosition;  // bind space, metres
layout(location = 1) in vec3 aNormal;
layout(location = 2) in uvec4 aJoints0;  // palette indices of influences 0-3
layout(location = 3) in uvec4 aJoints1;  // influences 4-7 (weight 0 when unused)
layout(location = 4) in vec4 aWeights0;
layout(location = 5) in vec4 aWeights1;
layout(location = 6) in vec2 aUv0;     // TEXCOORD_0 (glTF: v down)
layout(location = 7) in vec2 aUv1;     // TEXCOORD_1
layout(location = 8) in vec4 aColour;  // COLOR_0, linear RGBA (1 when the mesh has none)

// LBS palette: S_j = W_j * inverse(B_j) as three rows (a 3x4 matrix) per joint.
layout(std430, binding = 0) readonly buffer LbsPalette { vec4 lbsRows[]; };
// DQS palette: real (rotation, x y z w) then dual part of every joint.
layout(std430, binding = 1) readonly buffer DqsPalette { vec4 dqPairs[]; };
// DQS pre-scale stage (scale/shear left after the polar decomposition), three rows per joint.
layout(std430, binding = 2) readonly buffer PrescalePalette { vec4 prescaleRows[]; };

uniform int uMethod;       // 0: LBS, 1: DQS
uniform bool uPrescale;    // DQS: apply the blended pre-scale first
uniform mat4 uViewProjection;
// Render passes: the previous frame's LBS palette, to place each vertex where it was.
layout(std430, binding = 8) readonly buffer PreviousLbsPalette { vec4 previousRows[]; };
uniform bool uPrevious;
uniform mat4 uPreviousViewProjection;
// Crowds (LBS): instance i's palette starts at joint i * uPaletteStride (0 for one character).
uniform uint uPaletteStride;
// MToon outlines (the back faces pushed out): 0 none, 1 along the normal by uOutlineWidth
// metres, 2 by uOutlineWidth of half the image height on screen (three-vrm's screen mode);
// scaled by the width texture's G.
uniform int uOutlineMode;
uniform float uOutlineWidth;
uniform bool uOutlineTexOn;
uniform int uOutlineTexSet;
uniform mat3 uOutlineTexMatrix;
uniform sampler2D uOutlineWidthTex;

out vec3 vPosition;  // skinned, model space
out vec3 vNormal;    // skinned, unit length
flat out int vInstance;
out vec2 vUv0;
out vec2 vUv1;
out vec4 vColour;
out vec4 vClipNow;       // render passes: this frame's clip position
out vec4 vClipPrevious;  // and the previous frame's (uPrevious), else the same

uint jointOf(int k) { return k < 4 ? aJoints0[k] : aJoints1[k - 4]; }
float weightOf(int k) { return k < 4 ? aWeights0[k] : aWeights1[k - 4]; }

vec3 rowsPoint(vec4 r0, vec4 r1, vec4 r2, vec3 p) {
  return vec3(r0.x * p.x + r0.y * p.y + r0.z * p.z + r0.w,
              r1.x * p.x + r1.y * p.y + r1.z * p.z + r1.w,
              r2.x * p.x + r2.y * p.y + r2.z * p.z + r2.w);
}
vec3 rowsVector(vec4 r0, vec4 r1, vec4 r2, vec3 v) {
  return vec3(r0.x * v.x + r0.y * v.y + r0.z * v.z, r1.x * v.x + r1.y * v.y + r1.z * v.z,
              r2.x * v.x + r2.y * v.y + r2.z * v.z);
}
// Cofactor matrix of the 3x3 part with the determinant's sign: the inverse transpose up to a
// positive factor (normals of a scaled or sheared surface).
vec3 rowsNormal(vec4 r0, vec4 r1, vec4 r2, vec3 n) {
  vec3 c0 = vec3(r0.x, r1.x, r2.x), c1 = vec3(r0.y, r1.y, r2.y), c2 = vec3(r0.z, r1.z, r2.z);
  vec3 n0 = cross(c1, c2), n1 = cross(c2, c0), n2 = cross(c0, c1);
  float s = dot(c0, n0) < 0.0 ? -1.0 : 1.0;
  return s * (n0 * n.x + n1 * n.y + n2 * n.z);
}
vec3 unitOr(vec3 v, vec3 fallback) {
  float len = length(v);
  return len > 1e-30 ? v / len : fallback;
}

// Linear blend skinning: the blended 3x4 matrix sum_k w_k S_{j_k}, from this frame's palette
// (this instance's) or, for motion vectors, the previous frame's.
void blendLbs(bool previous, out vec4 r0, out vec4 r1, out vec4 r2) {
  r0 = vec4(0.0), r1 = vec4(0.0), r2 = vec4(0.0);
  uint base = previous ? 0u : uint(gl_InstanceID) * uPaletteStride;
  for (int k = 0; k < 8; ++k) {
    float w = weightOf(k);
    if (w == 0.0) continue;
    uint j = 3u * (jointOf(k) + base);
    r0 += w * (previous ? previousRows[j] : lbsRows[j]);
    r1 += w * (previous ? previousRows[j + 1u] : lbsRows[j + 1u]);
    r2 += w * (previous ? previousRows[j + 2u] : lbsRows[j + 2u]);
  }
}
void skinLbs(vec3 position, vec3 normal, out vec3 p, out vec3 n) {
  vec4 r0, r1, r2;
  blendLbs(false, r0, r1, r2);
  p = rowsPoint(r0, r1, r2, position);
  n = unitOr(rowsNormal(r0, r1, r2, normal), normal);
}

vec3 rotateByQuat(vec4 q, vec3 v) {  // v + 2w(u x v) + 2u x (u x v), as kinema::rotate
  vec3 t = 2.0 * cross(q.xyz, v);
  return v + q.w * t + cross(q.xyz, t);
}

// Dual quaternion skinning (Kavan et al. 2008) with 8 influences and normals.
void skinDqs(vec3 position, vec3 normal, out vec3 p, out vec3 n) {
  vec3 pos = position, nrm = normal;
  if (uPrescale) {
    vec4 s0 = vec4(0.0), s1 = vec4(0.0), s2 = vec4(0.0);
    for (int k = 0; k < 8; ++k) {
      float w = weightOf(k);
      if (w == 0.0) continue;
      uint j = 3u * jointOf(k);
      s0 += w * prescaleRows[j];
      s1 += w * prescaleRows[j + 1u];
      s2 += w * prescaleRows[j + 2u];
    }
    pos = rowsVector(s0, s1, s2, pos);
    nrm = rowsNormal(s0, s1, s2, nrm);
  }
  vec4 r0 = dqPairs[2u * aJoints0.x];
  vec4 br = vec4(0.0), bd = vec4(0.0);
  for (int k = 0; k < 8; ++k) {
    float weight = weightOf(k);
    if (weight == 0.0) continue;
    uint j = 2u * jointOf(k);
    vec4 r = dqPairs[j];
    float w = dot(r, r0) < 0.0 ? -weight : weight;  // blend the short way round
    br += w * r;
    bd += w * dqPairs[j + 1u];
  }
  float len = length(br);
  if (len > 1e-30) {
    br /= len;
    bd /= len;
    vec3 t = 2.0 * (br.w * bd.xyz - bd.w * br.xyz + cross(br.xyz, bd.xyz));
    p = rotateByQuat(br, pos) + t;
    n = unitOr(rotateByQuat(br, nrm), normal);
  } else {
    p = pos;
    n = unitOr(nrm, normal);
  }
}

void main() {
  if (uMethod == 1)
    skinDqs(aPosition, aNormal, vPosition, vNormal);
  else
    skinLbs(aPosition, aNormal, vPosition, vNormal);
  vInstance = gl_InstanceID;
  vUv0 = aUv0;
  vUv1 = aUv1;
  vColour = aColour;
  float width = uOutlineWidth;
  if (uOutlineMode != 0 && uOutlineTexOn)
    width *= textureLod(uOutlineWidthTex,
                        (uOutlineTexMatrix * vec3(uOutlineTexSet == 1 ? aUv1 : aUv0, 1.0)).xy,
                        0.0).g;
  if (uOutlineMode == 1) vPosition += vNormal * width;
  gl_Position = uViewProjection * vec4(vPosition, 1.0);
  if (uOutlineMode == 2) {
    // As three-vrm: the view-space normal's x (over the aspect) and y, not renormalized, so a
    // normal turning towards or away from the camera pushes less.
    float p11 = length(vec3(uViewProjection[0][1], uViewProjection[1][1], uViewProjection[2][1]));
    vec2 d = (uViewProjection * vec4(vNormal, 0.0)).xy / p11;
    gl_Position.xy += width * d * gl_Position.w;  // NDC spans 2 per image height
  }
  vClipNow = gl_Position;
  vClipPrevious = gl_Position;
  if (uPrevious) {
    vec4 r0, r1, r2;
    blendLbs(true, r0, r1, r2);
    vClipPrevious = uPreviousViewProjection * vec4(rowsPoint(r0, r1, r2, aPosition), 1.0);
  }
}
)GLSL";

namespace {

// Every program writes linear light: the targets are sRGB (GL_SRGB8_ALPHA8 with
// GL_FRAMEBUFFER_SRGB), so blending and the MSAA resolve average light, and the GPU encodes.
// The sRGB curve, for colours given encoded (the ground's, the backdrop's).
const char* const kSrgbGlsl = R"GLSL(
vec3 decodeSrgb(vec3 c) {
  c = clamp(c, 0.0, 1.0);
  return mix(c / 12.92, pow((c + 0.055) / 1.055, vec3(2.4)), step(0.04045, c));
}
vec3 encodeSrgb(vec3 c) {
  c = clamp(c, 0.0, 1.0);
  return mix(12.92 * c, 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055, step(0.0031308, c));
}
)GLSL";

// Lambert + hemisphere ambient, two-sided, linear: the crowds' lighting (the single
// character's flat look in material_shaders.cpp is the same light).
const char* const kShadeGlsl = R"GLSL(
uniform vec3 uEye;
uniform vec3 uSunDirection;  // towards the sun, unit
vec4 shade(vec3 albedo, vec3 n, vec3 position) {
  if (dot(n, uEye - position) < 0.0) n = -n;  // two-sided
  float lambert = max(dot(n, uSunDirection), 0.0);
  vec3 sky = vec3(0.55, 0.62, 0.75), ground = vec3(0.22, 0.19, 0.16);
  vec3 ambient = mix(ground, sky, 0.5 * n.y + 0.5);
  vec3 linear = albedo * (0.55 * ambient + vec3(1.0, 0.95, 0.88) * (0.85 * lambert));
  return vec4(clamp(linear, 0.0, 1.0), 1.0);
}
)GLSL";

// Crowds. A screen-door dither for LOD cross-fades: a 4x4 ordered (Bayer) threshold per pixel;
// a fading-in tier keeps the pixels under its coverage, the tier fading out (complement) the rest.
// Per-instance style at binding 6, two vec4 each: (tint rgb, coverage), (complement, 0, 0, 0); a
// negative tint means "the mesh's own albedo".
const char* const kCrowdStyleGlsl = R"GLSL(
layout(std430, binding = 6) readonly buffer CrowdStyle { vec4 style[]; };
bool ditherKeeps(float coverage, bool complement) {
  const float bayer[16] = float[16](0.0, 8.0, 2.0, 10.0, 12.0, 4.0, 14.0, 6.0,
                                    3.0, 11.0, 1.0, 9.0, 15.0, 7.0, 13.0, 5.0);
  ivec2 q = ivec2(gl_FragCoord.xy) & 3;
  float threshold = (bayer[q.y * 4 + q.x] + 0.5) / 16.0;
  return complement ? threshold >= 1.0 - coverage : threshold < coverage;
}
)GLSL";

// A fragment shader from its snippets and body.
std::string fragment(std::initializer_list<const char*> parts) {
  std::string source = "#version 450 core\n";
  for (const char* part : parts) source += part;
  return source;
}

}  // namespace

const char* const kGroundVertexShader = R"GLSL(#version 450 core
uniform mat4 uViewProjection;
uniform vec3 uCenter;  // (x, 0, z)
uniform float uHalfSize;
out vec3 vPosition;
void main() {
  vec2 corner = vec2((gl_VertexID & 1) != 0 ? 1.0 : -1.0, (gl_VertexID & 2) != 0 ? 1.0 : -1.0);
  vPosition = vec3(uCenter.x + uHalfSize * corner.x, 0.0, uCenter.z + uHalfSize * corner.y);
  gl_Position = uViewProjection * vec4(vPosition, 1.0);
}
)GLSL";

const std::string kGroundFragmentText = fragment({kSrgbGlsl, R"GLSL(
in vec3 vPosition;
uniform float uSpacing;
uniform vec3 uCenter;
uniform float uHalfSize;
uniform vec3 uBackground;  // sRGB-encoded
uniform bool uShadowsOn;
uniform bool uCatcher;         // draw only the shadow: black, alpha = its density
uniform float uShadowDensity;  // 1 - (shadowed / lit radiance of the ground)
uniform mat4 uShadowMatrix;
uniform float uShadowTexel;
layout(binding = 10) uniform sampler2DShadow uShadowMap;
out vec4 fragColor;
float shadowed() {  // 0 lit ... 1 in the key light's full shadow (3x3 PCF)
  if (!uShadowsOn) return 0.0;
  vec4 s = uShadowMatrix * vec4(vPosition, 1.0);
  if (s.z >= 1.0) return 0.0;
  float sum = 0.0;
  for (int y = -1; y <= 1; ++y)
    for (int x = -1; x <= 1; ++x)
      sum += texture(uShadowMap, vec3(s.xy + vec2(x, y) * uShadowTexel, s.z - 0.002));
  return 1.0 - sum / 9.0;
}
void main() {
  float r = length(vPosition.xz - uCenter.xz) / uHalfSize;
  float fade = smoothstep(0.7, 1.0, r);
  float shadow = shadowed() * uShadowDensity;
  if (uCatcher) {
    float a = shadow * (1.0 - fade);
    fragColor = vec4(0.0, 0.0, 0.0, a);  // premultiplied black
    return;
  }
  vec2 g = vPosition.xz / uSpacing;
  vec2 d = abs(fract(g - 0.5) - 0.5) / max(fwidth(g), vec2(1e-6));
  float line = 1.0 - clamp(min(d.x, d.y) - 0.5, 0.0, 1.0);
  vec2 a = abs(vPosition.xz) / max(fwidth(vPosition.xz), vec2(1e-6));
  float axis = 1.0 - clamp(min(a.x, a.y) - 0.75, 0.0, 1.0);
  vec3 base = vec3(0.62, 0.62, 0.60), ink = vec3(0.36, 0.36, 0.36), axisInk = vec3(0.25, 0.25, 0.30);
  vec3 color = mix(mix(base, ink, line), axisInk, axis);  // sRGB-encoded, as drawn
  // The shadow darkens the ground's linear radiance; fade into the background at the edge.
  vec3 linear = decodeSrgb(color) * (1.0 - shadow);
  fragColor = vec4(mix(linear, decodeSrgb(uBackground), fade), 1.0);
}
)GLSL"});
const char* const kGroundFragmentShader = kGroundFragmentText.c_str();

const char* const kBillboardVertexShader = R"GLSL(#version 450 core
layout(location = 0) in vec3 aCentre;  // per instance: kinema::Billboard
layout(location = 1) in float aSize;   // diameter, metres
layout(location = 2) in vec3 aColour;  // linear RGB
layout(location = 3) in float aOpacity;
uniform mat4 uViewProjection;
uniform vec3 uRight;  // the camera's right and up, world space, unit
uniform vec3 uUp;
out vec2 vCorner;  // -1…1 across the sprite
out vec3 vColour;
out float vOpacity;
void main() {
  vec2 corner = vec2((gl_VertexID & 1) != 0 ? 1.0 : -1.0, (gl_VertexID & 2) != 0 ? 1.0 : -1.0);
  vec3 p = aCentre + (0.5 * aSize) * (corner.x * uRight + corner.y * uUp);
  vCorner = corner;
  vColour = aColour;
  vOpacity = aOpacity;
  gl_Position = uViewProjection * vec4(p, 1.0);
}
)GLSL";

const char* const kBillboardFragmentShader = R"GLSL(#version 450 core
in vec2 vCorner;
in vec3 vColour;
in float vOpacity;
out vec4 fragColor;
void main() {
  float r = length(vCorner);
  if (r >= 1.0) discard;
  float a = vOpacity * (1.0 - smoothstep(0.4, 1.0, r));
  fragColor = vec4(max(vColour, vec3(0.0)) * a, a);  // linear, premultiplied
}
)GLSL";

const char* const kStrandVertexShader = R"GLSL(#version 450 core
// kinema::Strands, read by index: three floats per position / colour, two indices per segment.
layout(std430, binding = 3) readonly buffer StrandPositions { float sPosition[]; };
layout(std430, binding = 4) readonly buffer StrandColours { float sColour[]; };
layout(std430, binding = 5) readonly buffer StrandSegments { uint sSegment[]; };
uniform mat4 uViewProjection;
uniform vec3 uEye;
uniform vec3 uForward;     // the camera's view direction, unit
uniform float uHalfWidth;  // metres
uniform float uMinHalfWidth;  // metres per metre of depth: half of min_width_pixels' angle
uniform int uPerVertex;
uniform vec3 uColour;
out vec3 vPosition;
out vec3 vTangent;
out vec3 vColour;
vec3 position(uint i) { return vec3(sPosition[3 * i], sPosition[3 * i + 1], sPosition[3 * i + 2]); }
void main() {
  // Six vertices per segment, two triangles: (a−, b−, b+) and (a−, b+, a+).
  const int end_of[6] = int[6](0, 1, 1, 0, 1, 0);
  const float side_of[6] = float[6](-1.0, -1.0, 1.0, -1.0, 1.0, 1.0);
  int segment = gl_VertexID / 6, corner = gl_VertexID % 6;
  uint ia = sSegment[2 * segment], ib = sSegment[2 * segment + 1];
  uint iv = end_of[corner] == 0 ? ia : ib;
  vec3 a = position(ia), b = position(ib), p = position(iv);
  vec3 t = b - a;
  // Across the segment and the line of sight: the ribbon faces the camera as far as it can
  // (a segment pointing at the eye collapses to nothing, as a thin cylinder would nearly).
  vec3 side = cross(t, uEye - p);
  float l = length(side);
  side = l > 1e-20 ? side / l : vec3(0.0);
  float depth = max(dot(p - uEye, uForward), 0.0);
  p += side * (side_of[corner] * max(uHalfWidth, uMinHalfWidth * depth));
  vPosition = p;
  vTangent = length(t) > 0.0 ? normalize(t) : vec3(0.0, 1.0, 0.0);
  vColour = uPerVertex != 0 ? vec3(sColour[3 * iv], sColour[3 * iv + 1], sColour[3 * iv + 2])
                            : uColour;
  gl_Position = uViewProjection * vec4(p, 1.0);
}
)GLSL";

const char* const kStrandFragmentShader = R"GLSL(#version 450 core
in vec3 vPosition;
in vec3 vTangent;
in vec3 vColour;
uniform vec3 uEye;
uniform vec3 uSunDirection;  // towards the sun, unit
out vec4 fragColor;
void main() {
  // Kajiya–Kay: a hair lit by the sine of the angle between it and the light, with a highlight
  // where the light's cone about the strand meets the eye.
  vec3 t = normalize(vTangent);
  vec3 v = normalize(uEye - vPosition);
  float tl = dot(t, uSunDirection), tv = dot(t, v);
  float sin_tl = sqrt(max(1.0 - tl * tl, 0.0)), sin_tv = sqrt(max(1.0 - tv * tv, 0.0));
  float highlight = pow(max(tl * tv + sin_tl * sin_tv, 0.0), 40.0);
  vec3 ambient = vec3(0.45, 0.47, 0.52);
  vec3 linear = vColour * (0.55 * ambient + vec3(1.0, 0.95, 0.88) * (0.75 * sin_tl)) +
                vec3(0.12 * highlight);
  fragColor = vec4(clamp(linear, 0.0, 1.0), 1.0);
}
)GLSL";

const std::string kCrowdFragmentText = fragment({kShadeGlsl, kCrowdStyleGlsl, R"GLSL(
in vec3 vPosition;  // world space
in vec3 vNormal;
flat in int vInstance;
uniform int uInstanceBase;  // this draw's first instance in the style buffer
uniform vec3 uAlbedo;       // linear, the mesh's
uniform bool uFlatNormals;  // VAT: no normals stored, light the faces
out vec4 fragColor;
void main() {
  int i = uInstanceBase + vInstance;
  vec4 tintCoverage = style[2 * i];
  if (!ditherKeeps(tintCoverage.w, style[2 * i + 1].x > 0.5)) discard;
  vec3 n = uFlatNormals ? cross(dFdx(vPosition), dFdy(vPosition)) : vNormal;
  float len = length(n);
  n = len > 1e-30 ? n / len : vec3(0.0, 1.0, 0.0);
  fragColor = shade(tintCoverage.x < 0.0 ? uAlbedo : tintCoverage.rgb, n, vPosition);
}
)GLSL"});
const char* const kCrowdFragmentShader = kCrowdFragmentText.c_str();

const char* const kVatVertexShader = R"GLSL(#version 450 core
// One texel per vertex per frame: (position - uOrigin, 1) as half floats, frame-major.
uniform samplerBuffer uVat;
uniform int uVertexCount;  // a frame's
uniform int uFrameCount;
uniform int uFirstVertex;  // this mesh's first vertex within a frame
uniform float uFps;
uniform vec3 uOrigin;
uniform mat4 uViewProjection;
uniform int uInstanceBase;
// Per instance, two vec4: (position, yaw), (time, 0, 0, 0).
layout(std430, binding = 7) readonly buffer BakedInstances { vec4 place[]; };
out vec3 vPosition;
out vec3 vNormal;
flat out int vInstance;
void main() {
  int i = uInstanceBase + gl_InstanceID;
  vec4 at = place[2 * i];
  float f = place[2 * i + 1].x * uFps;
  float f0 = floor(f);
  float w = f - f0;
  int i0 = int(f0 - float(uFrameCount) * floor(f0 / float(uFrameCount)));
  i0 = clamp(i0, 0, uFrameCount - 1);
  int i1 = i0 + 1 == uFrameCount ? 0 : i0 + 1;
  int v = uFirstVertex + gl_VertexID;
  vec3 p = mix(texelFetch(uVat, i0 * uVertexCount + v).xyz,
               texelFetch(uVat, i1 * uVertexCount + v).xyz, w) + uOrigin;
  float c = cos(at.w), s = sin(at.w);  // about +Y: +Z turns to (sin, 0, cos)
  vPosition = vec3(c * p.x + s * p.z, p.y, -s * p.x + c * p.z) + at.xyz;
  vNormal = vec3(0.0, 1.0, 0.0);
  vInstance = gl_InstanceID;
  gl_Position = uViewProjection * vec4(vPosition, 1.0);
}
)GLSL";

const char* const kImpostorVertexShader = R"GLSL(#version 450 core
uniform mat4 uViewProjection;
uniform vec3 uEye;
uniform float uHalfSize;      // metres
uniform float uCentreHeight;  // metres above the origin
uniform int uViews;
uniform int uFrames;
uniform float uFps;
uniform float uInset;  // half a texel of a cell, as a fraction of the cell
uniform int uInstanceBase;
layout(std430, binding = 7) readonly buffer BakedInstances { vec4 place[]; };
out vec2 vUv;
flat out int vInstance;
const float kTau = 6.28318530718;
void main() {
  int i = uInstanceBase + gl_InstanceID;
  vec4 at = place[2 * i];
  float t = place[2 * i + 1].x;
  vec2 d = (uEye - at.xyz).xz;  // towards the eye, on the ground
  d = dot(d, d) > 1e-12 ? normalize(d) : vec2(sin(at.w), cos(at.w));
  vec3 right = vec3(d.y, 0.0, -d.x);  // the camera's right, seen from the eye
  // The eye's azimuth about the character (0: in front), to the nearest baked view.
  float azimuth = atan(d.x, d.y) - at.w;
  float views = float(uViews), frames = float(uFrames);
  float view = mod(floor(azimuth / kTau * views + 0.5), views);
  float frame = mod(floor(t * uFps + 0.5), frames);
  vec2 corner = vec2((gl_VertexID & 1) != 0 ? 1.0 : -1.0, (gl_VertexID & 2) != 0 ? 1.0 : -1.0);
  vec3 p = at.xyz + right * (corner.x * uHalfSize) +
           vec3(0.0, uCentreHeight + corner.y * uHalfSize, 0.0);
  vUv = (vec2(view, frame) + 0.5 + 0.5 * (1.0 - 2.0 * uInset) * corner) / vec2(views, frames);
  vInstance = gl_InstanceID;
  gl_Position = uViewProjection * vec4(p, 1.0);
}
)GLSL";

const std::string kImpostorFragmentText = fragment({kSrgbGlsl, kCrowdStyleGlsl, R"GLSL(
in vec2 vUv;
flat in int vInstance;
uniform int uInstanceBase;
uniform sampler2D uAtlas;  // sRGB texture: samples are linear, premultiplied
out vec4 fragColor;
void main() {
  int i = uInstanceBase + vInstance;
  vec4 tintCoverage = style[2 * i];
  if (!ditherKeeps(tintCoverage.w, style[2 * i + 1].x > 0.5)) discard;
  vec4 c = texture(uAtlas, vUv);
  if (c.a < 0.5) discard;  // cut out: opaque, depth-writing, order-free
  vec3 rgb = c.rgb / c.a;
  if (tintCoverage.x >= 0.0) {  // the debug colour, shaded by the baked light's brightness
    float luma = dot(encodeSrgb(rgb), vec3(0.299, 0.587, 0.114));
    rgb = decodeSrgb(encodeSrgb(tintCoverage.rgb) * (0.45 + 0.75 * luma));
  }
  fragColor = vec4(clamp(rgb, 0.0, 1.0), 1.0);
}
)GLSL"});
const char* const kImpostorFragmentShader = kImpostorFragmentText.c_str();

const char* const kPropVertexShader = R"GLSL(#version 450 core
layout(location = 0) in vec3 aPosition;  // world metres
uniform mat4 uViewProjection;
out vec3 vPosition;
void main() {
  vPosition = aPosition;
  gl_Position = uViewProjection * vec4(aPosition, 1.0);
}
)GLSL";

const std::string kPropFragmentText = fragment({kShadeGlsl, R"GLSL(
in vec3 vPosition;  // world space
uniform vec3 uAlbedo;  // linear
out vec4 fragColor;
void main() {
  vec3 n = cross(dFdx(vPosition), dFdy(vPosition));  // the face's normal
  float len = length(n);
  n = len > 1e-30 ? n / len : vec3(0.0, 1.0, 0.0);
  fragColor = shade(uAlbedo, n, vPosition);
}
)GLSL"});
const char* const kPropFragmentShader = kPropFragmentText.c_str();

}  // namespace kinema::render_detail

namespace kinema {

std::string_view skinning_vertex_shader_source() { return render_detail::kSkinVertexShader; }

}  // namespace kinema

// src/render/material_shaders.cpp — the fragment shader of meshes drawn with their materials
// (glTF metallic–roughness, unlit, VRM MToon and its outlines), lit by a key light with a shadow
// map and by an environment (irradiance as 9 spherical-harmonic coefficients, Ramamoorthi and
// Hanrahan 2001; specular from a prefiltered equirectangular map with Karis's analytic
// environment BRDF, "Physically Based Shading on Mobile", 2014). Linear light inside and out: the
// target is sRGB, so the GPU encodes and blends and resolves in linear light.
#include "shaders.h"

namespace kinema::render_detail {

const char* const kMaterialFragmentShader = R"GLSL(#version 450 core
in vec3 vPosition;  // world, metres
in vec3 vNormal;
in vec2 vUv0;
in vec2 vUv1;
in vec4 vColour;
out vec4 fragColor;

const float PI = 3.14159265358979;

uniform vec3 uEye;
uniform vec3 uSunDirection;   // towards the key light, unit
uniform vec3 uSunIrradiance;  // linear: a white Lambertian surface facing it shows this / pi
uniform vec3 uSh[9];          // irradiance E(n), see irradianceOf()
uniform bool uEnvSpecularOn;  // else the irradiance stands in for the reflected radiance
uniform float uEnvLevels;     // mip levels of uEnvSpecular: level k is roughness k / (levels - 1)

uniform bool uShadowsOn;
uniform mat4 uShadowMatrix;  // world -> shadow map [0, 1]^3
uniform float uShadowTexel;  // 1 / the map's size

uniform bool uUseMaterial;  // false: flat uAlbedo, Lambert + ambient (the renderer's debug look)
uniform vec3 uAlbedo;       // linear
uniform int uShading;       // 0 metallic-roughness, 1 unlit, 2 MToon
uniform bool uOutlinePass;  // MToon: drawing the outline shell
uniform vec4 uBaseColor;    // linear RGB, straight alpha
uniform int uAlphaMode;     // 0 opaque, 1 mask, 2 blend
uniform float uAlphaCutoff;
uniform float uMetallic;
uniform float uRoughness;
uniform float uNormalScale;
uniform float uOcclusionStrength;
uniform vec3 uEmissive;
uniform vec3 uShadeColor;
uniform float uShadingShift;
uniform float uShadingShiftScale;
uniform float uShadingToony;
uniform float uGiEqualization;
uniform vec3 uMatcapColor;
uniform vec3 uRimColor;
uniform float uRimFresnelPower;
uniform float uRimLift;
uniform float uRimLightingMix;
uniform vec3 uOutlineColor;
uniform float uOutlineLightingMix;

// Texture slots: 0 base colour, 1 metallic-roughness, 2 normal, 3 occlusion, 4 emissive,
// 5 MToon shade multiply, 6 shading shift, 7 rim multiply, 8 matcap.
uniform int uTexOn[9];
uniform int uTexSet[9];
uniform mat3 uTexMatrix[9];
layout(binding = 0) uniform sampler2D uBaseTex;
layout(binding = 1) uniform sampler2D uMetalRoughTex;
layout(binding = 2) uniform sampler2D uNormalTex;
layout(binding = 3) uniform sampler2D uOcclusionTex;
layout(binding = 4) uniform sampler2D uEmissiveTex;
layout(binding = 5) uniform sampler2D uShadeTex;
layout(binding = 6) uniform sampler2D uShadingShiftTex;
layout(binding = 7) uniform sampler2D uRimTex;
layout(binding = 8) uniform sampler2D uMatcapTex;
layout(binding = 10) uniform sampler2DShadow uShadowMap;
layout(binding = 11) uniform sampler2D uEnvSpecular;

vec2 uvOf(int slot) { return (uTexMatrix[slot] * vec3(uTexSet[slot] == 1 ? vUv1 : vUv0, 1.0)).xy; }

// E(n) from the coefficients c_i = A_l L_lm in the order (0,0) (1,-1) (1,0) (1,1) (2,-2) (2,-1)
// (2,0) (2,1) (2,2) of the real basis with y up: Y_1-1 ~ y, Y_10 ~ z, Y_11 ~ x.
vec3 irradianceOf(vec3 n) {
  return uSh[0] * 0.282095 + uSh[1] * (0.488603 * n.y) + uSh[2] * (0.488603 * n.z) +
         uSh[3] * (0.488603 * n.x) + uSh[4] * (1.092548 * n.x * n.y) +
         uSh[5] * (1.092548 * n.y * n.z) + uSh[6] * (0.315392 * (3.0 * n.z * n.z - 1.0)) +
         uSh[7] * (1.092548 * n.x * n.z) + uSh[8] * (0.546274 * (n.x * n.x - n.y * n.y));
}

// The prefiltered environment's radiance towards `d` at `roughness` (see environment.h for the
// equirectangular layout).
vec3 reflectedRadiance(vec3 d, float roughness) {
  if (!uEnvSpecularOn) return max(irradianceOf(d), vec3(0.0)) / PI;
  float u = 0.5 + atan(d.x, -d.z) / (2.0 * PI);
  float v = acos(clamp(d.y, -1.0, 1.0)) / PI;
  return textureLod(uEnvSpecular, vec2(u, v), roughness * (uEnvLevels - 1.0)).rgb;
}

// Fraction of the key light reaching p: 3x3 percentage-closer filtering of the shadow map, the
// comparison offset along the normal so that lit surfaces do not shadow themselves.
float keyLightVisibility(vec3 p, vec3 n) {
  if (!uShadowsOn) return 1.0;
  float slope = 1.0 - max(dot(n, uSunDirection), 0.0);
  vec4 s = uShadowMatrix * vec4(p + n * (0.01 + 0.02 * slope), 1.0);
  if (s.z >= 1.0) return 1.0;
  float sum = 0.0;
  for (int y = -1; y <= 1; ++y)
    for (int x = -1; x <= 1; ++x)
      sum += texture(uShadowMap, vec3(s.xy + vec2(x, y) * uShadowTexel, s.z - 0.0015));
  return sum / 9.0;
}

// Tangent space from screen derivatives (Schüler 2006), the convention three.js uses for glTF
// normal maps without stored tangents.
vec3 perturbedNormal(vec3 n, vec3 mapped) {
  vec2 uv = uvOf(2);
  vec3 q0 = dFdx(vPosition), q1 = dFdy(vPosition);
  vec2 st0 = dFdx(uv), st1 = dFdy(uv);
  vec3 q1perp = cross(q1, n), q0perp = cross(n, q0);
  vec3 t = q1perp * st0.x + q0perp * st1.x;
  vec3 b = q1perp * st0.y + q0perp * st1.y;
  float det = max(dot(t, t), dot(b, b));
  float scale = det == 0.0 ? 0.0 : inversesqrt(det);
  return normalize(t * (mapped.x * scale) + b * (mapped.y * scale) + n * mapped.z);
}

float linearstep(float a, float b, float t) { return clamp((t - a) / (b - a), 0.0, 1.0); }

// GGX with the height-correlated Smith visibility and Schlick's Fresnel (glTF's reference BRDF).
vec3 directLight(vec3 n, vec3 v, vec3 l, vec3 diffuse, vec3 f0, float roughness) {
  float nl = dot(n, l);
  if (nl <= 0.0) return vec3(0.0);
  vec3 h = normalize(l + v);
  float nv = max(dot(n, v), 1e-4), nh = max(dot(n, h), 0.0), vh = max(dot(v, h), 0.0);
  float a2 = max(roughness * roughness, 1e-3);
  a2 *= a2;
  float d = nh * nh * (a2 - 1.0) + 1.0;
  float ggx = a2 / (PI * d * d);
  float vis = 0.5 / max(nl * sqrt(nv * nv * (1.0 - a2) + a2) + nv * sqrt(nl * nl * (1.0 - a2) + a2),
                        1e-6);
  vec3 f = f0 + (1.0 - f0) * pow(1.0 - vh, 5.0);
  return ((1.0 - f) * diffuse / PI + f * ggx * vis) * nl;
}

vec3 environmentBrdf(vec3 f0, float roughness, float nv) {  // Karis 2014, the mobile fit
  const vec4 c0 = vec4(-1.0, -0.0275, -0.572, 0.022);
  const vec4 c1 = vec4(1.0, 0.0425, 1.04, -0.04);
  vec4 r = roughness * c0 + c1;
  float a004 = min(r.x * r.x, exp2(-9.28 * nv)) * r.x + r.y;
  vec2 ab = vec2(-1.04, 1.04) * a004 + r.zw;
  return f0 * ab.x + ab.y;
}

void main() {
  vec3 n = normalize(vNormal);
  vec3 v = normalize(uEye - vPosition);
  if (!uUseMaterial) {  // the flat look: Lambert + the environment's irradiance
    if (dot(n, v) < 0.0) n = -n;  // two-sided
    float lit = max(dot(n, uSunDirection), 0.0) * keyLightVisibility(vPosition, n);
    vec3 linear = uAlbedo / PI * (irradianceOf(n) + uSunIrradiance * lit);
    fragColor = vec4(clamp(linear, 0.0, 1.0), 1.0);
    return;
  }
  vec4 base = uBaseColor * vColour;
  if (uTexOn[0] != 0) base *= texture(uBaseTex, uvOf(0));
  float alpha = uAlphaMode == 0 ? 1.0 : base.a;
  if (uAlphaMode == 1) {
    if (alpha < uAlphaCutoff) discard;
    alpha = 1.0;
  }
  if (!gl_FrontFacing) n = -n;  // double-sided: the back face's own side
  if (uTexOn[2] != 0 && !uOutlinePass) {
    vec3 mapped = texture(uNormalTex, uvOf(2)).xyz * 2.0 - 1.0;
    mapped.xy *= uNormalScale;
    n = perturbedNormal(n, mapped);
  }
  vec3 colour;
  if (uShading == 1) {  // unlit
    colour = base.rgb;
  } else if (uShading == 2) {  // MToon
    vec3 l = uSunDirection;
    vec3 light = uSunIrradiance / PI;  // the light's colour as MToon multiplies it
    float shading = dot(n, l) + uShadingShift;
    if (uTexOn[6] != 0) shading += texture(uShadingShiftTex, uvOf(6)).r * uShadingShiftScale;
    shading = linearstep(-1.0 + uShadingToony, 1.0 - uShadingToony, shading);
    shading *= keyLightVisibility(vPosition, n);
    vec3 shade = uShadeColor;
    if (uTexOn[5] != 0) shade *= texture(uShadeTex, uvOf(5)).rgb;
    vec3 direct = mix(shade, base.rgb, shading) * light;
    vec3 gi = mix(irradianceOf(n), vec3(uSh[0] * 0.282095), uGiEqualization) / PI;
    vec3 indirect = base.rgb * gi;
    vec3 rim = vec3(0.0);
    if (uTexOn[8] != 0) {
      vec3 x = normalize(vec3(v.z, 0.0, -v.x)), y = cross(v, x);  // a view-facing frame
      rim = uMatcapColor * texture(uMatcapTex, vec2(dot(x, n), dot(y, n)) * 0.495 + 0.5).rgb;
    }
    rim += uRimColor *
           pow(clamp(1.0 - dot(n, v) + uRimLift, 0.0, 1.0), max(uRimFresnelPower, 1e-5));
    if (uTexOn[7] != 0) rim *= texture(uRimTex, uvOf(7)).rgb;
    rim *= mix(vec3(1.0), light * shading + gi, uRimLightingMix);
    colour = direct + indirect + rim;
    if (uOutlinePass) {  // as three-vrm: the outline colour times the surface's shaded colour
      vec3 emissive = uEmissive;
      if (uTexOn[4] != 0) emissive *= texture(uEmissiveTex, uvOf(4)).rgb;
      colour = uOutlineColor * mix(vec3(1.0), colour + emissive, uOutlineLightingMix);
    }
  } else {  // metallic-roughness
    float metallic = uMetallic, roughness = uRoughness;
    if (uTexOn[1] != 0) {
      vec4 mr = texture(uMetalRoughTex, uvOf(1));
      roughness *= mr.g;
      metallic *= mr.b;
    }
    roughness = clamp(roughness, 0.03, 1.0);
    vec3 diffuse = base.rgb * (1.0 - metallic);
    vec3 f0 = mix(vec3(0.04), base.rgb, metallic);
    float occlusion = 1.0;
    if (uTexOn[3] != 0)
      occlusion = 1.0 + uOcclusionStrength * (texture(uOcclusionTex, uvOf(3)).r - 1.0);
    vec3 l = uSunDirection;
    colour = directLight(n, v, l, diffuse, f0, roughness) * uSunIrradiance *
             keyLightVisibility(vPosition, n);
    float nv = max(dot(n, v), 1e-4);
    colour += occlusion * (diffuse / PI * irradianceOf(n) +
                           reflectedRadiance(reflect(-v, n), roughness) *
                               environmentBrdf(f0, roughness, nv));
  }
  vec3 emissive = uEmissive;
  if (uTexOn[4] != 0) emissive *= texture(uEmissiveTex, uvOf(4)).rgb;
  if (!uOutlinePass) colour += emissive;
  // Premultiplied: blended materials draw "over" what is behind them.
  fragColor = vec4(clamp(colour, 0.0, 1.0) * alpha, alpha);
}
)GLSL";

// Render passes: normal and view depth, motion in pixels.
const char* const kPassFragmentShader = R"GLSL(#version 450 core
in vec3 vPosition;
in vec3 vNormal;
in vec4 vClipNow;
in vec4 vClipPrevious;
uniform vec3 uEye;
uniform vec3 uForward;  // the camera's view direction, unit
uniform vec2 uSize;     // image width, height in pixels
layout(location = 0) out vec4 normalDepth;
layout(location = 1) out vec2 motion;
void main() {
  vec3 n = normalize(vNormal);
  if (dot(n, uEye - vPosition) < 0.0) n = -n;  // the side the camera sees
  normalDepth = vec4(n, dot(vPosition - uEye, uForward));
  vec2 now = vClipNow.xy / vClipNow.w, before = vClipPrevious.xy / vClipPrevious.w;
  motion = (now - before) * 0.5 * uSize * vec2(1.0, -1.0);  // pixels, y down
}
)GLSL";

// The shadow map pass writes depth only.
const char* const kDepthFragmentShader = R"GLSL(#version 450 core
void main() {}
)GLSL";

}  // namespace kinema::render_detail

// The AVX2 + FMA LBS kernel (skinning_lbs_avx2.cpp, eight vertices at a time) compiled again for
// CPUs with AVX-512 F, VL, DQ and BW, as lbs_group_avx512: the same source and operations, so the
// same bits, but with the EVEX encodings the compiler may then use — 32 vector registers instead
// of 16, so that the transposed blends of a block (12 registers), its inputs and the cofactor
// matrix stay in registers instead of being spilled and reloaded — and its 256-bit width, which
// keeps both shuffle ports busy and the clock at its AVX2 level (a 16-lane version of the kernel,
// tried first, ran ~1.4× slower on Sapphire Rapids: its transposition's 512-bit shuffles have
// one port, and zmm code runs at a lower clock). Only the lane-by-lane passes of lbs_chunk after
// the transposition (transforms, cofactor, renormalization, stores) take two blocks at once in
// sixteen lanes here: on an AMD EPYC (Zen 5, full-width 512-bit units) exact normals on arnaud
// went from 1.36–1.39× to 1.49–1.57× ozz, with tangents from 1.53–1.58× to 1.74–1.80×.
//
// Compiled with -mavx512f -mavx512vl -mavx512dq -mavx512bw -mavx2 -mfma (CMakeLists.txt); runs
// only when the CPU reports them and the OS saves the zmm state (skinning_simd.cpp checks once).
#if KINEMA_SKIN_AVX512
// GCC 12's AVX-512 intrinsics (_mm512_max_ps, _mm512_extractf32x8_ps, …) pass an
// _mm512_undefined_ps() that -Wmaybe-uninitialized takes for an uninitialized read (GCC bug
// 105593, fixed in GCC 13); the sixteen-lane passes of lbs_chunk use them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define lbs_group_avx2 lbs_group_avx512
#include "skinning_lbs_avx2.cpp"
#undef lbs_group_avx2
#endif

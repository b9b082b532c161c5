// f32 -> bf16 rounding, shared by types.glsl's stores and hgemm.comp's bf16 results.
#ifndef NXV_BF16_GLSL
#define NXV_BF16_GLSL

// Bits of a bf16 from an f32, rounded to nearest even (NaN stays NaN).
uint f32_to_bf16_bits(float f) {
    uint u = floatBitsToUint(f);
    if (isnan(f)) return (u >> 16) | 0x40u;
    return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

#endif

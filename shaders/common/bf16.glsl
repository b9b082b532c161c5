// f32 -> bf16 as Nx does it, shared by types.glsl's stores and hgemm.comp's bf16 results.
#ifndef NXV_BF16_GLSL
#define NXV_BF16_GLSL

// Bits of a bf16 from an f32 as Nx stores one: the f32's upper half (Nx.BinaryBackend
// writes a bf16 as the top 16 bits of the nearest f32, so toward zero from the f32:
// Nx.tensor(1.7, type: :bf16) is 1.6953125). NaN is Nx's 0x7FC0.
uint f32_to_bf16_bits(float f) {
    if (isnan(f)) return 0x7FC0u;
    return floatBitsToUint(f) >> 16;
}

#endif

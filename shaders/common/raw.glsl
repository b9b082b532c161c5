// Raw element access by width for kernels that move elements as bits (select, gather,
// scatter): define W8, W16, W32 or W64 before including. E is the element's bits.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

#if defined(W8)
layout(buffer_reference, std430, buffer_reference_align = 1) buffer RawBuf { uint8_t v[]; };
#elif defined(W16)
layout(buffer_reference, std430, buffer_reference_align = 2) buffer RawBuf { uint16_t v[]; };
#elif defined(W32)
layout(buffer_reference, std430, buffer_reference_align = 4) buffer RawBuf { uint v[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = 8) buffer RawBuf { uvec2 v[]; };
#endif

layout(buffer_reference, std430, buffer_reference_align = 1) buffer IdxU8 { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer IdxU16 { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer IdxU32 { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer IdxU64 { uvec2 v[]; };

// Element type codes used here (see types.glsl / `DType::code`).
#define RAW_TY_U8 0u
#define RAW_TY_U16 1u
#define RAW_TY_U32 2u
#define RAW_TY_U64 3u
#define RAW_TY_S8 4u
#define RAW_TY_S16 5u
#define RAW_TY_S32 6u
#define RAW_TY_S64 7u
#define RAW_TY_F16 8u
#define RAW_TY_BF16 9u
#define RAW_TY_F32 10u
#define RAW_TY_F64 11u
#define RAW_TY_F8 14u
#define RAW_TY_F8E4M3FN 15u
#define RAW_TY_U2 16u
#define RAW_TY_U4 17u
#define RAW_TY_S2 18u
#define RAW_TY_S4 19u

// Whether element i of a tensor of type `ty` is nonzero (-0.0 and +0.0 are zero).
bool is_nonzero(uvec2 addr, uint ty, uint i) {
    switch (ty) {
    case RAW_TY_U8: case RAW_TY_S8: case RAW_TY_U2: case RAW_TY_U4: case RAW_TY_S2: case RAW_TY_S4:
        return uint(IdxU8(addr).v[i]) != 0u;
    case RAW_TY_F8: case RAW_TY_F8E4M3FN: return (uint(IdxU8(addr).v[i]) & 0x7Fu) != 0u;
    case RAW_TY_U16: case RAW_TY_S16: return uint(IdxU16(addr).v[i]) != 0u;
    case RAW_TY_F16: case RAW_TY_BF16: return (uint(IdxU16(addr).v[i]) & 0x7FFFu) != 0u;
    case RAW_TY_U32: case RAW_TY_S32: return IdxU32(addr).v[i] != 0u;
    case RAW_TY_F32: return (IdxU32(addr).v[i] & 0x7FFFFFFFu) != 0u;
    case RAW_TY_F64: { uvec2 w = IdxU64(addr).v[i]; return (w.x | (w.y & 0x7FFFFFFFu)) != 0u; }
    }
    uvec2 w = IdxU64(addr).v[i];
    return (w.x | w.y) != 0u;
}

// Integer element i of a tensor of type `ty`, clamped to [0, dim - 1].
uint clamped_index(uvec2 addr, uint ty, uint i, uint dim) {
    uint v = 0u;
    bool neg = false;
    bool big = false;
    switch (ty) {
    case RAW_TY_U8: case RAW_TY_U2: case RAW_TY_U4: v = uint(IdxU8(addr).v[i]); break;
    case RAW_TY_S8: case RAW_TY_S2: case RAW_TY_S4: { int s = int(uint(IdxU8(addr).v[i]) << 24) >> 24; neg = s < 0; v = uint(s); break; }
    case RAW_TY_U16: v = uint(IdxU16(addr).v[i]); break;
    case RAW_TY_S16: { int s = int(uint(IdxU16(addr).v[i]) << 16) >> 16; neg = s < 0; v = uint(s); break; }
    case RAW_TY_U32: v = IdxU32(addr).v[i]; break;
    case RAW_TY_S32: { int s = int(IdxU32(addr).v[i]); neg = s < 0; v = uint(s); break; }
    case RAW_TY_U64: { uvec2 w = IdxU64(addr).v[i]; v = w.x; big = w.y != 0u; break; }
    case RAW_TY_S64: {
        uvec2 w = IdxU64(addr).v[i];
        neg = int(w.y) < 0;
        big = w.y != 0u;
        v = w.x;
        break;
    }
    }
    if (neg) return 0u;
    if (big || v >= dim) return dim - 1u;
    return v;
}

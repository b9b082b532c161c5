// Complex values for kernels that include types.glsl first: CV (the component compute
// type T, two of them), loads of any element type as complex (real types get a zero
// imaginary part), stores (a real output type gets the real part, as Nx's as_type), and
// the products and quotients of the `complex` library Nx.BinaryBackend uses.
#if defined(CT_F64)
#define CV dvec2
#else
#define CV vec2
#endif

// Element i of any type as a complex value (a real one with imaginary part 0).
CV load_c(uvec2 addr, uint ty, uint i) {
    if (ty == TY_C64) {
        uvec2 w = BufU64(addr).v[i];
        return CV(T(uintBitsToFloat(w.x)), T(uintBitsToFloat(w.y)));
    }
#if defined(CT_F64)
    if (ty == TY_C128) {
        return CV(packDouble2x32(BufU64(addr).v[2u * i]), packDouble2x32(BufU64(addr).v[2u * i + 1u]));
    }
#endif
    return CV(load_elem(addr, ty, i), T(0));
}

// The bits of a component, NaN as Nx's one pattern (see store_elem).
uint c64_part_bits(T x) { return isnan(x) ? 0x7FC00000u : floatBitsToUint(float(x)); }
#if defined(CT_F64)
uvec2 c128_part_bits(T x) { return isnan(x) ? uvec2(0u, 0x7FF80000u) : unpackDouble2x32(x); }
#endif

// Stores v as element i of type ty; a real type gets the real part (Nx's as_type).
void store_c(uvec2 addr, uint ty, uint i, CV v) {
    if (ty == TY_C64) {
        BufU64(addr).v[i] = uvec2(c64_part_bits(v.x), c64_part_bits(v.y));
        return;
    }
#if defined(CT_F64)
    if (ty == TY_C128) {
        BufU64(addr).v[2u * i] = c128_part_bits(v.x);
        BufU64(addr).v[2u * i + 1u] = c128_part_bits(v.y);
        return;
    }
#endif
    store_elem(addr, ty, i, v.x);
}

// A zero of the given sign, built from bits (glslang merges the constants -0.0 and 0.0).
T signed_zero(bool negative) {
#if defined(CT_F64)
    return packDouble2x32(uvec2(0u, negative ? 0x80000000u : 0u));
#else
    return uintBitsToFloat(negative ? 0x80000000u : 0u);
#endif
}

// The sign bit of x (complex_math.glsl's IEEE helpers use it too).
bool sign_bit(T x) {
#if defined(CT_F64)
    return (unpackDouble2x32(x).y >> 31) != 0u;
#else
    return (floatBitsToUint(x) >> 31) != 0u;
#endif
}

// x + y and x - y with IEEE's sign of a zero result (-0 only for -0 + -0 and -0 - +0).
// A real operand's imaginary part is the constant 0, and drivers fold 0 + y into y and
// 0 - y into -y (Vulkan does not promise signed zeros): 3 - (1 + 0i) came out 2 - 0i.
T add_ieee(T x, T y) {
    T r = x + y;
    return r == T(0) ? signed_zero(sign_bit(x) && sign_bit(y)) : r;
}

T sub_ieee(T x, T y) {
    T r = x - y;
    return r == T(0) ? signed_zero(sign_bit(x) && !sign_bit(y)) : r;
}

// Scratch storage of complex values.
layout(buffer_reference, std430, buffer_reference_align = 16) buffer BufCV { CV v[]; };

// `precise`: no contraction into fma, whose single rounding Nx's arithmetic never has.
CV cmul(CV a, CV b) {
    precise CV r = CV(a.x * b.x - a.y * b.y, a.y * b.x + a.x * b.y);
    return r;
}

// Complex.divide: the textbook formula, each part an IEEE division (x/0 is +-inf).
CV cdiv(CV a, CV b) {
    precise T den = b.x * b.x + b.y * b.y;
    precise CV r = CV((a.x * b.x + a.y * b.y) / den, (a.y * b.x - a.x * b.y) / den);
    return r;
}


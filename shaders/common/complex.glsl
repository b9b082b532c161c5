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

// Stores v as element i of type ty; a real type gets the real part (Nx's as_type).
void store_c(uvec2 addr, uint ty, uint i, CV v) {
    if (ty == TY_C64) {
        BufU64(addr).v[i] = uvec2(floatBitsToUint(float(v.x)), floatBitsToUint(float(v.y)));
        return;
    }
#if defined(CT_F64)
    if (ty == TY_C128) {
        BufU64(addr).v[2u * i] = unpackDouble2x32(v.x);
        BufU64(addr).v[2u * i + 1u] = unpackDouble2x32(v.y);
        return;
    }
#endif
    store_elem(addr, ty, i, v.x);
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


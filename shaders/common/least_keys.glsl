// Magnitude keys of f32 values, for the exact tiles of sgemm.comp: the least key of a set
// of values names its least nonzero magnitude, whose exponent field bounds every product
// and partial sum the values take part in (see sgemm.comp's header).

// An f32's magnitude key: 2 |bits| - 2, so zeros (either sign) wrap to the top and the
// least key of a set of values is that of its least nonzero magnitude.
uint magnitude_key(float x) {
    return (floatBitsToUint(x) << 1) - 2u;
}

uint least_key4(vec4 v) {
    return min(min(magnitude_key(v.x), magnitude_key(v.y)), min(magnitude_key(v.z), magnitude_key(v.w)));
}

// The exponent field of the least nonzero magnitude (0: a subnormal; 255: none).
uint least_exponent(uint key) {
    return key >= 0xFFFFFFFEu ? 255u : (key + 2u) >> 24;
}

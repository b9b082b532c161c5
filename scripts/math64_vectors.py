#!/usr/bin/env python3
"""Writes native/nx_vulkan/tests/data/math64.json: f64 math test vectors whose expected
values are correctly rounded (computed by mpmath at 300 bits, then rounded once).

Run it when the vector set changes (needs python3-mpmath); the JSON is committed, so the
tests themselves need no Python. Each entry is [input bits, ..., expected bits] as hex.
"""
import json
import os
import random
import struct

from mpmath import mp, mpf

mp.prec = 300


def bits(x):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", x))[0]


def rounded(v):
    # mpf -> nearest double (mpmath rounds to nearest, ties to even).
    return float(v)


rng = random.Random(20261130)


def spread(lo, hi, n):
    """n log-uniform magnitudes in [lo, hi], both signs."""
    out = []
    for _ in range(n):
        m = 10 ** rng.uniform(lo, hi)
        out.append(m if rng.random() < 0.5 else -m)
    return out


GENERAL = [0.5, 1.0, 2.0, 3.0, 0.1, 1e-10, 1e-300, 10.0, 100.0, -1.0, -0.5, -2.5]
TRIG_BIG = [8388609.0, 1e22, 1e300, 2.0**28 + 1.0, 123456789.0, 6381956970095103.0 * 2.0**797,
            -1e15, 1.7e308, 5.0e9, 3.141592653589793, 1.5707963267948966, 1e6]
UNIT = [0.1, 0.5, 0.9, -0.3, 0.999, -0.999999, 1e-8, 0.70710678118654752, 0.25, 0.75]

UNARY = {
    "exp": (mp.exp, GENERAL + spread(-3, 2.8, 40) + [709.5, -708.0, 0.34657359]),
    "expm1": (mp.expm1, GENERAL + spread(-12, 1.5, 40) + [50.0, -30.0]),
    "log": (mp.log, [v for v in GENERAL if v > 0] + [abs(v) for v in spread(-300, 300, 40)]
            + [0.7, 1.4, 1.0000001, 0.9999999]),
    "log1p": (mp.log1p, [0.5, 1e-10, -0.5, 1e-300, 3.0, -0.9, 1e10, 0.41, -0.29]
              + [abs(v) for v in spread(-12, 3, 30)]),
    "sigmoid": (lambda x: 1 / (1 + mp.exp(-x)), GENERAL + spread(-3, 1.6, 30)),
    "sin": (mp.sin, GENERAL + TRIG_BIG + spread(-5, 5, 40)),
    "cos": (mp.cos, GENERAL + TRIG_BIG + spread(-5, 5, 40)),
    "tan": (mp.tan, GENERAL + TRIG_BIG + spread(-5, 5, 40)),
    "sinh": (mp.sinh, GENERAL + spread(-8, 2.7, 40) + [710.0, -0.9]),
    "cosh": (mp.cosh, GENERAL + spread(-8, 2.7, 40) + [710.0]),
    "tanh": (mp.tanh, GENERAL + spread(-8, 1.5, 40)),
    "asin": (mp.asin, UNIT + spread(-10, -0.01, 30)),
    "acos": (mp.acos, UNIT + spread(-10, -0.01, 30)),
    "atan": (mp.atan, GENERAL + spread(-10, 10, 40)),
    "asinh": (mp.asinh, GENERAL + spread(-10, 300, 40)),
    "acosh": (mp.acosh, [1.0, 1.5, 2.0, 10.0, 1e10, 1.0000000001, 1e300]
              + [1 + abs(v) for v in spread(-12, 3, 30)]),
    "atanh": (mp.atanh, UNIT + spread(-10, -0.01, 30)),
    "cbrt": (lambda x: mp.sign(x) * mp.cbrt(abs(x)), GENERAL + [8.0, 27.0, -64.0, 2.0**-1070] + spread(-300, 300, 40)),
    "erf": (mp.erf, GENERAL + spread(-6, 0.75, 40) + [3.5, -4.2, 5.9]),
    "erfc": (mp.erfc, GENERAL + spread(-6, 1.3, 40) + [3.5, 10.0, 25.0, -4.2]),
    "erf_inv": (mp.erfinv, UNIT + spread(-10, -0.0001, 30) + [1 - 2.0**-52, -(1 - 2.0**-40)]),
}

BINARY = {
    "pow": (mp.power, [(2.0, 0.5), (10.0, -3.0), (0.5, 100.0), (1.0001, 10000.0), (3.0, 1.0 / 3.0),
                       (-2.0, 3.0), (-8.0, 5.0), (7.0, 300.0), (1e-5, 20.5), (2.5, -7.25)]
            + [(abs(a), b) for a, b in zip(spread(-3, 3, 30), spread(-2, 2, 30))]),
    "atan2": (mp.atan2, [(1.0, 1.0), (1.0, -1.0), (-1.0, -1.0), (1e-300, 1.0), (3.0, 4.0),
                         (-2.0, 1e-10), (1e300, 1e-300), (0.5, -0.75)]
              + list(zip(spread(-5, 5, 30), spread(-5, 5, 30)))),
}


def main():
    out = {}
    for name, (f, xs) in UNARY.items():
        out[name] = [[bits(x), bits(rounded(f(mpf(x))))] for x in xs]
    for name, (f, pairs) in BINARY.items():
        out[name] = [[bits(a), bits(b), bits(rounded(f(mpf(a), mpf(b))))] for a, b in pairs]
    path = os.path.join(os.path.dirname(__file__), "..", "native", "nx_vulkan", "tests",
                        "data", "math64.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(out, fh, indent=0)
        fh.write("\n")


if __name__ == "__main__":
    main()

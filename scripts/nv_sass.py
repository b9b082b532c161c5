#!/usr/bin/env python3
"""Disassemble the NVIDIA code of a pipeline dumped by NX_VULKAN_PIPELINE_DUMP.

Usage: scripts/nv_sass.py <label>.cache.bin [nvdisasm] > kernel.sass

NVIDIA's driver offers pipeline statistics but no internal representations; its pipeline
cache data holds the machine code instead. Layout as seen with driver 580 (H200): the
Vulkan cache header, then a zstd frame whose content starts with the magic
"NVDANVVMNVuc"; in that container's header, word 19 is the code's size in bytes (the
"Binary Size" statistic) and word 20 its offset, counted from 8 bytes in. The code is
raw instructions of the GPU (SM90 on the H200), which `nvdisasm -b SM90a` reads ($NV_ARCH
changes the architecture). nvdisasm ships with the CUDA
toolkit and inside the `triton` wheel on PyPI (triton/backends/nvidia/bin); it is looked
up as the second argument, then $NVDISASM, then on PATH. Needs the `zstd` command.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
CONTAINER_MAGIC = b"NVDANVVMNVuc"


def machine_code(blob: bytes) -> bytes:
    """The raw instructions inside one pipeline's cache data."""
    start = blob.find(ZSTD_MAGIC)
    if start < 0:
        sys.exit("no zstd frame in the cache data (not an NVIDIA driver's?)")
    raw = subprocess.run(
        ["zstd", "-d", "-q", "-c"], input=blob[start:], capture_output=True, check=True
    ).stdout
    if not raw.startswith(CONTAINER_MAGIC):
        sys.exit(f"unknown container: {raw[:16]!r}")
    words = struct.unpack_from("<24I", raw, 0)
    size, offset = words[19], words[20]
    code = raw[offset + 8 : offset + 8 + size]
    if len(code) != size or size % 16:
        sys.exit(f"code size {size} at {offset} does not fit the container ({len(raw)} bytes)")
    return code


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    tool = (sys.argv[2] if len(sys.argv) > 2 else None) or os.environ.get("NVDISASM")
    tool = tool or shutil.which("nvdisasm")
    if not tool:
        sys.exit("nvdisasm not found (CUDA toolkit, or the triton wheel's backends/nvidia/bin)")
    code = machine_code(open(sys.argv[1], "rb").read())
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(code)
        f.flush()
        subprocess.run([tool, "-b", os.environ.get("NV_ARCH", "SM90a"), f.name], check=True)


if __name__ == "__main__":
    main()

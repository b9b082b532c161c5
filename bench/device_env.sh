# Sourced by the device-call scripts (bench/run_device.sh, bench/run_compiler_device.sh):
# $OUT made, the carried Vulkan loader .debs unpacked (.gl), and the NVIDIA ICD named where
# the image does not list it.
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
if ! ls /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json >/dev/null 2>&1; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi

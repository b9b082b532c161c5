# Checksums of the precompiled NIFs, read by rustler_precompiled. Empty until the first
# release: RELEASE.md regenerates it from the release artifacts with
#   mix rustler_precompiled.download Nx.Vulkan.Native --all --print
%{}

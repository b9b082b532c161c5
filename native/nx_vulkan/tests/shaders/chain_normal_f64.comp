// A leapfrog-chain kernel in the contract of ops::chain (tests/chain.rs runs it): the
// density is d independent normals N(MU, SIG^2) plus, on coordinate 0, a unit-variance
// normal likelihood of the n_obs observations. One workgroup per chain, one invocation
// per coordinate; logp_chain[k] is the log density at q_chain[k].
#version 450
#extension GL_ARB_gpu_shader_fp64 : require
#extension GL_GOOGLE_include_directive : require
#include "chain_normal_f64.glsl"

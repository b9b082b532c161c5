// chain_normal_f64.comp storing each row's log density before its step, as eXMC's
// generated kernels do: the engine must still return the contract's rows.
#version 450
#extension GL_ARB_gpu_shader_fp64 : require
#extension GL_GOOGLE_include_directive : require
#define LOGP_BEFORE_STEP
#include "chain_normal_f64.glsl"

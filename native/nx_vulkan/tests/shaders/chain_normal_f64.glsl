// The body of the chain_normal_f64 test kernels (see chain_normal_f64.comp).
layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
    uint K;
    uint n_obs;
    uint d;
    uint n_instances;
    double eps;
} pc;

layout(std430, binding = 0) readonly buffer Q0 { double q0[]; };
layout(std430, binding = 1) readonly buffer P0 { double p0[]; };
layout(std430, binding = 2) readonly buffer Extras { double extras[]; };
layout(std430, binding = 3) writeonly buffer QC { double q_chain[]; };
layout(std430, binding = 4) writeonly buffer PC { double p_chain[]; };
layout(std430, binding = 5) writeonly buffer GC { double grad_chain[]; };
layout(std430, binding = 6) writeonly buffer LC { double logp_chain[]; };

const double MU = 0.25;
const double INV_VAR = 4.0; // 1 / SIG^2 with SIG = 0.5

shared double q_all[256];
shared double part[256];

// The gradient of coordinate i, and its share of the log density, at q_all.
void density(uint i, uint obs_base, out double grad, out double lp) {
    double c = q_all[i] - MU;
    grad = -c * INV_VAR;
    lp = -0.5 * c * c * INV_VAR;
    if (i == 0u) {
        for (uint j = 0u; j < pc.n_obs; j++) {
            double r = extras[obs_base + j] - q_all[0];
            grad += r;
            lp -= 0.5 * r * r;
        }
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint chain = gl_WorkGroupID.x;
    bool mine = tid < pc.d;
    uint base = chain * pc.d;
    uint obs_base = chain * (pc.n_obs + pc.d);
    double q = mine ? q0[base + tid] : 0.0;
    double p = mine ? p0[base + tid] : 0.0;
    double m = mine ? extras[obs_base + pc.n_obs + tid] : 0.0;
    double grad = 0.0, lp = 0.0;
    q_all[tid] = q;
    barrier();
    if (mine) density(tid, obs_base, grad, lp);
#ifdef LOGP_BEFORE_STEP
    double lp_before = lp;
#endif
    for (uint k = 0u; k < pc.K; k++) {
        double p_half = p + 0.5 * pc.eps * grad;
        q = q + pc.eps * m * p_half;
        barrier();
        q_all[tid] = q;
        barrier();
        grad = 0.0;
        lp = 0.0;
        if (mine) density(tid, obs_base, grad, lp);
        p = p_half + 0.5 * pc.eps * grad;
#ifdef LOGP_BEFORE_STEP
        // eXMC's convention: the row holds the log density before its step.
        double lp_row = lp_before;
        lp_before = lp;
#else
        double lp_row = lp;
#endif
        uint row = (chain * pc.K + k) * pc.d + tid;
        if (mine) {
            q_chain[row] = q;
            p_chain[row] = p;
            grad_chain[row] = grad;
        }
        part[tid] = lp_row;
        barrier();
        for (uint s = 128u; s > 0u; s >>= 1) {
            if (tid < s) part[tid] += part[tid + s];
            barrier();
        }
        if (tid == 0u) logp_chain[chain * pc.K + k] = part[0];
        barrier();
    }
}

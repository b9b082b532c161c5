//! Leapfrog chains in a caller's own SPIR-V (`ops::chain`, the contract eXMC's Vulkan mode
//! uses), run with tests/shaders/chain_normal_f64.comp against the same integrator on the
//! host, and every way the inputs can be wrong.

use nx_vulkan::ops::chain::{leapfrog_chain, ChainError, ChainOutput};

/// The shipped SPIR-V of tests/shaders/ (the build checks it against the GLSL).
const SPIRV: &[u8] = include_bytes!("shaders/spirv/chain_normal_f64.spv");
/// The same kernel storing each row's log density before its step, as eXMC's do.
const SPIRV_LOGP_FIRST: &[u8] = include_bytes!("shaders/spirv/chain_normal_f64_logp_first.spv");
const MU: f64 = 0.25;
const INV_VAR: f64 = 4.0;

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_f64s(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn push(k: u32, n_obs: u32, d: u32, instances: u32, eps: f64) -> Vec<u8> {
    let mut v: Vec<u8> = [k, n_obs, d, instances]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    v.extend(eps.to_le_bytes());
    v
}

/// The shader's density: its gradient and log density at `q`.
fn density(q: &[f64], obs: &[f64]) -> (Vec<f64>, f64) {
    let mut grad = Vec::new();
    let mut lp = 0.0;
    for (i, &qi) in q.iter().enumerate() {
        let c = qi - MU;
        let mut g = -c * INV_VAR;
        lp += -0.5 * c * c * INV_VAR;
        if i == 0 {
            for &o in obs {
                let r = o - q[0];
                g += r;
                lp -= 0.5 * r * r;
            }
        }
        grad.push(g);
    }
    (grad, lp)
}

/// `k` leapfrog steps on the host: every step's q, p, gradient and log density.
fn host_chain(
    q: &[f64],
    p: &[f64],
    obs: &[f64],
    inv_mass: &[f64],
    k: usize,
    eps: f64,
) -> [Vec<f64>; 4] {
    let (mut q, mut p) = (q.to_vec(), p.to_vec());
    let (mut grad, _) = density(&q, obs);
    let mut out: [Vec<f64>; 4] = Default::default();
    for _ in 0..k {
        let half: Vec<f64> = p
            .iter()
            .zip(&grad)
            .map(|(p, g)| p + 0.5 * eps * g)
            .collect();
        for i in 0..q.len() {
            q[i] += eps * inv_mass[i] * half[i];
        }
        let (g, lp) = density(&q, obs);
        grad = g;
        p = half
            .iter()
            .zip(&grad)
            .map(|(h, g)| h + 0.5 * eps * g)
            .collect();
        out[0].extend(&q);
        out[1].extend(&p);
        out[2].extend(&grad);
        out[3].push(lp);
    }
    out
}

fn assert_close(got: &[u8], want: &[f64], what: &str) {
    let got = from_f64s(got);
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        // The same operations in the same order: equal but for the log density's sum
        // (a tree on the device, a loop here).
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

fn inputs(d: usize, n_obs: usize, seed: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let q: Vec<f64> = (0..d).map(|i| (i as f64 * 0.37 + seed).sin()).collect();
    let p: Vec<f64> = (0..d).map(|i| (i as f64 * 0.11 - seed).cos()).collect();
    let obs: Vec<f64> = (0..n_obs).map(|j| 0.5 + 0.1 * j as f64 + seed).collect();
    let inv_mass: Vec<f64> = (0..d).map(|i| 1.0 + 0.25 * (i % 3) as f64).collect();
    (q, p, obs, inv_mass)
}

fn run(d: usize, n_obs: usize, k: usize, eps: f64) {
    let (q, p, obs, inv_mass) = inputs(d, n_obs, 0.3);
    let extras = f64s(&[obs.clone(), inv_mass.clone()].concat());
    let out = leapfrog_chain(
        &f64s(&q),
        &f64s(&p),
        &extras,
        &push(k as u32, n_obs as u32, d as u32, 0, eps),
        k,
        SPIRV,
        false,
    )
    .expect("the chain runs");
    let [wq, wp, wg, wl] = host_chain(&q, &p, &obs, &inv_mass, k, eps);
    let tag = format!("d={d} n_obs={n_obs} k={k} eps={eps}");
    assert_close(&out.q, &wq, &format!("q ({tag})"));
    assert_close(&out.p, &wp, &format!("p ({tag})"));
    assert_close(&out.grad, &wg, &format!("grad ({tag})"));
    assert_close(&out.logp, &wl, &format!("logp ({tag})"));
}

#[test]
fn chains_match_the_host_integrator() {
    run(1, 0, 1, 0.1);
    run(3, 4, 32, 0.1);
    run(3, 4, 32, -0.05);
    run(8, 0, 7, 0.2);
}

#[test]
fn a_long_wide_chain() {
    run(256, 16, 1024, 0.01);
}

#[test]
fn a_batch_is_its_chains_side_by_side() {
    let (d, n_obs, k, eps) = (4, 3, 20, 0.07);
    let mut singles = Vec::new();
    let (mut q_all, mut p_all, mut extras_all) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..3 {
        let (q, p, obs, inv_mass) = inputs(d, n_obs, i as f64);
        let extras = f64s(&[obs, inv_mass].concat());
        singles.push(
            leapfrog_chain(
                &f64s(&q),
                &f64s(&p),
                &extras,
                &push(k, n_obs as u32, d as u32, 0, eps),
                k as usize,
                SPIRV,
                false,
            )
            .unwrap(),
        );
        q_all.extend(f64s(&q));
        p_all.extend(f64s(&p));
        extras_all.extend(extras);
    }
    let batch = leapfrog_chain(
        &q_all,
        &p_all,
        &extras_all,
        &push(k, n_obs as u32, d as u32, 3, eps),
        k as usize,
        SPIRV,
        true,
    )
    .unwrap();
    let (rows, n) = (k as usize * d * 8, k as usize * 8);
    for (i, s) in singles.iter().enumerate() {
        let slice = ChainOutput {
            q: batch.q[i * rows..(i + 1) * rows].to_vec(),
            p: batch.p[i * rows..(i + 1) * rows].to_vec(),
            grad: batch.grad[i * rows..(i + 1) * rows].to_vec(),
            logp: batch.logp[i * n..(i + 1) * n].to_vec(),
        };
        assert_eq!(&slice, s, "instance {i}");
    }
}

#[test]
fn a_kernel_storing_logp_before_each_step_gives_the_same_rows() {
    let (d, n_obs, k, eps) = (3usize, 2usize, 12usize, 0.08);
    let (q, p, obs, inv_mass) = inputs(d, n_obs, 0.9);
    let extras = f64s(&[obs, inv_mass].concat());
    let push = push(k as u32, n_obs as u32, d as u32, 0, eps);
    let want = leapfrog_chain(&f64s(&q), &f64s(&p), &extras, &push, k, SPIRV, false).unwrap();
    // The first call tells the convention (a probe step), later ones know it.
    for _ in 0..2 {
        let got = leapfrog_chain(
            &f64s(&q),
            &f64s(&p),
            &extras,
            &push,
            k,
            SPIRV_LOGP_FIRST,
            false,
        )
        .unwrap();
        assert_eq!(got, want);
    }
    // A chain that does not move (at the density's mode, no momentum) is the same in both
    // conventions and decides nothing.
    let still = f64s(&vec![0.25; d]);
    let zero = f64s(&vec![0.0; d]);
    let no_obs = f64s(&vec![1.0; d]);
    let push0 = self::push(4, 0, d as u32, 0, eps);
    let a = leapfrog_chain(&still, &zero, &no_obs, &push0, 4, SPIRV_LOGP_FIRST, false).unwrap();
    let b = leapfrog_chain(&still, &zero, &no_obs, &push0, 4, SPIRV, false).unwrap();
    assert_eq!(a, b);
}

#[test]
fn bad_inputs_are_named_errors() {
    let q = f64s(&[0.1, 0.2]);
    let extras = f64s(&[1.0, 1.0]);
    let ok_push = push(4, 0, 2, 0, 0.1);
    let call = |q: &[u8], p: &[u8], extras: &[u8], push: &[u8], k, spirv: &[u8], batched| {
        leapfrog_chain(q, p, extras, push, k, spirv, batched)
    };
    assert!(matches!(
        call(&q, &q[..8], &extras, &ok_push, 4, SPIRV, false),
        Err(ChainError::SizeMismatch(_))
    ));
    assert!(matches!(
        call(&q, &q, &extras, &ok_push, 0, SPIRV, false),
        Err(ChainError::BadInput(_))
    ));
    assert!(matches!(
        call(&q, &q, &extras, &ok_push[..20], 4, SPIRV, false),
        Err(ChainError::BadInput(_))
    ));
    assert!(matches!(
        call(&q, &q, &extras, &[0u8; 132], 4, SPIRV, false),
        Err(ChainError::BadInput(_))
    ));
    // d = 3 in the header, but q holds 2 values; n_obs = 5 observations missing.
    assert!(matches!(
        call(&q, &q, &extras, &push(4, 0, 3, 0, 0.1), 4, SPIRV, false),
        Err(ChainError::BadInput(_))
    ));
    assert!(matches!(
        call(&q, &q, &extras, &push(4, 5, 2, 0, 0.1), 4, SPIRV, false),
        Err(ChainError::BadInput(_))
    ));
    // More steps than the kernel's u32 count can hold.
    let huge = u32::MAX as usize;
    assert!(matches!(
        call(&q, &q, &extras, &ok_push, huge, SPIRV, false),
        Err(ChainError::BadInput(_))
    ));
    // A batch of 0 instances.
    assert!(matches!(
        call(&q, &q, &extras, &push(4, 0, 2, 0, 0.1), 4, SPIRV, true),
        Err(ChainError::BadInput(_))
    ));
    // Not SPIR-V: a dispatch error that says so; the engine keeps working.
    match call(
        &q,
        &q,
        &extras,
        &ok_push,
        4,
        b"#version 450\nvoid main() {}\n....",
        false,
    ) {
        Err(ChainError::Dispatch(e)) => assert!(e.to_string().contains("SPIR-V"), "{e}"),
        other => panic!("expected a dispatch error, got {other:?}"),
    }
    assert!(call(&q, &q, &extras, &ok_push, 4, SPIRV, false).is_ok());
}

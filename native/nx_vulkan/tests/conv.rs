//! conv against a host reference written from the definition: the input coordinate of
//! output p and (dilated) kernel offset k is p * stride + k * kernel_dilation in the padded,
//! input-dilated space, which maps back to input element (q - pad_lo) / input_dilation
//! when that divides; feature groups pick channel blocks, batch groups batch blocks.

mod common;

use common::*;
use nx_vulkan::ops::conv::{conv, ConvSpec};
use nx_vulkan::{DType, Error};

/// Permutes `x` (Nx transpose semantics); returns (data, shape).
fn permuted(x: &[f64], shape: &[usize], perm: &[usize]) -> (Vec<f64>, Vec<usize>) {
    let (shape, data) = transpose_ref(x, shape, perm);
    (data, shape)
}

fn reference(
    x: &[f64],
    xs: &[usize],
    w: &[f64],
    ws: &[usize],
    s: &ConvSpec,
) -> (Vec<f64>, Vec<usize>) {
    let (x, xs) = permuted(x, xs, &s.input_permutation);
    let (w, ws) = permuted(w, ws, &s.kernel_permutation);
    let sp = xs.len() - 2;
    let (n, o, ck) = (xs[0], ws[0], ws[1]);
    let (b, g) = (s.batch_groups, s.feature_groups);
    let out_sp: Vec<usize> = (0..sp)
        .map(|d| {
            let padded = ((xs[d + 2] - 1) * s.input_dilation[d] + 1) as isize
                + s.padding[d].0
                + s.padding[d].1;
            let span = ((ws[d + 2] - 1) * s.kernel_dilation[d] + 1) as isize;
            if padded < span {
                0
            } else {
                ((padded - span) as usize) / s.strides[d] + 1
            }
        })
        .collect();
    let mut shape = vec![n / b, o];
    shape.extend(&out_sp);
    let out: Vec<f64> = (0..shape.iter().product())
        .map(|i| {
            let idx = unravel(i, &shape);
            let (nn, oo, p) = (idx[0], idx[1], &idx[2..]);
            let batch = nn + (oo / (o / b)) * (n / b);
            let fg = oo / (o / g);
            let mut acc = 0.0;
            for c in 0..ck {
                for k in 0..ws[2..].iter().product::<usize>() {
                    let kk = unravel(k, &ws[2..]);
                    let mut pos = vec![batch, fg * ck + c];
                    let mut inside = true;
                    for d in 0..sp {
                        let q = (p[d] * s.strides[d] + kk[d] * s.kernel_dilation[d]) as isize
                            - s.padding[d].0;
                        let dil = s.input_dilation[d] as isize;
                        if q < 0 || q % dil != 0 || q / dil >= xs[d + 2] as isize {
                            inside = false;
                            break;
                        }
                        pos.push((q / dil) as usize);
                    }
                    if inside {
                        let mut wpos = vec![oo, c];
                        wpos.extend(&kk);
                        acc += x[ravel(&pos, &xs)] * w[ravel(&wpos, &ws)];
                    }
                }
            }
            acc
        })
        .collect();
    let mut inverse: Vec<usize> = (0..shape.len()).collect();
    inverse.sort_by_key(|&i| s.output_permutation[i]);
    permuted(&out, &shape, &inverse)
}

fn plain(rank: usize) -> ConvSpec {
    let sp = rank - 2;
    ConvSpec {
        strides: vec![1; sp],
        padding: vec![(0, 0); sp],
        input_dilation: vec![1; sp],
        kernel_dilation: vec![1; sp],
        feature_groups: 1,
        batch_groups: 1,
        input_permutation: (0..rank).collect(),
        kernel_permutation: (0..rank).collect(),
        output_permutation: (0..rank).collect(),
    }
}

#[test]
fn conv_matches_the_definition_with_every_option() {
    let mut rng = Rng::new(100);
    let mut cases: Vec<(Vec<usize>, Vec<usize>, ConvSpec)> = Vec::new();
    cases.push((vec![1, 1, 3, 3], vec![4, 1, 1, 1], plain(4)));
    let mut s = plain(4);
    s.strides = vec![2, 2];
    s.padding = vec![(1, 1), (0, 0)];
    s.kernel_dilation = vec![2, 1];
    cases.push((vec![1, 1, 3, 3], vec![4, 1, 2, 1], s));
    let mut s = plain(4);
    s.padding = vec![(2, -1), (1, 2)];
    s.input_dilation = vec![2, 1];
    s.strides = vec![1, 3];
    cases.push((vec![2, 3, 5, 4], vec![2, 3, 3, 2], s));
    let mut s = plain(3);
    s.feature_groups = 2;
    cases.push((vec![3, 4, 9], vec![6, 2, 3], s));
    let mut s = plain(3);
    s.batch_groups = 2;
    cases.push((vec![4, 3, 7], vec![4, 3, 2], s));
    // Channels-last input and output, kernel as [spatial, in, out] (Axon's layouts).
    let mut s = plain(4);
    s.input_permutation = vec![0, 3, 1, 2];
    s.kernel_permutation = vec![3, 2, 0, 1];
    s.output_permutation = vec![0, 3, 1, 2];
    s.padding = vec![(1, 1), (1, 1)];
    cases.push((vec![2, 6, 5, 3], vec![3, 3, 3, 4], s));
    cases.push((vec![2, 3], vec![5, 3], plain(2))); // no spatial axes: a matmul
    for (xs, ws, s) in cases {
        let x: Vec<f64> = (0..xs.iter().product())
            .map(|_| rng.int(-4, 4) as f64)
            .collect();
        let w: Vec<f64> = (0..ws.iter().product())
            .map(|_| rng.int(-4, 4) as f64)
            .collect();
        let (want, shape) = reference(&x, &xs, &w, &ws, &s);
        let xi: Vec<i32> = x.iter().map(|&v| v as i32).collect();
        let wi: Vec<i32> = w.iter().map(|&v| v as i32).collect();
        let got = conv(
            &upload(&xs, DType::S32, &xi),
            &upload(&ws, DType::S32, &wi),
            &s,
            DType::F32,
        )
        .unwrap();
        assert_eq!(got.shape, shape, "{xs:?} {ws:?} {s:?}");
        let want32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
        assert_eq!(download::<f32>(&got), want32, "{xs:?} {ws:?} {s:?}");
        let xf: Vec<f32> = x.iter().map(|&v| v as f32 * 0.37).collect();
        let got = conv(
            &upload(&xs, DType::F32, &xf),
            &upload(&ws, DType::F64, &w),
            &s,
            DType::F64,
        )
        .unwrap();
        let want: Vec<f64> = reference(
            &xf.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            &xs,
            &w,
            &ws,
            &s,
        )
        .0;
        for (i, (&g, &e)) in download::<f64>(&got).iter().zip(&want).enumerate() {
            assert!(
                (g - e).abs() <= 1e-12 * e.abs().max(1.0),
                "f64 {xs:?} {s:?} element {i}: {g} vs {e}"
            );
        }
    }
}

#[test]
fn conv_rejects_mismatched_channels_and_groups() {
    let x = upload(&[1, 4, 5], DType::F32, &[0f32; 20]);
    let w = upload(&[2, 3, 2], DType::F32, &[0f32; 12]);
    assert!(matches!(
        conv(&x, &w, &plain(3), DType::F32),
        Err(Error::InvalidArgument(_))
    ));
    let w = upload(&[3, 2, 2], DType::F32, &[0f32; 12]);
    let mut s = plain(3);
    s.feature_groups = 2; // 3 filters do not split into 2 groups
    assert!(matches!(
        conv(&x, &w, &s, DType::F32),
        Err(Error::InvalidArgument(_))
    ));
}

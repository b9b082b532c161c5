//! Strided views: how an op's output positions map onto an input's elements. Views are
//! simplified (unit dims dropped, mergeable dims merged) before they reach a kernel, so
//! contiguous and scalar-broadcast operands reach the kernels as rank 1.

use crate::error::{Error, Result};

/// Highest rank a kernel takes after simplification (`MAX_RANK` in the shaders).
pub const MAX_RANK: usize = 6;

/// Element strides of a contiguous row-major `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for i in (0..shape.len()).rev() {
        s[i] = acc;
        acc *= shape[i] as isize;
    }
    s
}

/// Strides that read an input of shape `input` broadcast to `out` with numpy's
/// right-aligned rule (what Nx hands element-wise callbacks).
pub fn broadcast_strides(input: &[usize], out: &[usize]) -> Result<Vec<isize>> {
    if input.len() > out.len() {
        return Err(Error::InvalidArgument(format!(
            "cannot broadcast shape {input:?} to {out:?}"
        )));
    }
    let lead = out.len() - input.len();
    let cs = contiguous_strides(input);
    let mut s = vec![0isize; out.len()];
    for (i, &d) in input.iter().enumerate() {
        let o = out[lead + i];
        if d == o {
            s[lead + i] = cs[i];
        } else if d != 1 {
            return Err(Error::InvalidArgument(format!(
                "cannot broadcast shape {input:?} to {out:?}"
            )));
        }
    }
    Ok(s)
}

/// Strides for Nx's `broadcast(tensor, shape, axes)`: input axis `i` becomes output axis
/// `axes[i]`; other output axes (and input axes of size 1) repeat.
pub fn broadcast_axes_strides(
    input: &[usize],
    out: &[usize],
    axes: &[usize],
) -> Result<Vec<isize>> {
    if axes.len() != input.len() {
        return Err(Error::InvalidArgument(format!(
            "broadcast: {} axes given for an input of shape {input:?}",
            axes.len()
        )));
    }
    let cs = contiguous_strides(input);
    let mut s = vec![0isize; out.len()];
    for (i, (&d, &ax)) in input.iter().zip(axes).enumerate() {
        if ax >= out.len() || !(d == out[ax] || d == 1) {
            return Err(Error::InvalidArgument(format!(
                "broadcast: cannot broadcast shape {input:?} to {out:?} on axes {axes:?}"
            )));
        }
        if d == out[ax] && d != 1 {
            s[ax] = cs[i];
        }
    }
    Ok(s)
}

/// Checks that `axes` is a permutation of `0..rank`.
pub fn check_permutation(axes: &[usize], rank: usize, op: &str) -> Result<()> {
    let mut seen = vec![false; rank];
    if axes.len() != rank {
        return Err(Error::InvalidArgument(format!(
            "{op}: axes {axes:?} are not a permutation of rank {rank}"
        )));
    }
    for &a in axes {
        if a >= rank || seen[a] {
            return Err(Error::InvalidArgument(format!(
                "{op}: axes {axes:?} are not a permutation of rank {rank}"
            )));
        }
        seen[a] = true;
    }
    Ok(())
}

/// Iteration dims plus one stride list per operand, simplified: size-1 dims dropped and
/// neighbours merged where every operand walks them as one. Fails above [`MAX_RANK`].
pub fn simplify(dims: &[usize], strides: &[Vec<isize>]) -> Result<(Vec<usize>, Vec<Vec<isize>>)> {
    let mut d: Vec<usize> = Vec::new();
    let mut s: Vec<Vec<isize>> = vec![Vec::new(); strides.len()];
    for (i, &dim) in dims.iter().enumerate() {
        if dim == 1 {
            continue;
        }
        let mergeable = !d.is_empty()
            && strides
                .iter()
                .zip(&s)
                .all(|(st, acc)| *acc.last().unwrap() == st[i] * dim as isize);
        if mergeable {
            *d.last_mut().unwrap() *= dim;
            for (k, st) in strides.iter().enumerate() {
                *s[k].last_mut().unwrap() = st[i];
            }
        } else {
            d.push(dim);
            for (k, st) in strides.iter().enumerate() {
                s[k].push(st[i]);
            }
        }
    }
    if d.is_empty() {
        d.push(1);
        for acc in s.iter_mut() {
            acc.push(0);
        }
    }
    if d.len() > MAX_RANK {
        return Err(Error::Unsupported(format!(
            "a strided access of rank {} (dims {dims:?}) exceeds the kernels' rank {MAX_RANK}",
            d.len()
        )));
    }
    Ok((d, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_collapses_to_rank_one() {
        let dims = [2, 3, 4];
        let (d, s) = simplify(&dims, &[contiguous_strides(&dims)]).unwrap();
        assert_eq!(d, vec![24]);
        assert_eq!(s, vec![vec![1]]);
    }

    #[test]
    fn scalar_broadcast_collapses() {
        let out = [5, 7];
        let b = broadcast_strides(&[], &out).unwrap();
        let (d, s) = simplify(&out, &[contiguous_strides(&out), b]).unwrap();
        assert_eq!(d, vec![35]);
        assert_eq!(s, vec![vec![1], vec![0]]);
    }

    #[test]
    fn row_broadcast_keeps_two_dims() {
        let out = [3, 4];
        let b = broadcast_strides(&[4], &out).unwrap();
        let (d, s) = simplify(&out, &[contiguous_strides(&out), b]).unwrap();
        assert_eq!(d, vec![3, 4]);
        assert_eq!(s, vec![vec![4, 1], vec![0, 1]]);
    }

    #[test]
    fn bad_broadcast_is_an_error() {
        assert!(broadcast_strides(&[3], &[4]).is_err());
        assert!(broadcast_axes_strides(&[3], &[4, 3], &[0]).is_err());
        assert!(check_permutation(&[0, 0], 2, "t").is_err());
    }
}

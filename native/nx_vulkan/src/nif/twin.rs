//! NIFs defined twice: once for the caller's normal scheduler, once for a dirty one.
//!
//! Moving a call to a dirty scheduler and back costs several microseconds, most of what a
//! small op costs. A twin NIF `t_x_nb` runs on the normal scheduler with the engine in
//! non-blocking mode ([`crate::nonblocking`]) and answers `:would_block` where the engine
//! would block (a pipeline build, a new allocation, a long GPU wait, a large copy);
//! `Nx.Vulkan.Native.t_x` then calls `t_x_dirty`, the same call on a dirty scheduler.
//! Both note the calling process first, for recordings (`super::program`).

use super::convert::{large, small, would_block, would_block_collect, NifOut};
use rustler::{Encoder, Env, Term};
use std::sync::atomic::{AtomicU64, Ordering};

/// Calls run by a dirty twin, and normal-scheduler attempts answered
/// `{:would_block_collect, _}` (the caller collects its garbage and tries again), for
/// `Nx.Vulkan.stats/0`.
static DIRTY_RETRIES: AtomicU64 = AtomicU64::new(0);
static COLLECTS: AtomicU64 = AtomicU64::new(0);

/// Counts a call run by a dirty twin.
pub fn note_dirty() {
    DIRTY_RETRIES.fetch_add(1, Ordering::Relaxed);
}

/// The retry counters: (calls run on a dirty scheduler, collections asked for).
pub fn retries() -> (u64, u64) {
    (
        DIRTY_RETRIES.load(Ordering::Relaxed),
        COLLECTS.load(Ordering::Relaxed),
    )
}

/// What a normal-scheduler twin returns: its result, `:would_block`, or
/// `{:would_block_collect, :large | :small}` (the pool had no idle buffer: collect the
/// caller, whose dead tensors may hold one, and try again).
pub enum Attempt<T> {
    Done(NifOut<T>),
    WouldBlock,
    WouldBlockCollect { large: bool },
}

impl<T: Encoder> Encoder for Attempt<T> {
    fn encode<'a>(&self, env: Env<'a>) -> Term<'a> {
        match self {
            Attempt::Done(r) => r.encode(env),
            Attempt::WouldBlock => would_block().encode(env),
            Attempt::WouldBlockCollect { large: l } => {
                (would_block_collect(), if *l { large() } else { small() }).encode(env)
            }
        }
    }
}

/// Runs a NIF body in non-blocking mode.
pub fn attempt<T>(f: impl FnOnce() -> NifOut<T>) -> Attempt<T> {
    match crate::nonblocking::attempt(f) {
        Err((kind, msg)) if kind == would_block() => {
            if crate::exec::trace() {
                eprintln!("[nx_vulkan] to a dirty scheduler: {msg}");
            }
            let large = msg.ends_with(crate::nonblocking::LARGE_ALLOCATION);
            if large || msg.ends_with(crate::nonblocking::POOL_MISS) {
                COLLECTS.fetch_add(1, Ordering::Relaxed);
                Attempt::WouldBlockCollect { large }
            } else {
                Attempt::WouldBlock
            }
        }
        r => Attempt::Done(r),
    }
}

/// `twin_nif! { t_x_nb / t_x_dirty => fn t_x(args) -> NifOut<Ref> { body } }` defines the
/// body as `t_x` and the two NIFs that call it (see the module documentation); the result
/// may also be `NifOut<Vec<Ref>>` (several tensors). The NIFs' parameters and result are
/// forwarded as plain tokens (rustler's attribute rejects `$t:ty` captures), so the
/// parameter names are collected by munching the list.
macro_rules! twin_nif {
    (
        $(#[$meta:meta])*
        $nb:ident / $dirty:ident => fn $imp:ident($($param:tt)*) -> NifOut<Ref> $body:block
    ) => {
        $(#[$meta])*
        #[allow(clippy::too_many_arguments)]
        fn $imp($($param)*) -> NifOut<Ref> $body

        twin_nif!(@names ($nb $dirty $imp ($($param)*) (Ref)) [] $($param)*);
    };
    (
        $(#[$meta:meta])*
        $nb:ident / $dirty:ident => fn $imp:ident($($param:tt)*) -> NifOut<Vec<Ref>> $body:block
    ) => {
        $(#[$meta])*
        #[allow(clippy::too_many_arguments)]
        fn $imp($($param)*) -> NifOut<Vec<Ref>> $body

        twin_nif!(@names ($nb $dirty $imp ($($param)*) (Vec<Ref>)) [] $($param)*);
    };
    (@names $ctx:tt [$($n:ident)*]) => { twin_nif!(@emit $ctx [$($n)*]); };
    (@names $ctx:tt [$($n:ident)*] $name:ident : $($rest:tt)*) => {
        twin_nif!(@type $ctx [$($n)* $name] $($rest)*);
    };
    (@type $ctx:tt [$($n:ident)*]) => { twin_nif!(@emit $ctx [$($n)*]); };
    (@type $ctx:tt [$($n:ident)*] , $($rest:tt)*) => {
        twin_nif!(@names $ctx [$($n)*] $($rest)*);
    };
    (@type $ctx:tt [$($n:ident)*] $skip:tt $($rest:tt)*) => {
        twin_nif!(@type $ctx [$($n)*] $($rest)*);
    };
    (@emit ($nb:ident $dirty:ident $imp:ident ($($p:tt)*) ($($r:tt)*)) [$($n:ident)*]) => {
        #[rustler::nif]
        #[allow(clippy::too_many_arguments)]
        fn $nb(env: rustler::Env<'_>, $($p)*) -> $crate::nif::twin::Attempt<$($r)*> {
            $crate::nif::program::enter(env);
            $crate::nif::twin::attempt(|| $imp($($n),*))
        }

        #[rustler::nif(schedule = "DirtyCpu")]
        #[allow(clippy::too_many_arguments)]
        fn $dirty(env: rustler::Env<'_>, $($p)*) -> NifOut<$($r)*> {
            $crate::nif::program::enter(env);
            $crate::nif::twin::note_dirty();
            $imp($($n),*)
        }
    };
}

pub(super) use twin_nif;

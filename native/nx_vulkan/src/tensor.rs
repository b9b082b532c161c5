//! A tensor: a device block plus shape and element type. Reshapes share the block.

use crate::dtype::DType;
use crate::engine::engine;
use crate::error::{Error, Result};
use crate::memory::{Block, HostAccess, Kind, Use};
use crate::sub_byte;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Reads of at most this many bytes come straight from uncached device memory (a PCIe
/// read of a few KiB beats a copy round trip); larger ones go through a staging block.
const DIRECT_UNCACHED_READ: u64 = 64 * 1024;

/// Uploads of at most this many bytes that find no idle host-visible buffer in the pool
/// travel inside the command buffer (`Stream::update`), into a buffer GPU work may take:
/// no new buffer (a driver allocation, which moves a NIF call to a dirty scheduler), no
/// staging copy, no wait for the batches still using pooled buffers.
pub(crate) const IN_STREAM_UPLOAD_BYTES: usize = crate::exec::MAX_UPDATE_BYTES;

/// A dense, row-major tensor on the device.
#[derive(Clone)]
pub struct Tensor {
    pub block: Arc<Block>,
    pub shape: Vec<usize>,
    pub dtype: DType,
    /// For a 32- or 64-bit integer tensor whose values the host wrote (an upload, a
    /// constant): the most bits of magnitude any element has. `None` where unknown (GPU
    /// results). Lets an f32 operation take such integers in f32 where they fit exactly
    /// (a relu's `max(x, 0)`), where otherwise it computes in f64 (`ops::exact_float`).
    pub value_bits: Option<u32>,
}

/// Bits of magnitude of the largest element of a 32- or 64-bit integer type in `bytes`
/// (its storage, little-endian); `None` for other types.
fn value_bits(dtype: DType, bytes: &[u8]) -> Option<u32> {
    fn bits(m: u64) -> u32 {
        64 - m.leading_zeros()
    }
    let mag = |v: i64| v.unsigned_abs();
    let largest = match dtype {
        DType::S32 => bytes
            .chunks_exact(4)
            .map(|c| mag(i32::from_le_bytes(c.try_into().unwrap()) as i64))
            .max(),
        DType::U32 => bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()) as u64)
            .max(),
        DType::S64 => bytes
            .chunks_exact(8)
            .map(|c| mag(i64::from_le_bytes(c.try_into().unwrap())))
            .max(),
        DType::U64 => bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .max(),
        _ => return None,
    };
    Some(bits(largest.unwrap_or(0)))
}

/// Number of elements of `shape` (checked against overflow).
pub fn numel(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::InvalidArgument(format!("shape {shape:?} has too many elements")))
}

/// Bytes of a `dtype` tensor of `shape` (checked against overflow: a shape from the
/// caller can have 2^62 elements).
pub fn byte_len(shape: &[usize], dtype: DType) -> Result<usize> {
    numel(shape)?.checked_mul(dtype.size()).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "a {} tensor of shape {shape:?} has too many bytes",
            dtype.name()
        ))
    })
}

impl Tensor {
    /// Elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Bytes of data.
    /// Bits of magnitude its elements may have: what the host saw of its values, else
    /// its type's (see `value_bits`).
    pub fn magnitude_bits(&self) -> u32 {
        self.value_bits
            .unwrap_or_else(|| self.dtype.magnitude_bits())
    }

    pub fn nbytes(&self) -> u64 {
        (self.numel() * self.dtype.size()) as u64
    }

    /// An uninitialised tensor for GPU work to write. Kernels index elements with 32-bit
    /// integers, so more than 2^32 - 1 elements is an error.
    pub fn empty(shape: &[usize], dtype: DType) -> Result<Tensor> {
        let bytes = Tensor::checked_bytes(shape, dtype)?;
        let block = engine()?.memory.alloc(Kind::Tensor, bytes, Use::Device)?;
        Ok(Tensor {
            block,
            shape: shape.to_vec(),
            dtype,
            value_bits: None,
        })
    }

    /// The bytes of a `dtype` tensor of `shape`, if the engine can hold one.
    fn checked_bytes(shape: &[usize], dtype: DType) -> Result<u64> {
        let n = numel(shape)?;
        if n as u64 > u32::MAX as u64 {
            return Err(Error::InvalidArgument(format!(
                "shape {shape:?} has {n} elements; at most 2^32 - 1 per tensor are supported"
            )));
        }
        let bytes = (n as u64)
            .checked_mul(dtype.size() as u64)
            .ok_or_else(|| Error::InvalidArgument(format!("shape {shape:?} is too large")))?;
        let info = engine()?.info();
        if info.max_allocation > 0 && bytes > info.max_allocation {
            return Err(Error::OutOfMemory(format!(
                "a {} tensor of shape {shape:?} needs {bytes} bytes; the device allows {} per allocation",
                dtype.name(),
                info.max_allocation
            )));
        }
        Ok(bytes)
    }

    /// A tensor holding `bytes` (its storage bytes, already checked). In order of
    /// preference: written by the host into an idle pooled buffer it can map; when small,
    /// carried in the command stream into a pooled buffer GPU work may take (one a
    /// submitted batch still uses); written into a new buffer (carried in the stream when
    /// the host cannot map it and it is small, so no staging copy).
    pub(crate) fn with_storage(shape: &[usize], dtype: DType, bytes: &[u8]) -> Result<Tensor> {
        let e = engine()?;
        let size = Tensor::checked_bytes(shape, dtype)?;
        let small = bytes.len() <= IN_STREAM_UPLOAD_BYTES;
        let in_stream = |block: Arc<Block>| -> Result<Tensor> {
            let mut padded = bytes.to_vec();
            padded.resize(bytes.len().next_multiple_of(4), 0);
            e.stream.update(&block, &padded)?;
            Ok(Tensor {
                block,
                shape: shape.to_vec(),
                dtype,
                value_bits: value_bits(dtype, bytes),
            })
        };
        let idle = e
            .memory
            .alloc_pooled(Kind::Tensor, size, Use::Host)?
            .filter(|b| b.host != HostAccess::None || !small);
        let block = match idle {
            Some(block) => block,
            None => {
                if small {
                    if let Some(b) = e.memory.alloc_pooled(Kind::Tensor, size, Use::Device)? {
                        return in_stream(b);
                    }
                }
                let block = e.memory.alloc(Kind::Tensor, size, Use::Host)?;
                if small && block.host == HostAccess::None {
                    return in_stream(block);
                }
                block
            }
        };
        let t = Tensor {
            block,
            shape: shape.to_vec(),
            dtype,
            value_bits: value_bits(dtype, bytes),
        };
        t.write_bytes(bytes)?;
        Ok(t)
    }

    /// A tensor holding `bytes` (little-endian elements, row-major).
    pub fn from_bytes(shape: &[usize], dtype: DType, bytes: &[u8]) -> Result<Tensor> {
        crate::nonblocking::host_copy(bytes.len())?;
        let want = byte_len(shape, dtype)?;
        if bytes.len() != want {
            return Err(Error::InvalidArgument(format!(
                "from_binary: {} bytes do not hold a {} tensor of shape {shape:?} ({want} bytes)",
                bytes.len(),
                dtype.name(),
            )));
        }
        if dtype.is_sub_byte() {
            Tensor::with_storage(shape, dtype, &sub_byte::canonical(dtype, bytes))
        } else {
            Tensor::with_storage(shape, dtype, bytes)
        }
    }

    /// A tensor from Nx's binary of it: the storage bytes, but for the sub-byte types,
    /// whose binaries are packed bitstrings (see [`crate::sub_byte`]).
    pub fn from_binary(shape: &[usize], dtype: DType, bytes: &[u8]) -> Result<Tensor> {
        if !dtype.is_sub_byte() {
            return Tensor::from_bytes(shape, dtype, bytes);
        }
        crate::nonblocking::host_copy(numel(shape)?)?;
        let storage = sub_byte::unpack(dtype, bytes, numel(shape)?)?;
        Tensor::from_bytes(shape, dtype, &storage)
    }

    /// The first `limit` bytes (or all) of Nx's binary of the tensor: the storage bytes,
    /// packed for the sub-byte types. Waits for the batches that write it.
    pub fn to_binary(&self, limit: Option<usize>) -> Result<Vec<u8>> {
        let all = sub_byte::binary_len(self.dtype, self.numel());
        let len = limit.map_or(all, |l| l.min(all));
        if !self.dtype.is_sub_byte() {
            let mut v = vec![0u8; len];
            self.read_into(&mut v)?;
            return Ok(v);
        }
        let elems = (len * 8 / self.dtype.bits()).min(self.numel());
        let mut storage = vec![0u8; elems];
        self.read_into(&mut storage)?;
        Ok(sub_byte::pack(self.dtype, &storage))
    }

    /// Writes `bytes` at the start of a new tensor (one whose buffer was allocated for
    /// `Use::Host`, which no batch still uses; any other waits for the batches that do).
    fn write_bytes(&self, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        crate::launch_list::host_write(&self.block, || self.write_bytes_now(bytes))
    }

    fn write_bytes_now(&self, bytes: &[u8]) -> Result<()> {
        let e = engine()?;
        if self.block.host != HostAccess::None {
            e.stream
                .wait_for(self.block.last_use.load(Ordering::Acquire))?;
            let mut guard = self
                .block
                .buffer()
                .write()
                .map_err(|err| Error::Vulkan(err.to_string()))?;
            guard[..bytes.len()].copy_from_slice(bytes);
            return Ok(());
        }
        let staging = e
            .memory
            .alloc(Kind::Staging, bytes.len() as u64, Use::Host)?;
        e.stream
            .wait_for(staging.last_use.load(Ordering::Acquire))?;
        {
            let mut guard = staging
                .buffer()
                .write()
                .map_err(|err| Error::Vulkan(err.to_string()))?;
            guard[..bytes.len()].copy_from_slice(bytes);
        }
        e.stream
            .copy(&staging, 0, &self.block, 0, bytes.len() as u64)
    }

    /// The tensor's bytes. Waits for the batches that write it (and only those).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut v = vec![0u8; self.nbytes() as usize];
        self.read_into(&mut v)?;
        Ok(v)
    }

    /// Copies the first `dst.len()` bytes of the tensor (at most all of them) into `dst`.
    pub fn read_into(&self, dst: &mut [u8]) -> Result<()> {
        let n = (dst.len() as u64).min(self.nbytes());
        if n == 0 {
            return Ok(());
        }
        crate::nonblocking::host_copy(n as usize)?;
        // An op that reads data on the host decides something from it (a singular matrix,
        // a complex tensor's imaginary parts): a replayed launch list would skip that.
        crate::launch_list::spoil("a host read of a tensor's data");
        let e = engine()?;
        let direct = match self.block.host {
            HostAccess::Cached => true,
            HostAccess::Uncached => n <= DIRECT_UNCACHED_READ,
            HostAccess::None => false,
        };
        let source = if direct {
            self.block.clone()
        } else {
            let staging = e.memory.alloc(Kind::Staging, n, Use::Device)?;
            e.stream.copy(&self.block, 0, &staging, 0, n)?;
            staging
        };
        e.stream.wait_block(&source)?;
        let guard = source
            .buffer()
            .read()
            .map_err(|err| Error::Vulkan(err.to_string()))?;
        dst[..n as usize].copy_from_slice(&guard[..n as usize]);
        Ok(())
    }

    /// Same data, new shape (no GPU work).
    pub fn reshape(&self, shape: &[usize]) -> Result<Tensor> {
        if numel(shape)? != self.numel() {
            return Err(Error::InvalidArgument(format!(
                "reshape: cannot reshape shape {:?} ({} elements) to {shape:?}",
                self.shape,
                self.numel()
            )));
        }
        Ok(Tensor {
            block: self.block.clone(),
            shape: shape.to_vec(),
            dtype: self.dtype,
            value_bits: self.value_bits,
        })
    }
}

//! One error type for the engine. Every fallible engine call returns [`Result`]; the NIF
//! layer turns an [`Error`] into `{:error, message}` and Elixir raises from it.

use std::fmt;

/// What went wrong, with enough context to name the op, shape or type at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The caller passed something invalid (shape, type, axes, binary size...).
    InvalidArgument(String),
    /// The op or type combination is not implemented on this device (yet). The Elixir
    /// side turns this into its counted host fallback, or raises when fallback is off.
    Unsupported(String),
    /// No usable Vulkan device, or the device lacks a required feature.
    NoDevice(String),
    /// Device or host memory ran out.
    OutOfMemory(String),
    /// Any other Vulkan failure.
    Vulkan(String),
    /// In non-blocking mode (see [`crate::nonblocking`]): the call would have blocked on
    /// the named thing; run it again outside that mode.
    WouldBlock(&'static str),
    /// Nx's arithmetic itself raises for these values (Elixir's `ArithmeticError`), e.g.
    /// erf of a complex number with a non-zero imaginary part.
    Arithmetic(String),
}

/// Engine result.
pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::Unsupported(m) => write!(f, "unsupported: {m}"),
            Error::NoDevice(m) => write!(f, "no usable Vulkan device: {m}"),
            Error::OutOfMemory(m) => write!(f, "out of memory: {m}"),
            Error::Vulkan(m) => write!(f, "vulkan error: {m}"),
            Error::WouldBlock(what) => write!(f, "would block on {what}"),
            Error::Arithmetic(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// Short machine-readable kind, used as the error atom on the Elixir side.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::InvalidArgument(_) => "invalid_argument",
            Error::Unsupported(_) => "unsupported",
            Error::NoDevice(_) => "no_device",
            Error::OutOfMemory(_) => "out_of_memory",
            Error::Vulkan(_) => "vulkan",
            Error::WouldBlock(_) => "would_block",
            Error::Arithmetic(_) => "arithmetic",
        }
    }
}

impl From<vulkano::VulkanError> for Error {
    fn from(e: vulkano::VulkanError) -> Self {
        match e {
            vulkano::VulkanError::OutOfDeviceMemory | vulkano::VulkanError::OutOfHostMemory => {
                Error::OutOfMemory(e.to_string())
            }
            other => Error::Vulkan(other.to_string()),
        }
    }
}

impl<E: fmt::Display + fmt::Debug> From<vulkano::Validated<E>> for Error {
    fn from(e: vulkano::Validated<E>) -> Self {
        // vulkano's Display of `Validated::Error` hides the inner error; name it.
        let msg = match e {
            vulkano::Validated::Error(inner) => format!("{inner} ({inner:?})"),
            vulkano::Validated::ValidationError(v) => v.to_string(),
        };
        if msg.contains("OutOfDeviceMemory") || msg.contains("out of device memory") {
            Error::OutOfMemory(msg)
        } else {
            Error::Vulkan(msg)
        }
    }
}

impl From<Box<vulkano::ValidationError>> for Error {
    fn from(e: Box<vulkano::ValidationError>) -> Self {
        Error::Vulkan(e.to_string())
    }
}

/// Shorthand for an [`Error::InvalidArgument`] built with `format!`.
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => { $crate::error::Error::InvalidArgument(format!($($arg)*)) };
}

/// Shorthand for an [`Error::Unsupported`] built with `format!`.
#[macro_export]
macro_rules! unsupported {
    ($($arg:tt)*) => { $crate::error::Error::Unsupported(format!($($arg)*)) };
}

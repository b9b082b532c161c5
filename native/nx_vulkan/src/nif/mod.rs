//! NIF boundary (filled in below).

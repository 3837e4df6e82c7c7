//! No code: this crate's dependencies are its whole purpose (see its `Cargo.toml`).

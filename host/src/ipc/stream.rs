//! A connection's two halves, and the Windows pipe name of a hub socket path: what the
//! platform channels share.

use std::path::Path;

use tokio::io::{AsyncRead, AsyncWrite};

/// The reading half of a connection.
pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// The writing half of a connection.
pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// The Windows pipe name for a hub socket path: `\\.\pipe\nova-<16 hex of SHA-256(path)>`.
pub fn pipe_name(path: &Path) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(path.to_string_lossy().as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!(r"\\.\pipe\nova-{hex}")
}

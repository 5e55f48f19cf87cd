//! The local channel between `nova mcp` (the agent's stdio relay) and the hub: a Unix socket in
//! the data dir (mode 0600) on Unix, a named pipe on Windows whose name is derived from that
//! socket path, so hub registrations look the same on every OS. [`HubRecord`] is how a relay
//! finds the hub to connect to.
//!
//! `record` is the hub registration file; `stream` the connection halves and the pipe name the
//! platform channels (`imp`, one per OS) share.

mod record;
mod stream;

pub use record::HubRecord;

pub use stream::{Reader, Writer, pipe_name};

pub use imp::{Listener, connect, reachable};

#[cfg(unix)]
mod imp {
    use std::path::Path;

    use super::stream::{Reader, Writer};

    /// Accepts relay connections.
    pub struct Listener(tokio::net::UnixListener);

    impl Listener {
        /// Binds `path` (a stale socket file is replaced), readable by this user only.
        pub fn bind(path: &Path) -> std::io::Result<Self> {
            let _ = std::fs::remove_file(path);
            let listener = tokio::net::UnixListener::bind(path)?;
            crate::paths::set_mode(path, 0o600)?;
            Ok(Self(listener))
        }

        /// The next connection.
        pub async fn accept(&mut self) -> std::io::Result<(Reader, Writer)> {
            let (stream, _) = self.0.accept().await?;
            let (r, w) = stream.into_split();
            Ok((Box::new(r), Box::new(w)))
        }
    }

    /// Connects to the hub at `path`.
    pub async fn connect(path: &Path) -> std::io::Result<(Reader, Writer)> {
        let (r, w) = tokio::net::UnixStream::connect(path).await?.into_split();
        Ok((Box::new(r), Box::new(w)))
    }

    /// Whether a hub answers at `path`.
    pub fn reachable(path: &Path) -> bool {
        std::os::unix::net::UnixStream::connect(path).is_ok()
    }
}

#[cfg(windows)]
mod imp {
    use std::path::Path;
    use std::time::Duration;

    use tokio::net::windows::named_pipe::{ClientOptions, NamedPipeServer, ServerOptions};

    use super::stream::{Reader, Writer, pipe_name};

    /// `ERROR_PIPE_BUSY`: every instance is taken; the server makes a new one at once.
    const PIPE_BUSY: i32 = 231;

    /// Accepts relay connections: one pipe instance waits while the others serve.
    pub struct Listener {
        name: String,
        next: NamedPipeServer,
    }

    impl Listener {
        /// Creates the first instance of the pipe for `path` (fails if another hub has it).
        pub fn bind(path: &Path) -> std::io::Result<Self> {
            let name = pipe_name(path);
            let next = ServerOptions::new().first_pipe_instance(true).create(&name)?;
            Ok(Self { name, next })
        }

        /// The next connection.
        pub async fn accept(&mut self) -> std::io::Result<(Reader, Writer)> {
            self.next.connect().await?;
            let fresh = ServerOptions::new().create(&self.name)?;
            let connected = std::mem::replace(&mut self.next, fresh);
            let (r, w) = tokio::io::split(connected);
            Ok((Box::new(r), Box::new(w)))
        }
    }

    /// Connects to the hub at `path`.
    pub async fn connect(path: &Path) -> std::io::Result<(Reader, Writer)> {
        let name = pipe_name(path);
        let mut tries = 0;
        let client = loop {
            match ClientOptions::new().open(&name) {
                Ok(c) => break c,
                Err(e) if e.raw_os_error() == Some(PIPE_BUSY) && tries < 40 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                Err(e) => return Err(e),
            }
        };
        let (r, w) = tokio::io::split(client);
        Ok((Box::new(r), Box::new(w)))
    }

    /// Whether a hub answers at `path`.
    pub fn reachable(path: &Path) -> bool {
        std::fs::OpenOptions::new().read(true).write(true).open(pipe_name(path)).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn pipe_names_are_stable_and_distinct_per_socket() {
        let a = pipe_name(Path::new("/home/u/.local/share/nova/hubs/chromium.sock"));
        assert!(a.starts_with(r"\\.\pipe\nova-") && a.len() == r"\\.\pipe\nova-".len() + 16, "{a}");
        assert_eq!(a, pipe_name(Path::new("/home/u/.local/share/nova/hubs/chromium.sock")));
        assert_ne!(a, pipe_name(Path::new("/home/u/.local/share/nova/hubs/firefox.sock")));
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_relay_connection_carries_bytes_both_ways() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("hub.sock");
        let mut listener = Listener::bind(&path).expect("bind");
        assert!(reachable(&path));
        let server = tokio::spawn(async move {
            let _probe = listener.accept().await.expect("the reachability probe");
            let (mut r, mut w) = listener.accept().await.expect("accept");
            let mut buf = [0u8; 4];
            r.read_exact(&mut buf).await.expect("read");
            w.write_all(&buf).await.expect("echo");
        });
        let (mut r, mut w) = connect(&path).await.expect("connect");
        w.write_all(b"ping").await.expect("write");
        let mut back = [0u8; 4];
        r.read_exact(&mut back).await.expect("read back");
        assert_eq!(&back, b"ping");
        server.await.expect("server");
        assert!(!reachable(&dir.path().join("nobody.sock")));
    }
}

//! Native-messaging framing: a 4-byte length in native byte order, then that many bytes of
//! UTF-8 JSON.
//!
//! The reader checks the announced length against its limit before allocating anything; an
//! oversized frame is skipped in small pieces so the stream stays in sync and the hub keeps
//! running. Malformed JSON and non-UTF-8 payloads are reported per frame, never fatal.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

pub use nova_shared::protocol::{BROWSER_TO_HOST_MAX_FRAME, HOST_TO_BROWSER_MAX_FRAME};

/// Why a frame was rejected or the stream ended.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The announced length exceeds the limit; the payload was skipped without being stored.
    #[error("frame of {len} bytes exceeds the {max}-byte limit")]
    Oversized {
        /// Announced length.
        len: usize,
        /// Limit in force.
        max: usize,
    },
    /// The payload is not UTF-8.
    #[error("frame is not valid UTF-8")]
    NotUtf8,
    /// The stream ended in the middle of a frame.
    #[error("stream ended inside a frame")]
    Truncated,
    /// Reading or writing failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

impl FrameError {
    /// True when the stream can go on after this error (the bad frame was consumed whole).
    pub fn is_recoverable(&self) -> bool {
        matches!(self, Self::Oversized { .. } | Self::NotUtf8)
    }
}

/// Reads one frame. `Ok(None)` is a clean end of stream at a frame boundary.
pub async fn read_frame<R: AsyncRead + Unpin>(r: &mut R, max: usize) -> Result<Option<String>, FrameError> {
    let mut header = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        let n = r.read(&mut header[got..]).await?;
        if n == 0 {
            return if got == 0 { Ok(None) } else { Err(FrameError::Truncated) };
        }
        got += n;
    }
    let len = u32::from_ne_bytes(header) as usize;
    if len > max {
        let skipped = tokio::io::copy(&mut r.take(len as u64), &mut tokio::io::sink()).await?;
        if skipped < len as u64 {
            return Err(FrameError::Truncated);
        }
        return Err(FrameError::Oversized { len, max });
    }
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => FrameError::Truncated,
        _ => FrameError::Io(e),
    })?;
    String::from_utf8(buf).map(Some).map_err(|_| FrameError::NotUtf8)
}

/// Writes one frame. Refuses payloads above `max` (callers chunk first).
pub async fn write_frame<W: AsyncWrite + Unpin>(
    w: &mut W,
    payload: &str,
    max: usize,
) -> Result<(), FrameError> {
    if payload.len() > max {
        return Err(FrameError::Oversized { len: payload.len(), max });
    }
    let len = u32::try_from(payload.len()).map_err(|_| FrameError::Oversized { len: payload.len(), max })?;
    w.write_all(&len.to_ne_bytes()).await?;
    w.write_all(payload.as_bytes()).await?;
    w.flush().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(payload: &[u8]) -> Vec<u8> {
        let mut v = (payload.len() as u32).to_ne_bytes().to_vec();
        v.extend_from_slice(payload);
        v
    }

    #[tokio::test]
    async fn reads_frames_in_order_then_clean_eof() {
        let mut bytes = frame(br#"{"a":1}"#);
        bytes.extend(frame(b"{}"));
        let mut r = bytes.as_slice();
        assert_eq!(read_frame(&mut r, 100).await.expect("1").as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(read_frame(&mut r, 100).await.expect("2").as_deref(), Some("{}"));
        assert!(read_frame(&mut r, 100).await.expect("eof").is_none());
    }

    #[tokio::test]
    async fn oversized_frame_is_skipped_and_stream_stays_in_sync() {
        let mut bytes = frame(&[b'x'; 64]);
        bytes.extend(frame(b"{}"));
        let mut r = bytes.as_slice();
        let err = read_frame(&mut r, 16).await.expect_err("oversized");
        assert!(matches!(err, FrameError::Oversized { len: 64, max: 16 }), "{err}");
        assert!(err.is_recoverable());
        assert_eq!(read_frame(&mut r, 16).await.expect("next").as_deref(), Some("{}"));
    }

    #[tokio::test]
    async fn huge_announced_length_does_not_allocate_and_reports_truncation() {
        // 4 GiB announced, 3 bytes present: must neither allocate nor hang.
        let mut bytes = u32::MAX.to_ne_bytes().to_vec();
        bytes.extend_from_slice(b"abc");
        let mut r = bytes.as_slice();
        let err = read_frame(&mut r, BROWSER_TO_HOST_MAX_FRAME).await.expect_err("truncated");
        assert!(matches!(err, FrameError::Truncated), "{err}");
    }

    #[tokio::test]
    async fn partial_header_and_partial_body_are_truncation() {
        let mut r: &[u8] = &[1, 0];
        assert!(matches!(read_frame(&mut r, 10).await, Err(FrameError::Truncated)));
        let mut bytes = 10u32.to_ne_bytes().to_vec();
        bytes.extend_from_slice(b"abc");
        let mut r = bytes.as_slice();
        assert!(matches!(read_frame(&mut r, 100).await, Err(FrameError::Truncated)));
    }

    #[tokio::test]
    async fn non_utf8_is_rejected_and_recoverable() {
        let mut bytes = frame(&[0xff, 0xfe]);
        bytes.extend(frame(b"{}"));
        let mut r = bytes.as_slice();
        let err = read_frame(&mut r, 100).await.expect_err("not utf8");
        assert!(matches!(err, FrameError::NotUtf8) && err.is_recoverable());
        assert_eq!(read_frame(&mut r, 100).await.expect("next").as_deref(), Some("{}"));
    }

    #[tokio::test]
    async fn write_refuses_oversize_and_frames_correctly() {
        let mut out = Vec::new();
        write_frame(&mut out, "{}", 10).await.expect("write");
        assert_eq!(out, frame(b"{}"));
        assert!(write_frame(&mut Vec::new(), "0123456789x", 10).await.is_err());
    }
}

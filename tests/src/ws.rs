//! A minimal WebSocket client (RFC 6455: text frames, client-masked, fragmented messages) for
//! the browsers' remote protocols: Chrome DevTools ([`crate::cdp`]) and WebDriver BiDi
//! ([`crate::bidi`]). Loopback only.

use anyhow::{Context as _, bail};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// Largest message accepted (screenshots are a few MB of base64).
const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// One connection.
pub struct WebSocket {
    stream: TcpStream,
}

impl WebSocket {
    /// Opens `ws://127.0.0.1:<port><path>`.
    pub async fn connect(port: u16, path: &str) -> anyhow::Result<Self> {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: bm92YS10ZXN0cy1jZHAtMQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await?;
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let b = stream.read_u8().await.context("handshake")?;
            head.push(b);
            if head.len() > 8192 {
                bail!("handshake reply too long");
            }
        }
        let head = String::from_utf8_lossy(&head);
        if !head.starts_with("HTTP/1.1 101") {
            bail!("the browser refused the WebSocket: {head}");
        }
        Ok(Self { stream })
    }

    /// Sends one text message.
    pub async fn send(&mut self, text: &str) -> anyhow::Result<()> {
        write_text(&mut self.stream, text).await
    }

    /// Receives the next text message.
    pub async fn recv(&mut self) -> anyhow::Result<String> {
        read_text(&mut self.stream).await
    }
}

async fn write_text(stream: &mut TcpStream, text: &str) -> anyhow::Result<()> {
    let payload = text.as_bytes();
    let mut frame = vec![0x81u8];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n if n <= usize::from(u16::MAX) => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    let mask: [u8; 4] = rand_mask();
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    stream.write_all(&frame).await?;
    Ok(())
}

async fn read_text(stream: &mut TcpStream) -> anyhow::Result<String> {
    let mut message = Vec::new();
    loop {
        let b0 = stream.read_u8().await?;
        let b1 = stream.read_u8().await?;
        let len = match b1 & 0x7f {
            126 => usize::from(stream.read_u16().await?),
            127 => usize::try_from(stream.read_u64().await?)?,
            n => usize::from(n),
        };
        if message.len() + len > MAX_MESSAGE {
            bail!("DevTools message over {MAX_MESSAGE} bytes");
        }
        let mask = if b1 & 0x80 != 0 {
            let mut m = [0u8; 4];
            stream.read_exact(&mut m).await?;
            Some(m)
        } else {
            None
        };
        let mut data = vec![0u8; len];
        stream.read_exact(&mut data).await?;
        if let Some(m) = mask {
            data.iter_mut().enumerate().for_each(|(i, b)| *b ^= m[i % 4]);
        }
        match b0 & 0x0f {
            0x8 => bail!("DevTools closed the connection"),
            0x9 | 0xA => continue, // ping / pong: Chromium does not ping clients
            _ => message.extend_from_slice(&data),
        }
        if b0 & 0x80 != 0 {
            return Ok(String::from_utf8(message)?);
        }
    }
}

/// A masking key; it only has to be unpredictable to intermediaries, of which there are none
/// on loopback, but vary it anyway.
fn rand_mask() -> [u8; 4] {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    nanos.to_le_bytes()
}

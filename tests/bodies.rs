//! End to end: a request body is read by the edge only up to its bound — a body sent
//! without a Content-Length is refused as soon as it passes 16 KiB, open or not.

use crate::support;

use support::System;

/// A body sent without a `Content-Length` is refused as soon as it passes 16 KiB: the
/// edge stops reading there. The client here sends 20 KiB in chunks and then nothing,
/// never ending the body; an edge that read the body whole before its check would never
/// answer.
#[tokio::test]
async fn an_unbounded_chunked_body_is_refused_at_the_bound_not_at_its_end() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let system = System::start().await;
    let token = system.token("user-1", 600);
    let address = system.edge.trim_start_matches("http://");
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST /payments/confirm HTTP/1.1\r\nhost: {address}\r\nauthorization: Bearer {token}\r\n\
         idempotency-key: key-chunked\r\ncontent-type: application/json\r\n\
         transfer-encoding: chunked\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 1024, "x".repeat(1024));
    for _ in 0..20 {
        socket.write_all(chunk.as_bytes()).await.unwrap();
    }
    // The whole answer, head and body, read until its Content-Length is in — while the
    // request's body is still open.
    let within = std::time::Duration::from_secs(30);
    let answer = tokio::time::timeout(within, async {
        let mut answer = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            let read = socket.read(&mut buffer).await.unwrap();
            assert!(read > 0, "the edge closed without a whole answer");
            answer.extend_from_slice(&buffer[..read]);
            let text = String::from_utf8_lossy(&answer).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|line| {
                        line.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|n| n.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                if body.len() >= length {
                    return text;
                }
            }
        }
    })
    .await
    .expect("an answer while the body is still open");
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("BODY_TOO_LARGE"), "{answer}");
    assert_eq!(system.ledger().await["requestCount"], 0);
}

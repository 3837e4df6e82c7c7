//! What the origin asks of the edge: `POST {EDGE_URL}/internal/…`, signed with
//! `EDGE_SIGNING_SECRET` as the edge signs its calls here (`rules::signing`; the signed
//! path names the route, so no call of one direction verifies as one of the other).
//!
//! - Ending a user's sessions (`/internal/sessions/end`): the edge's user session object
//!   revokes every refresh family at once and refuses every access token issued before
//!   the moment sent — at its next request. Sent again, it ends nothing more, so a failed
//!   call is simply repeated (`origin user revoke-sessions`).
//! - A drop's room (`/internal/rooms/{eventId}`): the settings and state an operator set
//!   (`rules::drop::RoomUpdate`), applied by the edge's room at once; and its report
//!   (`/internal/rooms/{eventId}/report`). Versioned, so a retry is harmless.
//!
//! They are calls from the origin to the edge's public address, so they work wherever
//! the edge runs, Cloudflare included.

use anyhow::{bail, Context as _};
use rules::drop::RoomUpdate;
use rules::signing::{
    private_link, SignedRequest, NONCE_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, USER_HEADER,
};

/// Who the origin's own calls name as their user.
const ORIGIN_USER: &str = "origin";

/// Where the edge is and the key it shares with the origin: `EDGE_URL`,
/// `EDGE_SIGNING_SECRET`.
pub struct Edge {
    pub url: String,
    pub secret: Vec<u8>,
}

/// The edge's answer to a call about a room: its status and JSON body.
#[derive(Debug)]
pub struct EdgeAnswer {
    pub status: u16,
    pub body: serde_json::Value,
}

impl Edge {
    /// From the environment; an error naming what is missing.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> anyhow::Result<Edge> {
        let url = lookup("EDGE_URL").filter(|url| !url.is_empty()).context(
            "EDGE_URL is not set: the edge cannot be told (set it to the edge's base URL, \
             e.g. https://edge.example.com)",
        )?;
        if !private_link(&url) {
            bail!(
                "EDGE_URL must be an https:// URL, or http:// to a loopback host: the edge's \
                 answer says whether the sessions ended, and only a private link keeps it true"
            );
        }
        let secret = lookup("EDGE_SIGNING_SECRET").context("EDGE_SIGNING_SECRET is not set")?;
        Ok(Edge {
            url: url.trim_end_matches('/').to_owned(),
            secret: secret.into_bytes(),
        })
    }

    /// Ends every session `user_id` began before `before_ms`.
    pub async fn end_sessions(&self, user_id: &str, before_ms: i64) -> anyhow::Result<()> {
        let body = serde_json::json!({ "before": before_ms }).to_string();
        let response = self.post("/internal/sessions/end", user_id, body).await?;
        let status = response.status();
        if status.as_u16() != 204 {
            let answer = response.text().await.unwrap_or_default();
            bail!("the edge answered {status}: {answer}");
        }
        Ok(())
    }

    /// Hands `event_id`'s room `update`: the edge's answer (200 the room's report; 400,
    /// 409 a refusal naming why).
    pub async fn configure_room(
        &self,
        event_id: &str,
        update: &RoomUpdate,
    ) -> anyhow::Result<EdgeAnswer> {
        let body = serde_json::to_string(update)?;
        self.answer(&format!("/internal/rooms/{event_id}"), body)
            .await
    }

    /// `event_id`'s room, as its report says.
    pub async fn room_report(&self, event_id: &str) -> anyhow::Result<EdgeAnswer> {
        self.answer(
            &format!("/internal/rooms/{event_id}/report"),
            "{}".to_owned(),
        )
        .await
    }

    /// The draw of `event_id`'s prequeue, for audit: the seed and the people in their
    /// drawn order, `limit` of them from place `from` (0 is the first).
    pub async fn draw_list(
        &self,
        event_id: &str,
        from: u64,
        limit: u32,
    ) -> anyhow::Result<EdgeAnswer> {
        let body = serde_json::json!({ "from": from, "limit": limit }).to_string();
        self.answer(&format!("/internal/rooms/{event_id}/draw"), body)
            .await
    }

    async fn answer(&self, path: &str, body: String) -> anyhow::Result<EdgeAnswer> {
        let response = self.post(path, ORIGIN_USER, body).await?;
        let status = response.status().as_u16();
        let body = response
            .json()
            .await
            .with_context(|| format!("the edge's answer to {path} ({status}) is not JSON"))?;
        Ok(EdgeAnswer { status, body })
    }

    /// `POST {EDGE_URL}{path}` with `body`, signed on behalf of `user_id`.
    async fn post(
        &self,
        path: &str,
        user_id: &str,
        body: String,
    ) -> anyhow::Result<reqwest::Response> {
        let timestamp_ms = crate::clock::now_ms();
        let nonce = {
            let mut bytes = [0u8; 16];
            getrandom::fill(&mut bytes).map_err(|err| anyhow::anyhow!("no randomness: {err}"))?;
            hex::encode(bytes)
        };
        let signature = SignedRequest {
            method: "POST",
            path_and_query: path,
            timestamp_ms,
            nonce: &nonce,
            user_id,
            idempotency_key: "",
            request_id: "",
            pass: "",
            body: body.as_bytes(),
        }
        .sign(&self.secret)?;
        reqwest::Client::new()
            .post(format!("{}{path}", self.url))
            .header(USER_HEADER, user_id)
            .header(TIMESTAMP_HEADER, timestamp_ms.to_string())
            .header(NONCE_HEADER, nonce)
            .header(SIGNATURE_HEADER, signature)
            .header("content-type", "application/json")
            .body(body)
            .timeout(std::time::Duration::from_secs(10))
            .send()
            .await
            .with_context(|| format!("calling the edge at {}", self.url))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge_at(url: &str) -> anyhow::Result<Edge> {
        Edge::from_env(|name| match name {
            "EDGE_URL" => Some(url.to_owned()),
            "EDGE_SIGNING_SECRET" => Some("s".repeat(32)),
            _ => None,
        })
    }

    #[test]
    fn the_edge_is_reached_over_https_or_on_this_machine_only() {
        assert!(
            edge_at("https://edge.example.com/").is_ok_and(|e| e.url == "https://edge.example.com")
        );
        assert!(edge_at("http://127.0.0.1:8787").is_ok());
        let plain = edge_at("http://edge.example.com")
            .err()
            .unwrap()
            .to_string();
        assert!(plain.contains("EDGE_URL must be an https://"), "{plain}");
        let unset = Edge::from_env(|_| None).err().unwrap().to_string();
        assert!(unset.contains("EDGE_URL is not set"), "{unset}");
    }
}

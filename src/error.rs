//! Every refusal the edge gives, and its one mapping to HTTP.
//!
//! Bodies are always `{"code": "...", "message": "..."}`, with the few fields a refusal
//! names beside them (`NOT_OPEN_YET`'s times). Internal causes go to the log and never
//! into a body.

use rules::confirm::InvalidConfirm;
use serde::Serialize;
use worker::Response;

/// A refusal: the status, the stable code clients rely on, a message for people, and
/// any headers the refusal carries (`Retry-After` and the like).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
    pub headers: Vec<(&'static str, String)>,
    /// Fields of the body beside `code` and `message`.
    pub fields: serde_json::Map<String, serde_json::Value>,
}

#[derive(Serialize)]
struct Body<'a> {
    code: &'a str,
    message: &'a str,
    #[serde(flatten)]
    fields: &'a serde_json::Map<String, serde_json::Value>,
}

impl ApiError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            headers: Vec::new(),
            fields: serde_json::Map::new(),
        }
    }

    /// A field of the body beside `code` and `message`.
    pub fn with_field(mut self, name: &str, value: serde_json::Value) -> Self {
        self.fields.insert(name.to_owned(), value);
        self
    }

    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(400, code, message)
    }

    pub fn not_found() -> Self {
        Self::new(404, "NOT_FOUND", "no such route")
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "METHOD_NOT_ALLOWED",
            "this route does not accept that method",
        )
    }

    /// Something on our side failed; `cause` is logged, the client sees only the code.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        worker::console_error!("internal error: {cause}");
        Self::new(500, "INTERNAL", "the edge could not handle the request")
    }

    pub fn into_response(self) -> worker::Result<Response> {
        let response = Response::from_json(&Body {
            code: self.code,
            message: &self.message,
            fields: &self.fields,
        })?
        .with_status(self.status);
        if self.status == 401 {
            response.headers().set("www-authenticate", "Bearer")?;
        }
        for (name, value) in &self.headers {
            response.headers().set(name, value)?;
        }
        Ok(response)
    }
}

impl From<worker::Error> for ApiError {
    fn from(err: worker::Error) -> Self {
        Self::internal(err)
    }
}

impl From<InvalidConfirm> for ApiError {
    fn from(err: InvalidConfirm) -> Self {
        Self::bad_request(err.code(), err.to_string())
    }
}

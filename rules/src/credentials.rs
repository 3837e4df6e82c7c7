//! The login request: a username and a password, validated the same way at the edge
//! (before any round trip) and at the origin (which checks the password).

use serde::Deserialize;

const MAX_USERNAME_LEN: usize = 64;
/// Long enough for any passphrase, short enough that hashing it is not a weapon.
const MAX_PASSWORD_LEN: usize = 1024;

/// `POST /auth/login` and `POST /internal/credentials/verify` body.
#[derive(Clone, PartialEq, Eq, Deserialize)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}

/// Deliberately hides the password from logs and panics.
impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// Why a login body was refused; safe to show the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidCredentials {
    #[error("request body is not a JSON object with string `username` and `password`")]
    Malformed,
    #[error("`username` must be 1 to 64 characters of letters, digits, '.', '_', '-' or '@'")]
    Username,
    #[error("`password` must be 1 to 1024 bytes")]
    Password,
}

impl Credentials {
    /// Parses a login body; the username comes back normalised to lowercase.
    pub fn parse(body: &[u8]) -> Result<Self, InvalidCredentials> {
        if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return Err(InvalidCredentials::Malformed);
        }
        let Self { username, password } =
            serde_json::from_slice(body).map_err(|_| InvalidCredentials::Malformed)?;
        let username = normalize_username(&username)?;
        if password.is_empty() || password.len() > MAX_PASSWORD_LEN {
            return Err(InvalidCredentials::Password);
        }
        Ok(Self { username, password })
    }
}

/// Usernames compare without regard to case: `Demo` and `demo` are one user.
pub fn normalize_username(username: &str) -> Result<String, InvalidCredentials> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@');
    if username.is_empty() || username.len() > MAX_USERNAME_LEN || !username.bytes().all(plain) {
        return Err(InvalidCredentials::Username);
    }
    Ok(username.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body: &str, expected: Result<(&str, &str), InvalidCredentials>) {
        let got = Credentials::parse(body.as_bytes());
        let got = got
            .as_ref()
            .map(|c| (c.username.as_str(), c.password.as_str()));
        assert_eq!(got, expected.as_ref().map(|(u, p)| (*u, *p)), "{body}");
    }

    #[test]
    fn login_bodies_are_validated() {
        use InvalidCredentials::*;
        check(r#"{"username":"Demo","password":"pw"}"#, Ok(("demo", "pw")));
        check(
            r#"{"username":"a@b.c","password":" spaced pw "}"#,
            Ok(("a@b.c", " spaced pw ")),
        );
        check(r#"["demo","pw"]"#, Err(Malformed));
        check(r#"{"username":"demo"}"#, Err(Malformed));
        check(r#"{"username":1,"password":"pw"}"#, Err(Malformed));
        check("not json", Err(Malformed));
        check(r#"{"username":"","password":"pw"}"#, Err(Username));
        check(r#"{"username":"de mo","password":"pw"}"#, Err(Username));
        check(r#"{"username":"demo","password":""}"#, Err(Password));
        let long = "p".repeat(1025);
        check(
            &format!(r#"{{"username":"demo","password":"{long}"}}"#),
            Err(Password),
        );
    }

    #[test]
    fn debug_output_never_shows_the_password() {
        let credentials =
            Credentials::parse(br#"{"username":"demo","password":"s3cret"}"#).unwrap();
        assert!(!format!("{credentials:?}").contains("s3cret"));
    }
}

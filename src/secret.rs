//! Values that must never be printed: tokens, API keys, and URLs that may carry a password.
//! Their `Debug`, `Display` and `Serialize` show a mask, so a settings dump, a `{:?}` in a log
//! line or an error message cannot leak them; the value itself is reached only by `expose`,
//! at the one place that hands it to a client library.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

const MASK: &str = "********";

/// A token or key. Shown as `********` everywhere.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the client that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self::new(value)
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self::new(value)
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({MASK})")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(MASK)
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(MASK)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Secret)
    }
}

/// A URL that may hold a password (`postgres://user:pass@host/db`). Shown with the password
/// masked (`postgres://user:****@host/db`); the rest stays readable, since an operator needs
/// to see which host a daemon talks to.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretUrl(String);

impl SecretUrl {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The URL with its password, for the client that connects.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The URL with any password masked.
    pub fn redacted(&self) -> String {
        redact_url(&self.0)
    }
}

impl From<&str> for SecretUrl {
    fn from(value: &str) -> Self {
        Self::new(value)
    }
}

impl std::fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.redacted())
    }
}

impl std::fmt::Display for SecretUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl Serialize for SecretUrl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.redacted())
    }
}

impl<'de> Deserialize<'de> for SecretUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(SecretUrl)
    }
}

/// Serde for an `Option<Secret>` that must be written as it is: a file only its owner reads
/// (`endpoint.json`), never a dump meant for people.
pub mod exposed {
    use super::Secret;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Option<Secret>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(secret) => s.serialize_some(secret.expose()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Secret>, D::Error> {
        Ok(Option::<String>::deserialize(d)?.map(Secret::new))
    }
}

/// `url` with the password of its user-info part replaced by `****` (a URL without one is
/// returned as it is). Also masks a password given as a `password=` query parameter, which
/// libpq-style URLs accept.
pub fn redact_url(url: &str) -> String {
    let mut out = match url.find("://") {
        Some(scheme) => {
            let rest = &url[scheme + 3..];
            // The authority ends at the first '/', '?' or '#'; user info is before its last '@'.
            let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            let authority = &rest[..authority_end];
            match authority.rfind('@') {
                Some(at) => {
                    let creds = &authority[..at];
                    let masked = match creds.find(':') {
                        Some(colon) => format!("{}:****", &creds[..colon]),
                        None => creds.to_owned(),
                    };
                    format!(
                        "{}{masked}{}{}",
                        &url[..scheme + 3],
                        &authority[at..],
                        &rest[authority_end..]
                    )
                }
                None => url.to_owned(),
            }
        }
        None => url.to_owned(),
    };
    if let Some(query) = out.find('?') {
        let (head, tail) = out.split_at(query + 1);
        let params: Vec<String> = tail
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=****"),
                _ => p.to_owned(),
            })
            .collect();
        out = format!("{head}{}", params.join("&"));
    }
    out
}

/// A secret kept in a file of the data dir: read, or created on the first start (mode 0600,
/// only the owner reads it) with `generate`'s value. `true` when it was created now. A file
/// holding fewer than `min_len` characters is an error naming it (delete it to get a new one).
pub fn secret_file(
    path: &std::path::Path,
    min_len: usize,
    generate: impl FnOnce() -> Secret,
) -> std::io::Result<(Secret, bool)> {
    use std::io::{Read, Write};
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(mut file) => {
            let secret = generate();
            file.write_all(secret.expose().as_bytes())?;
            file.sync_all()?;
            Ok((secret, true))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let mut text = String::new();
            std::fs::File::open(path)?.read_to_string(&mut text)?;
            let text = text.trim();
            if text.len() < min_len {
                return Err(std::io::Error::other(format!(
                    "{} holds no usable secret (under {min_len} characters); delete it to get a new one",
                    path.display()
                )));
            }
            Ok((Secret::new(text), false))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_never_shows_in_debug_display_or_serialised_form() {
        let s = Secret::new("sk-very-secret");
        for shown in [
            format!("{s:?}"),
            format!("{s}"),
            serde_json::to_string(&s).unwrap(),
        ] {
            assert!(!shown.contains("very-secret"), "{shown}");
        }
        assert_eq!(s.expose(), "sk-very-secret");
        let back: Secret = serde_json::from_str("\"abc\"").unwrap();
        assert_eq!(back.expose(), "abc");
    }

    #[test]
    fn urls_show_everything_but_the_password() {
        let cases = [
            (
                "postgres://app:hunter2@db:5432/mem",
                "postgres://app:****@db:5432/mem",
            ),
            ("postgres://app@db/mem", "postgres://app@db/mem"),
            ("http://localhost:6334", "http://localhost:6334"),
            (
                "postgres://db/mem?user=app&password=hunter2&sslmode=require",
                "postgres://db/mem?user=app&password=****&sslmode=require",
            ),
            (
                "postgres://app:p%40ss@db/mem?application_name=x@y",
                "postgres://app:****@db/mem?application_name=x@y",
            ),
            ("sqlite:///data/h.db", "sqlite:///data/h.db"),
        ];
        for (url, shown) in cases {
            let u = SecretUrl::new(url);
            assert_eq!(u.to_string(), shown);
            assert_eq!(format!("{u:?}"), format!("{shown:?}"));
            assert_eq!(serde_json::to_string(&u).unwrap(), format!("{shown:?}"));
            assert_eq!(u.expose(), url);
        }
    }
}

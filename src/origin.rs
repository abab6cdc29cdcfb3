//! Who a browser says a request is for (`Host`) and from (`Origin`), and the allow-lists they
//! are checked against (`allowed_hosts`, `allowed_origins`). Parsed once: the settings refuse
//! an entry that could never match, and the HTTP guard (`http/guard.rs`) compares parsed values.

use axum::http::uri::{Authority, Scheme, Uri};

/// A host name or address, lower-cased, IPv6 brackets stripped, and maybe a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    pub host: String,
    pub port: Option<u16>,
}

impl HostPort {
    /// A `Host` header value or an `allowed_hosts` entry: `name`, `name:port`, `[::1]:8765`.
    pub fn parse(value: &str) -> Result<Self, String> {
        let value = value.trim();
        if value.is_empty() {
            return Err("is empty".to_owned());
        }
        // A bare IPv6 address (`::1`) is not an authority; bracket it first.
        let bracketed;
        let text = if value.parse::<std::net::Ipv6Addr>().is_ok() {
            bracketed = format!("[{value}]");
            bracketed.as_str()
        } else {
            value
        };
        let authority = Authority::try_from(text)
            .map_err(|_| format!("{value:?} is not a host name or host:port"))?;
        let port_given = authority.host().len() < authority.as_str().len();
        if authority.as_str().contains('@') || (port_given && authority.port_u16().is_none()) {
            return Err(format!("{value:?} is not a host name or host:port"));
        }
        Ok(Self {
            host: authority
                .host()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_ascii_lowercase(),
            port: authority.port_u16(),
        })
    }

    /// An `allowed_hosts` entry matching a request's Host: the same name, and the same port
    /// when the entry names one (an entry without a port allows any).
    pub fn allows(&self, request: &HostPort) -> bool {
        self.host == request.host && self.port.is_none_or(|port| request.port == Some(port))
    }
}

/// A web origin (RFC 6454): scheme, host and port (the scheme's default when not written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebOrigin {
    pub scheme: String,
    pub host: String,
    pub port: u16,
}

impl WebOrigin {
    /// An `Origin` header value or an `allowed_origins` entry: `http://localhost:6274`,
    /// `https://console.example.com`. `null` (sandboxed frames, `file:` pages) is never an
    /// origin anyone can allow.
    pub fn parse(value: &str) -> Result<Self, String> {
        let value = value.trim();
        let bad = || format!("{value:?} is not an origin like http://localhost:6274");
        let uri = Uri::try_from(value).map_err(|_| bad())?;
        let scheme = uri.scheme().ok_or_else(bad)?;
        let port = if *scheme == Scheme::HTTP {
            80
        } else if *scheme == Scheme::HTTPS {
            443
        } else {
            return Err(format!("{value:?}: only http and https origins"));
        };
        let authority = uri.authority().ok_or_else(bad)?;
        if authority.as_str().contains('@') || uri.path_and_query().is_some_and(|p| p != "/") {
            return Err(bad());
        }
        let host = HostPort::parse(authority.as_str())?;
        Ok(Self {
            scheme: scheme.as_str().to_owned(),
            host: host.host,
            port: host.port.unwrap_or(port),
        })
    }

    /// Whether this origin is the server's own, as the request names it (`Host`): a page the
    /// daemon served itself. The scheme is not compared: behind a TLS proxy the daemon sees
    /// plain HTTP for an `https://` page.
    pub fn is_same_as(&self, host: &HostPort) -> bool {
        let default = if self.scheme == "https" { 443 } else { 80 };
        self.host == host.host && self.port == host.port.unwrap_or(default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_parse_and_match() {
        let any_port = HostPort::parse("LocalHost").unwrap();
        assert!(any_port.allows(&HostPort::parse("localhost:8765").unwrap()));
        assert!(any_port.allows(&HostPort::parse("localhost").unwrap()));
        assert!(!any_port.allows(&HostPort::parse("localhost.attacker.example").unwrap()));
        let v6 = HostPort::parse("::1").unwrap();
        assert_eq!(v6.host, "::1");
        assert!(v6.allows(&HostPort::parse("[::1]:8765").unwrap()));
        let exact = HostPort::parse("memory.internal:8765").unwrap();
        assert!(exact.allows(&HostPort::parse("memory.internal:8765").unwrap()));
        assert!(!exact.allows(&HostPort::parse("memory.internal:9999").unwrap()));
        assert!(!exact.allows(&HostPort::parse("memory.internal").unwrap()));
        for bad in ["", "http://x", "a b", "user@host", "host:port"] {
            assert!(HostPort::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn origins_parse_and_compare_with_the_host() {
        let page = WebOrigin::parse("http://127.0.0.1:8765").unwrap();
        assert!(page.is_same_as(&HostPort::parse("127.0.0.1:8765").unwrap()));
        assert!(!page.is_same_as(&HostPort::parse("127.0.0.1:8766").unwrap()));
        assert!(!page.is_same_as(&HostPort::parse("localhost:8765").unwrap()));
        let tls = WebOrigin::parse("https://memory.example.com").unwrap();
        assert_eq!(tls.port, 443);
        assert!(tls.is_same_as(&HostPort::parse("memory.example.com").unwrap()));
        assert!(tls.is_same_as(&HostPort::parse("memory.example.com:443").unwrap()));
        assert_eq!(
            WebOrigin::parse("http://[::1]:8765").unwrap().host,
            "::1".to_owned()
        );
        for bad in [
            "null",
            "",
            "localhost:8765",
            "file:///etc",
            "http://a@b",
            "http://x/path",
        ] {
            assert!(WebOrigin::parse(bad).is_err(), "{bad:?}");
        }
    }
}

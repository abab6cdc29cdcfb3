//! Who is calling, and what they may touch. A caller is a `Principal`: the operator (the
//! configured `auth_token`, the data dir's operator token, the CLI and stdio owner on this
//! machine) or an agent holding a token with namespace scopes (`scope.rs`). Tokens are random
//! secrets shown once; only their SHA-256 is stored (`token.rs`). The checks themselves are
//! made in one place, `operations::Guarded`.

mod operator_token;
mod principal;
mod scope;
mod token;

pub use operator_token::{operator_token, operator_token_path};
pub use principal::{Grants, Principal, Role};
pub use scope::{ScopeError, ScopePattern, Scopes};
pub use token::{generate_token, token_hash};

//! A throwaway PostgreSQL database per test, so tests run in parallel and leave nothing behind.

use sqlx::{Connection, Executor, PgConnection};

/// The server the tests use; CI and this machine kind run one at 127.0.0.1:5432 (trust auth).
pub fn server_url() -> String {
    std::env::var("HINDSIGHT_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".to_owned())
}

pub struct TestDatabase {
    pub name: String,
    pub url: String,
}

impl TestDatabase {
    /// Create `hindsight_test_<random>`. Panics (failing the test, never skipping it) when the
    /// server is unreachable, naming the URL and the variable that overrides it.
    pub async fn create() -> Self {
        let server = server_url();
        let name = format!("hindsight_test_{}", uuid::Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(&format!("{server}/postgres"))
            .await
            .unwrap_or_else(|e| {
                panic!("PostgreSQL tests need a server at {server} (set HINDSIGHT_TEST_POSTGRES_URL): {e}")
            });
        admin
            .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .await
            .unwrap();
        admin.close().await.ok();
        let url = format!("{server}/{name}");
        Self { name, url }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Drop runs inside the test's runtime: do the async cleanup on a thread of its own.
        let server = server_url();
        let name = self.name.clone();
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let mut admin = PgConnection::connect(&format!("{server}/postgres"))
                    .await
                    .ok()?;
                admin
                    .execute(sqlx::AssertSqlSafe(format!(
                        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                    )))
                    .await
                    .ok()?;
                admin.close().await.ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(()))) {
            eprintln!("warning: could not drop test database {}", self.name);
        }
    }
}

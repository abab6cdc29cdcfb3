//! The deployment files, checked statically (no Docker engine runs here): compose.yaml's
//! services, healthchecks, volumes, ports and every env var against what the code reads, and the
//! Dockerfile's shape. `hindsight healthcheck` (the image's HEALTHCHECK) is run for real.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use hindsight::configuration::{KEYS, Layer, Settings, env_name};
use serde_json::Value;

fn compose() -> Value {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("compose.yaml"))
        .expect("compose.yaml");
    serde_yaml_ng::from_str(&text).expect("compose.yaml is valid YAML")
}

fn dockerfile() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Dockerfile"))
        .expect("Dockerfile")
}

/// Compose interpolation for the forms the file uses: `${NAME}`, `${NAME:?message}`,
/// `${NAME:-default}`, with `vars` as the operator's environment.
fn interpolate(value: &str, vars: &BTreeMap<&str, &str>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').expect("closed ${") + start;
        let expr = &rest[start + 2..end];
        let (name, default) = match expr.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (expr.split(":?").next().unwrap_or(expr), None),
        };
        match (vars.get(name), default) {
            (Some(v), _) => out.push_str(v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => panic!("compose.yaml needs ${name} and the test does not set it"),
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

fn environment(service: &Value, vars: &BTreeMap<&str, &str>) -> BTreeMap<String, String> {
    service["environment"]
        .as_object()
        .expect("environment as a map")
        .iter()
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), interpolate(&text, vars))
        })
        .collect()
}

fn operator_env() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        ("POSTGRES_PASSWORD", "s3cret-pw"),
        ("HINDSIGHT_AUTH_TOKEN", "a-token-of-24-characters"),
        (
            "HINDSIGHT_SIGNING_KEY",
            "a-signing-key-of-at-least-32-characters",
        ),
    ])
}

#[test]
fn compose_has_every_service_with_a_healthcheck_and_ordered_start() {
    let compose = compose();
    let services = compose["services"].as_object().expect("services");
    assert_eq!(
        services.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        BTreeSet::from(["hindsight", "postgres", "qdrant"]),
        "Redis is not needed; nothing else is"
    );
    assert!(
        services["postgres"]["image"]
            .as_str()
            .unwrap()
            .starts_with("postgres:16")
    );
    assert!(
        services["qdrant"]["image"]
            .as_str()
            .unwrap()
            .starts_with("qdrant/qdrant")
    );
    assert_eq!(services["hindsight"]["build"], ".");
    for (name, service) in services {
        let test = &service["healthcheck"]["test"];
        assert!(
            test.as_array().is_some_and(|t| t.len() >= 2),
            "{name} needs a healthcheck command"
        );
    }
    let postgres_check = services["postgres"]["healthcheck"]["test"].to_string();
    assert!(postgres_check.contains("pg_isready"), "{postgres_check}");
    let qdrant_check = services["qdrant"]["healthcheck"]["test"].to_string();
    assert!(
        qdrant_check.contains("6333") && qdrant_check.contains("/readyz"),
        "{qdrant_check}"
    );
    assert_eq!(
        services["hindsight"]["healthcheck"]["test"],
        serde_json::json!(["CMD", "hindsight", "healthcheck"])
    );
    for dependency in ["postgres", "qdrant"] {
        assert_eq!(
            services["hindsight"]["depends_on"][dependency]["condition"], "service_healthy",
            "hindsight starts after {dependency} is healthy"
        );
    }
}

#[test]
fn compose_volumes_are_named_declared_and_used() {
    let compose = compose();
    let declared: BTreeSet<String> = compose["volumes"]
        .as_object()
        .expect("top-level volumes")
        .keys()
        .cloned()
        .collect();
    let mut used = BTreeSet::new();
    for (name, service) in compose["services"].as_object().unwrap() {
        for mount in service["volumes"].as_array().into_iter().flatten() {
            let source = mount.as_str().unwrap().split(':').next().unwrap();
            assert!(
                declared.contains(source),
                "{name} mounts {source}, which is not a declared named volume"
            );
            used.insert(source.to_owned());
        }
    }
    assert_eq!(used, declared, "every declared volume is used");
    let services = &compose["services"];
    assert_eq!(
        services["postgres"]["volumes"][0],
        "postgres-data:/var/lib/postgresql/data"
    );
    assert_eq!(
        services["qdrant"]["volumes"][0],
        "qdrant-data:/qdrant/storage"
    );
}

/// Every HINDSIGHT_* variable names a real setting, and together they load and validate as the
/// daemon would load them: PostgreSQL at the postgres service, Qdrant's gRPC port at the qdrant
/// service, the listen port published, the service name an allowed Host.
#[test]
fn compose_env_is_what_the_daemon_reads_and_it_validates() {
    let compose = compose();
    let services = &compose["services"];
    let vars = operator_env();
    let env = environment(&services["hindsight"], &vars);
    let known: BTreeSet<String> = KEYS.iter().map(|k| env_name(k)).collect();
    for key in env.keys() {
        assert!(
            known.contains(key),
            "compose sets {key}, which hindsight does not read"
        );
    }
    // Only the compose env: no hindsight.toml from the working directory.
    let settings = Settings::load(
        None,
        |key| match key {
            "HINDSIGHT_CONFIG" => Some("/nonexistent/hindsight.toml".to_owned()),
            _ => env.get(key).cloned(),
        },
        Layer::default(),
    )
    .unwrap_or_else(|e| panic!("compose env does not validate: {e}"));

    let postgres = environment(&services["postgres"], &vars);
    let expected_db = format!(
        "postgres://{}:{}@postgres:5432/{}",
        postgres["POSTGRES_USER"], postgres["POSTGRES_PASSWORD"], postgres["POSTGRES_DB"]
    );
    assert_eq!(settings.postgres_url(), Some(expected_db.as_str()));
    assert_eq!(
        settings.qdrant_url.as_ref().map(|u| u.expose()),
        Some("http://qdrant:6334")
    );
    assert!(
        settings.auth_token.is_some(),
        "beyond loopback the token is on"
    );
    assert!(settings.allowed_hosts.iter().any(|h| h == "hindsight"));

    let listen_port = settings.listen.port().to_string();
    let ports: Vec<&str> = services["hindsight"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(
        ports
            .iter()
            .any(|p| p.rsplit(':').next() == Some(listen_port.as_str())),
        "the listen port {listen_port} is published: {ports:?}"
    );
    assert!(
        dockerfile().contains(&format!("EXPOSE {listen_port}")),
        "the image exposes the listen port"
    );

    // Without the operator's secrets compose refuses to start rather than run open.
    let missing =
        std::panic::catch_unwind(|| environment(&services["hindsight"], &BTreeMap::new()));
    assert!(missing.is_err());
}

#[test]
fn dockerfile_is_multi_stage_non_root_with_healthcheck_and_data_volume() {
    let text = dockerfile();
    let instructions: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let froms: Vec<&&str> = instructions
        .iter()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert!(froms.len() >= 2, "multi-stage: {froms:?}");
    assert!(froms[0].contains(" AS build"), "{}", froms[0]);
    assert!(
        froms.last().unwrap().contains("-slim"),
        "small runtime image"
    );
    // The image's binary is built without line tables and stripped; local builds keep theirs.
    let build = text
        .split_once(" AS build")
        .unwrap()
        .1
        .split("\nFROM ")
        .next()
        .unwrap();
    assert!(
        build.contains("CARGO_PROFILE_RELEASE_DEBUG=false")
            && build.contains("CARGO_PROFILE_RELEASE_STRIP=symbols"),
        "the build stage strips the binary: {build}"
    );
    let runtime = text.rsplit_once("\nFROM ").unwrap().1;
    assert!(runtime.contains("COPY --from=build"));
    let user = runtime
        .lines()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("USER in the runtime stage");
    assert!(!matches!(user.trim(), "root" | "0"), "non-root user");
    assert!(runtime.contains("HEALTHCHECK") && runtime.contains("\"healthcheck\""));
    assert!(runtime.contains("VOLUME [\"/data\"]"));
    assert!(runtime.contains("HINDSIGHT_DATA_DIR=/data"));
    assert!(runtime.contains("ENTRYPOINT [\"hindsight\"]"));
    let dockerignore =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".dockerignore"))
            .expect(".dockerignore");
    for ignored in ["target", ".git", "data"] {
        assert!(
            dockerignore.lines().any(|l| l.trim() == ignored),
            "{ignored}"
        );
    }
}

/// The image's HEALTHCHECK command: succeeds against a live daemon, fails (non-zero) without.
#[tokio::test]
async fn healthcheck_command_reports_the_daemon_state() {
    let dir = tempfile::tempdir().unwrap();
    let daemon = common::Daemon::start(dir.path(), &[]).await;
    let listen = daemon.base_url().trim_start_matches("http://").to_owned();
    let check = || {
        std::process::Command::new(common::binary())
            .arg("healthcheck")
            .env("HINDSIGHT_LISTEN", &listen)
            .env("HINDSIGHT_DATA_DIR", dir.path())
            .output()
            .unwrap()
    };
    let up = check();
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    daemon.stop().await;
    let down = check();
    assert!(!down.status.success());
    assert!(String::from_utf8_lossy(&down.stderr).contains("/healthz"));
}

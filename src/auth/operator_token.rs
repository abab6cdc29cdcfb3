use std::path::{Path, PathBuf};

use crate::secret::Secret;

/// Where a data dir keeps its operator token.
pub fn operator_token_path(data_dir: &Path) -> PathBuf {
    data_dir.join("operator.token")
}

/// The data dir's operator token: read, or created (mode 0600, only the owner reads it) on the
/// first start. `true` when it was created now.
pub fn operator_token(data_dir: &Path) -> std::io::Result<(Secret, bool)> {
    crate::secret::secret_file(&operator_token_path(data_dir), 16, super::generate_token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_once_owner_only_then_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let (first, created) = operator_token(dir.path()).unwrap();
        assert!(created);
        let (again, created) = operator_token(dir.path()).unwrap();
        assert!(!created);
        assert_eq!(first.expose(), again.expose());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(operator_token_path(dir.path()))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(operator_token_path(dir.path()), "short").unwrap();
        assert!(operator_token(dir.path()).is_err());
    }
}

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::secret::Secret;

/// Where a data dir keeps its operator token.
pub fn operator_token_path(data_dir: &Path) -> PathBuf {
    data_dir.join("operator.token")
}

/// The data dir's operator token: read, or created (mode 0600, only the owner reads it) on the
/// first start. `true` when it was created now.
pub fn operator_token(data_dir: &Path) -> std::io::Result<(Secret, bool)> {
    let path = operator_token_path(data_dir);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(&path) {
        Ok(mut file) => {
            let token = super::generate_token();
            file.write_all(token.expose().as_bytes())?;
            file.sync_all()?;
            Ok((token, true))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let mut text = String::new();
            std::fs::File::open(&path)?.read_to_string(&mut text)?;
            let text = text.trim();
            if text.len() < 16 {
                return Err(std::io::Error::other(format!(
                    "{} holds no usable token (under 16 characters); delete it to get a new one",
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

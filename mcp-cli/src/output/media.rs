//! Images, audio and blobs: one-line summaries for people (`[image: image/png, 3 KB]`) and
//! saving them with `--save DIR`.
//!
//! A saved file's name comes from what the server said (a URI, a tool name), reduced to letters,
//! digits, `.`, `-` and `_`, without leading dots, so it can never name a path outside `DIR`. An
//! existing file is never overwritten: `name-1.png`, `name-2.png`, ... are tried instead, each
//! created exclusively.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine as _;

/// Longest file name `--save` writes, in characters (the extension included).
pub const MAX_FILE_NAME: usize = 100;

/// Most `name-N` variants tried before giving up.
const MAX_VARIANTS: usize = 1000;

/// Why a file could not be saved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SaveError {
    /// The data is not valid base64.
    #[error("{what} is not valid base64: {message}")]
    BadBase64 {
        /// What was being saved.
        what: String,
        /// The decoder's message.
        message: String,
    },
    /// The directory or file could not be written.
    #[error("cannot write {path}: {error}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// Every variant of the name is taken.
    #[error("cannot save {name} in {dir}: {name} and {MAX_VARIANTS} numbered variants already exist")]
    NamesTaken {
        /// The directory.
        dir: PathBuf,
        /// The file name.
        name: String,
    },
}

/// The number of bytes base64 text decodes to (whitespace ignored), without decoding it.
pub fn decoded_len(base64: &str) -> u64 {
    let mut len = 0u64;
    let mut padding = 0u64;
    for b in base64.bytes().filter(|b| !b.is_ascii_whitespace()) {
        len += 1;
        if b == b'=' {
            padding += 1;
        }
    }
    (len / 4 * 3
        + match len % 4 {
            2 => 1,
            3 => 2,
            _ => 0,
        })
    .saturating_sub(padding.min(2))
}

/// A size for people: `512 B`, `3 KB`, `1.5 MB` (powers of 1024).
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let shown = format!("{value:.1}");
    format!("{} {}", shown.strip_suffix(".0").unwrap_or(&shown), UNITS[unit])
}

/// `[kind: mime, size]`, e.g. `[image: image/png, 3 KB]`, for base64 `data`.
pub fn summary(kind: &str, mime_type: Option<&str>, base64: &str) -> String {
    let size = human_size(decoded_len(base64));
    match mime_type {
        Some(mime) if !mime.is_empty() => format!("[{kind}: {mime}, {size}]"),
        _ => format!("[{kind}: {size}]"),
    }
}

/// The usual file extension of a MIME type, if it has a well-known one.
pub fn extension_for(mime_type: &str) -> Option<&'static str> {
    let essence = mime_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    Some(match essence.as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "application/zip" => "zip",
        "text/plain" => "txt",
        "text/markdown" => "md",
        "text/html" => "html",
        "text/csv" => "csv",
        "application/octet-stream" => "bin",
        _ => return None,
    })
}

/// A file name from `suggested` (a URI, a tool name, a path): its last segment, reduced to
/// letters, digits, `.`, `-` and `_`, without leading dots, at most [`MAX_FILE_NAME`]
/// characters, with the extension of `mime_type` added when it has none.
pub fn safe_file_name(suggested: &str, mime_type: Option<&str>) -> String {
    let without_query = suggested.split(['?', '#']).next().unwrap_or_default();
    let segment = without_query.trim_end_matches(['/', '\\']).rsplit(['/', '\\', ':']).next().unwrap_or_default();
    let cleaned: String = segment
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' })
        .collect();
    let mut name = cleaned.trim_start_matches('.').to_owned();
    if name.trim_matches(['_', '.']).is_empty() {
        name = "file".into();
    }
    let extension = mime_type.and_then(extension_for);
    let has_extension = name.rsplit_once('.').is_some_and(|(stem, ext)| !stem.is_empty() && !ext.is_empty());
    let suffix = match extension {
        Some(ext) if !has_extension => format!(".{ext}"),
        _ => String::new(),
    };
    let room = MAX_FILE_NAME.saturating_sub(suffix.len());
    if name.chars().count() > room {
        // Keep the extension when cutting a long name.
        let (stem, ext) = match name.rsplit_once('.') {
            Some((stem, ext)) if suffix.is_empty() && !stem.is_empty() && ext.len() <= 10 => {
                (stem.to_owned(), format!(".{ext}"))
            }
            _ => (name.clone(), String::new()),
        };
        name = stem.chars().take(room.saturating_sub(ext.len())).collect::<String>() + &ext;
    }
    name + &suffix
}

/// Save base64 `data` in `dir` (created if missing) under a name made from `suggested` (see
/// [`safe_file_name`]), never overwriting a file. Returns the path written.
pub fn save_base64(dir: &Path, suggested: &str, mime_type: Option<&str>, data: &str) -> Result<PathBuf, SaveError> {
    let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .map_err(|e| SaveError::BadBase64 { what: suggested.to_owned(), message: e.to_string() })?;
    save_bytes(dir, &safe_file_name(suggested, mime_type), &bytes)
}

/// Write `bytes` to a new file called `name` in `dir` (or `name-N` when taken).
fn save_bytes(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, SaveError> {
    std::fs::create_dir_all(dir).map_err(|error| SaveError::Io { path: dir.to_owned(), error })?;
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    for n in 0..=MAX_VARIANTS {
        let file_name = if n == 0 { name.to_owned() } else { format!("{stem}-{n}{ext}") };
        let path = dir.join(&file_name);
        debug_assert_eq!(path.parent(), Some(dir), "a saved file stays in its directory");
        // `create_new` fails on any existing entry, a symbolic link included, so nothing is
        // overwritten and no link is followed out of the directory.
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut file) => {
                file.write_all(bytes).map_err(|error| SaveError::Io { path: path.clone(), error })?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(SaveError::Io { path, error }),
        }
    }
    Err(SaveError::NamesTaken { dir: dir.to_owned(), name: name.to_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_summaries() {
        assert_eq!(decoded_len(""), 0);
        assert_eq!(decoded_len("aGk="), 2);
        assert_eq!(decoded_len("aGVsbG8="), 5);
        assert_eq!(decoded_len("aGVs\nbG8h"), 6);
        let three_kb = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 3 * 1024]);
        assert_eq!(decoded_len(&three_kb), 3072);
        assert_eq!(summary("image", Some("image/png"), &three_kb), "[image: image/png, 3 KB]");
        assert_eq!(summary("blob", None, "aGk="), "[blob: 2 B]");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KB");
        assert_eq!(human_size(5 * 1024 * 1024), "5 MB");
    }

    #[test]
    fn file_names_cannot_leave_the_directory() {
        let cases = [
            ("demo://logo.png", Some("image/png"), "logo.png"),
            ("../../etc/passwd", None, "passwd"),
            ("..", Some("image/png"), "file.png"),
            ("/", None, "file"),
            ("..\\..\\windows\\evil.exe", None, "evil.exe"),
            ("image-1", Some("image/png"), "image-1.png"),
            ("résumé report?.pdf", Some("application/pdf"), "r_sum__report.pdf"),
            ("https://x/a/b.txt?x=../../y#frag", Some("text/plain"), "b.txt"),
            (".hidden", None, "hidden"),
            ("C:secret", Some("audio/wav"), "secret.wav"),
            ("data", Some("application/x-unknown"), "data"),
        ];
        for (suggested, mime, expected) in cases {
            assert_eq!(safe_file_name(suggested, mime), expected, "{suggested}");
        }
        let long = safe_file_name(&format!("{}.png", "x".repeat(300)), Some("image/png"));
        assert_eq!(long.chars().count(), MAX_FILE_NAME);
        assert!(long.ends_with(".png"));
        let long = safe_file_name(&"y".repeat(300), Some("image/png"));
        assert!(long.ends_with(".png") && long.chars().count() == MAX_FILE_NAME, "{long}");
    }

    #[test]
    fn saving_never_overwrites_and_stays_inside() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let data = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG fake");
        let first = save_base64(&out, "demo://logo.png", Some("image/png"), &data).unwrap();
        let second = save_base64(&out, "demo://logo.png", Some("image/png"), &data).unwrap();
        assert_eq!(first, out.join("logo.png"));
        assert_eq!(second, out.join("logo-1.png"));
        assert_eq!(std::fs::read(&second).unwrap(), b"\x89PNG fake");
        let sneaky = save_base64(&out, "../../escape.png", None, &data).unwrap();
        assert_eq!(sneaky, out.join("escape.png"));
        assert!(!dir.path().join("escape.png").exists());
        let err = save_base64(&out, "x", None, "not base64!").unwrap_err();
        assert!(err.to_string().contains("not valid base64"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_in_the_directory_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        std::fs::write(&target, "keep").unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&target, out.join("a.txt")).unwrap();
        let saved = save_base64(&out, "a.txt", None, "aGk=").unwrap();
        assert_eq!(saved, out.join("a-1.txt"));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }
}

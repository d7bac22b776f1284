//! Items as pictures: the image files a points file's column names (the web
//! app's `--images COLUMN`), read and checked once.
//!
//! The column holds one path per point, relative to the CSV's directory. At
//! start every path is checked and its file read into memory, once:
//!
//! - the path is relative and has no `..` component (no absolute path, no
//!   drive or UNC prefix), and the file it names, with every symbolic link
//!   resolved, lies inside the CSV's directory;
//! - the file exists, is a regular file of at most [`MAX_IMAGE_BYTES`], and
//!   is a PNG, JPEG, GIF, WebP or SVG image by its extension *and* its first
//!   bytes (the magic number; for SVG an `<svg` element near the start), the
//!   two agreeing;
//! - all the images together take at most [`MAX_TOTAL_BYTES`].
//!
//! The first failure is an error naming the column, the row (1-based data
//! row) and the point. A server then answers from memory with the type found
//! here, so no request can name a path (the web app serves SVG images
//! sandboxed). Cost: one read of each file, O(total bytes).

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// Largest image file accepted (bytes): thumbnails are meant, not photos.
pub const MAX_IMAGE_BYTES: u64 = 8 << 20;

/// Largest total of all image files (bytes).
pub const MAX_TOTAL_BYTES: u64 = 256 << 20;

/// One point's picture, read and checked at start.
#[derive(Debug, Clone)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif`, `image/webp` or `image/svg+xml`.
    pub content_type: &'static str,
    /// The file's bytes.
    pub bytes: Vec<u8>,
}

/// The image type an extension names (lower case compared).
fn type_of_extension(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        _ => return None,
    })
}

/// The image type the first bytes show, if any.
pub fn type_of_bytes(b: &[u8]) -> Option<&'static str> {
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if b.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        Some("image/webp")
    } else if is_svg(b) {
        Some("image/svg+xml")
    } else {
        None
    }
}

/// An SVG document: UTF-8 text that starts (after a byte-order mark and
/// white space) with `<`, and has an `<svg` element in its first 4 KiB.
fn is_svg(b: &[u8]) -> bool {
    let head = &b[..b.len().min(4096)];
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // The 4 KiB cut may split a character.
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    let t = text.trim_start();
    t.starts_with('<') && t.contains("<svg")
}

/// Checks one path of the column: relative, no `..`, no prefix.
fn check_relative(raw: &str) -> std::result::Result<PathBuf, String> {
    if raw.is_empty() {
        return Err("the image path is empty".into());
    }
    if raw.contains('\0') {
        return Err("the image path holds a NUL byte".into());
    }
    // Both separators, whatever the platform: a CSV may come from elsewhere.
    if raw.starts_with('/') || raw.starts_with('\\') || raw.get(1..2) == Some(":") {
        return Err("the image path is absolute; give it relative to the CSV's directory".into());
    }
    let path = PathBuf::from(raw.replace('\\', "/"));
    for c in path.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => {
                return Err(
                    "the image path has a `..` component: images must lie in the \
                            CSV's directory or below it"
                        .into(),
                );
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(
                    "the image path is absolute; give it relative to the CSV's directory".into(),
                );
            }
        }
    }
    Ok(path)
}

/// Reads and checks the image of every point (see the module docs): the
/// paths of the column `what` (how messages name it, e.g. `--images
/// picture`) of the points file `csv`; `names` are the points' names (for
/// messages).
///
/// # Errors
///
/// The first path or file that fails a check ([`ErrorKind::Input`](crate::ErrorKind::Input)).
pub fn read_images(
    csv: &Path,
    what: &str,
    paths: &[String],
    names: &[String],
) -> Result<Vec<Image>> {
    let dir = csv
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let root = dir.canonicalize().map_err(|e| {
        Error::input(format!(
            "cannot resolve the directory of {}: {e}",
            csv.display()
        ))
    })?;
    let mut total = 0u64;
    let mut out = Vec::with_capacity(paths.len());
    for (i, raw) in paths.iter().enumerate() {
        let at = || {
            format!(
                "{what}: row {} (point {:?}), image {raw:?}",
                i + 1,
                names.get(i).map(String::as_str).unwrap_or("?")
            )
        };
        let rel = check_relative(raw).map_err(|why| Error::input(format!("{}: {why}", at())))?;
        let full = root.join(&rel);
        let real = full
            .canonicalize()
            .map_err(|e| Error::input(format!("{}: cannot open {}: {e}", at(), full.display())))?;
        if !real.starts_with(&root) {
            return Err(Error::input(format!(
                "{}: the file lies outside the CSV's directory {} (through a symbolic link)",
                at(),
                root.display()
            )));
        }
        let meta = std::fs::metadata(&real).map_err(|e| Error::input(format!("{}: {e}", at())))?;
        if !meta.is_file() {
            return Err(Error::input(format!(
                "{}: {} is not a regular file",
                at(),
                real.display()
            )));
        }
        if meta.len() > MAX_IMAGE_BYTES {
            return Err(Error::input(format!(
                "{}: the file has {} bytes, more than the {} allowed per image; use thumbnails",
                at(),
                meta.len(),
                MAX_IMAGE_BYTES
            )));
        }
        total += meta.len();
        if total > MAX_TOTAL_BYTES {
            return Err(Error::input(format!(
                "{}: the images up to this row take {total} bytes, more than the {} allowed in \
                 all; use thumbnails",
                at(),
                MAX_TOTAL_BYTES
            )));
        }
        let by_ext = type_of_extension(&rel).ok_or_else(|| {
            Error::input(format!(
                "{}: not an image by its extension; use .png, .jpg, .jpeg, .gif, .webp or .svg",
                at()
            ))
        })?;
        let bytes = std::fs::read(&real).map_err(|e| Error::input(format!("{}: {e}", at())))?;
        match type_of_bytes(&bytes) {
            Some(t) if t == by_ext => {}
            Some(t) => {
                return Err(Error::input(format!(
                    "{}: the extension says {by_ext} but the contents are {t}",
                    at()
                )));
            }
            None => {
                return Err(Error::input(format!(
                    "{}: the contents are not of type {by_ext} (the first bytes are no PNG, JPEG, \
                 GIF, WebP or SVG signature)",
                    at()
                )));
            }
        }
        out.push(Image {
            content_type: by_ext,
            bytes,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_recognised_and_others_refused() {
        assert_eq!(type_of_bytes(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(type_of_bytes(&[0xff, 0xd8, 0xff, 0xe0]), Some("image/jpeg"));
        assert_eq!(type_of_bytes(b"GIF89a.."), Some("image/gif"));
        assert_eq!(type_of_bytes(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(
            type_of_bytes(b"\xef\xbb\xbf <?xml version=\"1.0\"?><svg/>"),
            Some("image/svg+xml")
        );
        assert_eq!(type_of_bytes(b"RIFF\0\0\0\0WAVEfmt "), None);
        assert_eq!(type_of_bytes(b"<html><body>"), None);
        assert_eq!(type_of_bytes(b"not an image"), None);
        assert_eq!(type_of_bytes(b""), None);
    }

    #[test]
    fn escaping_and_absolute_paths_are_refused() {
        for bad in [
            "",
            "/etc/passwd",
            "\\\\server\\share\\a.png",
            "C:/a.png",
            "../a.png",
            "a/../../b.png",
            "a\\..\\..\\b.png",
        ] {
            assert!(check_relative(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["a.png", "./img/a.png", "img\\a.png", "x..y.png"] {
            assert!(check_relative(good).is_ok(), "{good:?} refused");
        }
    }
}
